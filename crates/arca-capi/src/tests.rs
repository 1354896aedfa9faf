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
        ("ARCA_DTYPE_LONGDOUBLE", ARCA_DTYPE_LONGDOUBLE as i128),
        ("ARCA_DTYPE_CLONGDOUBLE", ARCA_DTYPE_CLONGDOUBLE as i128),
        ("ARCA_DTYPE_BITFIELD", ARCA_DTYPE_BITFIELD as i128),
        ("ARCA_DTYPE_TIME", ARCA_DTYPE_TIME as i128),
        ("ARCA_ORDER_NATIVE", ARCA_ORDER_NATIVE as i128),
        ("ARCA_ORDER_LITTLE", ARCA_ORDER_LITTLE as i128),
        ("ARCA_ORDER_BIG", ARCA_ORDER_BIG as i128),
        ("ARCA_LAYOUT_AUTO", ARCA_LAYOUT_AUTO as i128),
        ("ARCA_LAYOUT_COMPACT", ARCA_LAYOUT_COMPACT as i128),
        ("ARCA_LAYOUT_CONTIGUOUS", ARCA_LAYOUT_CONTIGUOUS as i128),
        ("ARCA_LAYOUT_CHUNKED", ARCA_LAYOUT_CHUNKED as i128),
        ("ARCA_LAYOUT_VIRTUAL", ARCA_LAYOUT_VIRTUAL as i128),
        ("ARCA_LAYOUT_EXTERNAL", ARCA_LAYOUT_EXTERNAL as i128),
        ("ARCA_FILTER_SHUFFLE", ARCA_FILTER_SHUFFLE as i128),
        ("ARCA_FILTER_GZIP", ARCA_FILTER_GZIP as i128),
        ("ARCA_FILTER_ZSTD", ARCA_FILTER_ZSTD as i128),
        ("ARCA_FILTER_LZ4", ARCA_FILTER_LZ4 as i128),
        ("ARCA_FILTER_HDF5", ARCA_FILTER_HDF5 as i128),
        ("ARCA_KIND_GROUP", ARCA_KIND_GROUP as i128),
        ("ARCA_KIND_DATASET", ARCA_KIND_DATASET as i128),
        ("ARCA_KIND_LINK", ARCA_KIND_LINK as i128),
        ("ARCA_KIND_DATATYPE", ARCA_KIND_DATATYPE as i128),
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
        ("arca_stat_t", "data_bytes", offset_of!(StatC, data_bytes)),
        (
            "arca_stat_t",
            "data_logical_bytes",
            offset_of!(StatC, data_logical_bytes),
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
        (
            "arca_written_chunk_t",
            "offset",
            offset_of!(WrittenChunkC, offset),
        ),
        (
            "arca_written_chunk_t",
            "addr",
            offset_of!(WrittenChunkC, addr),
        ),
        (
            "arca_written_chunk_t",
            "len",
            offset_of!(WrittenChunkC, len),
        ),
        (
            "arca_written_chunk_t",
            "mask",
            offset_of!(WrittenChunkC, mask),
        ),
        (
            "arca_written_chunk_t",
            "crc",
            offset_of!(WrittenChunkC, crc),
        ),
        (
            "arca_slab_desc_t",
            "type_str",
            offset_of!(SlabDescC, type_str),
        ),
        (
            "arca_slab_desc_t",
            "elem_size",
            offset_of!(SlabDescC, elem_size),
        ),
        ("arca_slab_desc_t", "rank", offset_of!(SlabDescC, rank)),
        ("arca_slab_desc_t", "dims", offset_of!(SlabDescC, dims)),
        ("arca_slab_desc_t", "chunks", offset_of!(SlabDescC, chunks)),
        (
            "arca_slab_desc_t",
            "filters",
            offset_of!(SlabDescC, filters),
        ),
        (
            "arca_slab_desc_t",
            "nfilters",
            offset_of!(SlabDescC, nfilters),
        ),
        (
            "arca_slab_desc_t",
            "fill_value",
            offset_of!(SlabDescC, fill_value),
        ),
        (
            "arca_slab_desc_t",
            "fill_size",
            offset_of!(SlabDescC, fill_size),
        ),
    ];
    let sizes: &[(&str, usize)] = &[
        ("arca_filter_t", size_of::<FilterC>()),
        ("arca_dataset_opts_t", size_of::<DatasetOptsC>()),
        ("arca_stat_t", size_of::<StatC>()),
        ("arca_attr_info_t", size_of::<AttrInfoC>()),
        ("arca_written_chunk_t", size_of::<WrittenChunkC>()),
        ("arca_slab_desc_t", size_of::<SlabDescC>()),
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

// ---- chunks written by other processes -----------------------------------

const ROWS: u64 = 50;
const COLS: u64 = 24;

fn slab_rows(r0: u64, r1: u64) -> Vec<f32> {
    (r0 * COLS..r1 * COLS)
        .map(|i| ((i * 7919) % 2001) as f32 / 8.0 - 125.0)
        .collect()
}

/// The elements of the box `start`..`start + count` of a row block that
/// begins at row `r0` (all columns).
fn sub_box(block: &[f32], r0: u64, start: &[u64], count: &[u64]) -> Vec<f32> {
    let mut out = vec![];
    for r in start[0]..start[0] + count[0] {
        let at = ((r - r0) * COLS + start[1]) as usize;
        out.extend_from_slice(&block[at..at + count[1] as usize]);
    }
    out
}

fn parallel_opts(order: arca_core::ByteOrder) -> arca_core::DatasetOptions {
    use arca_core::{DatasetOptions, Datatype, Filter};
    let t = Datatype::Float { size: 4, order };
    DatasetOptions::new(t, &[ROWS, COLS])
        .chunks(&[16, 8])
        .filters(&[Filter::Shuffle, Filter::Zstd(3)])
        .fill_value(&(-1.0f32).to_ne_bytes())
}

/// What one block of the parallel write gave: chunks as written, and
/// its parts of shared chunks with their elements.
type Encoded = (
    Vec<(Vec<u64>, u64, u64, u32, u32)>,
    Vec<(Vec<u64>, Vec<u64>, Vec<f32>)>,
);

/// Write a block's whole chunks at `*at` through `fd`, as another process
/// would; its chunks and partial parts.
unsafe fn write_slab(b: *mut SlabHandle, fd: i32, at: &mut u64, rows: &[f32], r0: u64) -> Encoded {
    // SAFETY: `b` is a live block; the out-pointers are locals.
    unsafe {
        let mut p: *const c_void = ptr::null();
        let mut len = 0usize;
        assert_eq!(arca_slab_bytes(b, &mut p, &mut len), ARCA_OK);
        assert_eq!(arca_write_out(fd, p, len, *at), ARCA_OK);
        let mut n = 0usize;
        assert_eq!(arca_slab_nchunks(b, &mut n), ARCA_OK);
        let mut chunks = vec![];
        let mut pos = *at;
        for i in 0..n {
            let mut off = [0u64; 2];
            let (mut l, mut m, mut c) = (0u64, 0u32, 0u32);
            assert_eq!(
                arca_slab_chunk(b, i, off.as_mut_ptr(), &mut l, &mut m, &mut c),
                ARCA_OK
            );
            chunks.push((off.to_vec(), pos, l, m, c));
            pos += l;
        }
        assert_eq!(pos - *at, len as u64);
        *at = pos;
        let mut np = 0usize;
        assert_eq!(arca_slab_npartial(b, &mut np), ARCA_OK);
        let mut parts = vec![];
        for i in 0..np {
            let (mut s, mut c) = ([0u64; 2], [0u64; 2]);
            assert_eq!(
                arca_slab_partial(b, i, s.as_mut_ptr(), c.as_mut_ptr()),
                ARCA_OK
            );
            parts.push((s.to_vec(), c.to_vec(), sub_box(rows, r0, &s, &c)));
        }
        (chunks, parts)
    }
}

#[test]
fn blocks_written_through_descriptors_read_as_a_serial_write() {
    use arca_core::ByteOrder;
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.arca");
    let f = arca_core::File::create(&path).unwrap();
    for (name, order, type_str) in [
        ("little", ByteOrder::Little, c"<f4"),
        ("big", ByteOrder::Big, c">f4"),
    ] {
        let serial = f
            .root()
            .create_dataset(&format!("{name}-serial"), &parallel_opts(order))
            .unwrap();
        // Two blocks that split the chunk row 16..32 between them.
        let (a, b) = (slab_rows(0, 21), slab_rows(21, ROWS));
        serial.write_all(&[a.clone(), b.clone()].concat()).unwrap();
        let ds = f
            .root()
            .create_dataset(name, &parallel_opts(order))
            .unwrap();
        let fh = crate::ffi::into_handle(FileHandle { file: f.clone() });
        let dh = crate::ffi::into_handle(DatasetHandle { ds: ds.clone() });
        let writer = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let fd = writer.as_raw_fd();
        // SAFETY: live handles; the arrays are locals that outlive the calls.
        unsafe {
            // Block a as the holder cuts it, block b as a process without
            // the file does, from a description.
            let (sa, ca) = ([0u64, 0], [21u64, COLS]);
            let (sb, cb) = ([21u64, 0], [ROWS - 21, COLS]);
            let mut ba: *mut SlabHandle = ptr::null_mut();
            assert_eq!(
                arca_encode_slab(
                    dh,
                    sa.as_ptr(),
                    ca.as_ptr(),
                    a.as_ptr().cast(),
                    a.len() * 4,
                    &mut ba
                ),
                ARCA_OK,
                "{}",
                last_error()
            );
            let dims = [ROWS, COLS];
            let chunks = [16u64, 8];
            let fl = [
                FilterC {
                    id: ARCA_FILTER_SHUFFLE,
                    level: 0,
                },
                FilterC {
                    id: ARCA_FILTER_ZSTD,
                    level: 3,
                },
            ];
            let fill = -1.0f32;
            let desc = SlabDescC {
                type_str: type_str.as_ptr(),
                elem_size: 4,
                rank: 2,
                dims: dims.as_ptr(),
                chunks: chunks.as_ptr(),
                filters: fl.as_ptr(),
                nfilters: 2,
                fill_value: (&fill as *const f32).cast(),
                fill_size: 4,
            };
            let mut bb: *mut SlabHandle = ptr::null_mut();
            assert_eq!(
                arca_encode_slab_desc(
                    &desc,
                    sb.as_ptr(),
                    cb.as_ptr(),
                    b.as_ptr().cast(),
                    b.len() * 4,
                    &mut bb
                ),
                ARCA_OK,
                "{}",
                last_error()
            );
            // The same block cut both ways gives the same bytes.
            let mut same: *mut SlabHandle = ptr::null_mut();
            assert_eq!(
                arca_encode_slab(
                    dh,
                    sb.as_ptr(),
                    cb.as_ptr(),
                    b.as_ptr().cast(),
                    b.len() * 4,
                    &mut same
                ),
                ARCA_OK
            );
            assert_eq!((*same).slab.bytes, (*bb).slab.bytes);
            assert_eq!((*same).slab.chunks, (*bb).slab.chunks);
            assert_eq!((*same).slab.partial, (*bb).slab.partial);
            arca_slab_free(same);
            // Rows 0..16 of a: 3 chunks; rows 32..50 of b: 3 chunks of rows
            // 32..48 and 3 running past the extent at 48..64.
            let (mut na, mut nb) = (0usize, 0usize);
            assert_eq!(arca_slab_nchunks(ba, &mut na), ARCA_OK);
            assert_eq!(arca_slab_nchunks(bb, &mut nb), ARCA_OK);
            assert_eq!((na, nb), (3, 6));

            assert_eq!(arca_file_begin_transaction(fh), ARCA_OK);
            let mut at = 0u64;
            let room = (na + nb) as u64 * 16 * 8 * 4;
            assert_eq!(arca_dataset_reserve_chunks(dh, room, &mut at), ARCA_OK);
            let mut pos = at;
            let (wa, pa) = write_slab(ba, fd, &mut pos, &a, 0);
            let (wb, pb) = write_slab(bb, fd, &mut pos, &b, 21);
            assert!(pos - at <= room);
            arca_slab_free(ba);
            arca_slab_free(bb);
            let written: Vec<_> = wa.iter().chain(&wb).cloned().collect();
            let w: Vec<WrittenChunkC> = written
                .iter()
                .map(|(o, addr, len, mask, crc)| WrittenChunkC {
                    offset: o.as_ptr(),
                    addr: *addr,
                    len: *len,
                    mask: *mask,
                    crc: *crc,
                })
                .collect();
            assert_eq!(
                arca_dataset_seal_chunks(dh, w.as_ptr(), w.len()),
                ARCA_OK,
                "{}",
                last_error()
            );
            for (s, c, data) in pa.iter().chain(&pb) {
                assert_eq!(
                    arca_dataset_write(
                        dh,
                        s.as_ptr(),
                        c.as_ptr(),
                        ptr::null(),
                        data.as_ptr().cast(),
                        data.len() * 4
                    ),
                    ARCA_OK
                );
            }
            assert_eq!(
                arca_file_end_transaction(fh, 1),
                ARCA_OK,
                "{}",
                last_error()
            );
            assert_eq!(arca_dataset_close(dh), ARCA_OK);
            // The core handle stays open: free the C handle alone.
            drop(crate::ffi::take_handle(fh));
        }
        assert_eq!(
            ds.read_all::<f32>().unwrap(),
            serial.read_all::<f32>().unwrap()
        );
        // The same chunks, compressed alike.
        assert_eq!(ds.stored_chunks().unwrap(), serial.stored_chunks().unwrap());
    }
    f.check().unwrap();
    drop(f);
    let f = arca_core::File::open(&path).unwrap();
    let a = f.root().dataset("big").unwrap().read_all::<f32>().unwrap();
    assert_eq!(a, [slab_rows(0, 21), slab_rows(21, ROWS)].concat());
    f.check().unwrap();
}

#[test]
fn reserved_space_and_blocks_refuse_bad_calls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.arca");
    let f = arca_core::File::create(&path).unwrap();
    let ds = f
        .root()
        .create_dataset("x", &parallel_opts(arca_core::ByteOrder::NATIVE))
        .unwrap();
    ds.write_all(&slab_rows(0, ROWS)).unwrap();
    let plain = arca_core::DatasetOptions::new(arca_core::Datatype::float(4), &[4]);
    let contiguous = f.root().create_dataset("c", &plain).unwrap();
    let fh = crate::ffi::into_handle(FileHandle { file: f.clone() });
    let dh = crate::ffi::into_handle(DatasetHandle { ds: ds.clone() });
    let ch = crate::ffi::into_handle(DatasetHandle { ds: contiguous });
    let rows = slab_rows(0, 16);
    // SAFETY: live handles and locals; NULLs where the test says so.
    unsafe {
        let mut at = 0u64;
        // Outside a transaction.
        assert_eq!(
            arca_dataset_reserve_chunks(dh, 512, &mut at),
            ARCA_ERR_INVALID
        );
        assert!(last_error().contains("transaction"), "{}", last_error());
        assert_eq!(arca_file_end_transaction(fh, 1), ARCA_ERR_INVALID);
        assert_eq!(arca_file_begin_transaction(ptr::null_mut()), ARCA_ERR_NULL);
        assert_eq!(
            arca_dataset_reserve_chunks(dh, 512, ptr::null_mut()),
            ARCA_ERR_NULL
        );
        // Reserved and not sealed: the commit rolls back and says so.
        assert_eq!(arca_file_begin_transaction(fh), ARCA_OK);
        assert_eq!(arca_dataset_reserve_chunks(dh, 512, &mut at), ARCA_OK);
        assert_eq!(
            arca_dataset_reserve_chunks(ch, 512, &mut at),
            ARCA_ERR_INVALID
        );
        // A chunk outside the reserved space, and one off the grid.
        let off = [0u64, 0];
        let w = WrittenChunkC {
            offset: off.as_ptr(),
            addr: at + 512,
            len: 8,
            mask: 0,
            crc: 0,
        };
        assert_eq!(arca_dataset_seal_chunks(dh, &w, 1), ARCA_ERR_INVALID);
        assert!(last_error().contains("outside"), "{}", last_error());
        let odd = [3u64, 0];
        let w = WrittenChunkC {
            offset: odd.as_ptr(),
            addr: at,
            len: 8,
            mask: 0,
            crc: 0,
        };
        assert_eq!(arca_dataset_seal_chunks(dh, &w, 1), ARCA_ERR_INVALID);
        let w = WrittenChunkC {
            offset: ptr::null(),
            addr: at,
            len: 8,
            mask: 0,
            crc: 0,
        };
        assert_eq!(arca_dataset_seal_chunks(dh, &w, 1), ARCA_ERR_NULL);
        assert_eq!(arca_dataset_seal_chunks(dh, ptr::null(), 1), ARCA_ERR_NULL);
        assert_eq!(arca_file_end_transaction(fh, 1), ARCA_ERR_INVALID);
        assert!(last_error().contains("rolled back"), "{}", last_error());
        assert_eq!(ds.read_all::<f32>().unwrap(), slab_rows(0, ROWS));
        // A rollback by hand leaves the data too.
        assert_eq!(arca_file_begin_transaction(fh), ARCA_OK);
        let zeros = vec![0f32; (ROWS * COLS) as usize];
        assert_eq!(
            arca_dataset_write(
                dh,
                ptr::null(),
                ptr::null(),
                ptr::null(),
                zeros.as_ptr().cast(),
                zeros.len() * 4
            ),
            ARCA_OK
        );
        assert_eq!(arca_file_end_transaction(fh, 0), ARCA_OK);
        assert_eq!(ds.read_all::<f32>().unwrap(), slab_rows(0, ROWS));

        // Blocks: wrong size, outside the extent, contiguous, NULLs.
        let mut b: *mut SlabHandle = 1usize as *mut SlabHandle;
        let (s, c) = ([0u64, 0], [16u64, COLS]);
        assert_eq!(
            arca_encode_slab(dh, s.as_ptr(), c.as_ptr(), rows.as_ptr().cast(), 4, &mut b),
            ARCA_ERR_INVALID
        );
        assert!(b.is_null());
        let far = [40u64, 0];
        assert_eq!(
            arca_encode_slab(
                dh,
                far.as_ptr(),
                c.as_ptr(),
                rows.as_ptr().cast(),
                rows.len() * 4,
                &mut b
            ),
            ARCA_ERR_INVALID
        );
        assert!(last_error().contains("extent"), "{}", last_error());
        let (s1, c1) = ([0u64], [4u64]);
        assert_eq!(
            arca_encode_slab(
                ch,
                s1.as_ptr(),
                c1.as_ptr(),
                rows.as_ptr().cast(),
                16,
                &mut b
            ),
            ARCA_ERR_INVALID
        );
        assert!(last_error().contains("not chunked"), "{}", last_error());
        assert_eq!(
            arca_encode_slab(
                dh,
                ptr::null(),
                c.as_ptr(),
                rows.as_ptr().cast(),
                rows.len() * 4,
                &mut b
            ),
            ARCA_ERR_NULL
        );
        assert_eq!(
            arca_encode_slab(
                dh,
                s.as_ptr(),
                c.as_ptr(),
                ptr::null(),
                rows.len() * 4,
                &mut b
            ),
            ARCA_ERR_NULL
        );
        assert_eq!(
            arca_encode_slab(
                dh,
                s.as_ptr(),
                c.as_ptr(),
                rows.as_ptr().cast(),
                rows.len() * 4,
                ptr::null_mut()
            ),
            ARCA_ERR_NULL
        );
        // Descriptions: a size that is not the type's, no dims, a scalar,
        // a filter no dataset could have, a fill of the wrong size.
        let dims = [ROWS, COLS];
        let chunks = [16u64, 8];
        let mut d = SlabDescC {
            type_str: c"<f4".as_ptr(),
            elem_size: 8,
            rank: 2,
            dims: dims.as_ptr(),
            chunks: chunks.as_ptr(),
            filters: ptr::null(),
            nfilters: 0,
            fill_value: ptr::null(),
            fill_size: 0,
        };
        let n = rows.len() * 4;
        let go = |d: &SlabDescC, b: &mut *mut SlabHandle| {
            arca_encode_slab_desc(d, s.as_ptr(), c.as_ptr(), rows.as_ptr().cast(), n, b)
        };
        assert_eq!(go(&d, &mut b), ARCA_ERR_INVALID);
        d.elem_size = 0;
        assert_eq!(go(&d, &mut b), ARCA_OK);
        arca_slab_free(b);
        d.type_str = ptr::null();
        assert_eq!(go(&d, &mut b), ARCA_ERR_INVALID);
        d.elem_size = 4;
        assert_eq!(go(&d, &mut b), ARCA_OK);
        arca_slab_free(b);
        d.dims = ptr::null();
        assert_eq!(go(&d, &mut b), ARCA_ERR_NULL);
        d.dims = dims.as_ptr();
        d.rank = 0;
        assert_eq!(go(&d, &mut b), ARCA_ERR_INVALID);
        d.rank = 2;
        let bad = FilterC { id: 99, level: 0 };
        d.filters = &bad;
        d.nfilters = 1;
        assert_eq!(go(&d, &mut b), ARCA_ERR_INVALID);
        d.nfilters = 0;
        let fill = 1u16;
        d.fill_value = (&fill as *const u16).cast();
        d.fill_size = 2;
        assert_eq!(go(&d, &mut b), ARCA_ERR_INVALID);
        assert_eq!(
            arca_encode_slab_desc(
                ptr::null(),
                s.as_ptr(),
                c.as_ptr(),
                rows.as_ptr().cast(),
                n,
                &mut b
            ),
            ARCA_ERR_NULL
        );

        // Accessors: past the end, NULLs.
        assert_eq!(
            arca_encode_slab(dh, s.as_ptr(), c.as_ptr(), rows.as_ptr().cast(), n, &mut b),
            ARCA_OK
        );
        let mut k = 0usize;
        assert_eq!(arca_slab_nchunks(b, &mut k), ARCA_OK);
        assert_eq!(k, 3);
        assert_eq!(arca_slab_npartial(b, &mut k), ARCA_OK);
        assert_eq!(k, 0);
        assert_eq!(
            arca_slab_chunk(
                b,
                3,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut()
            ),
            ARCA_ERR_INVALID
        );
        assert_eq!(
            arca_slab_chunk(
                b,
                2,
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut()
            ),
            ARCA_OK
        );
        assert_eq!(
            arca_slab_partial(b, 0, ptr::null_mut(), ptr::null_mut()),
            ARCA_ERR_INVALID
        );
        assert_eq!(arca_slab_nchunks(ptr::null(), &mut k), ARCA_ERR_NULL);
        assert_eq!(arca_slab_nchunks(b, ptr::null_mut()), ARCA_ERR_NULL);
        assert_eq!(
            arca_slab_bytes(b, ptr::null_mut(), ptr::null_mut()),
            ARCA_ERR_NULL
        );
        arca_slab_free(b);
        arca_slab_free(ptr::null_mut());

        // Writes: a bad descriptor, one open read-only.
        let bytes = [1u8; 4];
        assert_eq!(
            arca_write_out(-1, bytes.as_ptr().cast(), 4, 0),
            ARCA_ERR_INVALID
        );
        assert_eq!(arca_write_out(0, ptr::null(), 4, 0), ARCA_ERR_NULL);
        use std::os::fd::AsRawFd;
        let ro = std::fs::File::open(&path).unwrap();
        assert_eq!(
            arca_write_out(ro.as_raw_fd(), bytes.as_ptr().cast(), 4, 0),
            ARCA_ERR_IO
        );
        // Nothing written is nothing to do.
        assert_eq!(arca_write_out(ro.as_raw_fd(), ptr::null(), 0, 0), ARCA_OK);

        assert_eq!(arca_dataset_close(dh), ARCA_OK);
        assert_eq!(arca_dataset_close(ch), ARCA_OK);
        drop(crate::ffi::take_handle(fh));
    }
    f.check().unwrap();
}
