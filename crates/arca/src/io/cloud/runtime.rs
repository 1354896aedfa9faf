//! The tokio runtime the object-store requests run on: one per process,
//! made on first use and made again in a forked child (whose copy has no
//! threads), with two workers, since the requests mostly wait.

use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::runtime::Runtime;

use crate::error::{Error, Result};

/// The process's runtime, with the id of the process that made it.
static RUNTIME: Mutex<Option<(u32, Arc<Runtime>)>> = Mutex::new(None);

fn runtime() -> Result<Arc<Runtime>> {
    let mut g = RUNTIME.lock().map_err(|_| Error::Poisoned)?;
    let pid = std::process::id();
    match g.as_ref() {
        Some((p, rt)) if *p == pid => return Ok(rt.clone()),
        Some(_) => {
            // Made before a fork: its threads stayed in the parent, and
            // dropping it here would wait for them forever.
            if let Some((_, old)) = g.take() {
                std::mem::forget(old);
            }
        }
        None => {}
    }
    let rt = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("arca-io")
            .enable_all()
            .build()
            .map_err(|e| Error::io("starting the object-store runtime", e))?,
    );
    *g = Some((pid, rt.clone()));
    Ok(rt)
}

/// Run `f` to completion on the process's runtime. Called from inside
/// another tokio runtime (an async caller), it runs on a thread of its
/// own, since a runtime cannot block inside another.
pub(super) fn block_on<F>(f: F) -> Result<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let rt = runtime()?;
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(rt.block_on(f));
    }
    std::thread::scope(|s| {
        s.spawn(|| rt.block_on(f))
            .join()
            .map_err(|_| Error::invalid("an object-store request panicked"))
    })
}
