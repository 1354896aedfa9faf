//! The undo journal: every change to a file is atomic.
//!
//! Between two commits the file is in a *transaction*. Before the first
//! overwrite of any byte that existed when the transaction began, the
//! original page goes to a sidecar journal, and the journal is synced. Bytes
//! appended past the original end, and bytes in sections that were free when
//! the transaction began, need no copy: rolling back makes them unreachable
//! again.
//!
//! The journal file stays open for the whole session and is reused in place
//! (overwriting bytes the file system has already allocated makes its syncs
//! cheap: no file-system metadata changes). A transaction is invalidated by zeroing the header, and
//! that write is synced lazily, by the journal's next sync.
//!
//! Invariants:
//! - J1: a page below `orig_len` is overwritten only after its original
//!   bytes are in the journal and the journal is synced.
//! - J2: each page is journaled at most once per transaction, so the journal
//!   always holds the state at the transaction's start.
//! - J3: the file is never truncated below `orig_len` inside a transaction;
//!   shrinking is applied after the commit point.
//! - J4: the commit point is the journal's invalidation (header zeroed, or
//!   the journal truncated) reaching the disk, issued only after the file was
//!   synced; a crash before it rolls back, a crash after it keeps the new
//!   state.
//! - J5: a journal record counts only if its checksum (salted per
//!   transaction; salts never repeat within a session) verifies; a torn tail
//!   is ignored — the pages it covered were never overwritten (J1).
//! - J6: the invalidation is synced lazily: by the next transaction's first
//!   journal sync, by a barrier (J7, J8), by [`Journaled::settle`]
//!   (`File::flush`) or at close (J9). Until then a power failure may roll
//!   the last committed transaction back — whole, as J7 and J10 ensure, so
//!   the file shows a prefix of the committed transactions. A killed
//!   process loses nothing: its writes are in the OS's cache.
//! - J7: no byte of the data file changes (write, growth, truncation) while
//!   an invalidation is unsynced: the stale journal would roll back a
//!   transaction whose freed or appended space had since been reused. The
//!   first write of a transaction that needs no journal copy therefore
//!   syncs the journal first.
//! - J8: the file is shrunk (J3) only once the invalidation is synced;
//!   otherwise a stale journal would restore the old length with zeros in
//!   place of the bytes cut off. A small shrink waits for close (the bytes
//!   past the end are harmless); a large one syncs first.
//! - J9: close leaves no journal: the invalidation is synced, then the
//!   journal removed; a journal still hot (a failed commit) stays for
//!   recovery.
//! - J10: a transaction's first journal write never overlaps the body of a
//!   journal whose invalidation is unsynced: the header has a page of its
//!   own and the body goes before or after the stale one. Whichever of the
//!   writes reach the disk, the journal read back is the stale one intact
//!   (rolled back whole, safe by J7) or the new one (whose pages were not
//!   yet overwritten, J1), never a mixture.
//!
//! States ([`State`]; every change goes through one place that asserts it
//! is an edge here, in debug and `paranoid` builds):
//! ```text
//!            begin            journal pages (synced)
//!   Idle -----------> Open -------------------------> Hot
//!    ^ ^                |                               |
//!    |  \ settle        | commit / rollback             | commit / rollback
//!    |   +---------- Stale <----------------------------+
//!    |               (begin from Stale: Open, the invalidation still unsynced)
//!    +--- commit / rollback leaving nothing stale (from Open or Hot)
//!
//!   Idle  --begin-->            Open { stale: None }
//!   Stale --begin-->            Open { stale }      (its invalidation still unsynced)
//!   Open  --begin again-->      Open                (nothing journaled yet)
//!   Open  --settle-->           Open { stale: None }
//!   Open  --journal pages-->    Hot { body }        (J1; the sync also settles, J6)
//!   Hot   --journal pages-->    Hot { body grown at its end }
//!   Hot   --commit/rollback-->  Stale { body } or Idle   (header zeroed: J4, J6)
//!   Open  --commit/rollback-->  Stale { stale } or Idle
//!   Stale --settle-->           Idle
//!   any   --release-->          Closed              (a hot journal stays: J9)
//!   Idle, at open, a hot journal on disk --recover (roll back)--> Idle
//! ```
//!
//! The journal's bytes are laid out in [`crate::format::journal_layout`].

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use crate::error::{Error, Result};
use crate::format::journal_layout::{
    encode_record, salt, Header, RecordHead, HEADER_LEN, RECORD_HEAD,
};
use crate::format::page::PAGE_SIZE;
use crate::io::{Driver, FileDriver, Gated, UnlockedReads};

