//! The Rust types that map to a datatype, for typed reads and writes of
//! datasets and attributes.

use crate::error::{Error, Result};
use crate::format::datatype::Datatype;

/// Plain-old-data element types that map to a [`Datatype`].
pub trait Element: bytemuck::Pod {
    /// The native-order datatype of this Rust type.
    fn datatype() -> Datatype;
}

macro_rules! element {
    ($t:ty, $e:expr) => {
        impl Element for $t {
            fn datatype() -> Datatype {
                $e
            }
        }
    };
}
element!(i8, Datatype::int(1));
element!(i16, Datatype::int(2));
element!(i32, Datatype::int(4));
element!(i64, Datatype::int(8));
element!(u8, Datatype::uint(1));
element!(u16, Datatype::uint(2));
element!(u32, Datatype::uint(4));
element!(u64, Datatype::uint(8));
element!(f32, Datatype::float(4));
element!(f64, Datatype::float(8));

/// Refuse a Rust type `T` whose datatype is not the stored type `dt` (in
/// native order); `u8` also reads booleans and one-byte fixed strings, `u64`
/// object references.
pub(crate) fn check_element<T: Element>(dt: &Datatype) -> Result<()> {
    let want = T::datatype();
    // Object references are u64 ids in memory.
    let ok = dt.native() == want
        || (want == Datatype::uint(1)
            && matches!(dt, Datatype::Bool | Datatype::FixedBytes { len: 1, .. }))
        || (want == Datatype::uint(8) && matches!(dt, Datatype::Reference));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "element type {want} does not match the dataset type {dt}"
        )))
    }
}
