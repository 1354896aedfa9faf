//! Attributes: small named values attached to groups and datasets.

use super::element::{check_element, Element};
use super::handle::{lock, FileHandle};
use crate::error::{Error, Result};
use crate::format::attribute::AttrRecord;
use crate::format::btree;
use crate::format::datatype::Datatype;
use crate::format::object_header::{next_index, Header};
use crate::format::region::RegionRef;
use crate::format::shape::MAX_RANK;
use crate::space::Section;
use crate::store::Store;

/// An attribute's type, shape and elements (native byte order).
///
/// ```
/// use arca::AttrValue;
/// let v = AttrValue::array(&[2], &[1.5f64, 2.5]).unwrap();
/// assert_eq!(v.to_vec::<f64>().unwrap(), vec![1.5, 2.5]);
/// assert_eq!(AttrValue::string("K").as_string().unwrap(), "K");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AttrValue {
    /// Element type as stored in the file.
    pub dtype: Datatype,
    /// Shape; empty for a scalar.
    pub shape: Vec<u64>,
    /// Elements in native byte order.
    pub data: Vec<u8>,
    /// A null dataspace: a type and no value at all (h5py's `Empty`);
    /// `shape` and `data` are then empty.
    pub null: bool,
}

impl AttrValue {
    /// A scalar.
    pub fn scalar<T: Element>(v: T) -> Self {
        AttrValue {
            dtype: T::datatype(),
            shape: vec![],
            data: bytemuck::bytes_of(&v).to_vec(),
            null: false,
        }
    }

    /// An array of `shape`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `values` does not fill `shape`.
    pub fn array<T: Element>(shape: &[u64], values: &[T]) -> Result<Self> {
        AttrValue::new(T::datatype(), shape, bytemuck::cast_slice(values).to_vec())
    }

    /// A scalar fixed-length string holding `s`, typed UTF-8.
    pub fn string(s: &str) -> Self {
        AttrValue {
            dtype: Datatype::FixedBytes {
                len: s.len().max(1) as u32,
                cset: crate::format::datatype::Charset::Utf8,
                pad: crate::format::datatype::StrPad::NullPad,
            },
            shape: vec![],
            data: if s.is_empty() {
                vec![0]
            } else {
                s.as_bytes().to_vec()
            },
            null: false,
        }
    }

    /// Variable-length UTF-8 strings of `shape`.
    ///
    /// ```
    /// use arca::AttrValue;
    /// let v = AttrValue::vlen_strings(&[2], &["μ", "sigma"]).unwrap();
    /// assert_eq!(v.as_strings().unwrap(), vec!["μ", "sigma"]);
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the count does not fill `shape`.
    pub fn vlen_strings<S: AsRef<str>>(shape: &[u64], strings: &[S]) -> Result<Self> {
        Self::vlen_items(
            Datatype::VlenStr,
            shape,
            strings.iter().map(|s| s.as_ref().as_bytes()),
        )
    }

    /// A scalar variable-length UTF-8 string.
    pub fn vlen_string(s: &str) -> Self {
        let mut data = (s.len() as u64).to_le_bytes().to_vec();
        data.extend_from_slice(s.as_bytes());
        AttrValue {
            dtype: Datatype::VlenStr,
            shape: vec![],
            data,
            null: false,
        }
    }

    /// Variable-length byte strings of `shape`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the count does not fill `shape`.
    pub fn vlen_bytes<B: AsRef<[u8]>>(shape: &[u64], items: &[B]) -> Result<Self> {
        Self::vlen_items(Datatype::VlenBytes, shape, items.iter().map(|b| b.as_ref()))
    }

