//! An fsmark-like creator thread (`[workload.fsmark]`): creates its files back to back, each
//! thread in its own directories, a directory per `files_per_dir` files (XFS places each new
//! directory in the next allocation group). Each create allocates a dentry and an inode
//! (GFP_NOFS for `nofs_fraction` of creates: metadata allocated inside a transaction or under
//! a filesystem lock), logs the inode and, with a file size, writes the data into the page
//! cache. When the log is full it waits
//! for xfsaild to free space (mechanisms §A.6 recipe; seed 002's fsmark).

use super::spec::FsmarkSpec;
use super::task::{Origin, Task, Work};
use super::QUANTUM_NS;
use crate::engine::histogram::Latency;
use crate::engine::Rng;
use crate::machine::fs::NONE;
use crate::machine::gfp::{Gfp, GFP_KERNEL, GFP_NOFS};
use crate::machine::{Access, Machine, PAGE_SIZE};
use crate::world::{StepCx, Wake};

/// Creates per step at most (bounds the work between two events).
const CREATES_PER_STEP: u32 = 256;

pub type Fsmark = Task<FsmarkWork>;

#[derive(Debug)]
pub struct FsmarkWork {
    spec: FsmarkSpec,
    /// This thread's number among the workload's creators.
    index: u32,
    rng: Rng,
    /// Its own anonymous memory: (first page, pages, pages touched so far).
    rss: (u32, u32, u32),
    /// First page of its files' data (NONE for empty files) and pages per file.
    data: (u32, u32),
    /// The create under way: its metadata gfp (kept across retries) and when it began.
    current: Option<(Gfp, u64)>,
    /// Data pages of the last file still to write: (next page, end).
    writing: Option<(u32, u32)>,
    pub created: u64,
    /// Time of each create, from its first attempt to its end (waits included).
    pub create_latency: Latency,
}

impl Fsmark {
    /// Creator thread `index` of a workload; its anonymous memory and data range are taken
    /// from the machine here.
    pub fn build(
        o: &Origin,
        spec: &FsmarkSpec,
        index: u32,
        m: &mut Machine,
    ) -> Result<Fsmark, String> {
        let name = format!("{}/fsmark{index}", o.workload);
        let rss_pages = spec.rss_bytes.div_ceil(PAGE_SIZE) as u32;
        let rss_base = if rss_pages > 0 {
            let r = m.add_region(o.task, rss_pages as u64, true)?;
            m.regions[r].base
        } else {
            0
        };
        let pages = spec.file_size_bytes.div_ceil(PAGE_SIZE) as u32;
        let data_base = if pages > 0 {
            let r = m.add_region(o.task, spec.files * pages as u64, false)?;
            m.regions[r].base
        } else {
            NONE
        };
        m.mmget(o.task);
        let work = FsmarkWork {
            rng: Rng::for_actor(o.seed, &name),
            spec: spec.clone(),
            index,
            rss: (rss_base, rss_pages, 0),
            data: (data_base, pages),
            current: None,
            writing: None,
            created: 0,
            create_latency: Latency::new(),
        };
        Ok(Task::from_origin(o, name, work))
    }

    fn run(&mut self, m: &mut Machine, now: u64) -> Wake {
        // Its own buffers first.
        while self.work.rss.2 < self.work.rss.1 {
            let vp = self.work.rss.0 + self.work.rss.2;
            match m.anon_access(vp, true, &mut self.ctx) {
                Access::Done => self.work.rss.2 += 1,
                a => return self.not_done(m, now, a),
            }
            if self.ctx.cost_ns >= QUANTUM_NS {
                return Wake::At(now + self.ctx.cost_ns);
            }
        }
        let mut n = 0;
        loop {
            if let Some((vp, end)) = self.work.writing {
                match m.file_access(vp, end, true, &mut self.ctx) {
                    Access::Done | Access::Block(_) => {
                        self.work.writing = (vp + 1 < end).then_some((vp + 1, end));
                    }
                    a => return self.not_done(m, now, a),
                }
                continue;
            }
            if self.work.created >= self.work.spec.files {
                return self.finish(m, now + self.ctx.cost_ns, false);
            }
            if n >= CREATES_PER_STEP || self.ctx.cost_ns >= QUANTUM_NS {
                return Wake::At(now + self.ctx.cost_ns);
            }
            let t0 = now + self.ctx.cost_ns;
            let (gfp, started) = *self.work.current.get_or_insert_with(|| {
                let nofs = self.work.spec.nofs_fraction >= 1.0
                    || (self.work.spec.nofs_fraction > 0.0
                        && self.work.rng.next_f64() < self.work.spec.nofs_fraction);
                (if nofs { GFP_NOFS } else { GFP_KERNEL }, t0)
            });
            let threads = self.work.spec.threads.max(1) as u64;
            let dir = self.work.index as u64
                + (self.work.created / self.work.spec.files_per_dir) * threads;
            let (base, pages) = self.work.data;
            let data = if pages > 0 {
                (base + self.work.created as u32 * pages, pages)
            } else {
                (NONE, 0)
            };
            match m.fs_create(dir as u32, gfp, data, &mut self.ctx) {
                Ok(_) => {
                    self.work.current = None;
                    self.work.created += 1;
                    n += 1;
                    self.ctx.cost_ns += self.work.spec.think_ns;
                    let end = now + self.ctx.cost_ns;
                    self.work.create_latency.record(end - started);
                    if pages > 0 {
                        self.work.writing = Some((data.0, data.0 + pages));
                    }
                }
                Err(a) => return self.not_done(m, now, a),
            }
        }
    }
}

impl Work for FsmarkWork {
    fn step(t: &mut Fsmark, cx: &mut StepCx) -> Wake {
        t.chunk(cx, Fsmark::run)
    }
}