const PS: u64 = PAGE_SIZE as u64;
/// A journal longer than this is truncated at invalidation (and that
/// synced at once) rather than kept for reuse, so one large transaction
/// does not pin its journal's space for the rest of the session.
const KEEP: u64 = 1 << 20;
/// Bytes of zeros a new sidecar journal starts with: room for a few
/// transactions' journals of a few pages each (J10 alternates two).
const PREFILL: u64 = 64 << 10;
/// A commit cuts at most this much off the file's end lazily, at close or
/// with a later sync; a larger shrink is applied at once (J8).
const SHRINK_NOW: u64 = 64 << 10;
/// Added to the salt for each transaction: odd, so salts within a session
/// never repeat and a stale record cannot pass for a current one (J5).
const SALT_STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// A writer's link to the snapshot readers it serves in other processes,
/// as the journal and the commit use it. The snapshot side implements it;
/// the journal holds one and never needs to know more.
pub(crate) trait ReaderLink: Send {
    /// Keep the original of the page at `offset`, about to be journaled by
    /// the transaction that commits as generation `tag`.
    fn stage(&mut self, tag: u64, offset: u64, original: &[u8]);
    /// Hand the staged originals to the readers. Called once they are in
    /// the journal, before any page they preserve is overwritten (R1).
    fn append(&mut self, tag: u64) -> Result<()>;
    /// Before the commit making `generation`: announce it, and return the
    /// oldest snapshot a live reader holds (None: no reader, and none can
    /// start below `generation`, so its frees need not be held; R3).
    fn committing(&self, generation: u64) -> Result<Option<u64>>;
    /// The announced commit did not happen (there was nothing to commit).
    fn not_committing(&self) -> Result<()>;
    /// After the commit point: publish `generation`, then return the oldest
    /// snapshot still held (None: no reader) and drop what no reader needs.
    fn committed(&mut self, generation: u64) -> Result<Option<u64>>;
    /// The writer closes.
    fn close(self: Box<Self>) -> Result<()>;
}

/// Where a journal's records lie in its file: (start, end).
type Span = (u64, u64);

/// Where the journal is in its cycle: the states of the diagram in the
/// module doc, each with what it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No transaction; the journal on disk is durably cold.
    Idle,
    /// No transaction; the last one's journal, whose records lie at
    /// `stale`, is invalidated but the invalidation is not yet synced (J6).
    Stale { stale: Span },
    /// A transaction with nothing journaled yet: its writes so far went to
    /// space free at its start or past its end. `stale`: the last
    /// invalidation, while it is unsynced.
    Open { stale: Option<Span> },
    /// A transaction whose originals are journaled and synced, its records
    /// at `body`: a crash now rolls it back.
    Hot { body: Span },
    /// The file was let go; a hot journal stays on disk for recovery (J9).
    Closed,
}

impl State {
    fn in_transaction(self) -> bool {
        matches!(self, State::Open { .. } | State::Hot { .. })
    }

    /// The invalidated records whose invalidation is not yet synced.
    fn stale(self) -> Option<Span> {
        match self {
            State::Stale { stale } => Some(stale),
            State::Open { stale } => stale,
            _ => None,
        }
    }

    fn body(self) -> Option<Span> {
        match self {
            State::Hot { body } => Some(body),
            _ => None,
        }
    }

    /// Whether `self -> next` is an edge of the diagram.
    fn may_become(self, next: State) -> bool {
        use State::*;
        match (self, next) {
            // release
            (_, Closed) => true,
            (Closed, _) => false,
            // begin
            (Idle, Open { stale: None }) => true,
            (Stale { stale }, Open { stale: s }) => s == Some(stale),
            // begin again before anything is journaled, or settle
            (Open { stale }, Open { stale: s }) => s.is_none() || s == stale,
            // settle
            (Stale { .. }, Idle) => true,
            // journal pages: the body starts, or grows at its end
            (Open { .. }, Hot { .. }) => true,
            (Hot { body }, Hot { body: b }) => b.0 == body.0 && b.1 >= body.1,
            // commit or rollback: the body invalidated (a long journal is
            // truncated and synced at once, leaving nothing stale)
            (Open { stale }, Stale { stale: s }) => stale == Some(s),
            (Hot { body }, Stale { stale }) => stale == body,
            (Open { .. } | Hot { .. }, Idle) => true,
            _ => false,
        }
    }
}