    /// Region references of `shape` (`None`: the null reference).
    ///
    /// ```
    /// use arca::{AttrValue, Region, RegionRef, RegionSelection};
    /// let r = RegionRef { object: 8192, region: Region::new(vec![4], RegionSelection::All).unwrap() };
    /// let v = AttrValue::region_refs(&[2], &[Some(r.clone()), None]).unwrap();
    /// assert_eq!(v.to_region_refs().unwrap(), [Some(r), None]);
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the count does not fill `shape`.
    pub fn region_refs(shape: &[u64], refs: &[Option<RegionRef>]) -> Result<Self> {
        let items: Vec<Vec<u8>> = refs
            .iter()
            .map(|r| r.as_ref().map(RegionRef::to_bytes).unwrap_or_default())
            .collect();
        Self::vlen_items(Datatype::RegionRef, shape, items.iter().map(|b| &b[..]))
    }

    /// The elements of a region-reference value (`None`: the null reference).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for another type, [`Error::Corrupt`] for
    /// an element that does not decode.
    pub fn to_region_refs(&self) -> Result<Vec<Option<RegionRef>>> {
        if self.dtype != Datatype::RegionRef {
            return Err(Error::invalid("attribute does not hold region references"));
        }
        let (v, o) = self.to_ragged_bytes()?;
        o.windows(2)
            .map(|w| match &v[w[0] as usize..w[1] as usize] {
                [] => Ok(None),
                b => RegionRef::from_bytes(b).map(Some),
            })
            .collect()
    }

