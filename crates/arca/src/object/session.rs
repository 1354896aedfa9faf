//! The session: one open file's state and the commit protocol.
//!
//! A [`Session`] holds the store (page cache, file space, journal), the
//! superblock, the chunk caches and the transaction state. Commit is the one
//! word for making a state durable: dirty chunks are written back, frees
//! held back in the transaction are released, the free-space record and
//! the dirty pages are written (their originals journaled first), the
//! superblock is rewritten, the file synced, and the journal invalidated —
//! the commit point (J4). `write_back` only pushes cached chunks to the
//! file, without committing, so whole-file walks see them.
//!
//! States:
//! ```text
//!            open (new or existing; a hot journal is rolled back first: recovered)
//!              |
//!              v    begin_transaction (depth += 1; an idle commit runs first)
//!   +------> Open{depth 0} <------------------------------------------+
//!   |          |  \                                                    |
//!   | commit   |   +--> Open{depth n > 0} --end(commit), depth 0--> commit
//!   |          |          |   end(rollback) at any depth: doomed       |
//!   |          |          +-- end at depth 0 while doomed --> rollback -+
//!   |          v
//!   |   a commit or rollback fails --> Poisoned (every call: Error::Poisoned)
//!   +-- close: commit, release the journal --> Closed
//! ```
//! Inside a transaction (depth > 0) commits wait for its end; a doomed
//! transaction never commits. Debug builds assert these transitions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::storage::Caches;
use crate::error::{Error, Result};
use crate::format::free_space as record;
use crate::format::superblock::{Superblock, SUPERBLOCK_LEN};
use crate::space::{FileSpace, FreeListKind};
use crate::store::{Store, BLOB_HEADER};

/// Whether a session can be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// In use.
    Open,
    /// A commit or rollback failed part-way: the file on disk is whole
    /// (the journal sees to that) but this handle's view of it is not.
    Poisoned,
    /// Closed by the user; object handles that outlive it get an error.
    Closed,
}

/// One open file's state.
pub(crate) struct Session {
    pub(crate) st: Store,
    pub(crate) sb: Superblock,
    pub(crate) caches: Caches,
    pub(crate) state: State,
    /// Why the stored free-space record could not be used (read-only opens
    /// go on without it; `check` reports it).
    pub(crate) space_error: Option<Error>,
    pub(crate) free_list: FreeListKind,
    /// Depth of `File::transaction` calls in progress; commits wait for 0.
    pub(crate) tx_depth: usize,
    /// An inner transaction asked for a rollback: the outer one cannot commit.
    pub(crate) tx_doomed: bool,
    /// Whether opening rolled back a transaction a crash left behind.
    pub(crate) recovered: bool,
    /// Where the file lives, for naming the files external links lead to.
    pub(crate) path: Option<std::path::PathBuf>,
    /// Files opened (read-only) to follow external links, by path: their
    /// handles (`handle::FileHandle`, spelled out since the handle module
    /// sits above this one).
    pub(crate) externals: HashMap<std::path::PathBuf, Arc<Mutex<Session>>>,
    /// A path for each object id, built when a reference is first followed
    /// and dropped by any change to links.
    pub(crate) names: Option<HashMap<u64, String>>,
    /// A snapshot reader's slot and view (read-only opens beside a writer).
    pub(crate) reader: Option<crate::snapshot::Reader>,
    /// Space reserved for chunks other processes write, not sealed yet.
    reserved: Vec<Reserved>,
}

/// Space reserved for one dataset's chunks and not sealed yet.
#[derive(Debug)]
struct Reserved {
    /// The dataset's header address.
    dataset: u64,
    /// The regions reserved, `(addr, len)`.
    regions: Vec<(u64, u64)>,
}

impl Session {
    /// A session over `st` showing `sb`, open, outside any transaction.
    pub(crate) fn new(
        st: Store,
        sb: Superblock,
        chunk_cache_bytes: usize,
        free_list: FreeListKind,
    ) -> Self {
        Session {
            st,
            sb,
            caches: Caches::new(chunk_cache_bytes),
            state: State::Open,
            space_error: None,
            free_list,
            tx_depth: 0,
            tx_doomed: false,
            recovered: false,
            path: None,
            externals: HashMap::new(),
            names: None,
            reader: None,
            reserved: Vec::new(),
        }
    }

    /// Whether the session takes calls: refused once closed or poisoned.
    pub(crate) fn check_usable(&self) -> Result<()> {
        match self.state {
            State::Open => Ok(()),
            State::Poisoned => Err(Error::Poisoned),
            State::Closed => Err(Error::invalid("the file is closed")),
        }
    }

