//! Files held by Python file-like objects (`io.BytesIO`, an open file, any
//! object with `read`, `write`, `seek`, `tell`): a storage driver that
//! calls them, taking the GIL for each call (the core runs with it
//! released).

use arca::io::Driver;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A driver over a Python file-like object.
pub(crate) struct PyFileDriver {
    obj: Py<PyAny>,
}

fn io_err(e: PyErr) -> arca::Error {
    arca::Error::Io {
        context: "calling the file-like object".into(),
        source: std::io::Error::other(e.to_string()),
    }
}

impl PyFileDriver {
    pub(crate) fn new(obj: Py<PyAny>) -> Self {
        PyFileDriver { obj }
    }

    fn seek(&self, py: Python<'_>, offset: u64) -> PyResult<()> {
        self.obj.call_method1(py, "seek", (offset,))?;
        Ok(())
    }

    fn length(&self, py: Python<'_>) -> PyResult<u64> {
        self.obj.call_method1(py, "seek", (0, 2))?.extract(py)
    }
}

impl Driver for PyFileDriver {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> arca::Result<()> {
        Python::attach(|py| -> PyResult<Result<(), String>> {
            self.seek(py, offset)?;
            let got = self.obj.call_method1(py, "read", (buf.len(),))?;
            let b = got.bind(py).cast::<PyBytes>()?.as_bytes();
            if b.len() != buf.len() {
                return Ok(Err(format!(
                    "read of {} bytes at {offset} returned {}",
                    buf.len(),
                    b.len()
                )));
            }
            buf.copy_from_slice(b);
            Ok(Ok(()))
        })
        .map_err(io_err)?
        .map_err(|m| arca::Error::Io {
            context: "reading the file-like object".into(),
            source: std::io::Error::new(std::io::ErrorKind::UnexpectedEof, m),
        })
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> arca::Result<()> {
        Python::attach(|py| -> PyResult<()> {
            let len = self.length(py)?;
            if offset > len {
                // Not every file-like object fills a gap with zeros.
                self.obj.call_method1(
                    py,
                    "write",
                    (PyBytes::new(py, &vec![0; (offset - len) as usize]),),
                )?;
            }
            self.seek(py, offset)?;
            self.obj
                .call_method1(py, "write", (PyBytes::new(py, data),))?;
            Ok(())
        })
        .map_err(io_err)
    }

    fn sync(&mut self) -> arca::Result<()> {
        Python::attach(|py| -> PyResult<()> {
            if self.obj.bind(py).hasattr("flush")? {
                self.obj.call_method0(py, "flush")?;
            }
            Ok(())
        })
        .map_err(io_err)
    }

    fn truncate(&mut self, len: u64) -> arca::Result<()> {
        Python::attach(|py| -> PyResult<()> {
            let cur = self.length(py)?;
            if len > cur {
                self.obj.call_method1(
                    py,
                    "write",
                    (PyBytes::new(py, &vec![0; (len - cur) as usize]),),
                )?;
            } else {
                self.obj.call_method1(py, "truncate", (len,))?;
            }
            Ok(())
        })
        .map_err(io_err)
    }

    fn len(&self) -> arca::Result<u64> {
        Python::attach(|py| self.length(py)).map_err(io_err)
    }
}