    fn vlen_items<'a>(
        dtype: Datatype,
        shape: &[u64],
        items: impl Iterator<Item = &'a [u8]>,
    ) -> Result<Self> {
        let items: Vec<&[u8]> = items.collect();
        let mut data: Vec<u8> = items
            .iter()
            .flat_map(|b| (b.len() as u64).to_le_bytes())
            .collect();
        items.iter().for_each(|b| data.extend_from_slice(b));
        AttrValue::new(dtype, shape, data)
    }

    /// Ragged rows of `T` (Arrow-style offsets in items, `n + 1` of them).
    ///
    /// ```
    /// use arca::AttrValue;
    /// let v = AttrValue::ragged(&[2], &[1i32, 2, 3], &[0, 2, 3]).unwrap();
    /// assert_eq!(v.to_ragged::<i32>().unwrap(), (vec![1, 2, 3], vec![0, 2, 3]));
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for bad offsets or a count that does not fill `shape`.
    pub fn ragged<T: Element>(shape: &[u64], values: &[T], offsets: &[u64]) -> Result<Self> {
        let dtype = Datatype::vlen(T::datatype())?;
        let data = crate::format::vlen_attr::payload(
            bytemuck::cast_slice(values),
            offsets,
            std::mem::size_of::<T>(),
        )?;
        AttrValue::new(dtype, shape, data)
    }

    /// A variable-length value as concatenated items (native order) and
    /// offsets in items.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for fixed-length types.
    pub fn to_ragged_bytes(&self) -> Result<(Vec<u8>, Vec<u64>)> {
        let base = self
            .dtype
            .base()
            .filter(|_| !self.dtype.takes_rows())
            .ok_or_else(|| Error::invalid("attribute is not a plain variable-length value"))?;
        let n = self.shape.iter().product();
        crate::format::vlen_attr::check_attr_payload(&self.dtype, n, &self.data)?;
        Ok(crate::format::vlen_attr::split(&self.data, n, base.size()))
    }

    /// Ragged rows as values of `T` and offsets in items.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the base type is not `T`.
    pub fn to_ragged<T: Element>(&self) -> Result<(Vec<T>, Vec<u64>)> {
        let base = self
            .dtype
            .base()
            .ok_or_else(|| Error::invalid("attribute is not variable-length"))?;
        check_element::<T>(&base)?;
        let (v, o) = self.to_ragged_bytes()?;
        Ok((bytemuck::pod_collect_to_vec(&v), o))
    }

    /// Every element of a string attribute (variable- or fixed-length),
    /// fixed-length ones without their padding.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for non-string types or invalid UTF-8.
    pub fn as_strings(&self) -> Result<Vec<String>> {
        let utf8 = |b: &[u8]| {
            String::from_utf8(b.to_vec())
                .map_err(|_| Error::invalid("attribute is not valid UTF-8"))
        };
        match self.dtype {
            Datatype::VlenStr | Datatype::VlenBytes => {
                let (v, o) = self.to_ragged_bytes()?;
                o.windows(2)
                    .map(|w| utf8(&v[w[0] as usize..w[1] as usize]))
                    .collect()
            }
            Datatype::FixedBytes { len, pad, .. } => self
                .data
                .chunks_exact(len as usize)
                .map(|e| utf8(pad.trim(e)))
                .collect(),
            _ => Err(Error::invalid("attribute is not a string")),
        }
    }

    /// A value with a type and no elements at all (a null dataspace, h5py's
    /// `Empty`), as distinct from a zero-length array.
    ///
    /// ```
    /// use arca::{AttrValue, Datatype};
    /// let v = AttrValue::empty(Datatype::float(4));
    /// assert!(v.null && v.data.is_empty());
    /// ```
    pub fn empty(dtype: Datatype) -> Self {
        AttrValue {
            dtype,
            shape: vec![],
            data: vec![],
            null: true,
        }
    }

    /// Any type and shape, checking that `data` fits. Variable-length types
    /// take `n` little-endian u64 byte lengths followed by the items; types
    /// with variable-length members, and variable-length types whose values
    /// hold more ([`Datatype::takes_rows`]), take the rows form of
    /// [`crate::Dataset::write_rows`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] on a size mismatch or bad type.
    pub fn new(dtype: Datatype, shape: &[u64], data: Vec<u8>) -> Result<Self> {
        dtype.validate()?;
        if shape.len() > MAX_RANK {
            return Err(Error::invalid("attribute rank too high"));
        }
        let n: u64 = shape.iter().product();
        if dtype.has_vlen() {
            if !dtype.takes_rows() {
                crate::format::vlen_attr::check_attr_payload(&dtype, n, &data)?;
            } else {
                crate::format::rows::check_rows(&dtype, n, &data)?;
            }
            return Ok(AttrValue {
                dtype,
                shape: shape.to_vec(),
                data,
                null: false,
            });
        }
        if n.checked_mul(dtype.size() as u64) != Some(data.len() as u64) {
            return Err(Error::invalid(format!(
                "attribute of shape {shape:?} and type {dtype} needs {} bytes, got {}",
                n.saturating_mul(dtype.size() as u64),
                data.len()
            )));
        }
        Ok(AttrValue {
            dtype,
            shape: shape.to_vec(),
            data,
            null: false,
        })
    }

    /// The elements as a typed vector.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `T` does not match.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        check_element::<T>(&self.dtype)?;
        Ok(bytemuck::pod_collect_to_vec(&self.data))
    }

    /// A scalar or one-element string, trailing NULs removed.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for non-string types or invalid UTF-8.
    pub fn as_string(&self) -> Result<String> {
        if matches!(self.dtype, Datatype::VlenStr | Datatype::VlenBytes) {
            let mut v = self.as_strings()?;
            if v.len() != 1 {
                return Err(Error::invalid("attribute holds more than one string"));
            }
            return Ok(v.remove(0));
        }
        if !matches!(self.dtype, Datatype::FixedBytes { .. }) {
            return Err(Error::invalid("attribute is not a string"));
        }
        let end = self.data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        String::from_utf8(self.data[..end].to_vec())
            .map_err(|_| Error::invalid("attribute is not valid UTF-8"))
    }
}

/// The attributes of one object.
///
/// ```
/// use arca::{AttrValue, File};
/// let f = File::in_memory().unwrap();
/// let a = f.root().attrs();
/// a.set("units", &AttrValue::string("m/s")).unwrap();
/// a.rename("units", "unit").unwrap();
/// assert_eq!(a.names().unwrap(), vec!["unit"]);
/// assert_eq!(a.get("unit").unwrap().as_string().unwrap(), "m/s");
/// ```
#[derive(Clone)]
pub struct Attributes {
    file: FileHandle,
    owner: u64,
}