    /// Make everything since the last commit durable (see the module
    /// comment); a failure poisons the session.
    pub(crate) fn commit(&mut self) -> Result<()> {
        debug_assert_eq!(
            self.state,
            State::Open,
            "commit on a session that is not open"
        );
        debug_assert!(
            !self.tx_doomed || self.tx_depth > 0,
            "a doomed transaction never commits"
        );
        if !self.st.writable {
            return Ok(());
        }
        let r = self.commit_inner();
        if r.is_err() {
            // A failed commit may leave this view half-written; refuse further use.
            self.state = State::Poisoned;
        }
        r
    }

    fn commit_inner(&mut self) -> Result<()> {
        self.write_back()?;
        // S6: held space every snapshot has moved past is given back now,
        // so that this commit records (and may cut) it.
        let tag = self.sb.generation + 1;
        let releasable = match &self.st.pager.journal().sharing {
            Some(s) => {
                let oldest = s.committing(tag)?;
                // With no reader, this commit's frees need no holding (R3).
                self.st.space.set_hold(oldest.map(|_| tag));
                self.st.space.release_held(oldest)
            }
            None => false,
        };
        if !self.st.pager.has_dirty()
            && !self.st.pager.journal().touched
            && !self.st.space.has_pending()
            && !releasable
        {
            if let Some(s) = &self.st.pager.journal().sharing {
                s.not_committing()?;
            }
            // Nothing changed: committing would only rewrite the superblock.
            return Ok(());
        }
        let records = self.save_space()?;
        // Journal the superblock and the records' places with the dirty
        // pages: one journal sync for the whole commit.
        let mut extra = vec![(0, SUPERBLOCK_LEN as u64)];
        for (addr, bytes) in &records {
            extra.push((*addr, BLOB_HEADER + bytes.len() as u64));
        }
        self.st.pager.flush_with(&extra)?;
        for (addr, bytes) in records {
            self.st.write_blob_at(addr, &bytes)?;
        }
        self.sb.eof = self.st.space.eof();
        self.sb.generation += 1;
        let sb = self.sb.encode();
        let eof = self.sb.eof;
        let d = self.st.pager.driver_mut();
        d.write_at(0, &sb)?;
        if d.len()? > eof {
            d.truncate(eof)?;
        }
        d.sync()?;
        self.st.pager.journal().commit()?;
        self.st.pager.set_limit(eof);
        self.after_commit()?;
        self.begin();
        Ok(())
    }

    /// With snapshot readers served: publish the commit, then give back
    /// the held space no snapshot still shows (S6, R3).
    fn after_commit(&mut self) -> Result<()> {
        let generation = self.sb.generation;
        if let Some(s) = &mut self.st.pager.journal().sharing {
            let oldest = s.committed(generation)?;
            self.st.space.release_held(oldest);
        }
        Ok(())
    }

    /// Commit and make the commit durable at once: a commit syncs its
    /// journal's invalidation lazily (J6); a flush promises durability
    /// now. Inside a transaction this waits for its end.
    pub(crate) fn commit_durable(&mut self) -> Result<()> {
        if self.tx_depth > 0 {
            return Ok(());
        }
        self.commit()?;
        if !self.st.writable {
            return Ok(());
        }
        let r = self.st.pager.journal().settle();
        if r.is_err() {
            self.state = State::Poisoned;
        }
        r
    }

    /// Enter a (possibly nested) transaction; at depth 0 the work done
    /// before is committed first.
    pub(crate) fn begin_transaction(&mut self) -> Result<()> {
        self.st.check_writable()?;
        if !self.st.pager.journal().enabled() {
            return Err(Error::invalid(
                "transactions need the journal, which is off for this file",
            ));
        }
        if self.tx_depth == 0 {
            self.commit()?;
            self.tx_doomed = false;
        }
        self.tx_depth += 1;
        Ok(())
    }

    /// Leave the innermost transaction: at depth 0 commit, or roll back if
    /// any level asked to (the transaction is doomed).
    pub(crate) fn end_transaction(&mut self, commit: bool) -> Result<()> {
        if self.tx_depth == 0 {
            return Err(Error::invalid("no transaction is open"));
        }
        self.tx_depth -= 1;
        if !commit {
            self.tx_doomed = true;
        }
        if self.tx_depth > 0 {
            return Ok(());
        }
        if commit && self.chunks_reserved() {
            // Their old space is freed and their new space not indexed.
            self.tx_doomed = false;
            self.rollback()?;
            return Err(Error::invalid(
                "space was reserved for chunks and not sealed; everything was rolled back",
            ));
        }
        if self.tx_doomed {
            self.tx_doomed = false;
            self.rollback()?;
            if commit {
                return Err(Error::invalid(
                    "an inner transaction failed; everything was rolled back",
                ));
            }
            return Ok(());
        }
        self.commit()
    }

