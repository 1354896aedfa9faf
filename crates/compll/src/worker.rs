//! The background thread: it owns a compression context of its own and
//! turns evicted block images (already field-grouped by the arena's
//! thread) into their stored form while the arena's thread goes on; the
//! arena keeps each waiting image until its result comes back, so a block
//! that is needed again before then is taken back as it is. With
//! read-ahead it also decompresses blocks the arena expects to read next,
//! with a decompression context it creates on the first such job.
//!
//! Every job carries a [`Claim`]: the thread takes a job only by claiming
//! it, and the arena's thread may claim a queued job first and do it
//! itself, so it never waits for work the thread has not started (on a
//! busy machine the thread may not be running at all). Both sides sleep
//! on their channel when idle; neither spins.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

use crate::codec::{CodecState, Encoding};
use crate::error::Result;
use crate::layout::Layout;
use crate::pack::Packer;

/// Who does a job: set once, by whichever side claims it first.
pub(crate) type Claim = Arc<AtomicBool>;

/// A fresh, unclaimed claim.
pub(crate) fn new_claim() -> Claim {
    Arc::new(AtomicBool::new(false))
}

/// Claims a job: true for exactly one caller, the one that does it.
pub(crate) fn claim(c: &Claim) -> bool {
    !c.swap(true, Ordering::AcqRel)
}

/// A request; `ver` names it. The thread answers the jobs it claims, in
/// the order it got them, and skips, without an answer, those the
/// arena's thread claimed first.
pub(crate) enum Job {
    /// Compress this block image, its fields grouped first with `group`;
    /// with `fast`, with lz4 whatever the configured codec.
    Compress {
        ver: u64,
        /// The arena keeps the image while it waits for the result; a
        /// job it took back (or whose block it freed) leaves nothing
        /// behind in the queue, even while this thread is not running.
        src: Weak<Vec<u8>>,
        group: bool,
        fast: bool,
        claim: Claim,
    },
    /// Rebuild the `len`-byte image of a block from its stored form.
    Load {
        ver: u64,
        comp: Box<[u8]>,
        enc: Encoding,
        len: usize,
        normal: bool,
        claim: Claim,
    },
}

impl Job {
    fn claim(&self) -> &Claim {
        match self {
            Job::Compress { claim, .. } | Job::Load { claim, .. } => claim,
        }
    }
}

/// A request's result.
pub(crate) enum Done {
    Compressed {
        ver: u64,
        comp: Box<[u8]>,
        enc: Encoding,
    },
    Loaded {
        ver: u64,
        image: Result<Vec<u8>>,
    },
}

/// What the thread needs to rebuild images: the codec (its decompressing
/// half is created on the first load), the block layout and the grouping.
pub(crate) struct Unpack {
    pub codec: crate::config::Codec,
    pub layout: Layout,
    pub group: usize,
    /// Where lean contexts are parked (shared with the arena's thread).
    pub spare: Arc<crate::codec::Spare>,
}

pub(crate) struct Worker {
    /// `None` once the thread is gone from this process's point of view.
    link: Option<Link>,
    /// Bytes of the worker's native codec contexts, as last reported.
    ctx_bytes: Arc<AtomicU64>,
    /// The most it has held at once (what keeping them costs).
    ctx_peak: Arc<AtomicU64>,
    /// The process that started the thread: in a child of `fork` the
    /// thread does not exist.
    pid: u32,
}

/// The channels to the thread and its handle.
struct Link {
    jobs: Sender<Job>,
    done: Receiver<Done>,
    thread: JoinHandle<()>,
}

/// Stack of the compressor thread: the codecs keep their tables in their
/// contexts, not on the stack.
const STACK: usize = 256 * 1024;