impl std::fmt::Debug for Attributes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attributes")
            .field("owner", &self.owner)
            .finish()
    }
}

impl Attributes {
    pub(crate) fn new(file: FileHandle, owner: u64) -> Self {
        Attributes { file, owner }
    }

    /// Store `v` as attribute `name`: `Create` refuses a name that exists;
    /// `Replace` takes the next creation index (a replaced attribute moves
    /// to the end of a creation-ordered list, as HDF5's delete-and-create
    /// does); `Modify` keeps the index it had.
    fn put(&self, name: &str, v: &AttrValue, how: Put) -> Result<()> {
        check_name(name)?;
        let null = v.null;
        let v = if null {
            v.dtype.validate()?;
            if !v.shape.is_empty() || !v.data.is_empty() {
                return Err(Error::invalid("a null dataspace has no shape and no value"));
            }
            v.clone()
        } else {
            AttrValue::new(v.dtype.clone(), &v.shape, v.data.clone())?
        };
        if v.dtype == Datatype::RegionRef && !null {
            let (values, offsets) = v.to_ragged_bytes()?;
            crate::format::region::check_refs(&values, &offsets)?;
        }
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        let mut h = Header::load(&mut g.st, self.owner)?;
        // The old record is checked before anything changes, so that a
        // damaged one fails the call with the file as it was.
        let ordered = h.attr_order.is_some();
        let old = old_record(&mut g.st, h.attrs.root, name, self.owner, ordered)?;
        if how == Put::Create && old.is_some() {
            return Err(Error::AlreadyExists(format!("attribute {name}")));
        }
        let mut bytes = v.data;
        let n = v.shape.iter().product();
        if v.dtype.is_vlen() && !v.dtype.takes_rows() {
            crate::format::vlen_attr::swap_attr_payload(&v.dtype, n, &mut bytes);
        } else if v.dtype.has_vlen() {
            crate::format::rows::swap_rows(&v.dtype, n, &mut bytes);
        } else if v.dtype.needs_swap() {
            v.dtype.swap(&mut bytes);
        }
        // Before the record takes space (a large value's blob): a counter at
        // its maximum refuses with nothing allocated.
        let order = match (&old, how, h.attr_order.as_mut()) {
            (Some(o), Put::Modify, Some(_)) => o.order,
            (_, _, Some(next)) => {
                let this = *next;
                *next = next_index(this, self.owner, "attribute")?;
                Some(this)
            }
            (_, _, None) => None,
        };
        let mut rec = AttrRecord::new(&mut g.st, v.dtype, v.shape, bytes)?;
        rec.null = null;
        rec.order = order;
        let (root, _) = btree::insert(
            &mut g.st,
            h.attrs.root,
            name.as_bytes(),
            &rec.encode(),
            true,
        )?;
        match old {
            Some(old) => old.free(&mut g.st)?,
            None => h.attrs.count += 1,
        }
        h.attrs.root = root;
        h.save(&mut g.st, self.owner)
    }

    /// Create or replace an attribute.
    ///
    /// # Errors
    /// [`Error::ReadOnly`], [`Error::InvalidArgument`] for a bad name or value.
    pub fn set(&self, name: &str, v: &AttrValue) -> Result<()> {
        self.put(name, v, Put::Replace)
    }

