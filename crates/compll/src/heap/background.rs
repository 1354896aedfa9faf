//! The background thread's compression side: blocks handed over when
//! evicted, results installed, blocks taken back while they wait, and the
//! thread's loss. See
//! [`Config::background_compression`](crate::Config::background_compression).

use std::sync::Arc;

use super::{BlockHeap, Kind};
use crate::codec::{CodecState, Encoding};
use crate::error::Result;
use crate::layout::Layout;
use crate::worker::{claim, new_claim, Claim, Done, Job, Unpack, Worker};

/// A block handed to the background compressor: evicted, not cached, not
/// yet stored. `src` is the block's image, which the compressor groups
/// (where `grouped`) and compresses; it is kept until the result comes
/// back, so the block can be taken back as it is, without waiting,
/// ungrouping or decompressing.
pub(super) struct Pending {
    pub(super) block: u32,
    /// Names the request; a result whose request is gone is dropped.
    pub(super) ver: u64,
    pub(super) src: Arc<Vec<u8>>,
    /// Its fields are grouped before compression (a normal block with
    /// grouping configured).
    pub(super) grouped: bool,
    /// Stored with lz4 (the memory target's choice at hand-over).
    pub(super) fast: bool,
    /// Taken by the thread when it starts on the job, or by this thread
    /// when it needs the result first ([`BlockHeap::steal_pending`]).
    pub(super) claim: Claim,
}

impl BlockHeap {
    /// Gives slot `i`'s dirty block `b` to the background compressor: the
    /// image itself (the slot gets a spare buffer; nothing is copied), whose
    /// fields the thread groups before compressing, so the arena's thread
    /// spends on a handed-over block only the hand-over. Waits for the
    /// oldest request while more than `max_pending` are out.
    pub(super) fn hand_over(&mut self, i: usize, b: u32) {
        let normal = self.blocks[b as usize].kind == Kind::Normal;
        let grouped = self.packer.group > 0 && normal;
        let spare = self.take_spare();
        let src = std::mem::replace(&mut self.slots[i].buf, Arc::new(spare));
        let fast = self.store_fast(self.slots[i].buf.len());
        let ver = self.next_ver;
        self.next_ver += 1;
        let claim = new_claim();
        let weak = Arc::downgrade(&src);
        self.pending.push(Pending {
            block: b,
            ver,
            src,
            grouped,
            fast,
            claim: Arc::clone(&claim),
        });
        let job = Job::Compress {
            ver,
            src: weak,
            group: grouped,
            fast,
            claim,
        };
        let sent = match &self.worker {
            Some(w) => w.send(job).is_ok(),
            None => false,
        };
        if !sent {
            self.worker_gone();
        }
        while self.pending.len() > self.max_pending {
            if !self.steal_pending(0) {
                self.wait_one();
            }
        }
    }

    /// Installs a finished compression, unless its block was taken back
    /// meanwhile, or a block loaded ahead.
    pub(super) fn apply(&mut self, d: Done) {
        let (ver, comp, enc) = match d {
            Done::Compressed { ver, comp, enc } => (ver, comp, enc),
            Done::Loaded { ver, image } => {
                if let Some(a) = self.ahead.iter_mut().find(|a| a.ver == ver) {
                    // A failed load is done again on this thread, which
                    // reports the error where the block is read.
                    a.image = Some(image.ok());
                }
                return;
            }
        };
        self.compressions += 1;
        let Some(pos) = self.pending.iter().position(|p| p.ver == ver) else {
            return;
        };
        let p = self.pending.swap_remove(pos);
        self.compressed_bytes += comp.len() as u64;
        self.note_stored(p.block, comp.len(), enc);
        let m = &mut self.blocks[p.block as usize];
        m.comp = Some(comp);
        m.enc = enc;
        // `p.src` is freed here rather than kept as a spare: the next
        // eviction groups into a buffer of its own anyway.
    }

    /// True while as many blocks wait for the compressor thread as may:
    /// the next dirty block is then compressed on this thread instead of
    /// waiting, so both cores compress while an arena is being filled.
    pub(super) fn compressor_busy(&mut self) -> bool {
        self.drain();
        self.pending.len() >= self.max_pending
    }

    /// True while the background thread has requests of ours to answer.
    pub(super) fn outstanding(&self) -> bool {
        !self.pending.is_empty() || self.ahead.iter().any(|a| a.image.is_none())
    }

    /// Installs every finished result without waiting.
    pub(super) fn drain(&mut self) {
        if !self.outstanding() || !self.worker_here() {
            return;
        }
        loop {
            let r = match &self.worker {
                Some(w) => w.try_recv(),
                None => return,
            };
            match r {
                Ok(Some(d)) => self.apply(d),
                Ok(None) => return,
                Err(()) => return self.worker_gone(),
            }
        }
    }

    /// Waits for one result (any) and installs it.
    pub(super) fn wait_one(&mut self) {
        if !self.outstanding() || !self.worker_here() {
            return;
        }
        match self.worker.as_ref().and_then(|w| w.recv()) {
            Some(d) => self.apply(d),
            None => self.worker_gone(),
        }
    }