impl Worker {
    /// Starts the thread with `codec` (a compress-only state) and what it
    /// needs to load blocks; `None` if no thread could be started.
    pub fn spawn(codec: CodecState, unpack: Unpack) -> Option<Worker> {
        let (job_tx, job_rx) = channel::<Job>();
        let (done_tx, done_rx) = channel::<Done>();
        let (codec_tx, codec_rx) = channel::<CodecState>();
        let ctx_bytes = Arc::new(AtomicU64::new(codec.native_bytes() as u64));
        let ctx = Arc::clone(&ctx_bytes);
        let ctx_peak = Arc::new(AtomicU64::new(0));
        let peak = Arc::clone(&ctx_peak);
        let spawned = std::thread::Builder::new()
            .name("compll-compress".into())
            .stack_size(STACK)
            .spawn(move || {
                let Ok(mut codec) = codec_rx.recv() else {
                    return;
                };
                // Frees the channel's buffer now rather than at exit.
                drop(codec_rx);
                let mut loader: Option<Packer> = None;
                // Sleeps on the channel between jobs: a thread that polled
                // would burn the share of a core a busy machine leaves it.
                while let Ok(job) = job_rx.recv() {
                    if !claim(job.claim()) {
                        // The arena's thread did it itself.
                        continue;
                    }
                    // The thread's contexts are parked in the spare it shares
                    // with the arena's thread at the end of each job, before
                    // the job is answered, and taken back by the next one:
                    // none is set up again per block, the thread holds none
                    // between jobs, and the arena decides, when it settles,
                    // how many the spare keeps (`Spare::trim`).
                    let done = match job {
                        Job::Compress {
                            ver,
                            src,
                            group,
                            fast,
                            ..
                        } => 'job: {
                            let Some(src) = src.upgrade() else {
                                // Taken back or freed by the arena since:
                                // nobody waits for an answer.
                                break 'job None;
                            };
                            codec.set_lean(true);
                            // The grouped image and the output buffer live
                            // only for this job, as on the arena's own
                            // thread: nothing is held between jobs.
                            let mut grouped = Vec::new();
                            let img: &[u8] = if group {
                                // Its tables too: the arena's count of what
                                // it holds does not see this thread's.
                                let (mut nodes, mut rows) = (Vec::new(), Vec::new());
                                unpack.layout.group(
                                    &src,
                                    unpack.group,
                                    &mut grouped,
                                    &mut nodes,
                                    &mut rows,
                                );
                                &grouped
                            } else {
                                &src
                            };
                            let mut out = Vec::new();
                            let enc = if fast {
                                codec.encode_fast(img, &mut out)
                            } else {
                                codec.encode_small(img, &mut out)
                            };
                            drop(grouped);
                            let comp: Box<[u8]> = out.as_slice().into();
                            drop(out);
                            drop(src);
                            Some(Done::Compressed { ver, comp, enc })
                        }
                        Job::Load {
                            ver,
                            comp,
                            enc,
                            len,
                            normal,
                            ..
                        } => {
                            let p = loader.get_or_insert_with(|| {
                                let mut d = CodecState::decompressor(&unpack.codec);
                                d.share_spare(Arc::clone(&unpack.spare));
                                Packer::new(d, unpack.group)
                            });
                            p.codec.set_lean(true);
                            let mut image = Vec::new();
                            let r = p.unpack(&unpack.layout, (enc, &comp), len, normal, &mut image);
                            Some(Done::Loaded {
                                ver,
                                image: r.map(|()| image),
                            })
                        }
                    };
                    let n = codec.native_bytes()
                        + loader.as_ref().map_or(0, |p| p.codec.native_bytes());
                    ctx.store(n as u64, Ordering::Relaxed);
                    let p = codec.ctx_peak() + loader.as_ref().map_or(0, |p| p.codec.ctx_peak());
                    peak.fetch_max(p as u64, Ordering::Relaxed);
                    if let Some(done) = done {
                        if done_tx.send(done).is_err() {
                            break;
                        }
                    }
                }
            });
        match spawned {
            Ok(thread) => {
                // The thread is waiting for exactly this message.
                let _ = codec_tx.send(codec);
                Some(Worker {
                    link: Some(Link {
                        jobs: job_tx,
                        done: done_rx,
                        thread,
                    }),
                    ctx_bytes,
                    ctx_peak,
                    pid: std::process::id(),
                })
            }
            Err(_) => None,
        }
    }

    /// True in a child process forked after the thread started: the
    /// thread is not there, and the channels may have been caught in the
    /// middle of an operation by the fork, so they must not be touched.
    pub fn forked(&self) -> bool {
        std::process::id() != self.pid
    }

    /// Queues a job; gives it back if the thread is gone.
    pub fn send(&self, job: Job) -> std::result::Result<(), Job> {
        match &self.link {
            Some(l) => l.jobs.send(job).map_err(|e| e.0),
            None => Err(job),
        }
    }

    /// A finished job if one is ready (`Ok(None)`: none yet); `Err` when
    /// the thread is gone.
    pub fn try_recv(&self) -> std::result::Result<Option<Done>, ()> {
        let Some(l) = &self.link else {
            return Err(());
        };
        match l.done.try_recv() {
            Ok(d) => Ok(Some(d)),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(()),
        }
    }

    /// Waits (asleep) for the next finished job; `None` when the thread
    /// is gone. Callers wait only for jobs the thread has claimed, which
    /// it is working on.
    pub fn recv(&self) -> Option<Done> {
        self.link.as_ref()?.done.recv().ok()
    }

    /// Lets the thread go without waiting for it: it ends, freeing its
    /// contexts, once it sees the job channel closed (after the job it
    /// may be finishing, whose answer nobody reads).
    pub fn retire(mut self) {
        if let Some(link) = self.link.take() {
            if self.forked() {
                std::mem::forget(link);
                return;
            }
            drop(link.jobs);
            drop(link.thread);
        }
    }

    pub fn ctx_bytes(&self) -> u64 {
        self.ctx_bytes.load(Ordering::Relaxed)
    }

    /// The most native context bytes the thread has held at once.
    pub fn ctx_peak(&self) -> u64 {
        self.ctx_peak.load(Ordering::Relaxed)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let Some(link) = self.link.take() else {
            return;
        };
        if self.forked() {
            // Not this process's thread: nothing to join, and the channels
            // are left exactly as the fork found them.
            std::mem::forget(link);
            return;
        }
        // Closing the job channel ends the thread's loop.
        drop(link.jobs);
        let _ = link.thread.join();
    }
}
