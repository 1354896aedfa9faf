//! A reader's view of one snapshot: the data file, with the history's
//! originals laid over the pages the writer has overwritten since.
//!
//! A read takes the data file's bytes first and consults the history
//! after: the writer appends a page's original before it overwrites the
//! page, so if the read saw any new byte, the original is already there
//! to replace it; if not, the bytes read are the snapshot's own.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::history::{self, FIRST, REC_HEAD};
use crate::error::{Error, Result};
use crate::format::page::PAGE_SIZE;
use crate::io::{Driver, ReadAt};

#[derive(Clone, Copy)]
struct Rec {
    tag: u64,
    pos: u64,
    len: u32,
}

struct State {
    hist: Option<Arc<fs::File>>,
    snap: u64,
    epoch: Option<u64>,
    scanned: u64,
    /// Page offset -> the oldest original newer than the snapshot.
    index: BTreeMap<u64, Rec>,
}

/// The source a view reads from: the data file, the history laid over it,
/// and the index of that history; shared by the threads that read the view
/// in parallel.
pub(crate) struct ViewSource {
    main: Arc<fs::File>,
    hist_path: PathBuf,
    state: Mutex<State>,
}

/// The driver a snapshot reader opens its file through.
pub(crate) struct SnapshotView {
    source: Arc<ViewSource>,
}

fn io(what: String, e: std::io::Error) -> Error {
    Error::io(what, e)
}

/// The history at `path`, created empty if there is none yet; None if it
/// can be neither opened nor created (a directory this process may not
/// write to): the view then looks for it at every read instead.
///
/// Held from the start, the history costs a read one length check while
/// no writer has used it, rather than a failed open per read. Correct
/// because the file at the path stays this one while the reader's slot is
/// claimed: the history is removed only by the last process to close, when
/// no slot is held, and a writer opens the file it finds there (an empty
/// one is a history being created: it writes the header, readers wait for
/// its length to cover it), before it overwrites anything a snapshot shows.
fn open_history(path: &Path) -> Option<fs::File> {
    let rw = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path);
    rw.or_else(|_| fs::File::open(path)).ok()
}

impl SnapshotView {
    /// The view of the data file `main` with its history at `hist_path`;
    /// made after the reader's slot is claimed (see [`open_history`]).
    pub(crate) fn new(main: fs::File, hist_path: PathBuf) -> Self {
        let hist = open_history(&hist_path).map(Arc::new);
        SnapshotView {
            source: Arc::new(ViewSource {
                main: Arc::new(main),
                hist_path,
                state: Mutex::new(State {
                    hist,
                    snap: 0,
                    epoch: None,
                    scanned: FIRST,
                    index: BTreeMap::new(),
                }),
            }),
        }
    }

    pub(crate) fn source(&self) -> Arc<ViewSource> {
        self.source.clone()
    }
}

impl ViewSource {
    /// Move the view to the snapshot of `generation`.
    pub(crate) fn set_snapshot(&self, generation: u64) -> Result<()> {
        let mut st = self.state.lock().map_err(|_| Error::Poisoned)?;
        st.snap = generation;
        st.index.clear();
        st.epoch = None;
        st.scanned = FIRST;
        Ok(())
    }

    /// Read the data file's own bytes, without the history.
    pub(crate) fn read_main(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.main
            .read_exact_at(buf, offset)
            .map_err(|e| io(format!("reading {} bytes at {offset}", buf.len()), e))
    }

    /// The data file's current length.
    pub(crate) fn main_len(&self) -> Result<u64> {
        self.main
            .metadata()
            .map(|m| m.len())
            .map_err(|e| io("reading the file size".into(), e))
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        // A record this view indexed can vanish under it only when no
        // snapshot needs it (R5: a restart; or `live_from` moved past it,
        // its space punched out): then the data file has the page as the
        // snapshot shows it. Index afresh and read again.
        for _ in 0..100 {
            if let Some(done) = self.try_read(offset, buf)? {
                return done;
            }
        }
        Err(Error::corrupt(
            "snapshot history",
            0,
            "the records this snapshot needs kept moving",
        ))
    }