    /// Roll back a transaction whose closure panicked, whatever its depth.
    pub(crate) fn abandon_transaction(&mut self) {
        self.tx_depth = 0;
        self.tx_doomed = false;
        // The panic is what the caller sees; a failed rollback poisons.
        let _ = self.rollback();
    }

    /// Commit, then close: object handles stop working and the journal is
    /// released (J9).
    pub(crate) fn close(&mut self) -> Result<()> {
        let r = self.commit();
        self.state = State::Closed;
        self.caches.clear();
        self.st.pager.discard();
        let closed = self.st.pager.journal().release();
        let reader = match self.reader.take() {
            Some(rd) => rd.close(),
            None => Ok(()),
        };
        r.and(closed).and(reader)
    }

    /// A snapshot reader moves to the writer's newest commit; returns
    /// whether anything changed. Caches are dropped and the superblock and
    /// free space reloaded. For writers and files without a writer in
    /// another process, a no-op.
    pub(crate) fn refresh(&mut self) -> Result<bool> {
        let gate = self.st.pager.journal().gate();
        // No chunk read runs without the file's lock while the view moves.
        let _g = gate.write().map_err(|_| Error::Poisoned)?;
        let Some(reader) = self.reader.as_mut() else {
            return Ok(false);
        };
        if !reader.refresh()? {
            return Ok(false);
        }
        let snap = reader.snap;
        self.caches.clear();
        self.st.pager.discard();
        self.names = None;
        self.st.pager.journal().resync_len()?;
        self.reload()?;
        self.check_snapshot(snap)?;
        Ok(true)
    }

    /// The state loaded is the snapshot `snap` the reader chose: a view
    /// that shows another generation is damage, never read as the snapshot.
    pub(crate) fn check_snapshot(&self, snap: u64) -> Result<()> {
        if self.sb.generation != snap {
            return Err(Error::corrupt(
                "superblock",
                0,
                format!(
                    "snapshot {snap} was published, but the file shows generation {}",
                    self.sb.generation
                ),
            ));
        }
        Ok(())
    }

    /// Start the next transaction: frees are held back and overwrites journaled.
    pub(crate) fn begin(&mut self) {
        let free: Vec<(u64, u64)> = self
            .st
            .space
            .sections()
            .iter()
            .map(|s| (s.addr, s.size))
            .collect();
        let tag = self.sb.generation + 1;
        let j = self.st.pager.journal();
        let on = j.enabled();
        let sharing = j.sharing.is_some();
        j.begin(free.into_iter(), tag);
        self.st.space.set_defer(on);
        self.st.space.set_hold(sharing.then_some(tag));
    }

    /// Refuse every further call: the state since the last commit cannot
    /// be trusted (a reopen recovers the last commit).
    pub(crate) fn poison(&mut self) {
        self.state = State::Poisoned;
    }

    /// Undo everything since the last commit and reload the committed state.
    pub(crate) fn rollback(&mut self) -> Result<()> {
        self.caches.clear();
        self.reserved.clear();
        self.st.pager.discard();
        let r = self
            .st
            .pager
            .journal()
            .rollback()
            .and_then(|_| self.reload());
        if r.is_err() {
            self.state = State::Poisoned;
        }
        r
    }

    /// Read the superblock and free-space record from storage.
    pub(crate) fn reload(&mut self) -> Result<()> {
        let len = self.st.pager.driver().len()?;
        if len < SUPERBLOCK_LEN as u64 {
            return Err(Error::corrupt(
                "superblock",
                0,
                format!("file is only {len} bytes: not an arca file or truncated"),
            ));
        }
        // Enough to find another format's signature after a user block.
        let mut head = vec![0u8; (len.min(2056) as usize).max(SUPERBLOCK_LEN)];
        self.st.pager.driver().read_at(0, &mut head)?;
        self.sb = Superblock::decode(&head, len)?;
        self.st.pager.set_limit(self.sb.eof);
        self.st.space = FileSpace::new(self.sb.eof, self.free_list);
        self.space_error = None;
        if let Err(e) = self.load_space() {
            if self.st.writable {
                return Err(e);
            }
            self.space_error = Some(e);
            self.st.space = FileSpace::new(self.sb.eof, self.free_list);
        }
        if self.st.writable {
            self.begin();
        }
        Ok(())
    }

