//! Region references and dataspace selections as they cross to Python: a
//! selection is `(dims, kind, data)` with `kind` one of `"none"`, `"all"`
//! (data None), `"points"` (a list of index lists), `"hyperslab"` (a list
//! of `(start, stride, count, block)`, one per dimension) or `"blocks"` (a
//! list of `(start list, count list)`); the core encodes and checks them.

use arca::{Region, RegionRef, RegionSelection, SlabDim};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::cvt;

/// A selection tuple as Python gives it.
pub(crate) type SelTuple<'py> = (Vec<u64>, String, Bound<'py, PyAny>);

/// A virtual mapping as Python gets it: `(file, dataset, virtual
/// selection, source selection)`.
pub(crate) type Mapping<'py> = (String, String, Bound<'py, PyTuple>, Bound<'py, PyTuple>);

/// The core's region of a selection tuple (`unlimited`: counts may be
/// `arca.UNLIMITED`, as in virtual mappings).
pub(crate) fn to_region(t: &SelTuple<'_>, unlimited: bool) -> PyResult<Region> {
    let (dims, kind, data) = t;
    let selection = match kind.as_str() {
        "none" => RegionSelection::None,
        "all" => RegionSelection::All,
        "points" => RegionSelection::Points(data.extract()?),
        "hyperslab" => {
            let d: Vec<(u64, u64, u64, u64)> = data.extract()?;
            RegionSelection::Hyperslab(
                d.into_iter()
                    .map(|(start, stride, count, block)| SlabDim {
                        start,
                        stride,
                        count,
                        block,
                    })
                    .collect(),
            )
        }
        "blocks" => RegionSelection::Blocks(data.extract()?),
        k => {
            return Err(PyValueError::new_err(format!(
                "selection kind {k:?}: none, all, points, hyperslab or blocks"
            )))
        }
    };
    let dims = dims.clone();
    cvt(if unlimited {
        Region::new_unlimited(dims, selection)
    } else {
        Region::new(dims, selection)
    })
}

/// The selection tuple of a region.
pub(crate) fn from_region<'py>(py: Python<'py>, r: &Region) -> PyResult<Bound<'py, PyTuple>> {
    let (kind, data): (&str, Bound<'py, PyAny>) = match &r.selection {
        RegionSelection::None => ("none", py.None().into_bound(py)),
        RegionSelection::All => ("all", py.None().into_bound(py)),
        RegionSelection::Points(p) => ("points", p.clone().into_pyobject(py)?.into_any()),
        RegionSelection::Hyperslab(d) => (
            "hyperslab",
            d.iter()
                .map(|s| (s.start, s.stride, s.count, s.block))
                .collect::<Vec<_>>()
                .into_pyobject(py)?
                .into_any(),
        ),
        RegionSelection::Blocks(b) => ("blocks", b.clone().into_pyobject(py)?.into_any()),
    };
    PyTuple::new(
        py,
        [
            r.dims.clone().into_pyobject(py)?.into_any(),
            kind.into_pyobject(py)?.into_any(),
            data,
        ],
    )
}

/// The stored bytes of a region reference to the dataset with id `object`.
///
/// ```python
/// b = _native.region_ref_encode(ds.id.id, ([10], "hyperslab", [(2, 1, 3, 1)]))
/// ```
#[pyfunction]
fn region_ref_encode<'py>(
    py: Python<'py>,
    object: u64,
    selection: SelTuple<'py>,
) -> PyResult<Bound<'py, PyBytes>> {
    let region = to_region(&selection, false)?;
    if object == 0 {
        return Err(PyValueError::new_err("a region reference needs a dataset"));
    }
    Ok(PyBytes::new(py, &RegionRef { object, region }.to_bytes()))
}

/// `(object id, selection tuple)` of a stored region reference.
#[pyfunction]
fn region_ref_decode<'py>(py: Python<'py>, data: &[u8]) -> PyResult<(u64, Bound<'py, PyTuple>)> {
    let r = cvt(RegionRef::from_bytes(data))?;
    Ok((r.object, from_region(py, &r.region)?))
}

/// The selected elements as row-major indices into the selection's dims,
/// in its order (a union of boxes: each element once).
#[pyfunction]
fn region_linear<'py>(
    py: Python<'py>,
    selection: SelTuple<'py>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let r = to_region(&selection, false)?;
    let v = cvt(py.detach(|| r.linear()))?;
    Ok(PyArray1::from_vec(py, v))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(region_ref_encode, m)?)?;
    m.add_function(wrap_pyfunction!(region_ref_decode, m)?)?;
    m.add_function(wrap_pyfunction!(region_linear, m)?)?;
    m.add("UNLIMITED", arca::UNLIMITED)
}