/// Where the journal lives.
pub(crate) enum JournalStore {
    /// No journal: writes go straight to the file (scratch files).
    Off,
    /// A sidecar file, created when first needed and removed at close.
    Path(PathBuf, Option<FileDriver>),
    /// A caller-supplied driver (in-memory files, fault injection).
    Driver(Box<dyn Driver>),
}

/// The data file seen through the journal.
pub(crate) struct Journaled {
    file: Box<dyn Driver>,
    store: JournalStore,
    /// Where the journal is in its cycle; changed only by [`Journaled::to`].
    state: State,
    // The transaction's own facts, set by `begin` and read while it is
    // open or hot.
    /// The file's length when the transaction began (J1, J3).
    orig_len: u64,
    /// Sections free when the transaction began: addr -> end.
    free: BTreeMap<u64, u64>,
    /// Pages journaled in this transaction (J2).
    journaled: HashSet<u64>,
    /// Bytes the journal file holds, written or not (tracked to spare a stat).
    jfile_len: u64,
    salt: u64,
    /// Length the file has inside the transaction; the physical file may be
    /// longer until commit (J3).
    logical: u64,
    physical: u64,
    /// Pages journaled since the transaction began, for statistics.
    pub(crate) pages_journaled: u64,
    /// Whether anything was written or truncated since the last commit.
    pub(crate) touched: bool,
    /// Journal writes into free space too, so a rollback restores every
    /// byte, not only every reachable one.
    pub(crate) exact: bool,
    /// Shared with [`Gated`]: held exclusively by every write below.
    gate: Arc<RwLock<()>>,
    /// Snapshot readers in other processes, when this writer serves them.
    readers: Option<Box<dyn ReaderLink>>,
    /// The generation this transaction commits as (the history's tag).
    tag: u64,
}

pub(crate) use crate::format::journal_layout::sidecar_is_hot;

/// A hot journal: the file's length at the transaction's start and the
/// original pages as (offset, bytes).
type HotJournal = (u64, Vec<(u64, Vec<u8>)>);

/// The header of the journal `j`, if it is hot.
fn hot_header(j: &dyn Driver) -> Result<Option<Header>> {
    if j.len()? < HEADER_LEN {
        return Ok(None);
    }
    let mut h = [0u8; HEADER_LEN as usize];
    j.read_at(0, &mut h)?;
    Ok(Header::decode(&h))
}

/// Parse a journal: `None` if it is not hot (empty, invalidated, or a torn
/// header).
fn parse(j: &dyn Driver) -> Result<Option<HotJournal>> {
    let len = j.len()?;
    let Some(head) = hot_header(j)? else {
        return Ok(None);
    };
    let mut recs = vec![];
    let mut pos = head.records_start(PS);
    while pos + RECORD_HEAD <= len {
        let mut rh = [0u8; RECORD_HEAD as usize];
        j.read_at(pos, &mut rh)?;
        let r = RecordHead::decode(&rh);
        let n = r.len as u64;
        if n == 0 || n > PS || pos + RECORD_HEAD + n > len {
            break;
        }
        let mut data = vec![0u8; n as usize];
        j.read_at(pos + RECORD_HEAD, &mut data)?;
        if !r.verifies(head.salt, &data)
            || r.offset.checked_add(n).is_none_or(|e| e > head.orig_len)
        {
            break; // J5: a torn or stale tail
        }
        recs.push((r.offset, data));
        pos += RECORD_HEAD + n;
    }
    Ok(Some((head.orig_len, recs)))
}

/// Make the sidecar journal at `p` durably cold, then remove it: a removal
/// alone may not survive a power failure, and a journal that came back hot
/// would be rolled back over later commits.
pub(crate) fn discard_sidecar(p: &Path) -> Result<()> {
    if !p.exists() {
        return Ok(());
    }
    let err = |e| Error::io(format!("removing journal {}", p.display()), e);
    // A journal we may not write, we may still remove; as before, the
    // removal is then all there is.
    if let Ok(f) = std::fs::OpenOptions::new().write(true).open(p) {
        f.set_len(0).map_err(err)?;
        f.sync_all().map_err(err)?;
    }
    std::fs::remove_file(p).map_err(err)
}

