//! Rust-side tests: the extern functions called as C would call them, and
//! checks that `include/arca.h` matches this crate (functions, constants,
//! struct layouts).

use std::collections::BTreeMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::mem::offset_of;
use std::path::Path;
use std::ptr;

use crate::error::guard;
use crate::*;

fn last_error() -> String {
    // SAFETY: arca_last_error returns a valid NUL-terminated string.
    unsafe { CStr::from_ptr(arca_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn cs(s: &str) -> CString {
    CString::new(s).unwrap()
}

#[test]
fn write_read_through_the_c_entry_points() {
    let dir = tempfile::tempdir().unwrap();
    let path = cs(dir.path().join("t.arca").to_str().unwrap());
    // SAFETY: every pointer below is a live local or a handle from the API.
    unsafe {
        let mut f: *mut FileHandle = ptr::null_mut();
        assert_eq!(
            arca_file_open(path.as_ptr(), c"w".as_ptr(), &mut f),
            ARCA_OK
        );
        let mut root: *mut GroupHandle = ptr::null_mut();
        assert_eq!(arca_file_root(f, &mut root), ARCA_OK);

        let dims = [6u64, 4];
        let chunks = [4u64, 4];
        let filters = [
            FilterC {
                id: ARCA_FILTER_SHUFFLE,
                level: 0,
            },
            FilterC {
                id: ARCA_FILTER_GZIP,
                level: 4,
            },
        ];
        let mut o = std::mem::MaybeUninit::<DatasetOptsC>::uninit();
        assert_eq!(
            arca_dataset_opts_init(o.as_mut_ptr(), ARCA_DTYPE_UINT32, 2, dims.as_ptr()),
            ARCA_OK
        );
        let mut o = o.assume_init();
        o.order = ARCA_ORDER_BIG;
        o.chunks = chunks.as_ptr();
        o.filters = filters.as_ptr();
        o.nfilters = 2;
        let mut ds: *mut DatasetHandle = ptr::null_mut();
        assert_eq!(
            arca_dataset_create(root, c"a/b/m".as_ptr(), &o, &mut ds),
            ARCA_OK
        );
        let data: Vec<u32> = (0..24).map(|i| i * 1000 + 7).collect();
        assert_eq!(
            arca_dataset_write(
                ds,
                ptr::null(),
                ptr::null(),
                ptr::null(),
                data.as_ptr().cast(),
                96
            ),
            ARCA_OK
        );
        // Column 1, every other row.
        let (start, count, step) = ([0u64, 1], [3u64, 1], [2u64, 1]);
        let mut col = [0u32; 3];
        assert_eq!(
            arca_dataset_read(
                ds,
                start.as_ptr(),
                count.as_ptr(),
                step.as_ptr(),
                col.as_mut_ptr().cast(),
                12
            ),
            ARCA_OK
        );
        assert_eq!(col, [1007, 9007, 17007]);

        let mut a: *mut AttrsHandle = ptr::null_mut();
        assert_eq!(arca_dataset_attrs(ds, &mut a), ARCA_OK);
        assert_eq!(
            arca_attr_write_string(a, c"units".as_ptr(), c"K".as_ptr()),
            ARCA_OK
        );
        let mut s: *mut c_char = ptr::null_mut();
        assert_eq!(
            arca_attr_read_string_alloc(a, c"units".as_ptr(), &mut s),
            ARCA_OK
        );
        assert_eq!(CStr::from_ptr(s).to_str().unwrap(), "K");
        arca_string_free(s);
        assert_eq!(arca_attrs_close(a), ARCA_OK);
        assert_eq!(arca_dataset_close(ds), ARCA_OK);

        let mut st = StatC::default();
        assert_eq!(arca_stat(f, &mut st), ARCA_OK);
        assert_eq!((st.groups, st.datasets, st.attributes), (3, 1, 1));
        assert_eq!(arca_group_close(root), ARCA_OK);
        assert_eq!(arca_file_close(f), ARCA_OK);

        // The core crate reads what the C API wrote.
        let file = arca_core::File::open(dir.path().join("t.arca")).unwrap();
        let back: Vec<u32> = file.root().dataset("a/b/m").unwrap().read_all().unwrap();
        assert_eq!(back, data);
    }
}

#[test]
fn errors_carry_codes_and_messages() {
    // SAFETY: the pointers are NULL, string literals or live locals.
    unsafe {
        let mut f: *mut FileHandle = 1usize as *mut FileHandle;
        let rc = arca_file_open(c"/no/such/dir/x.arca".as_ptr(), c"r".as_ptr(), &mut f);
        assert_eq!(rc, ARCA_ERR_IO);
        assert!(f.is_null());
        assert!(
            last_error().contains("/no/such/dir/x.arca"),
            "{}",
            last_error()
        );

        let mut n = 0u64;
        assert_eq!(arca_group_count(ptr::null_mut(), &mut n), ARCA_ERR_NULL);
        assert_eq!(last_error(), "group is NULL");
        assert_eq!(
            CStr::from_ptr(arca_error_name(ARCA_ERR_NULL)).to_str(),
            Ok("ARCA_ERR_NULL")
        );
        assert_eq!(arca_file_close(ptr::null_mut()), ARCA_OK);
    }
}

#[test]
fn every_core_error_has_its_own_code() {
    use arca_core::Error;
    let io = std::io::Error::other("x");
    let errors = [
        Error::Io {
            context: "c".into(),
            source: io,
        },
        Error::Corrupt {
            what: "w",
            offset: 0,
            detail: "d".into(),
        },
        Error::NotFound("n".into()),
        Error::AlreadyExists("e".into()),
        Error::InvalidArgument("i".into()),
        Error::Unsupported("u".into()),
        Error::ReadOnly,
        Error::Locked("l".into()),
        Error::NeedsRecovery("r".into()),
        Error::Poisoned,
    ];
    let mut codes: Vec<i32> = errors.iter().map(crate::error::code_of).collect();
    assert!(codes.iter().all(|&c| c < 0 && c != ARCA_ERR_OTHER));
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), errors.len());
}

#[test]
fn panics_stop_at_the_boundary() {
    let rc = guard(|| panic!("boom"));
    assert_eq!(rc, ARCA_ERR_PANIC);
    assert!(last_error().contains("boom"));
    // The thread-local message is per thread.
    let other = std::thread::spawn(last_error).join().unwrap();
    assert_eq!(other, "");
}

#[test]
fn iteration_stops_with_the_callback_value() {
    unsafe extern "C" fn count(_: *const c_char, _: i32, user: *mut c_void) -> i32 {
        // SAFETY: `user` is the &mut i32 passed below.
        let n = unsafe { &mut *user.cast::<i32>() };
        *n += 1;
        if *n == 2 {
            7
        } else {
            0
        }
    }
    let f = arca_core::File::in_memory().unwrap();
    for g in ["a", "b", "c"] {
        f.root().create_group(g).unwrap();
    }
    let root = crate::ffi::into_handle(GroupHandle { group: f.root() });
    let mut n = 0i32;
    let p: *mut i32 = &mut n;
    // SAFETY: `root` is a live handle; `n` outlives the calls and is only
    // touched through `p` meanwhile.
    unsafe {
        assert_eq!(arca_group_iterate(root, Some(count), p.cast()), 7);
        assert_eq!(*p, 2);
        *p = 0;
        assert_eq!(arca_group_visit(root, Some(count), p.cast()), 7);
        assert_eq!(*p, 2);
        assert_eq!(arca_group_close(root), ARCA_OK);
    }
}

// ---- the header matches the crate ---------------------------------------

fn header() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/arca.h");
    std::fs::read_to_string(p).unwrap()
}

