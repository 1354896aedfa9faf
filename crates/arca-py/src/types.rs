//! Type strings described for Python: the package builds numpy dtypes from
//! these tuples, so the grammar is parsed in one place (the core).

use arca::Datatype;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::cvt;

/// Describe a type string as nested tuples:
/// `("num", numpy_str)` for bool, integers, floats, complex numbers and
/// fixed-length bytes; `("opaque", len, tag)`; `("enum", base, [(name,
/// value), ...])`; `("array", base, dims)`; `("compound", size, [(name,
/// offset, member), ...])`; `("vlen", "str" | "bytes" | "region" | numpy_str)`
/// or, for sequences of other bases, `("vlen", base)`.
///
/// ```python
/// _native.type_info('struct(8){"a"@0:<f4,"b"@4:[2]|u1}')
/// # ('compound', 8, [('a', 0, ('num', '<f4')), ('b', 4, ('array', ('num', '|u1'), [2]))])
/// ```
#[pyfunction]
fn type_info(py: Python<'_>, type_string: &str) -> PyResult<Py<PyAny>> {
    let t = cvt(Datatype::parse(type_string))?;
    describe(py, &t)
}

fn describe(py: Python<'_>, t: &Datatype) -> PyResult<Py<PyAny>> {
    let tuple = |items: Vec<Py<PyAny>>| -> PyResult<Py<PyAny>> {
        Ok(PyTuple::new(py, items)?.into_any().unbind())
    };
    let s = |x: &str| x.into_pyobject(py).map(|o| o.into_any().unbind());
    match t {
        Datatype::Opaque { len, tag } => tuple(vec![
            s("opaque")?,
            len.into_pyobject(py)?.into_any().unbind(),
            s(tag)?,
        ]),
        Datatype::Enum(e) => {
            let members = PyList::empty(py);
            for (n, v) in &e.members {
                members.append((n.as_str(), *v))?;
            }
            tuple(vec![
                s("enum")?,
                describe(py, &e.base)?,
                members.into_any().unbind(),
            ])
        }
        Datatype::Array(a) => tuple(vec![
            s("array")?,
            describe(py, &a.base)?,
            PyList::new(py, &a.dims)?.into_any().unbind(),
        ]),
        Datatype::Compound(c) => {
            let fields = PyList::empty(py);
            for f in &c.fields {
                let m = PyTuple::new(
                    py,
                    [
                        s(&f.name)?,
                        f.offset.into_pyobject(py)?.into_any().unbind(),
                        describe(py, &f.dtype)?,
                    ],
                )?;
                fields.append(m)?;
            }
            tuple(vec![
                s("compound")?,
                c.size.into_pyobject(py)?.into_any().unbind(),
                fields.into_any().unbind(),
            ])
        }
        Datatype::VlenStr => tuple(vec![s("vlen")?, s("str")?]),
        Datatype::VlenBytes => tuple(vec![s("vlen")?, s("bytes")?]),
        Datatype::RegionRef => tuple(vec![s("vlen")?, s("region")?]),
        Datatype::Vlen { .. } => {
            let base = t.base().map(|b| b.to_numpy_str()).unwrap_or_default();
            tuple(vec![s("vlen")?, s(&base)?])
        }
        // Other bases are described whole: an enum keeps its names, a
        // compound its members.
        Datatype::VlenOf(b) => tuple(vec![s("vlen")?, describe(py, b)?]),
        _ => tuple(vec![s("num")?, s(&t.to_numpy_str())?]),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(type_info, m)?)
}