impl Journaled {
    pub(crate) fn new(file: Box<dyn Driver>, store: JournalStore) -> Result<Self> {
        let len = file.len()?;
        // Every write below the journal waits for unlocked chunk reads.
        let file = Gated::new(file);
        let gate = file.gate();
        let file: Box<dyn Driver> = Box::new(file);
        let jfile_len = match &store {
            JournalStore::Driver(d) => d.len()?,
            _ => 0,
        };
        Ok(Journaled {
            file,
            store,
            state: State::Idle,
            orig_len: len,
            free: BTreeMap::new(),
            journaled: HashSet::new(),
            jfile_len,
            salt: salt(),
            logical: len,
            physical: len,
            pages_journaled: 0,
            touched: false,
            exact: false,
            gate,
            readers: None,
            tag: 0,
        })
    }

    /// Move to `next`: every change of state goes through here, and is
    /// checked to be an edge of the diagram (debug, test and `paranoid`
    /// builds).
    fn to(&mut self, next: State) {
        if next == self.state {
            return;
        }
        if cfg!(any(debug_assertions, test, feature = "paranoid")) {
            assert!(
                self.state.may_become(next),
                "journal: {:?} -> {next:?} is not an edge of the state diagram",
                self.state
            );
        }
        self.state = next;
    }

    /// The last invalidation is durable now (J6): nothing is stale.
    fn forget_stale(&mut self) {
        let next = match self.state {
            State::Stale { .. } => State::Idle,
            State::Open { .. } => State::Open { stale: None },
            s => s,
        };
        self.to(next);
    }

    /// Check the journal's invariants (tests and `paranoid` builds).
    #[cfg(any(test, feature = "paranoid"))]
    fn check_invariants(&self) -> std::result::Result<(), String> {
        if self.logical > self.physical {
            return Err(format!(
                "logical length {} past the physical {}",
                self.logical, self.physical
            ));
        }
        if !self.enabled() && !matches!(self.state, State::Idle | State::Closed) {
            return Err(format!("no journal, yet {:?}", self.state));
        }
        if self.state.in_transaction() {
            if self.physical < self.orig_len {
                return Err(format!(
                    "J3: the file was cut to {} inside a transaction that began at {}",
                    self.physical, self.orig_len
                ));
            }
            if let Some(p) = self.journaled.iter().find(|&&p| p * PS >= self.orig_len) {
                return Err(format!(
                    "J2: page {p} journaled, past the original length {}",
                    self.orig_len
                ));
            }
        }
        for span in [self.state.body(), self.state.stale()]
            .into_iter()
            .flatten()
        {
            // J10: the header's page holds nothing else.
            if span.0 < PS || span.0 > span.1 || span.1 > self.jfile_len {
                return Err(format!(
                    "J10: records at {span:?} in a journal of {} bytes",
                    self.jfile_len
                ));
            }
        }
        Ok(())
    }

    /// Under `paranoid`, panic if an invariant is broken.
    fn checked(&self) {
        #[cfg(feature = "paranoid")]
        if let Err(e) = self.check_invariants() {
            panic!("journal invariant broken ({:?}): {e}", self.state);
        }
    }

    /// What a read without the file's lock needs: a reader of the data
    /// file, and the gate its writes wait at (see `io::Gated`). None for
    /// drivers that offer no shared reader.
    pub(crate) fn unlocked_reads(&self) -> Option<UnlockedReads> {
        Some((self.file.shared_reader()?, self.gate.clone()))
    }

    /// The generation the current transaction commits as: a stamp that
    /// tells one transaction from the next.
    pub(crate) fn transaction(&self) -> u64 {
        self.tag
    }

    /// The gate unlocked reads hold shared (a snapshot reader's refresh
    /// holds it exclusively).
    pub(crate) fn gate(&self) -> Arc<RwLock<()>> {
        self.gate.clone()
    }

    /// Serve snapshot readers from now on: every page journaled is also
    /// handed to `link`, and commits are published through it.
    pub(crate) fn serve_readers(&mut self, link: Box<dyn ReaderLink>) {
        self.readers = Some(link);
    }

