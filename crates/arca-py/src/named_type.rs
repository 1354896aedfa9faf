//! `_native.NamedType`: a committed datatype, an object holding a type.

use pyo3::prelude::*;

use crate::attrs::PyAttributes;
use crate::cvt;

/// A committed datatype; mirrors `arca::NamedType`.
///
/// ```python
/// t = f.root().commit_type("pixel", "<u2")
/// assert t.dtype() == "<u2" and t.path == "/pixel"
/// ```
#[pyclass(module = "arca._native", name = "NamedType", frozen)]
pub(crate) struct PyNamedType {
    pub(crate) t: arca::NamedType,
}

#[pymethods]
impl PyNamedType {
    /// Absolute path it was opened by (empty when it has no name).
    #[getter]
    fn path(&self) -> &str {
        self.t.path()
    }

    /// Last path component.
    #[getter]
    fn name(&self) -> &str {
        self.t.name()
    }

    /// The object's identity in its file (equal for all its names).
    #[getter]
    fn id(&self) -> u64 {
        self.t.id()
    }

    /// The type it holds, as a type string.
    fn dtype(&self, py: Python<'_>) -> PyResult<String> {
        Ok(cvt(py.detach(|| self.t.dtype()))?.to_numpy_str())
    }

    /// Its attributes.
    fn attrs(&self) -> PyAttributes {
        PyAttributes { a: self.t.attrs() }
    }
}