    /// One attempt: `None` when an indexed record was dropped meanwhile.
    fn try_read(&self, offset: u64, buf: &mut [u8]) -> Result<Option<Result<()>>> {
        self.main.read_exact_at(buf, offset).map_err(|e| {
            let snap = self.state.lock().map(|s| s.snap).unwrap_or(0);
            let len = self.main_len().unwrap_or(0);
            io(
                format!(
                    "reading {} bytes at {offset} of snapshot {snap} (the file is {len} bytes)",
                    buf.len()
                ),
                e,
            )
        })?;
        if buf.is_empty() {
            return Ok(Some(Ok(())));
        }
        let end = offset + buf.len() as u64;
        let ps = PAGE_SIZE as u64;
        let (hist, epoch, recs) = {
            let mut st = self.state.lock().map_err(|_| Error::Poisoned)?;
            st.sync(&self.hist_path)?;
            let recs: Vec<(u64, Rec)> = st
                .index
                .range(offset / ps * ps..end)
                .map(|(&o, &r)| (o, r))
                .collect();
            (st.hist.clone(), st.epoch, recs)
        };
        let (Some(hist), Some(epoch)) = (hist, epoch) else {
            return Ok(Some(Ok(())));
        };
        if recs.is_empty() {
            return Ok(Some(Ok(())));
        }
        let mut rec = vec![0u8; REC_HEAD + PAGE_SIZE];
        for (at, r) in recs {
            let n = REC_HEAD + r.len as usize;
            // `n` fits `rec`: the index holds only records whose length the
            // scan found at most a page.
            let whole = hist.read_exact_at(&mut rec[..n], r.pos).is_ok()
                && history::parse_head(&rec[..REC_HEAD]).is_some_and(|(ep, tag, off, len, crc)| {
                    ep == epoch
                        && tag == r.tag
                        && off == at
                        && len == r.len
                        && history::rec_crc(&rec[..REC_HEAD], &rec[REC_HEAD..n]) == crc
                });
            if !whole {
                let mut st = self.state.lock().map_err(|_| Error::Poisoned)?;
                if st.dropped(&hist, epoch, r.pos)? {
                    st.reindex();
                    return Ok(None);
                }
                return Ok(Some(Err(Error::corrupt(
                    "snapshot history",
                    r.pos,
                    "a record this snapshot needs does not verify",
                ))));
            }
            let data = &rec[REC_HEAD..n];
            // The overlap of [at, at + len) and [offset, end): inside both
            // `buf` and `data`.
            let (a, b) = (at.max(offset), at.saturating_add(r.len as u64).min(end));
            if a < b {
                buf[(a - offset) as usize..(b - offset) as usize]
                    .copy_from_slice(&data[(a - at) as usize..(b - at) as usize]);
            }
        }
        Ok(Some(Ok(())))
    }
}

impl State {
    /// Whether the record at `pos` of `epoch` is gone by the writer's
    /// rules: the history restarted, or `live_from` moved past it.
    fn dropped(&self, hist: &fs::File, epoch: u64, pos: u64) -> Result<bool> {
        Ok(match history::read_header(hist)? {
            None => true,
            Some((e, live_from)) => e != epoch || pos < live_from,
        })
    }

    /// Forget the index: the next read builds it afresh.
    fn reindex(&mut self) {
        self.index.clear();
        self.epoch = None;
        self.scanned = FIRST;
    }

    /// Index the records appended since the last look.
    fn sync(&mut self, path: &PathBuf) -> Result<()> {
        if self.hist.is_none() {
            match fs::File::open(path) {
                Ok(f) => self.hist = Some(Arc::new(f)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(io(format!("opening {}", path.display()), e)),
            }
        }
        let Some(hist) = self.hist.clone() else {
            return Ok(());
        };
        let Some((epoch, live_from)) = history::read_header(&hist)? else {
            return Ok(()); // being created: nothing in it yet
        };
        if self.epoch != Some(epoch) {
            self.epoch = Some(epoch);
            self.index.clear();
            self.scanned = FIRST;
        }
        self.scanned = self.scanned.max(live_from);
        let snap = self.snap;
        let index = &mut self.index;
        self.scanned = history::scan(&hist, self.scanned, epoch, |pos, tag, off, len| {
            if tag > snap {
                let new = Rec { tag, pos, len };
                index
                    .entry(off)
                    .and_modify(|r| {
                        if tag < r.tag {
                            *r = new;
                        }
                    })
                    .or_insert(new);
            }
        })?;
        Ok(())
    }
}

impl ReadAt for ViewSource {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.read(offset, buf)
    }
}

impl Driver for SnapshotView {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.source.read(offset, buf)
    }

    fn write_at(&mut self, _offset: u64, _data: &[u8]) -> Result<()> {
        Err(Error::ReadOnly)
    }

    fn sync(&mut self) -> Result<()> {
        Ok(())
    }

    fn truncate(&mut self, _len: u64) -> Result<()> {
        Err(Error::ReadOnly)
    }

    fn len(&self) -> Result<u64> {
        self.source.main_len()
    }

    fn shared_reader(&self) -> Option<Arc<dyn ReadAt>> {
        Some(self.source.clone())
    }
}