    /// The snapshot readers this writer serves, if any.
    pub(crate) fn readers(&mut self) -> Option<&mut (dyn ReaderLink + 'static)> {
        self.readers.as_deref_mut()
    }

    /// Whether this writer serves snapshot readers.
    pub(crate) fn serves_readers(&self) -> bool {
        self.readers.is_some()
    }

    /// Take the data file's length afresh (a snapshot reader moved on).
    pub(crate) fn resync_len(&mut self) -> Result<()> {
        let len = self.file.len()?;
        self.logical = len;
        self.physical = len;
        Ok(())
    }

    pub(crate) fn enabled(&self) -> bool {
        !matches!(self.store, JournalStore::Off)
    }

    fn journal(&mut self) -> Result<Option<&mut dyn Driver>> {
        Ok(match &mut self.store {
            JournalStore::Off => None,
            JournalStore::Driver(d) => Some(d.as_mut()),
            JournalStore::Path(p, d) => {
                if d.is_none() {
                    let mut f = FileDriver::create(p.as_path(), false)?;
                    // Bytes written once are overwritten in place later, so
                    // the journal's syncs need no file-system metadata; the
                    // first sync carries these zeros (a zero header is cold).
                    f.write_at(0, &[0u8; PREFILL as usize])?;
                    *d = Some(f);
                    self.jfile_len = PREFILL;
                }
                d.as_mut().map(|d| d as &mut dyn Driver)
            }
        })
    }

    /// The journal if this session has one open (never creates it).
    fn journal_if_open(&mut self) -> Option<&mut dyn Driver> {
        match &mut self.store {
            JournalStore::Off => None,
            JournalStore::Driver(d) => Some(d.as_mut()),
            JournalStore::Path(_, d) => d.as_mut().map(|d| d as &mut dyn Driver),
        }
    }

    /// Stop journaling (scratch files).
    pub(crate) fn disable(&mut self) {
        self.store = JournalStore::Off;
        self.to(State::Idle);
    }

    /// Let go of the file (and its lock) when the file is closed while
    /// object handles still share this state. The journal is closed first
    /// (J9).
    pub(crate) fn release(&mut self) -> Result<()> {
        let mut r = self.close_journal();
        // The file's lock goes before the reader table's writer lock (see
        // `OpenOptions::open`).
        self.file = Box::new(crate::io::MemoryDriver::new());
        if let Some(s) = self.readers.take() {
            r = r.and(s.close());
        }
        self.store = JournalStore::Off;
        self.to(State::Closed);
        r
    }

    /// J9: sync the last invalidation and remove the journal, unless a
    /// transaction's journal is still hot (then recovery needs it).
    fn close_journal(&mut self) -> Result<()> {
        if matches!(self.state, State::Hot { .. } | State::Closed) {
            return Ok(());
        }
        if matches!(self.store, JournalStore::Path(..)) {
            // Durably cold before it goes: a removal alone may not survive
            // a power failure, and the stale header would come back hot.
            self.settle()?;
        }
        let jfile_len = self.jfile_len;
        match &mut self.store {
            JournalStore::Off => {}
            JournalStore::Driver(d) => {
                if jfile_len > 0 {
                    d.truncate(0)?;
                    d.sync()?;
                }
            }
            JournalStore::Path(p, d) => {
                if d.take().is_some() {
                    std::fs::remove_file(p.as_path())
                        .map_err(|e| Error::io(format!("removing journal {}", p.display()), e))?;
                }
            }
        }
        self.forget_stale();
        self.jfile_len = 0;
        if self.physical > self.logical {
            // A shrink left for later (J8); the invalidation is synced now.
            self.file.truncate(self.logical)?;
            self.physical = self.logical;
        }
        Ok(())
    }

    /// Roll back a hot journal left by a crash. Returns whether there was one.
    pub(crate) fn recover(&mut self) -> Result<bool> {
        let parsed = match &self.store {
            JournalStore::Off => None,
            JournalStore::Driver(d) => parse(d.as_ref())?,
            JournalStore::Path(p, _) => {
                if !p.exists() {
                    return Ok(false);
                }
                let d = FileDriver::open(p.as_path(), false)?;
                parse(&d)?
            }
        };
        let Some((orig_len, recs)) = parsed else {
            self.clear_journal()?;
            return Ok(false);
        };
        for (off, data) in &recs {
            self.file.write_at(*off, data)?;
        }
        self.file.truncate(orig_len)?;
        self.file.sync()?;
        self.clear_journal()?;
        self.physical = orig_len;
        self.logical = orig_len;
        self.checked();
        Ok(true)
    }

