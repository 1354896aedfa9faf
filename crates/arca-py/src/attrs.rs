//! `_native.Attributes`: the attributes of a group or dataset, each value
//! crossing as `(type string, shape, bytes in native order)`.

use arca::{AttrValue, Datatype};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::cvt;

/// The attributes of a group or dataset; mirrors `arca::Attributes`.
/// Values cross as `(dtype string, shape, bytes in native order)`.
///
/// ```python
/// a = f.root().attrs()
/// a.set("gain", "<f8", [], np.float64(1.5).tobytes())
/// dtype, shape, data = a.get("gain")
/// ```
#[pyclass(module = "arca._native", name = "Attributes", frozen)]
pub(crate) struct PyAttributes {
    pub(crate) a: arca::Attributes,
}

fn attr_value(dtype: &str, shape: Vec<u64>, data: Vec<u8>) -> PyResult<AttrValue> {
    let dt = cvt(Datatype::parse(dtype))?;
    cvt(AttrValue::new(dt, &shape, data))
}

#[pymethods]
impl PyAttributes {
    /// Create or replace an attribute.
    fn set(
        &self,
        py: Python<'_>,
        name: &str,
        dtype: &str,
        shape: Vec<u64>,
        data: Vec<u8>,
    ) -> PyResult<()> {
        let v = attr_value(dtype, shape, data)?;
        cvt(py.detach(|| self.a.set(name, &v)))
    }

    /// Replace an attribute keeping its place in creation order (creating
    /// it if it does not exist).
    fn modify(
        &self,
        py: Python<'_>,
        name: &str,
        dtype: &str,
        shape: Vec<u64>,
        data: Vec<u8>,
    ) -> PyResult<()> {
        let v = attr_value(dtype, shape, data)?;
        cvt(py.detach(|| self.a.modify(name, &v)))
    }

    /// Whether attributes are listed in creation order.
    fn track_order(&self, py: Python<'_>) -> PyResult<bool> {
        cvt(py.detach(|| self.a.track_order()))
    }

    /// Create an attribute; fails if it exists.
    fn create(
        &self,
        py: Python<'_>,
        name: &str,
        dtype: &str,
        shape: Vec<u64>,
        data: Vec<u8>,
    ) -> PyResult<()> {
        let v = attr_value(dtype, shape, data)?;
        cvt(py.detach(|| self.a.create(name, &v)))
    }

    /// `(dtype string, shape, bytes)` of an attribute; shape None for a
    /// null dataspace.
    #[allow(clippy::type_complexity)] // the tuple Python receives
    fn get<'py>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> PyResult<(String, Option<Vec<u64>>, Bound<'py, PyBytes>)> {
        let v = cvt(py.detach(|| self.a.get(name)))?;
        let shape = if v.null { None } else { Some(v.shape) };
        Ok((v.dtype.to_numpy_str(), shape, PyBytes::new(py, &v.data)))
    }

    /// Create or replace an attribute with a null dataspace.
    fn set_empty(&self, py: Python<'_>, name: &str, dtype: &str) -> PyResult<()> {
        let v = AttrValue::empty(cvt(Datatype::parse(dtype))?);
        cvt(py.detach(|| self.a.set(name, &v)))
    }

    /// Whether an attribute exists.
    fn contains(&self, py: Python<'_>, name: &str) -> PyResult<bool> {
        cvt(py.detach(|| self.a.contains(name)))
    }

    /// Delete an attribute.
    fn delete(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        cvt(py.detach(|| self.a.delete(name)))
    }

    /// Rename an attribute.
    fn rename(&self, py: Python<'_>, src: &str, dst: &str) -> PyResult<()> {
        cvt(py.detach(|| self.a.rename(src, dst)))
    }

    /// Attribute names in name order.
    fn names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        cvt(py.detach(|| self.a.names()))
    }

    /// Number of attributes.
    fn len(&self, py: Python<'_>) -> PyResult<u64> {
        cvt(py.detach(|| self.a.len()))
    }
}
