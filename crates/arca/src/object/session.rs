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
//! States ([`State`]; `depth` counts the open transactions, `doomed` says
//! one of them asked for a rollback):
//! ```text
//!   open (new or existing; a hot journal is rolled back first: recovered)
//!     |                                        a failed open --> Closed
//!     v
//!   Open{0} ---- commit, write_back, refresh: stay ----+
//!     |   ^                                            |
//!     |   | end at depth 1: commit, or roll back if    |
//!     |   | doomed or space is left reserved;          |
//!     |   | abandon (the closure panicked): roll back  |
//!     v   |                                            |
//!   Open{n >= 1, doomed}                               |
//!     begin: n + 1, doomed kept                        |
//!     end at n > 1: n - 1, doomed if it asks for a     |
//!       rollback (doomed never clears inside)          |
//!     doom (a seal failed while indexing): doomed      |
//!     |                                                |
//!     +---> a commit or rollback fails, or a copy <----+
//!           half indexed --> Poisoned (every call: Error::Poisoned)
//!
//!   Open or Poisoned -- close: commit, release the journal --> Closed
//! ```
//! Inside a transaction (depth > 0) commits wait for its end; a doomed
//! transaction never commits but at a close, which commits what there is.
//! Every change of state goes through `Session::transition`, which debug
//! and `paranoid` builds check against this diagram.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::storage::Caches;
use crate::error::{Error, Result};
use crate::format::free_space as record;
use crate::format::superblock::{Superblock, SUPERBLOCK_LEN};
use crate::space::{FileSpace, FreeListKind};
use crate::store::{Store, BLOB_HEADER};

/// Whether a session can be used, and its transactions (see the diagram
/// in the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// In use, inside `depth` nested transactions (0: none); `doomed` once
    /// one of them asked for a rollback (never at depth 0).
    Open { depth: usize, doomed: bool },
    /// A commit or rollback failed part-way: the file on disk is whole
    /// (the journal sees to that) but this handle's view of it is not.
    Poisoned,
    /// Closed by the user; object handles that outlive it get an error.
    Closed,
}

/// One open file's state.
///
/// The store and the superblock are open to the object files: nearly every
/// call reads or writes through them. The rest is changed only by the
/// session's own methods; the transaction state only through
/// [`Session::transition`].
pub(crate) struct Session {
    /// The page cache, the file space and the journal.
    pub(crate) st: Store,
    /// The superblock: the link-count tree's root changes within a
    /// transaction, the rest at a commit.
    pub(crate) sb: Superblock,
    /// The chunk caches of datasets and their vectors.
    caches: Caches,
    state: State,
    /// Why the stored free-space record could not be used (read-only opens
    /// go on without it; `check` reports it).
    space_error: Option<Error>,
    /// Whether the space records were loaded (a reader of a remote file
    /// loads them only for a walk).
    space_loaded: bool,
    free_list: FreeListKind,
    /// Whether opening rolled back a transaction a crash left behind.
    recovered: bool,
    /// Where the file lives, for naming the files external links lead to.
    path: Option<PathBuf>,
    /// Files opened (read-only) to follow external links, by path: their
    /// handles (`handle::FileHandle`, spelled out since the handle module
    /// sits above this one).
    externals: HashMap<(PathBuf, bool), Arc<Mutex<Session>>>,
    /// A path for each object id, built when a reference is first followed
    /// and dropped by any change to links.
    names: Option<HashMap<u64, String>>,
    /// Counts changes to links (and rollbacks, and a reader's move to a
    /// newer commit), so that a walk in progress knows to check the
    /// groups it is inside before going on.
    links_epoch: u64,
    /// A snapshot reader's slot and view (read-only opens beside a writer).
    reader: Option<crate::snapshot::Reader>,
    /// Space reserved for chunks other processes write, not sealed yet.
    reserved: Vec<Reserved>,
    /// Whether this session trusts the file's free space: it made the file,
    /// or a walk proved every free section clear of live structures (S7 in
    /// `space.rs`). Reloads after a rollback keep it.
    space_proven: bool,
    /// The walk that proves free space (`stat::prove_space`, which sits
    /// above this module), for commits that free enough of the file's own
    /// space to be worth one.
    prover: Option<fn(&mut Session) -> Result<()>>,
    /// Datasets whose vector's free ranges this session may hand out: it
    /// made the file, or a proof cleared them (`vlen::proof`).
    vectors_proven: VectorsProven,
    /// For a local stand-in of a file that lives elsewhere (on object
    /// storage): what uploads each commit.
    publisher: Option<Box<dyn crate::io::Publish>>,
    /// Whether a committed state has not been published yet.
    unpublished: bool,
}