/// Names of the functions the header declares.
fn declared_functions(h: &str) -> Vec<String> {
    let mut out = vec![];
    for line in h.lines() {
        let t = line.trim_start();
        if t.starts_with('*') || t.starts_with("/*") || t.starts_with("typedef") {
            continue;
        }
        if let Some(i) = t.find("arca_") {
            let rest = &t[i..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if rest[name.len()..].starts_with('(') {
                out.push(name);
            }
        }
    }
    out.sort();
    out
}

/// Names of the functions this crate exports.
fn exported_functions() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let src = std::fs::read_to_string(e.unwrap().path()).unwrap();
        for line in src.lines() {
            for prefix in ["pub unsafe extern \"C\" fn ", "pub extern \"C\" fn "] {
                if let Some(rest) = line.strip_prefix(prefix) {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    out.push(name);
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn header_declares_exactly_the_exported_functions() {
    let declared = declared_functions(&header());
    let exported = exported_functions();
    assert!(exported.len() > 50, "{exported:?}");
    assert_eq!(declared, exported);
}

#[test]
fn header_constants_match() {
    let rust: BTreeMap<&str, i128> = [
        ("ARCA_OK", ARCA_OK as i128),
        ("ARCA_ERR_IO", ARCA_ERR_IO as i128),
        ("ARCA_ERR_CORRUPT", ARCA_ERR_CORRUPT as i128),
        ("ARCA_ERR_NOT_FOUND", ARCA_ERR_NOT_FOUND as i128),
        ("ARCA_ERR_EXISTS", ARCA_ERR_EXISTS as i128),
        ("ARCA_ERR_INVALID", ARCA_ERR_INVALID as i128),
        ("ARCA_ERR_UNSUPPORTED", ARCA_ERR_UNSUPPORTED as i128),
        ("ARCA_ERR_READ_ONLY", ARCA_ERR_READ_ONLY as i128),
        ("ARCA_ERR_LOCKED", ARCA_ERR_LOCKED as i128),
        ("ARCA_ERR_POISONED", ARCA_ERR_POISONED as i128),
        ("ARCA_ERR_NULL", ARCA_ERR_NULL as i128),
        ("ARCA_ERR_PANIC", ARCA_ERR_PANIC as i128),
        ("ARCA_ERR_NEEDS_RECOVERY", ARCA_ERR_NEEDS_RECOVERY as i128),
        ("ARCA_ERR_OTHER", ARCA_ERR_OTHER as i128),
        ("ARCA_MAX_RANK", arca_core::MAX_RANK as i128),
        ("ARCA_UNLIMITED", ARCA_UNLIMITED as i128),
        ("ARCA_DTYPE_BOOL", ARCA_DTYPE_BOOL as i128),
        ("ARCA_DTYPE_INT8", ARCA_DTYPE_INT8 as i128),
        ("ARCA_DTYPE_INT16", ARCA_DTYPE_INT16 as i128),
        ("ARCA_DTYPE_INT32", ARCA_DTYPE_INT32 as i128),
        ("ARCA_DTYPE_INT64", ARCA_DTYPE_INT64 as i128),
        ("ARCA_DTYPE_UINT8", ARCA_DTYPE_UINT8 as i128),
        ("ARCA_DTYPE_UINT16", ARCA_DTYPE_UINT16 as i128),
        ("ARCA_DTYPE_UINT32", ARCA_DTYPE_UINT32 as i128),
        ("ARCA_DTYPE_UINT64", ARCA_DTYPE_UINT64 as i128),
        ("ARCA_DTYPE_FLOAT32", ARCA_DTYPE_FLOAT32 as i128),
        ("ARCA_DTYPE_FLOAT64", ARCA_DTYPE_FLOAT64 as i128),
        ("ARCA_DTYPE_STRING", ARCA_DTYPE_STRING as i128),
        ("ARCA_DTYPE_VLEN", ARCA_DTYPE_VLEN as i128),
        ("ARCA_DTYPE_FLOAT16", ARCA_DTYPE_FLOAT16 as i128),
        ("ARCA_DTYPE_COMPLEX64", ARCA_DTYPE_COMPLEX64 as i128),
        ("ARCA_DTYPE_COMPLEX128", ARCA_DTYPE_COMPLEX128 as i128),
        ("ARCA_DTYPE_OPAQUE", ARCA_DTYPE_OPAQUE as i128),
        ("ARCA_DTYPE_ENUM", ARCA_DTYPE_ENUM as i128),
        ("ARCA_DTYPE_ARRAY", ARCA_DTYPE_ARRAY as i128),
        ("ARCA_DTYPE_COMPOUND", ARCA_DTYPE_COMPOUND as i128),
        ("ARCA_DTYPE_COMPLEX32", ARCA_DTYPE_COMPLEX32 as i128),
        ("ARCA_DTYPE_REFERENCE", ARCA_DTYPE_REFERENCE as i128),
        ("ARCA_ORDER_NATIVE", ARCA_ORDER_NATIVE as i128),
        ("ARCA_ORDER_LITTLE", ARCA_ORDER_LITTLE as i128),
        ("ARCA_ORDER_BIG", ARCA_ORDER_BIG as i128),
        ("ARCA_LAYOUT_AUTO", ARCA_LAYOUT_AUTO as i128),
        ("ARCA_LAYOUT_COMPACT", ARCA_LAYOUT_COMPACT as i128),
        ("ARCA_LAYOUT_CONTIGUOUS", ARCA_LAYOUT_CONTIGUOUS as i128),
        ("ARCA_LAYOUT_CHUNKED", ARCA_LAYOUT_CHUNKED as i128),
        ("ARCA_FILTER_SHUFFLE", ARCA_FILTER_SHUFFLE as i128),
        ("ARCA_FILTER_GZIP", ARCA_FILTER_GZIP as i128),
        ("ARCA_FILTER_ZSTD", ARCA_FILTER_ZSTD as i128),
        ("ARCA_FILTER_LZ4", ARCA_FILTER_LZ4 as i128),
        ("ARCA_FILTER_HDF5", ARCA_FILTER_HDF5 as i128),
        ("ARCA_KIND_GROUP", ARCA_KIND_GROUP as i128),
        ("ARCA_KIND_DATASET", ARCA_KIND_DATASET as i128),
        ("ARCA_KIND_LINK", ARCA_KIND_LINK as i128),
        ("ARCA_LINK_HARD", ARCA_LINK_HARD as i128),
        ("ARCA_LINK_SOFT", ARCA_LINK_SOFT as i128),
        ("ARCA_LINK_EXTERNAL", ARCA_LINK_EXTERNAL as i128),
    ]
    .into_iter()
    .collect();
    let mut header_defs = BTreeMap::new();
    for line in header().lines() {
        let Some(rest) = line.strip_prefix("#define ARCA_") else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let name = format!("ARCA_{}", parts.next().unwrap());
        let Some(v) = parts.next() else { continue };
        let v = v.trim_start_matches('(').trim_end_matches(')');
        let value: i128 = if v == "UINT64_MAX" {
            u64::MAX as i128
        } else {
            v.parse().unwrap_or_else(|_| panic!("{name} = {v}"))
        };
        header_defs.insert(name, value);
    }
    let header_defs: BTreeMap<&str, i128> =
        header_defs.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(header_defs, rust);
}

/// Compile a probe against the header with the system C compiler and
/// compare its struct sizes and field offsets with the Rust definitions.
#[test]
fn header_struct_layouts_match() {
    let fields: &[(&str, &str, usize)] = &[
        ("arca_filter_t", "id", offset_of!(FilterC, id)),
        ("arca_filter_t", "level", offset_of!(FilterC, level)),
        (
            "arca_dataset_opts_t",
            "dtype",
            offset_of!(DatasetOptsC, dtype),
        ),
        (
            "arca_dataset_opts_t",
            "order",
            offset_of!(DatasetOptsC, order),
        ),
        (
            "arca_dataset_opts_t",
            "str_len",
            offset_of!(DatasetOptsC, str_len),
        ),
        (
            "arca_dataset_opts_t",
            "rank",
            offset_of!(DatasetOptsC, rank),
        ),
        (
            "arca_dataset_opts_t",
            "dims",
            offset_of!(DatasetOptsC, dims),
        ),
        (
            "arca_dataset_opts_t",
            "maxdims",
            offset_of!(DatasetOptsC, maxdims),
        ),
        (
            "arca_dataset_opts_t",
            "chunks",
            offset_of!(DatasetOptsC, chunks),
        ),
        (
            "arca_dataset_opts_t",
            "filters",
            offset_of!(DatasetOptsC, filters),
        ),
        (
            "arca_dataset_opts_t",
            "nfilters",
            offset_of!(DatasetOptsC, nfilters),
        ),
        (
            "arca_dataset_opts_t",
            "fill_value",
            offset_of!(DatasetOptsC, fill_value),
        ),
        (
            "arca_dataset_opts_t",
            "fill_size",
            offset_of!(DatasetOptsC, fill_size),
        ),
        (
            "arca_dataset_opts_t",
            "layout",
            offset_of!(DatasetOptsC, layout),
        ),
        (
            "arca_dataset_opts_t",
            "type_str",
            offset_of!(DatasetOptsC, type_str),
        ),
        (
            "arca_dataset_opts_t",
            "track_order",
            offset_of!(DatasetOptsC, track_order),
        ),
        ("arca_stat_t", "groups", offset_of!(StatC, groups)),
        ("arca_stat_t", "datasets", offset_of!(StatC, datasets)),
        ("arca_stat_t", "attributes", offset_of!(StatC, attributes)),
        ("arca_stat_t", "chunks", offset_of!(StatC, chunks)),
        ("arca_stat_t", "file_bytes", offset_of!(StatC, file_bytes)),
        (
            "arca_stat_t",
            "superblock_bytes",
            offset_of!(StatC, superblock_bytes),
        ),
        (
            "arca_stat_t",
            "metadata_bytes",
            offset_of!(StatC, metadata_bytes),
        ),
        ("arca_stat_t", "raw_bytes", offset_of!(StatC, raw_bytes)),
        (
            "arca_stat_t",
            "raw_logical_bytes",
            offset_of!(StatC, raw_logical_bytes),
        ),
        (
            "arca_stat_t",
            "unused_bytes",
            offset_of!(StatC, unused_bytes),
        ),
        ("arca_stat_t", "free_bytes", offset_of!(StatC, free_bytes)),
        (
            "arca_stat_t",
            "free_sections",
            offset_of!(StatC, free_sections),
        ),
        (
            "arca_stat_t",
            "compact_bytes",
            offset_of!(StatC, compact_bytes),
        ),
        ("arca_attr_info_t", "dtype", offset_of!(AttrInfoC, dtype)),
        ("arca_attr_info_t", "order", offset_of!(AttrInfoC, order)),
        ("arca_attr_info_t", "rank", offset_of!(AttrInfoC, rank)),
        (
            "arca_attr_info_t",
            "elem_size",
            offset_of!(AttrInfoC, elem_size),
        ),
        ("arca_attr_info_t", "shape", offset_of!(AttrInfoC, shape)),
        ("arca_attr_info_t", "nelems", offset_of!(AttrInfoC, nelems)),
        ("arca_attr_info_t", "nbytes", offset_of!(AttrInfoC, nbytes)),
    ];
    let sizes: &[(&str, usize)] = &[
        ("arca_filter_t", size_of::<FilterC>()),
        ("arca_dataset_opts_t", size_of::<DatasetOptsC>()),
        ("arca_stat_t", size_of::<StatC>()),
        ("arca_attr_info_t", size_of::<AttrInfoC>()),
    ];
    let mut src = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"arca.h\"\nint main(void) {\n",
    );
    for (t, f, _) in fields {
        src += &format!("printf(\"{t}.{f} %zu\\n\", offsetof({t}, {f}));\n");
    }
    for (t, _) in sizes {
        src += &format!("printf(\"{t} %zu\\n\", sizeof({t}));\n");
    }
    src += "return 0;\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("probe.c");
    let exe = dir.path().join("probe");
    std::fs::write(&c, src).unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".into());
    let status = std::process::Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Werror", "-I"])
        .arg(&include)
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("running {cc}: {e}"));
    assert!(status.success(), "the header does not compile");
    let out = std::process::Command::new(&exe).output().unwrap();
    let got: BTreeMap<String, usize> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect();
    let mut want = BTreeMap::new();
    for (t, f, off) in fields {
        want.insert(format!("{t}.{f}"), *off);
    }
    for (t, s) in sizes {
        want.insert(t.to_string(), *s);
    }
    assert_eq!(got, want);
}

#[test]
fn variable_length_datasets_are_reported_not_read() {
    let f = arca_core::File::in_memory().unwrap();
    let opts = arca_core::DatasetOptions::new(arca_core::Datatype::VlenStr, &[3]);
    let ds = f.root().create_dataset("names", &opts).unwrap();
    let h = crate::ffi::into_handle(DatasetHandle { ds });
    // SAFETY: `h` is a live handle; the out-pointers are locals.
    unsafe {
        let (mut t, mut o, mut s) = (0i32, -1i32, 0usize);
        assert_eq!(arca_dataset_dtype(h, &mut t, &mut o, &mut s), ARCA_OK);
        assert_eq!((t, o), (ARCA_DTYPE_VLEN, ARCA_ORDER_NATIVE));
        let mut name = [0 as c_char; 16];
        assert_eq!(
            arca_dataset_dtype_str(h, name.as_mut_ptr(), 16, ptr::null_mut()),
            ARCA_OK
        );
        assert_eq!(CStr::from_ptr(name.as_ptr()).to_str(), Ok("vlen:str"));
        let mut buf = [0u8; 64];
        let rc = arca_dataset_read(
            h,
            ptr::null(),
            ptr::null(),
            ptr::null(),
            buf.as_mut_ptr().cast(),
            64,
        );
        assert_eq!(rc, ARCA_ERR_UNSUPPORTED);
        assert!(last_error().contains("variable-length"));
        assert_eq!(arca_dataset_close(h), ARCA_OK);
    }
}
