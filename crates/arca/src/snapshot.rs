//! Snapshot readers: other processes read a file while one writer commits.
//!
//! The writer keeps its undo journal (every crash guarantee stays) and
//! adds two sidecars:
//! - `PATH-history` ([`history`]): before it overwrites a byte that any
//!   snapshot may show, the writer appends the original page, tagged with
//!   the generation its transaction will commit as. A reader of snapshot
//!   `s` sees, for each page, the oldest original tagged after `s`, or the
//!   data file's page if there is none ([`view`]).
//! - `PATH-readers` ([`table`]): the last committed generation, published
//!   after each commit point, and one slot per reader holding its
//!   snapshot, each under a lock the kernel drops when its holder dies.
//!
//! The writer's side is a [`Publisher`], which the undo journal holds as
//! a [`crate::journal::ReaderLink`] and tells of every page it journals;
//! a reader's side is a [`Reader`] and the [`SnapshotView`] it reads
//! through. What the sidecars share (their names, the torn-read-proof
//! pair their values are written as) is in [`sidecar`]; whether a journal
//! is hot is read from its header ([`crate::format::journal_layout`]).
//!
//! The writer never waits for readers. After each commit it reads the
//! oldest snapshot still held; space freed by a commit stays *held* (not
//! reused, not truncated) until every snapshot is at or past that commit,
//! and history records are dropped on the same rule.
//!
//! Invariants:
//! - R1: a page live in any snapshot is overwritten only after its
//!   original is in the history (the undo journal's J1 criterion: bytes
//!   below the transaction's original length, outside space free at its
//!   start, which with held space excludes every snapshot's live space).
//! - R2: a reader reads the data file first and the history after (see
//!   [`view`]), so a page changed under its read is always replaced.
//! - R3: a reader's slot is claimed (counted as the oldest snapshot of
//!   all) before it reads the published generation, and a writer reads
//!   the slots only after publishing: whichever comes first, space the
//!   reader's snapshot shows is never handed out. A commit that finds no
//!   reader gives its own frees back at once; it announces itself before
//!   looking, and a reader that sees the announcement waits for that
//!   commit to be published (one commit's time) rather than start below it.
//! - R4: within one history epoch a record's bytes are written once, and
//!   a reader indexes a record only whole (its checksum verifies); a torn
//!   tail left by a killed writer is cut by the next writer before it
//!   appends.
//! - R5: the history restarts (new epoch) only when no live reader's
//!   snapshot is older than any record in it.
//! - R6: readers never go back. A writer announces a commit before it
//!   publishes it, and publishes its state at start before it withdraws
//!   a dead writer's announcement; a reader reads the announcement first,
//!   so the publication it pairs it with is never older than a commit
//!   already visible. `refresh` moves only forward.
//!
//! Same machine only: the readers' view of the writer's bytes is the
//! kernel's page cache, and the slot locks are open-file-description
//! locks, which network file systems do not all honour.

pub(crate) mod history;
pub(crate) mod sidecar;
pub(crate) mod table;
pub(crate) mod view;

use std::path::Path;

pub(crate) use history::{history_path, History};
pub(crate) use table::{network_fs, ReaderTable, Role};
pub(crate) use view::{SnapshotView, ViewSource};

use crate::error::{Error, Result};
use crate::journal::ReaderLink;

/// Waiting for a writer's moment (a commit's publication, a recovery):
/// spins first, then sleeps briefly, for at most [`Backoff::LIMIT`].
pub(crate) struct Backoff {
    tries: u32,
    start: std::time::Instant,
}

impl Backoff {
    /// Longer than any one commit takes, short enough to report a stuck
    /// writer rather than hang.
    pub(crate) const LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

    pub(crate) fn new() -> Self {
        Backoff {
            tries: 0,
            start: std::time::Instant::now(),
        }
    }

    /// Wait a little (not before the first try); false once out of time.
    pub(crate) fn more(&mut self) -> bool {
        self.tries += 1;
        match self.tries {
            1 => true,
            2..=64 => {
                std::thread::yield_now();
                true
            }
            _ => {
                std::thread::sleep(std::time::Duration::from_micros(100));
                self.start.elapsed() < Self::LIMIT
            }
        }
    }
}

/// The writer's side: the table it publishes commits to and the history
/// it keeps of what it overwrites. The journal reaches it as a
/// [`ReaderLink`].
pub(crate) struct Publisher {
    table: ReaderTable,
    history: History,
}

impl Publisher {
    /// Serve snapshot readers of `data`, whose committed generation is
    /// `generation`. `table` is already locked as the writer's.
    pub(crate) fn start(data: &Path, table: ReaderTable, generation: u64) -> Result<Publisher> {
        let mut history = History::open(data, generation)?;
        table.publish(Some(generation))?;
        table.announce(None)?;
        // With no reader left, the history of earlier sessions goes (a
        // file created anew restarts its generations: it must).
        history.collect(table.oldest()?)?;
        Ok(Publisher { table, history })
    }
}

impl ReaderLink for Publisher {
    fn stage(&mut self, tag: u64, offset: u64, original: &[u8]) {
        self.history.stage(tag, offset, original);
    }