    /// Replace an attribute's value where it stands: in a creation-ordered
    /// list it keeps its position (creates it if it does not exist).
    ///
    /// ```
    /// use arca::{AttrValue, File, GroupOptions};
    /// let f = File::in_memory().unwrap();
    /// let g = f.root().create_group_with("g", &GroupOptions::new().track_order(true)).unwrap();
    /// let a = g.attrs();
    /// a.set("b", &AttrValue::scalar(1i64)).unwrap();
    /// a.set("a", &AttrValue::scalar(2i64)).unwrap();
    /// a.modify("b", &AttrValue::scalar(3i64)).unwrap();
    /// assert_eq!(a.names().unwrap(), ["b", "a"]);
    /// a.set("b", &AttrValue::scalar(4i64)).unwrap();
    /// assert_eq!(a.names().unwrap(), ["a", "b"]);
    /// ```
    ///
    /// # Errors
    /// As for [`Attributes::set`].
    pub fn modify(&self, name: &str, v: &AttrValue) -> Result<()> {
        self.put(name, v, Put::Modify)
    }

    /// Create an attribute that must not exist yet.
    ///
    /// # Errors
    /// [`Error::AlreadyExists`], and as for [`Attributes::set`].
    pub fn create(&self, name: &str, v: &AttrValue) -> Result<()> {
        self.put(name, v, Put::Create)
    }

    /// Read an attribute.
    ///
    /// # Errors
    /// [`Error::NotFound`].
    pub fn get(&self, name: &str) -> Result<AttrValue> {
        let mut g = lock(&self.file)?;
        let h = Header::load(&mut g.st, self.owner)?;
        let encoded = btree::get(&mut g.st, h.attrs.root, name.as_bytes())?
            .ok_or_else(|| Error::NotFound(format!("attribute {name}")))?;
        let rec = AttrRecord::decode(
            &encoded,
            self.owner,
            g.st.space.eof(),
            h.attr_order.is_some(),
        )?;
        let mut data = rec.bytes(&g.st)?;
        let n = rec.shape.iter().product();
        let damaged =
            |e: Error| Error::corrupt("attribute value", self.owner, format!("{name}: {e}"));
        if rec.dtype.is_vlen() && !rec.dtype.takes_rows() {
            crate::format::vlen_attr::check_attr_payload(&rec.dtype, n, &data).map_err(damaged)?;
            crate::format::vlen_attr::swap_attr_payload(&rec.dtype, n, &mut data);
        } else if rec.dtype.has_vlen() {
            crate::format::rows::check_rows(&rec.dtype, n, &data).map_err(damaged)?;
            crate::format::rows::swap_rows(&rec.dtype, n, &mut data);
        } else if rec.dtype.needs_swap() {
            rec.dtype.swap(&mut data);
        }
        Ok(AttrValue {
            dtype: rec.dtype,
            shape: rec.shape,
            data,
            null: rec.null,
        })
    }

    /// Whether an attribute exists.
    ///
    /// # Errors
    /// Only for damage.
    pub fn contains(&self, name: &str) -> Result<bool> {
        let mut g = lock(&self.file)?;
        let h = Header::load(&mut g.st, self.owner)?;
        Ok(btree::get(&mut g.st, h.attrs.root, name.as_bytes())?.is_some())
    }

    /// Delete an attribute.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::ReadOnly`].
    pub fn delete(&self, name: &str) -> Result<()> {
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        let mut h = Header::load(&mut g.st, self.owner)?;
        let ordered = h.attr_order.is_some();
        let old = old_record(&mut g.st, h.attrs.root, name, self.owner, ordered)?
            .ok_or_else(|| Error::NotFound(format!("attribute {name}")))?;
        let (root, _) = btree::remove(&mut g.st, h.attrs.root, name.as_bytes())?;
        old.free(&mut g.st)?;
        h.attrs.root = root;
        h.attrs.count = h.attrs.count.saturating_sub(1);
        h.save(&mut g.st, self.owner)
    }

