//! `arca.view`: the `arca view` server (the CLI library's) run inside the
//! extension, so Python can start it, read its address and stop it.

use std::path::PathBuf;
use std::time::Duration;

use arca_cli::view::{Options, Server};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

/// A running viewer server: `url` (token included), `wait`, `stop`.
#[pyclass(module = "arca._native", name = "ViewServer")]
pub(crate) struct ViewServer {
    server: Option<Server>,
    url: String,
}

#[pymethods]
impl ViewServer {
    /// Open `path` (a path, or a URL with `storage`'s `KEY=VALUE`
    /// options) read-only and serve it on `host:port` (0: a free port),
    /// the app's files from `assets`.
    #[new]
    #[pyo3(signature = (path, host = "127.0.0.1".to_string(), port = 0, assets = None, storage = vec![]))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        host: String,
        port: u16,
        assets: Option<PathBuf>,
        storage: Vec<String>,
    ) -> PyResult<Self> {
        let opts = Options {
            host,
            port,
            assets,
            token: None,
            storage,
        };
        let server = py
            .detach(|| Server::start(&path, &opts))
            .map_err(|e| PyOSError::new_err(e.to_string()))?;
        let url = server.url().to_string();
        Ok(ViewServer {
            server: Some(server),
            url,
        })
    }

    /// The page's address, token included.
    #[getter]
    fn url(&self) -> String {
        self.url.clone()
    }

    /// Wait until stopped or `timeout` seconds pass; True once stopped.
    #[pyo3(signature = (timeout = None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> bool {
        match &self.server {
            None => true,
            Some(s) => py.detach(|| s.wait(timeout.map(|t| Duration::from_secs_f64(t.max(0.0))))),
        }
    }

    /// Stop the server and close its port.
    fn stop(&mut self, py: Python<'_>) {
        if let Some(mut s) = self.server.take() {
            py.detach(move || s.stop());
        }
    }
}