    /// Whether a hot journal exists, without touching anything.
    pub(crate) fn is_hot(&self) -> Result<bool> {
        Ok(match &self.store {
            JournalStore::Off => false,
            JournalStore::Driver(d) => hot_header(d.as_ref())?.is_some(),
            JournalStore::Path(p, _) => sidecar_is_hot(p)?,
        })
    }

    /// Start a transaction that commits as generation `tag`; `free` lists
    /// sections free at its start.
    pub(crate) fn begin(&mut self, free: impl Iterator<Item = (u64, u64)>, tag: u64) {
        if !self.enabled() {
            return;
        }
        self.tag = tag;
        self.orig_len = self.logical;
        self.free = free.map(|(a, s)| (a, a + s)).collect();
        self.journaled.clear();
        self.salt = self.salt.wrapping_add(SALT_STEP);
        self.pages_journaled = 0;
        self.to(State::Open {
            stale: self.state.stale(),
        });
        self.checked();
    }

    fn in_free(&self, a: u64, b: u64) -> bool {
        !self.exact
            && self
                .free
                .range(..=a)
                .next_back()
                .is_some_and(|(_, &end)| b <= end)
    }

    /// Journal the original pages under `ranges` (J1, J2) with one sync.
    pub(crate) fn preserve(&mut self, ranges: &[(u64, u64)]) -> Result<()> {
        if !self.state.in_transaction() {
            return Ok(());
        }
        let mut out: Vec<u8> = vec![];
        for &(a, len) in ranges {
            let b = (a + len).min(self.orig_len);
            if a >= b || self.in_free(a, b) {
                continue;
            }
            for p in a / PS..b.div_ceil(PS) {
                if !self.journaled.insert(p) {
                    continue;
                }
                let start = p * PS;
                let end = (start + PS).min(self.orig_len).min(self.physical);
                if start >= end {
                    continue;
                }
                let mut data = vec![0u8; (end - start) as usize];
                self.file.read_at(start, &mut data)?;
                encode_record(&mut out, self.salt, start, &data);
                if let Some(s) = &mut self.readers {
                    s.stage(self.tag, start, &data);
                }
                self.pages_journaled += 1;
            }
        }
        if out.is_empty() {
            return Ok(());
        }
        let n = out.len() as u64;
        let (salt, orig_len) = (self.salt, self.orig_len);
        let body = self.state.body();
        let at = match (body, self.state.stale()) {
            (Some((_, end)), _) => end,
            // J10: the body goes where the stale journal's is not.
            (None, Some((s, _))) if PS + n <= s => PS,
            (None, Some((_, e))) => e.next_multiple_of(PS),
            (None, None) => PS,
        };
        let first = body.is_none();
        let j = self
            .journal()?
            .ok_or_else(|| Error::invalid("journal disabled"))?;
        j.write_at(at, &out)?;
        if first {
            let h = Header {
                orig_len,
                salt,
                first_page: (at / PS) as u32,
            };
            j.write_at(0, &h.encode())?;
        }
        j.sync()?;
        // R1: the originals reach the readers' history before any page
        // they preserve is overwritten (no sync: readers share the cache).
        if let Some(s) = &mut self.readers {
            s.append(self.tag)?;
        }
        // This sync also made the last invalidation durable (J6).
        self.jfile_len = self.jfile_len.max(at + n);
        self.to(State::Hot {
            body: (body.map_or(at, |b| b.0), at + n),
        });
        self.checked();
        Ok(())
    }

    /// Make the last invalidation durable (J6, J7, J8): a sync of the
    /// journal, only when one is outstanding.
    pub(crate) fn settle(&mut self) -> Result<()> {
        if self.state.stale().is_some() {
            if let Some(j) = self.journal_if_open() {
                j.sync()?;
            }
            self.forget_stale();
        }
        Ok(())
    }

