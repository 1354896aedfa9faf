//! The free lists of the core: `arca.gc()`, `arca.pool_stats()`,
//! `arca.set_pool_limits()`, `arca.set_pooling()`.

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Release the memory held by every free list; returns the bytes released.
#[pyfunction]
fn gc(py: Python<'_>) -> usize {
    py.detach(arca::gc)
}

/// One dict per free list: name, kind, held, held_bytes, in_use, hits,
/// misses, released.
#[pyfunction]
fn pool_stats(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    arca::pool_stats()
        .into_iter()
        .map(|s| {
            let d = PyDict::new(py);
            d.set_item("name", s.name)?;
            d.set_item(
                "kind",
                match s.kind {
                    arca::PoolKind::Object => "object",
                    arca::PoolKind::Array => "array",
                    arca::PoolKind::Block => "block",
                },
            )?;
            d.set_item("held", s.held)?;
            d.set_item("held_bytes", s.held_bytes)?;
            d.set_item("in_use", s.in_use)?;
            d.set_item("hits", s.hits)?;
            d.set_item("misses", s.misses)?;
            d.set_item("released", s.released)?;
            Ok(d)
        })
        .collect()
}

/// Set the bytes one list, and all lists together, may hold; `None` keeps
/// the current value. Returns the limits now in force as (per_list, total).
#[pyfunction]
#[pyo3(signature = (per_list=None, total=None))]
fn set_pool_limits(per_list: Option<usize>, total: Option<usize>) -> (usize, usize) {
    let old = arca::pool_limits();
    let new = arca::PoolLimits {
        per_list: per_list.unwrap_or(old.per_list),
        total: total.unwrap_or(old.total),
    };
    arca::set_pool_limits(new);
    (new.per_list, new.total)
}

/// Turn pooling on or off for the process; returns the previous setting.
#[pyfunction]
fn set_pooling(on: bool) -> bool {
    let was = arca::pooling_enabled();
    arca::set_pooling(on);
    was
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gc, m)?)?;
    m.add_function(wrap_pyfunction!(pool_stats, m)?)?;
    m.add_function(wrap_pyfunction!(set_pool_limits, m)?)?;
    m.add_function(wrap_pyfunction!(set_pooling, m)?)?;
    Ok(())
}
