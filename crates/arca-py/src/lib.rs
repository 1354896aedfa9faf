//! `arca._native`: the thin native layer under the `arca` Python package.
//!
//! Each class mirrors one type of the Rust crate one-to-one, one per file:
//! [`arca::File`] in `file.rs`, [`arca::Group`] in `group.rs`,
//! [`arca::Dataset`] in `dataset.rs`, [`arca::Attributes`] in `attrs.rs`,
//! [`arca::NamedType`] in `named_type.rs`; the fast path of dataset
//! indexing (common keys parsed and read in one call) in `fastread.rs`.
//! The functions beside them are grouped by job: variable-length data
//! (`vlen.rs`), stored chunks (`chunks.rs`), type strings (`types.rs`),
//! region references and selections (`regions.rs`) and
//! the core's free lists (`pools.rs`); `error.rs` maps errors and
//! `fileobj.rs` drives files held by Python objects. This file holds the
//! module definition and the helpers several of them share. The h5py-like
//! behaviour (numpy indexing, dtype handling, mapping semantics) lives in the
//! pure-Python package `python/arca/`. Element data crosses the boundary as
//! flat `uint8` numpy arrays so that reads land directly in the array the
//! caller gets back and writes read straight from the caller's buffer; the GIL
//! is released for every call that touches storage.
//!
//! ```python
//! from arca import _native
//! f = _native.File("x.arca", "w")
//! ds = f.root().create_dataset("d", "<f8", [4], None, None, [], None)
//! ds.write([0], [4], [1], np.arange(4.0).view(np.uint8))
//! f.close()
//! ```

mod attrs;
mod chunks;
mod cli;
mod dataset;
mod error;
mod fastread;
mod file;
mod fileobj;
mod group;
mod named_type;
mod pools;
mod regions;
mod types;
mod view;
mod vlen;

use arca::Filter;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use attrs::PyAttributes;
use dataset::PyDataset;
use error::{err, ArcaError, CorruptError, LockedError, NeedsRecoveryError};
use error::{ConflictError, PoisonedError, ReadOnlyError, RemoteError, UnsupportedError};
use file::PyFile;
use group::PyGroup;
use named_type::PyNamedType;

/// Turn a core result into a Python one, mapping the error.
fn cvt<T>(r: arca::Result<T>) -> PyResult<T> {
    r.map_err(err)
}

/// An HDF5 filter as h5py's `get_filter` gives it: `(id, flags, values, name)`.
pub(crate) type H5FilterTuple = (u16, u16, Vec<u32>, String);

/// Parse a pipeline as `Dataset.filters()` lists it: `[(name, level)]`.
pub(crate) fn parse_filters(fs: &[(String, Option<i32>)]) -> PyResult<Vec<Filter>> {
    fs.iter().map(|(n, l)| parse_filter(n, *l)).collect()
}

/// Parse a filter given as `(name, level)`: `shuffle`, `gzip`, `zstd`, `lz4`.
fn parse_filter(name: &str, level: Option<i32>) -> PyResult<Filter> {
    let bad = |m: String| pyo3::exceptions::PyValueError::new_err(m);
    Ok(match name {
        "shuffle" => Filter::Shuffle,
        "gzip" | "deflate" => {
            let l = level.unwrap_or(4);
            Filter::Deflate(
                u32::try_from(l).map_err(|_| bad(format!("gzip level {l} outside 0..=9")))?,
            )
        }
        "zstd" => Filter::Zstd(level.unwrap_or(3)),
        "lz4" => Filter::Lz4,
        other => {
            return Err(bad(format!(
                "unknown filter {other:?}; use shuffle, gzip, zstd or lz4"
            )))
        }
    })
}

/// `{"chunks_read", "bytes_read"}` of read statistics.
fn io_stats_dict(py: Python<'_>, s: arca::IoStats) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("chunks_read", s.chunks_read)?;
    d.set_item("bytes_read", s.bytes_read)?;
    d.set_item("requests", s.requests)?;
    d.set_item("bytes_fetched", s.bytes_fetched)?;
    d.set_item("round_trips", s.round_trips)?;
    d.set_item("puts", s.puts)?;
    d.set_item("bytes_put", s.bytes_put)?;
    d.set_item("parts", s.parts)?;
    d.set_item("completes", s.completes)?;
    Ok(d)
}

/// Whether `name` is a URL (`scheme://...`) that opens on object storage
/// rather than a path.
#[pyfunction]
fn is_url(name: &str) -> bool {
    arca::io::is_url(name)
}

/// What reads of every file fetched from storage in this process.
#[pyfunction]
fn io_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    io_stats_dict(py, arca::io_stats())
}

/// The module `arca._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyFile>()?;
    m.add_class::<PyGroup>()?;
    m.add_class::<group::PyWalker>()?;
    m.add_class::<PyDataset>()?;
    m.add_class::<PyAttributes>()?;
    m.add_class::<PyNamedType>()?;
    m.add_class::<view::ViewServer>()?;
    m.add("ArcaError", py.get_type::<ArcaError>())?;
    m.add("CorruptError", py.get_type::<CorruptError>())?;
    m.add("ReadOnlyError", py.get_type::<ReadOnlyError>())?;
    m.add("LockedError", py.get_type::<LockedError>())?;
    m.add("PoisonedError", py.get_type::<PoisonedError>())?;
    m.add("NeedsRecoveryError", py.get_type::<NeedsRecoveryError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("RemoteError", py.get_type::<RemoteError>())?;
    m.add("ConflictError", py.get_type::<ConflictError>())?;
    m.add_function(wrap_pyfunction!(is_url, m)?)?;
    m.add("MAX_RANK", arca::MAX_RANK)?;
    m.add_function(wrap_pyfunction!(io_stats, m)?)?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    vlen::register(m)?;
    chunks::register(m)?;
    pools::register(m)?;
    types::register(m)?;
    regions::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