    /// Invalidate the journal whose records lie at `body` (J4): zero the
    /// header, synced lazily (J6); a long journal is truncated and synced
    /// at once. Returns what is left stale: `body`, or nothing. Should the
    /// write fail, the journal is still hot and stays so (J9).
    fn invalidate(&mut self, body: Span) -> Result<Option<Span>> {
        let long = self.jfile_len > KEEP;
        let Some(j) = self.journal_if_open() else {
            return Ok(None);
        };
        if long {
            j.truncate(0)?;
            j.sync()?;
            self.jfile_len = 0;
            Ok(None)
        } else {
            j.write_at(0, &[0u8; HEADER_LEN as usize])?;
            Ok(Some(body))
        }
    }

    /// End the transaction: invalidate its journal, if it has one (J4).
    fn end_transaction(&mut self) -> Result<()> {
        let stale = match self.state {
            State::Hot { body } => self.invalidate(body)?,
            State::Open { stale } => stale,
            _ => return Ok(()),
        };
        self.to(match stale {
            Some(stale) => State::Stale { stale },
            None => State::Idle,
        });
        Ok(())
    }

    /// Empty and remove the journal after a recovery, durably.
    fn clear_journal(&mut self) -> Result<()> {
        match &mut self.store {
            JournalStore::Off => {}
            JournalStore::Driver(d) => {
                if d.len()? > 0 {
                    d.truncate(0)?;
                    d.sync()?;
                }
            }
            JournalStore::Path(p, d) => {
                *d = None;
                discard_sidecar(p)?;
            }
        }
        // Only at open, before any transaction.
        self.forget_stale();
        self.jfile_len = 0;
        Ok(())
    }

    /// The commit point (J4): call after the file is synced.
    pub(crate) fn commit(&mut self) -> Result<()> {
        self.end_transaction()?;
        if self.physical > self.logical
            && (self.state.stale().is_none() || self.physical - self.logical >= SHRINK_NOW)
        {
            self.settle()?; // J8
            self.file.truncate(self.logical)?;
            self.physical = self.logical;
        }
        self.touched = false;
        self.checked();
        Ok(())
    }

    /// Undo everything since `begin`.
    pub(crate) fn rollback(&mut self) -> Result<()> {
        if !self.state.in_transaction() {
            return Err(Error::invalid("no transaction to roll back"));
        }
        let parsed = match self.state.body() {
            Some(_) => self
                .journal_if_open()
                .map(|j| parse(&*j))
                .transpose()?
                .flatten(),
            None => None,
        };
        self.settle()?; // J7
        if let Some((_, recs)) = parsed {
            for (off, data) in recs {
                self.file.write_at(off, &data)?;
            }
        }
        self.file.truncate(self.orig_len)?;
        self.file.sync()?;
        self.physical = self.orig_len;
        self.logical = self.orig_len;
        self.end_transaction()?;
        self.touched = false;
        self.checked();
        Ok(())
    }
}

impl Drop for Journaled {
    /// A file dropped without `close` still leaves no journal (J9).
    fn drop(&mut self) {
        // Errors cannot be reported from drop; a journal left behind is cold
        // or hot as the state demands, and the next open deals with it.
        let _ = self.close_journal();
    }
}