    /// Rename an attribute.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::AlreadyExists`], [`Error::ReadOnly`].
    pub fn rename(&self, from: &str, to: &str) -> Result<()> {
        check_name(to)?;
        let mut g = lock(&self.file)?;
        g.st.check_writable()?;
        let mut h = Header::load(&mut g.st, self.owner)?;
        if btree::get(&mut g.st, h.attrs.root, to.as_bytes())?.is_some() {
            return Err(Error::AlreadyExists(format!("attribute {to}")));
        }
        let (root, old) = btree::remove(&mut g.st, h.attrs.root, from.as_bytes())?;
        let old = old.ok_or_else(|| Error::NotFound(format!("attribute {from}")))?;
        h.attrs.root = btree::insert(&mut g.st, root, to.as_bytes(), &old, false)?.0;
        h.save(&mut g.st, self.owner)
    }

    /// Attribute names: in creation order where the object tracks it
    /// ([`crate::GroupOptions::track_order`],
    /// [`crate::DatasetOptions::track_order`]), else in name order.
    ///
    /// # Errors
    /// Only for damage.
    pub fn names(&self) -> Result<Vec<String>> {
        let mut g = lock(&self.file)?;
        let h = Header::load(&mut g.st, self.owner)?;
        let mut out = vec![];
        if h.attr_order.is_none() {
            btree::scan(&mut g.st, h.attrs.root, b"", &mut |k, _| {
                out.push(String::from_utf8_lossy(k).into_owned());
                Ok(true)
            })?;
            return Ok(out);
        }
        let eof = g.st.space.eof();
        let mut keyed = vec![];
        btree::scan(&mut g.st, h.attrs.root, b"", &mut |k, v| {
            let rec = AttrRecord::decode(v, self.owner, eof, true)?;
            keyed.push((rec.order, String::from_utf8_lossy(k).into_owned()));
            Ok(true)
        })?;
        keyed.sort();
        Ok(keyed.into_iter().map(|(_, n)| n).collect())
    }

    /// Whether the attributes are listed in creation order.
    ///
    /// # Errors
    /// Only for damage.
    pub fn track_order(&self) -> Result<bool> {
        let mut g = lock(&self.file)?;
        Ok(Header::load(&mut g.st, self.owner)?.attr_order.is_some())
    }

    /// Number of attributes.
    ///
    /// # Errors
    /// Only for damage.
    pub fn len(&self) -> Result<u64> {
        let mut g = lock(&self.file)?;
        Ok(Header::load(&mut g.st, self.owner)?.attrs.count)
    }

    /// Whether there are no attributes.
    ///
    /// # Errors
    /// Only for damage.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

/// How [`Attributes::put`] treats an attribute that exists.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Put {
    Create,
    Replace,
    Modify,
}

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > btree::MAX_KEY {
        return Err(Error::invalid(format!(
            "attribute name must be 1..={} bytes",
            btree::MAX_KEY
        )));
    }
    Ok(())
}

/// The record of attribute `name`, decoded and its blob checked live.
fn old_record(
    st: &mut Store,
    root: u64,
    name: &str,
    owner: u64,
    ordered: bool,
) -> Result<Option<AttrRecord>> {
    let Some(encoded) = btree::get(st, root, name.as_bytes())? else {
        return Ok(None);
    };
    let rec = AttrRecord::decode(&encoded, owner, st.space.eof(), ordered)?;
    if let Some(e) = rec.extent() {
        st.check_live("attribute blob", e.addr, e.size)?;
    }
    Ok(Some(rec))
}

/// Every extent the attributes of an object occupy: value blobs and the
/// attribute tree's pages.
pub(crate) fn extents(
    st: &mut Store,
    h: &Header,
    owner: u64,
    out: &mut Vec<Section>,
) -> Result<()> {
    let (eof, root, ordered) = (st.space.eof(), h.attrs.root, h.attr_order.is_some());
    btree::scan(st, root, b"", &mut |_, v| {
        out.extend(AttrRecord::decode(v, owner, eof, ordered)?.extent());
        Ok(true)
    })?;
    btree::extents(st, root, out)
}