    /// Commit held-back frees, return aggregator space, and write the free
    /// sections (and the sections held for snapshot readers) at the end of
    /// the file so the file never ends in free space. Returns where the
    /// records go and their bytes; the caller writes them once their places
    /// are journaled.
    fn save_space(&mut self) -> Result<Vec<(u64, Vec<u8>)>> {
        let sp = &mut self.st.space;
        sp.commit();
        sp.release_aggregators();
        let old = [
            (self.sb.space[0], self.sb.space[1]),
            (self.sb.space[2], self.sb.space[3]),
        ];
        if old.iter().any(|&(a, _)| a != 0) {
            for (addr, len) in old.into_iter().filter(|&(a, _)| a != 0) {
                self.st.free_blob(addr, len)?;
            }
            self.st.space.commit();
            self.sb.space = [0; 4];
        }
        let mut out = vec![];
        let sections = self.st.space.sections();
        if !sections.is_empty() {
            let bytes = record::encode(&sections);
            let addr = self.st.space.alloc_eof(BLOB_HEADER + bytes.len() as u64)?;
            self.sb.space[0] = addr;
            self.sb.space[1] = bytes.len() as u64;
            out.push((addr, bytes));
        }
        let held = self.st.space.held();
        if !held.is_empty() {
            let bytes = record::encode_held(&held);
            let addr = self.st.space.alloc_eof(BLOB_HEADER + bytes.len() as u64)?;
            self.sb.space[2] = addr;
            self.sb.space[3] = bytes.len() as u64;
            out.push((addr, bytes));
        }
        Ok(out)
    }

    /// Load the free-space record written by [`Session::save_space`].
    fn load_space(&mut self) -> Result<()> {
        // The root header is live in every file: a section over it is
        // damage found before the space could be handed out.
        let live = [
            (self.sb.root, crate::pager::MIN_PAGE as u64),
            (0, crate::pager::PAGE_SIZE as u64),
        ];
        let addr = self.sb.space[0];
        if addr == 0 {
            return self.load_held(&live);
        }
        let bytes = self.st.read_blob(addr)?;
        let sections = record::decode(
            &bytes,
            addr,
            BLOB_HEADER + bytes.len() as u64,
            self.sb.eof,
            &live,
        )?;
        if bytes.len() as u64 != self.sb.space[1] {
            return Err(Error::corrupt(
                "free-space record",
                addr,
                "length differs from the superblock's",
            ));
        }
        self.st.space.load(&sections);
        self.load_held(&live)
    }

    /// Load the held-space record, if the last writer left readers behind.
    fn load_held(&mut self, live: &[(u64, u64)]) -> Result<()> {
        let addr = self.sb.space[2];
        if addr == 0 {
            return Ok(());
        }
        let bytes = self.st.read_blob(addr)?;
        if bytes.len() as u64 != self.sb.space[3] {
            return Err(Error::corrupt(
                "held-space record",
                addr,
                "length differs from the superblock's",
            ));
        }
        let held = record::decode_held(
            &bytes,
            addr,
            BLOB_HEADER + bytes.len() as u64,
            self.sb.eof,
            live,
        )?;
        // Readers of older snapshots may be alive: held as freed by the
        // committed generation, the newest any of them can have.
        self.st.space.load_held(&held, self.sb.generation)
    }
}

impl Session {
    /// Push dirty chunks to the file without committing, so walks see them.
    pub(crate) fn write_back(&mut self) -> Result<()> {
        self.caches.write_back(&mut self.st)
    }
}

impl Session {
    /// Whether space was reserved for chunks and not sealed (a commit must
    /// not happen: see `reserved.rs`).
    pub(crate) fn chunks_reserved(&self) -> bool {
        !self.reserved.is_empty()
    }

    /// Record `region` as reserved for chunks of the dataset at `dataset`.
    pub(crate) fn reserve(&mut self, dataset: u64, region: (u64, u64)) {
        match self.reserved.iter_mut().find(|r| r.dataset == dataset) {
            Some(r) => r.regions.push(region),
            None => self.reserved.push(Reserved {
                dataset,
                regions: vec![region],
            }),
        }
    }

    /// The regions reserved for chunks of the dataset at `dataset`.
    pub(crate) fn reserved(&self, dataset: u64) -> Option<&[(u64, u64)]> {
        self.reserved
            .iter()
            .find(|r| r.dataset == dataset)
            .map(|r| &r.regions[..])
    }

    /// Forget the regions reserved for `dataset`: they are being sealed.
    pub(crate) fn take_reserved(&mut self, dataset: u64) -> Option<Vec<(u64, u64)>> {
        let i = self.reserved.iter().position(|r| r.dataset == dataset)?;
        Some(self.reserved.swap_remove(i).regions)
    }

    /// Whether a transaction is open (`File::transaction` or a begin
    /// without its end yet).
    pub(crate) fn in_transaction(&self) -> bool {
        self.tx_depth > 0
    }

    /// Make the open transaction roll back at its end, whatever it asks.
    pub(crate) fn doom(&mut self) {
        self.tx_doomed = true;
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.state == State::Open {
            // Errors cannot be reported from drop; close() reports them.
            let _ = self.commit();
        }
    }
}