impl Driver for Journaled {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if offset.saturating_add(buf.len() as u64) > self.logical {
            return Err(Error::io(
                format!("reading {} bytes at {offset}", buf.len()),
                std::io::ErrorKind::UnexpectedEof.into(),
            ));
        }
        self.file.read_at(offset, buf)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        let end = offset
            .checked_add(data.len() as u64)
            .ok_or_else(|| Error::invalid(format!("a write at {offset} runs past 2^64")))?;
        self.touched = true;
        self.preserve(&[(offset, data.len() as u64)])?;
        self.settle()?; // J7: a write that needed no journal copy
        self.file.write_at(offset, data)?;
        self.logical = self.logical.max(end);
        self.physical = self.physical.max(end);
        self.checked();
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }

    fn truncate(&mut self, len: u64) -> Result<()> {
        self.touched = true;
        if !self.state.in_transaction() {
            self.settle()?; // J7
            self.file.truncate(len)?;
            self.logical = len;
            self.physical = len;
            self.checked();
            return Ok(());
        }
        if len < self.logical {
            // J3: shrink only after the commit point.
            self.logical = len;
            self.checked();
            return Ok(());
        }
        // Growing over bytes still physically present: they must read as zeros.
        let stale_end = len.min(self.physical);
        if stale_end > self.logical {
            let zeros = vec![0u8; (stale_end - self.logical).min(1 << 20) as usize];
            let mut at = self.logical;
            while at < stale_end {
                let n = (stale_end - at).min(zeros.len() as u64);
                self.write_at(at, &zeros[..n as usize])?;
                at += n;
            }
        }
        if len > self.physical {
            self.settle()?; // J7
            self.file.truncate(len)?;
            self.physical = len;
        }
        self.logical = len;
        self.checked();
        Ok(())
    }

    fn len(&self) -> Result<u64> {
        Ok(self.logical)
    }

    fn held_bytes(&self) -> Option<u64> {
        self.file.held_bytes()
    }

    fn fetches(&self) -> Option<Arc<crate::io::Fetches>> {
        self.file.fetches()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::MemoryDriver;

    fn journaled(pages: u64) -> Journaled {
        let file = MemoryDriver::from_bytes(vec![7u8; (pages * PS) as usize]);
        let journal = JournalStore::Driver(Box::new(MemoryDriver::new()));
        Journaled::new(Box::new(file), journal).unwrap()
    }

    #[test]
    fn transactions_walk_the_diagram() {
        let mut j = journaled(4);
        assert_eq!(j.state, State::Idle);
        j.begin(std::iter::empty(), 1);
        assert_eq!(j.state, State::Open { stale: None });
        // Past the original end: nothing to journal.
        j.write_at(5 * PS, b"fresh").unwrap();
        assert_eq!(j.state, State::Open { stale: None });
        j.write_at(PS, b"over").unwrap();
        let State::Hot { body } = j.state else {
            panic!("{:?}", j.state)
        };
        assert!(j.is_hot().unwrap());
        j.check_invariants().unwrap();
        j.commit().unwrap();
        assert_eq!(j.state, State::Stale { stale: body });
        assert!(!j.is_hot().unwrap(), "J4: the header is zeroed");

        j.begin(std::iter::empty(), 2);
        assert_eq!(j.state, State::Open { stale: Some(body) });
        // J7: a write that needs no copy makes the invalidation durable first.
        j.write_at(6 * PS, b"x").unwrap();
        assert_eq!(j.state, State::Open { stale: None });
        j.write_at(2 * PS, b"again").unwrap();
        assert!(matches!(j.state, State::Hot { .. }));
        j.check_invariants().unwrap();
        j.rollback().unwrap();
        assert!(matches!(j.state, State::Stale { .. }));
        let mut back = [0u8; 5];
        j.read_at(2 * PS, &mut back).unwrap();
        assert_eq!(back, [7; 5], "rolled back");
        assert_eq!(j.len().unwrap(), 5 * PS + 5, "cut to the second start");
        assert!(j.rollback().is_err(), "no transaction");
        j.check_invariants().unwrap();

        j.release().unwrap();
        assert_eq!(j.state, State::Closed);
    }

    #[cfg(feature = "paranoid")]
    #[test]
    #[should_panic(expected = "journal invariant broken")]
    fn paranoid_checks_after_every_operation() {
        let mut j = journaled(1);
        j.logical = j.physical + 1;
        let _ = j.commit();
    }

    #[test]
    fn the_diagram_refuses_what_it_does_not_draw() {
        let body = (PS, 2 * PS);
        let hot = State::Hot { body };
        assert!(!State::Idle.may_become(hot));
        assert!(!State::Idle.may_become(State::Stale { stale: body }));
        assert!(!hot.may_become(State::Open { stale: None }));
        assert!(!State::Closed.may_become(State::Idle));
        assert!(hot.may_become(State::Stale { stale: body }));
        assert!(!hot.may_become(State::Stale {
            stale: (PS, 3 * PS)
        }));
        assert!(hot.may_become(State::Hot { body: (PS, 3 * PS) }));
        assert!(!hot.may_become(State::Hot {
            body: (2 * PS, 3 * PS)
        }));
        assert!(State::Stale { stale: body }.may_become(State::Open { stale: Some(body) }));
        assert!(!State::Stale { stale: body }.may_become(State::Open { stale: None }));
        assert!(hot.may_become(State::Closed));
    }
}