    fn append(&mut self, tag: u64) -> Result<()> {
        self.history.append(tag)
    }

    /// Announce, then (R3) read the oldest snapshot a live reader holds.
    fn committing(&self, generation: u64) -> Result<Option<u64>> {
        self.table.announce(Some(generation))?;
        self.table.oldest()
    }

    fn not_committing(&self) -> Result<()> {
        self.table.announce(None)
    }

    /// Publish, then (R3) read the oldest snapshot still held and drop the
    /// history no one needs.
    fn committed(&mut self, generation: u64) -> Result<Option<u64>> {
        self.table.publish(Some(generation))?;
        let oldest = self.table.oldest()?;
        self.history.collect(oldest)?;
        Ok(oldest)
    }

    /// With no reader left, the sidecars go too.
    fn close(self: Box<Self>) -> Result<()> {
        self.table.close()
    }
}

/// How long a superblock is, and how to find the generation in its bytes
/// (None: they do not verify).
pub(crate) type Superblock = (usize, fn(&[u8]) -> Option<u64>);

/// A reader's side: its slot and its view.
pub(crate) struct Reader {
    table: ReaderTable,
    view: std::sync::Arc<ViewSource>,

    /// The generation in the data file's first bytes, if they verify (the
    /// superblock's layout is the format layer's).
    superblock: Superblock,
    /// The generation this reader sees.
    pub(crate) snap: u64,
}

impl Reader {
    /// Choose the newest committed snapshot for `table`, opened as a
    /// reader (its slot claimed before anything is read: R3).
    pub(crate) fn start(
        table: ReaderTable,
        view: &SnapshotView,
        superblock: Superblock,
    ) -> Result<Reader> {
        let view = view.source();
        let mut r = Reader {
            table,
            view,
            superblock,
            snap: 0,
        };
        r.snap = r.newest()?;
        r.view.set_snapshot(r.snap)?;
        r.table.set(r.snap)?;
        Ok(r)
    }

    /// The newest committed generation. With a writer serving readers,
    /// the one it published. With none, the data file's own, unless a
    /// writer died inside a transaction (its journal is hot): then the
    /// file may hold part of that transaction, even its superblock, and
    /// the last generation published is the committed one (the history
    /// holds the originals of everything the dead transaction wrote).
    fn newest(&self) -> Result<u64> {
        // The journal is read while a recovering writer may cut or remove
        // it: a failed read is a moment's change, unless it persists.
        let mut failed = None;
        let mut wait = Backoff::new();
        while wait.more() {
            // The announcement first: a writer announces before it
            // publishes a commit, and publishes its state before it
            // withdraws an announcement, so a published generation read
            // after an announcement at or below it is never older than
            // that announcement's commit (read the other way round, a
            // stale publication could pair with a fresh withdrawal).
            let committing = self.table.committing()?;
            let published = self.table.published()?;
            if self.table.writer_present()? {
                match published {
                    // R3: a commit that found no reader gives back space
                    // the snapshot before it shows; start at that commit,
                    // published in a moment.
                    Some(g) if committing.is_none_or(|c| c <= g) => return Ok(g),
                    // A writer publishes right after it opens: a moment.
                    _ => continue,
                }
            }
            let hot = match crate::format::journal_layout::sidecar_is_hot(self.table.journal()) {
                Ok(h) => h,
                Err(e) => {
                    failed = Some(e);
                    continue;
                }
            };
            let g = if hot {
                published
            } else {
                let mut b = vec![0u8; self.superblock.0];
                match self.view.read_main(0, &mut b) {
                    Ok(()) => (self.superblock.1)(&b),
                    Err(_) => None,
                }
            };
            // Nothing changed while we looked: no writer came (it would
            // publish or announce) and no recovery moved the file.
            let same = !self.table.writer_present()?
                && self.table.committing()? == committing
                && self.table.published()? == published
                && crate::format::journal_layout::sidecar_is_hot(self.table.journal()).ok()
                    == Some(hot);
            match g {
                Some(g) if same => return Ok(g),
                // Not a whole superblock, with nothing moving: let the
                // superblock's own decoder say what is wrong.
                None if same && !hot => return Ok(0),
                _ => {}
            }
        }
        Err(failed.unwrap_or_else(|| {
            Error::Locked(format!(
                "no commit was published for {} s: the writer is stuck between two commits",
                Backoff::LIMIT.as_secs()
            ))
        }))
    }

    /// Move to the newest commit; returns whether the snapshot changed.
    /// The caller holds off every read of this view while it runs.
    pub(crate) fn refresh(&mut self) -> Result<bool> {
        let g = self.newest()?;
        // Never back: a commit this reader saw stays committed.
        if g <= self.snap {
            return Ok(false);
        }
        // The view moves first: until the slot says so too, the writer
        // keeps the older snapshot's space, which is only more cautious.
        self.view.set_snapshot(g)?;
        self.table.set(g)?;
        self.snap = g;
        Ok(true)
    }

    /// The reader closes: its slot goes, and with no one left, the sidecars.
    pub(crate) fn close(self) -> Result<()> {
        self.table.close()
    }
}