/// Which vectors' free ranges a session trusts.
#[derive(Default)]
enum VectorsProven {
    /// None proven yet.
    #[default]
    None,
    /// The session made the file: every range is its own.
    All,
    /// The datasets (by header address) whose vectors a proof cleared.
    Some(std::collections::HashSet<u64>),
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
            state: State::Open {
                depth: 0,
                doomed: false,
            },
            space_error: None,
            space_loaded: false,
            free_list,
            recovered: false,
            path: None,
            externals: HashMap::new(),
            names: None,
            links_epoch: 0,
            reader: None,
            reserved: Vec::new(),
            space_proven: false,
            prover: None,
            vectors_proven: VectorsProven::None,
            publisher: None,
            unpublished: false,
        }
    }

    /// Publish every commit of this file through `p`, starting with the
    /// state it has now if `unpublished` (a new file).
    #[cfg_attr(not(feature = "cloud"), allow(dead_code))]
    pub(crate) fn set_publisher(&mut self, p: Box<dyn crate::io::Publish>, unpublished: bool) {
        self.publisher = Some(p);
        self.unpublished = unpublished;
    }

    /// The counters of the publisher's requests, if the file has one.
    pub(crate) fn publisher_fetches(&self) -> Option<Arc<crate::io::Fetches>> {
        self.publisher.as_ref().map(|p| p.fetches())
    }

    /// Publish the committed state if it is not yet. A failure leaves the
    /// session usable: the state is committed locally, and the next commit
    /// or the close tries again.
    fn publish(&mut self) -> Result<()> {
        if let (true, Some(p)) = (self.unpublished, self.publisher.as_mut()) {
            p.publish()?;
            self.unpublished = false;
        }
        Ok(())
    }

    /// Let commits prove the file's free space with `prove` when it is
    /// worth it (S7 in `space.rs`).
    pub(crate) fn set_prover(&mut self, prove: fn(&mut Session) -> Result<()>) {
        self.prover = Some(prove);
    }

    /// Before the first write into the contiguous data of the dataset whose
    /// header is at `header`: an address an earlier session wrote is the
    /// file's word, and a hostile or buggy producer can make it name
    /// another object's header, a B-tree page or a chunk. Unless a walk
    /// already proved this session's space, the data moves to space this
    /// session allocates when the old extent can be left unused without
    /// making the file's unproven space worth a proof (an eighth of the
    /// file): a copy of the dataset, no walk; the next proof takes the old
    /// bytes back. A larger extent is proven
    /// instead (one walk per session, as `File::stat` costs). Either way no
    /// byte lands before the extent is shown clear of every live structure
    /// (S7 in `space.rs`).
    ///
    /// # Errors
    /// `Corrupt` naming both structures; nothing is written then.
    pub(crate) fn prove_contiguous(&mut self, header: u64) -> Result<()> {
        if self.st.space.is_proven() {
            return Ok(());
        }
        let m = super::storage::load_meta(&mut self.st, header)?;
        self.prove_layout(header, &m.layout)
    }

    /// [`Self::prove_contiguous`] for a layout the caller has loaded. The
    /// data may have moved: the caller reloads the layout afterwards.
    pub(crate) fn prove_layout(
        &mut self,
        header: u64,
        layout: &crate::format::object_header::Layout,
    ) -> Result<()> {
        if self.st.space.is_proven() {
            return Ok(());
        }
        let &crate::format::object_header::Layout::Contiguous { addr, size } = layout else {
            return Ok(());
        };
        if addr == 0 || !self.st.space.is_named(addr) {
            return Ok(());
        }
        match self.prover {
            _ if self.st.space.can_leave(size) => {
                super::storage::relocate_contiguous(&mut self.st, header)
            }
            Some(prove) => prove(self),
            None => Err(Error::corrupt(
                "contiguous data",
                addr,
                format!("{size} bytes at {addr} named by the file and not proven clear of other structures"),
            )),
        }
    }

    /// Trust the file's free space from now on: this session made the
    /// file, or proved its space (`stat::prove_space`).
    pub(crate) fn set_space_proven(&mut self) {
        self.space_proven = true;
        self.st.space.mark_proven();
    }

    /// Trust every vector's free ranges: this session made the file.
    pub(crate) fn trust_all_vectors(&mut self) {
        self.vectors_proven = VectorsProven::All;
    }

    /// Whether the free ranges of the vector of the dataset at `addr` may
    /// be handed out.
    pub(crate) fn vector_proven(&self, addr: u64) -> bool {
        match &self.vectors_proven {
            VectorsProven::None => false,
            VectorsProven::All => true,
            VectorsProven::Some(s) => s.contains(&addr),
        }
    }

    /// Record that a proof cleared the free ranges of the vector of the
    /// dataset at `addr` for the rest of the session.
    pub(crate) fn mark_vector_proven(&mut self, addr: u64) {
        match &mut self.vectors_proven {
            VectorsProven::All => {}
            VectorsProven::Some(s) => {
                s.insert(addr);
            }
            v @ VectorsProven::None => *v = VectorsProven::Some([addr].into()),
        }
    }

    /// Whether the session takes calls: refused once closed or poisoned.
    pub(crate) fn check_usable(&self) -> Result<()> {
        match self.state {
            State::Open { .. } => Ok(()),
            State::Poisoned => Err(Error::Poisoned),
            State::Closed => Err(Error::invalid("the file is closed")),
        }
    }

    /// Move to state `to`; debug and `paranoid` builds check that the
    /// diagram in the module comment has this edge (`make test` runs the
    /// crash and space suites with `paranoid`).
    fn transition(&mut self, to: State) {
        if cfg!(any(debug_assertions, feature = "paranoid")) {
            assert!(
                legal(self.state, to),
                "session state {:?} -> {to:?} is not in the diagram",
                self.state
            );
        }
        self.state = to;
    }

    /// Refuse every further call: the state since the last commit cannot
    /// be trusted (a reopen recovers the last commit).
    pub(crate) fn poison(&mut self) {
        if self.state != State::Poisoned {
            self.transition(State::Poisoned);
        }
    }

    /// A session whose opening failed: closed, with nothing committed.
    pub(crate) fn close_unopened(&mut self) {
        self.transition(State::Closed);
    }

    /// The transactions open: their depth, and whether one asked for a
    /// rollback; `(0, false)` for a closed or poisoned session.
    fn transaction(&self) -> (usize, bool) {
        match self.state {
            State::Open { depth, doomed } => (depth, doomed),
            State::Poisoned | State::Closed => (0, false),
        }
    }

    /// Whether a transaction is open (`File::transaction` or a begin
    /// without its end yet).
    pub(crate) fn in_transaction(&self) -> bool {
        self.transaction().0 > 0
    }

    /// Make the open transaction roll back at its end, whatever it asks.
    pub(crate) fn doom(&mut self) {
        let (depth, _) = self.transaction();
        if depth > 0 {
            self.transition(State::Open {
                depth,
                doomed: true,
            });
        }
    }

    /// Make everything since the last commit durable (see the module
    /// comment); a failure poisons the session.
    pub(crate) fn commit(&mut self) -> Result<()> {
        debug_assert!(
            matches!(self.state, State::Open { .. }),
            "commit on a session that is not open"
        );
        if !self.st.writable {
            return Ok(());
        }
        let generation = self.sb.generation;
        let r = self.commit_inner();
        if r.is_err() {
            // A failed commit may leave this view half-written; refuse further use.
            self.poison();
            return r;
        }
        if self.sb.generation != generation {
            self.unpublished = true;
        }
        self.publish()
    }

    fn commit_inner(&mut self) -> Result<()> {
        self.write_back()?;
        // S6: held space every snapshot has moved past is given back now,
        // so that this commit records (and may cut) it.
        let tag = self.sb.generation + 1;
        let releasable = match self.st.pager.journal().readers() {
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
            if let Some(s) = self.st.pager.journal().readers() {
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
        self.sb.meta_end = self.st.space.meta_end();
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
        if let Some(s) = self.st.pager.journal().readers() {
            let oldest = s.committed(generation)?;
            self.st.space.release_held(oldest);
        }
        Ok(())
    }

    /// Commit and make the commit durable at once: a commit syncs its
    /// journal's invalidation lazily (J6); a flush promises durability
    /// now. Inside a transaction this waits for its end.
    pub(crate) fn commit_durable(&mut self) -> Result<()> {
        if self.in_transaction() {
            return Ok(());
        }
        self.commit()?;
        if !self.st.writable {
            return Ok(());
        }
        let r = self.st.pager.journal().settle();
        if r.is_err() {
            self.poison();
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
        let (depth, doomed) = self.transaction();
        if depth == 0 {
            self.commit()?;
        }
        self.transition(State::Open {
            depth: depth + 1,
            doomed,
        });
        Ok(())
    }

    /// Leave the innermost transaction: at depth 0 commit, or roll back if
    /// any level asked to (the transaction is doomed).
    pub(crate) fn end_transaction(&mut self, commit: bool) -> Result<()> {
        let (depth, doomed) = self.transaction();
        if depth == 0 {
            return Err(Error::invalid("no transaction is open"));
        }
        let doomed = doomed || !commit;
        if depth > 1 {
            self.transition(State::Open {
                depth: depth - 1,
                doomed,
            });
            return Ok(());
        }
        self.transition(State::Open {
            depth: 0,
            doomed: false,
        });
        if commit && self.chunks_reserved() {
            // Their old space is freed and their new space not indexed.
            self.rollback()?;
            return Err(Error::invalid(
                "space was reserved for chunks and not sealed; everything was rolled back",
            ));
        }
        if doomed {
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
        match self.state {
            State::Open { .. } => self.transition(State::Open {
                depth: 0,
                doomed: false,
            }),
            State::Poisoned => {}
            // Closing committed and released the journal: nothing is left
            // to roll back.
            State::Closed => return,
        }
        // The panic is what the caller sees; a failed rollback poisons.
        let _ = self.rollback();
    }

    /// Commit, then close: object handles stop working and the journal is
    /// released (J9). Files opened for external links close with it, so
    /// what was written through a link is committed too.
    pub(crate) fn close(&mut self) -> Result<()> {
        let mut r = match self.state {
            State::Open { .. } => self.commit(),
            State::Poisoned => Err(Error::Poisoned),
            State::Closed => return Ok(()),
        };
        for (_, other) in std::mem::take(&mut self.externals) {
            // Another handle may still hold it; it then closes with that.
            if let Ok(mut s) = other.lock() {
                if s.st.writable {
                    r = r.and(s.close());
                }
            }
        }
        self.transition(State::Closed);
        self.caches.clear();
        self.st.pager.discard();
        let closed = self.st.pager.journal().release();
        let reader = match self.reader.take() {
            Some(rd) => rd.close(),
            None => Ok(()),
        };
        let r = r.and(closed).and(reader);
        // Published whole: the stand-in goes. Otherwise it stays, and the
        // error names it.
        match self.publisher.take() {
            Some(p) if r.is_ok() && !self.unpublished => p.finish(),
            _ => r,
        }
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
        self.forget_names();
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
        let sharing = j.serves_readers();
        j.begin(free.into_iter(), tag);
        self.st.space.set_defer(on);
        self.st.space.set_hold(sharing.then_some(tag));
    }

    /// Undo everything since the last commit and reload the committed state.
    pub(crate) fn rollback(&mut self) -> Result<()> {
        self.forget_names();
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
            self.poison();
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
        self.st.space.set_meta_end(self.sb.meta_end);
        if self.space_proven {
            self.st.space.mark_proven();
        }
        self.space_error = None;
        self.space_loaded = false;
        // A reader of a remote file uses the free-space record only to
        // check structures against it, and the record lies at the end of
        // the file: a request of its own. Loaded when a walk asks.
        if self.st.writable || !self.st.pager.batches() {
            self.load_space_once()?;
        }
        if self.st.writable {
            self.begin();
        }
        Ok(())
    }

    /// Load the free-space and held-space records if not loaded yet. A
    /// reader goes on without a damaged one (`space_error` says why).
    pub(crate) fn load_space_once(&mut self) -> Result<()> {
        if self.space_loaded {
            return Ok(());
        }
        self.space_loaded = true;
        if let Err(e) = self.load_space() {
            if self.st.writable {
                return Err(e);
            }
            self.space_error = Some(e);
            self.st.space = FileSpace::new(self.sb.eof, self.free_list);
            self.st.space.set_meta_end(self.sb.meta_end);
            if self.space_proven {
                self.st.space.mark_proven();
            }
        }
        Ok(())
    }

    /// Commit held-back frees, return aggregator space, and write the free
    /// sections (and the sections held for snapshot readers) at the end of
    /// the file so the file never ends in free space. Returns where the
    /// records go and their bytes; the caller writes them once their places
    /// are journaled.
    fn save_space(&mut self) -> Result<Vec<(u64, Vec<u8>)>> {
        self.st.space.commit();
        if self.st.space.wants_proof() {
            // Space this session freed of the file's own is an eighth of
            // the file: prove it, so that the file can shrink or reuse it.
            // A proof that fails fails the commit (nothing is written).
            if let Some(prove) = self.prover {
                prove(self)?;
            }
        }
        let sp = &mut self.st.space;
        sp.release_aggregators();
        let old = [
            (self.sb.space[0], self.sb.space[1]),
            (self.sb.space[2], self.sb.space[3]),
            (self.sb.left[0], self.sb.left[1]),
        ];
        if old.iter().any(|&(a, _)| a != 0) {
            for (addr, len) in old.into_iter().filter(|&(a, _)| a != 0) {
                self.st.free_blob(addr, len)?;
            }
            self.st.space.commit();
            self.sb.space = [0; 4];
            self.sb.left = [0; 2];
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
        let left = self.st.space.left();
        if !left.is_empty() {
            let bytes = record::encode_left(&left);
            let addr = self.st.space.alloc_eof(BLOB_HEADER + bytes.len() as u64)?;
            self.sb.left = [addr, bytes.len() as u64];
            out.push((addr, bytes));
        }
        Ok(out)
    }

    /// Load the free-space, left-space and held-space records written by
    /// [`Session::save_space`].
    fn load_space(&mut self) -> Result<()> {
        // The root header is live in every file: a section over it is
        // damage found before the space could be handed out.
        let live = [
            (self.sb.root, crate::pager::MIN_PAGE as u64),
            (0, crate::pager::PAGE_SIZE as u64),
        ];
        let [left_at, left_len] = self.sb.left;
        if let Some(left) = self.load_record(
            (left_at, left_len),
            "left-space record",
            record::decode_left,
            &live,
        )? {
            self.st.space.load_left(&left);
        }
        let free = (self.sb.space[0], self.sb.space[1]);
        if let Some(free) = self.load_record(free, "free-space record", record::decode, &live)? {
            self.st.space.load(&free);
        }
        // Readers of older snapshots may be alive: held as freed by the
        // committed generation, the newest any of them can have.
        let held = (self.sb.space[2], self.sb.space[3]);
        match self.load_record(held, "held-space record", record::decode_held, &live)? {
            Some(held) => self.st.space.load_held(&held, self.sb.generation),
            None => Ok(()),
        }
    }

    /// The sections of the record blob at `addr` whose data the
    /// superblock says is `len` bytes (`None` at address 0), decoded and
    /// checked by `decode`.
    fn load_record(
        &self,
        (addr, len): (u64, u64),
        what: &'static str,
        decode: record::Decoder,
        live: &[(u64, u64)],
    ) -> Result<Option<Vec<crate::space::Section>>> {
        if addr == 0 {
            return Ok(None);
        }
        let bytes = self.st.read_blob(addr)?;
        if bytes.len() as u64 != len {
            return Err(Error::corrupt(
                what,
                addr,
                "length differs from the superblock's",
            ));
        }
        let own = BLOB_HEADER + bytes.len() as u64;
        decode(&bytes, addr, own, self.sb.eof, live).map(Some)
    }
}

impl Session {
    /// Push dirty chunks to the file without committing, so walks see them.
    pub(crate) fn write_back(&mut self) -> Result<()> {
        self.caches.write_back(&mut self.st)
    }
}

impl Session {
    /// The store and the chunk caches, for the storage engine
    /// (`storage.rs`).
    pub(crate) fn storage(&mut self) -> (&mut Store, &mut Caches) {
        (&mut self.st, &mut self.caches)
    }

    /// The chunk caches of datasets and their vectors.
    pub(crate) fn caches(&mut self) -> &mut Caches {
        &mut self.caches
    }

    /// Why the stored free-space record could not be used, if it could not.
    pub(crate) fn space_error(&self) -> Option<&Error> {
        self.space_error.as_ref()
    }

    /// Whether opening rolled back a transaction a crash left behind.
    pub(crate) fn recovered(&self) -> bool {
        self.recovered
    }

    /// Record whether opening rolled back a transaction.
    pub(crate) fn set_recovered(&mut self, recovered: bool) {
        self.recovered = recovered;
    }

    /// Where the file lives, if on disk.
    pub(crate) fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Record where the file lives.
    pub(crate) fn set_path(&mut self, path: &Path) {
        self.path = Some(path.to_path_buf());
    }

    /// Serve this read-only session as a snapshot reader.
    pub(crate) fn set_reader(&mut self, reader: crate::snapshot::Reader) {
        self.reader = Some(reader);
    }

    /// The file opened for external links at `path` (canonical) asking
    /// for writing or not, if any.
    pub(crate) fn external(&self, path: &Path, write: bool) -> Option<Arc<Mutex<Session>>> {
        self.externals.get(&(path.to_path_buf(), write)).cloned()
    }

    /// Keep the file opened for external links at `path` (canonical).
    pub(crate) fn add_external(&mut self, path: PathBuf, write: bool, file: Arc<Mutex<Session>>) {
        self.externals.insert((path, write), file);
    }

    /// The path of each object id, if built since links last changed.
    pub(crate) fn names(&self) -> Option<&HashMap<u64, String>> {
        self.names.as_ref()
    }

    /// Keep the path of each object id, until links change.
    pub(crate) fn set_names(&mut self, names: HashMap<u64, String>) {
        self.names = Some(names);
    }

    /// Links changed: the paths of object ids are built again when needed.
    pub(crate) fn forget_names(&mut self) {
        self.names = None;
        self.links_epoch += 1;
    }

    /// A number that changes whenever links may have changed.
    pub(crate) fn links_epoch(&self) -> u64 {
        self.links_epoch
    }

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
}

/// Whether the session may go from state `from` to `to` (the diagram in
/// the module comment).
fn legal(from: State, to: State) -> bool {
    use State::{Closed, Open, Poisoned};
    match (from, to) {
        _ if from == to => true,
        // Doomed only inside a transaction.
        (
            _,
            Open {
                depth: 0,
                doomed: true,
            },
        ) => false,
        (
            Open {
                depth: a,
                doomed: x,
            },
            Open {
                depth: b,
                doomed: y,
            },
        ) => {
            // begin: one deeper; the outermost starts not doomed
            (b == a + 1 && y == (x && a > 0))
                // end of an inner one: one shallower, doomed only grows
                || (a > 1 && b == a - 1 && (y || !x))
                // end of the outermost, or abandoned at any depth
                || (a > 0 && b == 0)
                // doomed at the same depth
                || (a > 0 && b == a && y)
        }
        (Open { .. }, Poisoned) => true,
        (Open { .. } | Poisoned, Closed) => true,
        _ => false,
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.publisher.is_some() {
            // A stand-in (a file written on object storage) closes as
            // `close` would: published, and its staging removed. Errors
            // cannot be reported here; the staged file stays after one.
            let _ = self.close();
            return;
        }
        if matches!(self.state, State::Open { .. }) {
            // Errors cannot be reported from drop; close() reports them.
            let _ = self.commit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{legal, State};

    fn open(depth: usize, doomed: bool) -> State {
        State::Open { depth, doomed }
    }

    #[test]
    fn the_diagram_s_edges_are_legal_and_no_others() {
        // begin, outermost and nested
        assert!(legal(open(0, false), open(1, false)));
        assert!(legal(open(2, true), open(3, true)));
        // end of an inner transaction: doomed may come, never go
        assert!(legal(open(3, false), open(2, false)));
        assert!(legal(open(3, false), open(2, true)));
        assert!(!legal(open(3, true), open(2, false)));
        // end of the outermost, abandon at any depth, doom
        assert!(legal(open(1, true), open(0, false)));
        assert!(legal(open(4, false), open(0, false)));
        assert!(legal(open(2, false), open(2, true)));
        // failures and close
        assert!(legal(open(0, false), State::Poisoned));
        assert!(legal(open(3, true), State::Poisoned));
        assert!(legal(open(1, false), State::Closed));
        assert!(legal(State::Poisoned, State::Closed));
        // never
        assert!(!legal(open(0, false), open(0, true)));
        assert!(!legal(open(1, false), open(0, true)));
        assert!(!legal(open(0, false), open(2, false)));
        assert!(!legal(open(1, true), open(2, false)));
        assert!(!legal(open(2, true), open(2, false)));
        assert!(!legal(State::Poisoned, open(0, false)));
        assert!(!legal(State::Closed, open(0, false)));
        assert!(!legal(State::Closed, State::Poisoned));
    }
}