    /// Waits until no block waits for the compressor and no load ahead is
    /// on its way. Jobs the thread has not started are not waited for:
    /// blocks queued for compression are compressed here, loads queued
    /// ahead are dropped (every caller drops the images read ahead). Only
    /// the job the thread is working on, if any, is waited for (a
    /// read-ahead included, so that the thread holds nothing once this
    /// returns).
    pub(super) fn wait_all(&mut self) {
        self.drain();
        for a in std::mem::take(&mut self.ahead) {
            // Claimed here: the thread skips it. Claimed by the thread
            // and not back yet: waited for below, so that once this
            // returns the thread is idle (its contexts parked).
            if !claim(&a.claim) && a.image.is_none() {
                self.ahead.push(a);
            }
        }
        let mut pos = 0;
        while pos < self.pending.len() {
            if !self.steal_pending(pos) {
                pos += 1;
            }
        }
        while self.outstanding() {
            self.wait_one();
        }
    }

    /// Compresses waiting block `pending[pos]` on this thread if the
    /// background thread has not started on it (it then skips the job),
    /// removing it from `pending`; false if the thread has it.
    pub(super) fn steal_pending(&mut self, pos: usize) -> bool {
        if !claim(&self.pending[pos].claim) {
            return false;
        }
        self.tune_contexts();
        let p = self.pending.swap_remove(pos);
        let mut out = Vec::new();
        let (enc, _) = self
            .packer
            .pack(&self.layout, &p.src, (p.grouped, false, p.fast), &mut out);
        let comp: Box<[u8]> = out.as_slice().into();
        drop(out);
        self.compressions += 1;
        self.taken_over += 1;
        self.compressed_bytes += comp.len() as u64;
        self.note_stored(p.block, comp.len(), enc);
        let m = &mut self.blocks[p.block as usize];
        m.comp = Some(comp);
        m.enc = enc;
        true
    }

    /// Starts the background thread if one is configured, not running,
    /// and the arena holds enough blocks to pay for its contexts
    /// ([`Config::background_from`](crate::Config::background_from)).
    pub(super) fn ensure_worker(&mut self) {
        if self.worker.is_some() || self.in_use < self.background_from.max(1) {
            return;
        }
        let Some(codec) = self.background_codec.clone() else {
            return;
        };
        let mut compressor = CodecState::compressor(&codec);
        compressor.share_spare(Arc::clone(&self.parked));
        self.worker = Worker::spawn(
            compressor,
            Unpack {
                codec,
                layout: Layout::new(self.resolved),
                group: self.packer.group,
                spare: Arc::clone(&self.parked),
            },
        );
        if self.worker.is_some() {
            self.worker_starts += 1;
        } else {
            // No thread could be started: the arena goes on alone.
            self.background_codec = None;
        }
    }

    /// Stops the background thread once the arena has shrunk below half
    /// the size that started it: what it had queued is done here (or, if
    /// it is on it, waited for), and it frees its contexts as it ends.
    pub(super) fn maybe_stop_worker(&mut self) {
        if self.worker.is_none()
            || self.background_from == 0
            || self.in_use >= self.background_from / 2
        {
            return;
        }
        self.wait_all();
        if let Some(w) = self.worker.take() {
            w.retire();
        }
    }

    /// True if the background thread can take work. In a child process
    /// forked after it started it cannot (it is not there): the arena then
    /// goes on alone, as if the thread had died.
    pub(super) fn worker_here(&mut self) -> bool {
        match &self.worker {
            Some(w) if w.forked() => {
                self.worker_gone();
                false
            }
            Some(_) => true,
            None => false,
        }
    }

    /// The background thread is gone (a user codec panicked in it, or this
    /// is a forked child): every waiting block is stored raw, and from now
    /// on blocks are compressed and loaded here.
    pub(super) fn worker_gone(&mut self) {
        self.worker = None;
        // Not started again: its codec may panic again, or this is a
        // child of `fork` whose parent's thread it must not stand in for.
        self.background_codec = None;
        // Blocks on their way back are loaded here when they are read.
        self.ahead.clear();
        for p in std::mem::take(&mut self.pending) {
            // Stored as it would be decompressed: grouped where loads
            // ungroup.
            let copy: Box<[u8]> = if p.grouped {
                let mut g = Vec::new();
                let k = &mut self.packer;
                self.layout
                    .group(&p.src, k.group, &mut g, &mut k.gnodes, &mut k.grows);
                g.into()
            } else {
                p.src.as_slice().into()
            };
            self.compressed_bytes += copy.len() as u64;
            let m = &mut self.blocks[p.block as usize];
            m.comp = Some(copy);
            m.enc = Encoding::Raw;
        }
    }

    /// Index in `pending` of block `b`'s request.
    pub(super) fn pending_of(&self, b: u32) -> Option<usize> {
        self.pending.iter().position(|p| p.block == b)
    }

    /// The image of a waiting block (a copy of what the compressor got).
    pub(super) fn pending_image(&mut self, pos: usize, out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        out.extend_from_slice(&self.pending[pos].src);
        Ok(())
    }

    /// Puts waiting block `b` into slot `i` again, from the image the
    /// compressor got; its result will be dropped. No decompression:
    /// counts as a hit.
    pub(super) fn take_back(&mut self, b: u32, i: usize, pos: usize) -> Result<usize> {
        self.hits += 1;
        let p = self.pending.swap_remove(pos);
        let old = std::mem::replace(&mut self.slots[i].buf, p.src);
        if let Ok(buf) = Arc::try_unwrap(old) {
            self.give_spare(buf);
        }
        self.attach(b, i);
        Ok(i)
    }
}
