//! Read-ahead: blocks the background thread decompresses ahead of reads
//! that walk the arena one way. See
//! [`Config::readahead`](crate::Config::readahead).

use std::sync::Arc;

use super::{BlockHeap, Kind, NO_SLOT};
use crate::worker::{claim, new_claim, Claim, Job};

/// A block the background thread decompresses ahead of a read: not
/// cached, stored, and not changed until it is loaded (any access to a
/// block loads it first, which takes this image).
pub(super) struct Ahead {
    pub(super) block: u32,
    pub(super) ver: u64,
    /// Taken by the thread when it starts on the job, or by this thread
    /// when it needs the block first (see [`BlockHeap::take_ahead`]).
    pub(super) claim: Claim,
    /// `None` while on its way; then the image, or `None` if the thread
    /// could not rebuild it (the read does it again and reports why).
    pub(super) image: Option<Option<Vec<u8>>>,
}

/// Loads that read a block in a steady direction (a list walked in the
/// order its nodes were allocated, or backwards) are followed by loads of
/// the blocks next to them in that direction; see
/// [`BlockHeap::read_ahead`].
#[derive(Default)]
pub(super) struct Direction {
    /// The last blocks read from storage, newest last.
    pub(super) recent: std::collections::VecDeque<u32>,
    /// Steps up minus steps down between nearby reads, clamped.
    pub(super) trend: i32,
}

/// Read-ahead: loads farther apart than this many blocks break a run, and
/// blocks are asked for at most this far past the recent loads.
const AHEAD_WINDOW: u32 = 16;

/// Read-ahead: how many recent loads give the direction and the frontier.
const AHEAD_RECENT: usize = 8;

/// Read-ahead: a block read within this many loads is not asked for again
/// (a walk reads each block once).
const AHEAD_FORGET: u32 = 64;

impl BlockHeap {
    /// Puts block `b`'s image, decompressed ahead, into slot `i`; false if
    /// there is none (or the thread could not rebuild it), and the caller
    /// decompresses. A request the thread has not started on is claimed
    /// here and left to the caller (the thread skips it): a read never
    /// waits for a thread that may not be running. Only an image the
    /// thread is working on is waited for, and meanwhile this thread
    /// unpacks the next block the thread has queued, so both cores share
    /// the loads.
    pub(super) fn take_ahead(&mut self, b: u32, i: usize) -> bool {
        if self.ahead.is_empty() {
            return false;
        }
        self.drain();
        loop {
            let Some(pos) = self.ahead.iter().position(|a| a.block == b) else {
                return false;
            };
            match self.ahead[pos].image.take() {
                None => {
                    if claim(&self.ahead[pos].claim) {
                        self.ahead.swap_remove(pos);
                        self.taken_over += 1;
                        return false;
                    }
                    // The thread is on it: rather than wait idle, unpack
                    // the next block it has queued.
                    if !self.steal_ahead() {
                        self.wait_one();
                    }
                }
                Some(None) => {
                    self.ahead.swap_remove(pos);
                    return false;
                }
                Some(Some(img)) => {
                    self.ahead.swap_remove(pos);
                    let old = std::mem::replace(&mut self.slots[i].buf, Arc::new(img));
                    if let Ok(buf) = Arc::try_unwrap(old) {
                        self.give_spare(buf);
                    }
                    self.ahead_hits += 1;
                    return true;
                }
            }
        }
    }

    /// Unpacks on this thread the oldest block still queued for the
    /// background thread (which then skips it), keeping the image as read
    /// ahead; false if the thread has started on every request.
    pub(super) fn steal_ahead(&mut self) -> bool {
        let mut order: Vec<(u64, usize)> = self
            .ahead
            .iter()
            .enumerate()
            .filter(|(_, a)| a.image.is_none())
            .map(|(p, a)| (a.ver, p))
            .collect();
        order.sort_unstable();
        let Some(pos) = order
            .into_iter()
            .map(|(_, p)| p)
            .find(|&p| claim(&self.ahead[p].claim))
        else {
            return false;
        };
        let c = self.ahead[pos].block;
        let mut img = Vec::new();
        let ok = self.unpack_stored(c, &mut img).is_ok();
        self.ahead[pos].image = Some(ok.then_some(img));
        self.taken_over += 1;
        true
    }

    /// After a read loaded block `b` from storage: when the recent loads
    /// move steadily one way (as when a list is walked in the order its
    /// nodes were allocated, or backwards: nodes allocated together share
    /// blocks, so such a walk loads neighbouring blocks one after another,
    /// a few back and forth), asks the background thread to decompress the
    /// next blocks that way which were not read lately, at most
    /// `max_ahead` at a time, starting past the farthest recent load.
    /// Images the reads have moved away from are dropped.
    pub(super) fn read_ahead(&mut self, b: u32) {
        if !self.reading || self.max_ahead == 0 || !self.worker_here() {
            return;
        }
        self.loads = self.loads.wrapping_add(1).max(1);
        self.blocks[b as usize].read_at = self.loads;
        let d = &mut self.direction;
        if let Some(&last) = d.recent.back() {
            let step = b as i64 - last as i64;
            if step.abs() > AHEAD_WINDOW as i64 {
                d.trend = 0;
            } else {
                d.trend = (d.trend + step.signum() as i32).clamp(-4, 4);
            }
        }
        if d.recent.len() == AHEAD_RECENT {
            d.recent.pop_front();
        }
        d.recent.push_back(b);
        let (trend, lo, hi) = (
            d.trend,
            d.recent.iter().copied().min().unwrap_or(b),
            d.recent.iter().copied().max().unwrap_or(b),
        );
        let near = |x: u32| (x as i64 - b as i64).abs() <= 2 * AHEAD_WINDOW as i64;
        self.ahead.retain(|a| a.image.is_none() || near(a.block));
        if trend.abs() < 2 {
            return;
        }
        let mut x = if trend < 0 { hi as i64 } else { lo as i64 };
        for _ in 0..AHEAD_WINDOW {
            if self.ahead.len() >= self.max_ahead {
                break;
            }
            x += trend.signum() as i64;
            if x < 0 || x >= self.blocks.len() as i64 {
                break;
            }
            if self.wants_ahead(x as u32) && !self.send_load(x as u32) {
                break;
            }
        }
    }

    /// Whether block `c` is worth decompressing ahead: stored, not cached,
    /// not read lately, not already asked for.
    pub(super) fn wants_ahead(&self, c: u32) -> bool {
        let m = &self.blocks[c as usize];
        m.kind != Kind::Vacant
            && m.slot == NO_SLOT
            && m.comp.is_some()
            && (m.read_at == 0 || self.loads.wrapping_sub(m.read_at) > AHEAD_FORGET)
            && !self.ahead.iter().any(|a| a.block == c)
    }

    /// Asks the background thread to decompress stored block `c`; false
    /// if the thread is gone.
    pub(super) fn send_load(&mut self, c: u32) -> bool {
        let (len, normal) = self.image_shape(c);
        let m = &self.blocks[c as usize];
        let Some(comp) = m.comp.as_deref() else {
            return true;
        };
        let ver = self.next_ver;
        self.next_ver += 1;
        let claim = new_claim();
        let job = Job::Load {
            ver,
            comp: comp.into(),
            enc: m.enc,
            len,
            normal,
            claim: Arc::clone(&claim),
        };
        let sent = self.worker.as_ref().is_some_and(|w| w.send(job).is_ok());
        if sent {
            self.ahead.push(Ahead {
                block: c,
                ver,
                claim,
                image: None,
            });
        } else {
            self.worker_gone();
        }
        sent
    }
}
