//! The block backend (`drivers/block/xen-blkback/`, mechanisms.md §B.1, §B.3, §C.3, §C.4):
//! one `Blkif` per virtual block device, one `Ring` per queue of it, each served by a kthread
//! (`actors/xen_blkback.rs`) that runs this file's three steps:
//!
//! - [`Machine::blkback_dispatch`]: take one request off the shared ring and map its segments
//!   (`xen_blkbk_map`): a persistent hit needs nothing; a miss takes a pool page (growing the
//!   pool, which in balloon mode takes a dom0 page and may reclaim) and a map operation,
//!   batched 11 to a hypercall; a new mapping is kept as a persistent grant while the ring is
//!   under its cap, else marks the overflow and stays for this request only. Then the bio
//!   goes to the backend device.
//! - [`Machine::blkback_complete`]: requests the device finished: persistent segments are
//!   released, the others unmapped in one hypercall (with Xen's TLB flushes) and their pages
//!   put back in the pool; the response goes on the ring.
//! - [`Machine::blkback_housekeeping`]: after each pass and at least every 100 ms: the
//!   persistent-grant purge (6.1), then the pool shrink to the `[policy] blkback_pool`
//!   variant's target, then the `log_stats` line.

use std::collections::VecDeque;

use super::super::memory::{Access, TaskCtx};
use super::super::Machine;
use super::grant_table::NO_FRAME;
use super::persistent_gnt::PersistentGnts;
use super::{
    BackendDevice, XenBackend, LRU_INTERVAL_NS, NUM_BATCH_FREE_PAGES, STATS_INTERVAL_NS,
    XEN_BLKIF_REQS_PER_PAGE,
};
use crate::engine::ActorId;

/// A page of B0's global array (allocated at module init, never freed).
pub const B0_PAGE: u32 = u32::MAX - 1;

/// A request as blkfront put it on the shared ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlkifRequest {
    /// The frontend's id for it.
    pub tag: u64,
    pub write: bool,
    pub bytes: u64,
    /// Grant references of its data segments, then of its indirect descriptor pages.
    pub grefs: Vec<u32>,
    /// How many of `grefs` (at the end) are indirect pages.
    pub indirect: u32,
}

/// A request in the backend device.
#[derive(Debug, Clone)]
struct InFlight {
    done_at: u64,
    tag: u64,
    /// Grefs of the persistent grants it uses.
    persistent: Vec<u32>,
    /// Pages mapped for this request only (unmapped at completion).
    mapped: Vec<u32>,
}

impl Ring {
    /// An empty list, reusing one given back.
    pub fn take_list(&mut self) -> Vec<u32> {
        self.spare.pop().unwrap_or_default()
    }

    /// Give back a list that is no longer needed.
    pub fn give_list(&mut self, mut list: Vec<u32>) {
        if list.capacity() > 0 {
            list.clear();
            self.spare.push(list);
        }
    }
}

/// `st_*`: a ring's request statistics (reset by each `log_stats` line, as 6.1 does).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlkifStats {
    pub oo_req: u64,
    pub rd_req: u64,
    pub wr_req: u64,
    pub f_req: u64,
    pub ds_req: u64,
    pub rd_sect: u64,
    pub wr_sect: u64,
}

impl BlkifStats {
    pub fn add(&mut self, o: &BlkifStats) {
        self.oo_req += o.oo_req;
        self.rd_req += o.rd_req;
        self.wr_req += o.wr_req;
        self.f_req += o.f_req;
        self.ds_req += o.ds_req;
        self.rd_sect += o.rd_sect;
        self.wr_sect += o.wr_sect;
    }
}

/// A virtual block device's backend (`struct xen_blkif` with its `xen_vbd`).
#[derive(Debug, Clone)]
pub struct Blkif {
    /// `<guest>/<vbd>`.
    pub name: String,
    pub domid: u32,
    pub device: BackendDevice,
    /// When the device's bandwidth is free again.
    pub busy_until: u64,
    /// B3's per-device `buffer_squeeze_end` (ns, on a jiffy).
    pub buffer_squeeze_end: u64,
    pub rings: Vec<usize>,
}

/// One ring of a device (`struct xen_blkif_ring`) and what its kthread works on.
#[derive(Debug, Clone)]
pub struct Ring {
    pub dev: usize,
    pub queue: u32,
    /// Dom0 CPU its kthread runs on.
    pub cpu: u32,
    /// The page cache: free pages (dom0 frames, or `NO_FRAME` when unpopulated).
    pub pool: Vec<u32>,
    pub pgnts: PersistentGnts,
    /// Persistent grants negotiated on this ring, and its cap.
    pub persistent: bool,
    pub max_pgrants: u32,
    /// `overflow_max_grants`.
    pub overflow: bool,
    /// Free `pending_req` slots.
    pub pending_free: u32,
    /// Requests the frontend produced that the backend has not taken.
    pub requests: VecDeque<BlkifRequest>,
    /// Responses the frontend has not consumed: (tag, completion time).
    pub responses: VecDeque<(u64, u64)>,
    inflight: VecDeque<InFlight>,
    /// Emptied gref and page lists, reused so the I/O path does not allocate per request (a
    /// simulator detail, no kernel state).
    spare: Vec<Vec<u32>>,
    /// `waiting_reqs`: the event channel fired since the last pass.
    pub waiting_reqs: bool,
    /// `next_lru`: the next purge.
    pub next_lru: u64,
    /// `st_print`: the next `log_stats` line.
    pub st_print: u64,
    /// Its kthread, and the frontend thread that uses it (set when the world is built).
    pub backend: ActorId,
    pub frontend: Option<ActorId>,
    /// The kthread's dom0 task (for its allocations).
    pub task: usize,
    pub stats: BlkifStats,
    /// Statistics printed before (the sysfs totals add them back).
    pub printed: BlkifStats,
    /// `log_stats` lines: (time, line).
    pub log: Vec<(u64, String)>,
    /// Pages mapped for in-flight requests only.
    pub mapped_now: u64,
    /// Largest pool, and housekeeping steps that left it above their target (must stay 0).
    pub pool_max: u64,
    pub over_target: u64,
}

impl Ring {
    /// Guest pages mapped into dom0 by this ring.
    pub fn mapped_pages(&self) -> u64 {
        self.mapped_now + self.pgnts.count() as u64
    }

    /// Requests in the backend device.
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// When the next request in the device completes.
    pub fn next_completion(&self) -> Option<u64> {
        self.inflight.front().map(|f| f.done_at)
    }

    /// Every page the ring holds: its pool, the pages mapped for in-flight requests, and its
    /// persistent grants' pages.
    pub fn pages(&self) -> impl Iterator<Item = u32> + '_ {
        self.pool
            .iter()
            .copied()
            .chain(self.inflight.iter().flat_map(|f| f.mapped.iter().copied()))
            .chain(self.pgnts.tree.values().map(|g| g.page))
    }

    /// `statistics/*` as sysfs shows them: everything since connect.
    pub fn totals(&self) -> BlkifStats {
        let mut s = self.printed;
        s.add(&self.stats);
        s
    }
}

/// What one dispatch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatch {
    /// A request was mapped and submitted; its CPU cost.
    Done(u64),
    /// The ring holds no request.
    Empty,
    /// No `pending_req` is free (`st_oo_req` counted).
    NoSlot,
    /// Growing the pool could not allocate: retry as the access says (the cost so far).
    Blocked(Access, u64),
}

/// What a completion or housekeeping step cost: the kthread's CPU, each other dom0 CPU's IPI
/// time, and when the balloon worker must run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    pub cpu_ns: u64,
    pub ipi_ns: u64,
    pub balloon_at: Option<u64>,
}

impl Work {
    fn balloon(&mut self, at: Option<u64>) {
        if let Some(a) = at {
            self.balloon_at = Some(self.balloon_at.map_or(a, |b| b.min(a)));
        }
    }
}

/// Jiffies arithmetic of the deadlines: `msecs_to_jiffies` rounds up.
pub fn msecs_to_jiffies_ns(ms: u64) -> u64 {
    let j = super::super::JIFFY_NS;
    (ms * 1_000_000).div_ceil(j) * j
}

/// `jiffies` at `t`, in ns.
pub fn jiffies_ns(t: u64) -> u64 {
    let j = super::super::JIFFY_NS;
    t / j * j
}

impl XenBackend {
    /// Connect a device with `queues` rings whose kthreads run on dom0 CPUs from `first_cpu`
    /// on. `persistent`: the frontend offers persistent grants.
    pub fn connect(
        &mut self,
        name: &str,
        domid: u32,
        device: BackendDevice,
        queues: u32,
        persistent: bool,
    ) -> usize {
        let dev = self.devices.len();
        let negotiated = persistent && self.params.feature_persistent && self.grants.enabled();
        let max_pgrants = self.grants.max_grants(&self.params);
        let mut rings = Vec::new();
        for q in 0..queues.max(1) {
            let cpu = (self.rings.len() as u32) % self.dom0_cpus;
            rings.push(self.rings.len());
            self.rings.push(Ring {
                dev,
                queue: q,
                cpu,
                pool: Vec::new(),
                pgnts: PersistentGnts::default(),
                persistent: negotiated,
                max_pgrants,
                overflow: false,
                pending_free: XEN_BLKIF_REQS_PER_PAGE,
                requests: VecDeque::new(),
                responses: VecDeque::new(),
                inflight: VecDeque::new(),
                spare: Vec::new(),
                waiting_reqs: false,
                next_lru: LRU_INTERVAL_NS,
                st_print: STATS_INTERVAL_NS,
                backend: 0,
                frontend: None,
                task: 0,
                stats: BlkifStats::default(),
                printed: BlkifStats::default(),
                log: Vec::new(),
                mapped_now: 0,
                pool_max: 0,
                over_target: 0,
            });
        }
        self.devices.push(Blkif {
            name: name.to_string(),
            domid,
            device,
            busy_until: 0,
            buffer_squeeze_end: 0,
            rings,
        });
        dev
    }

    /// The device's statistics summed over its rings.
    pub fn device_totals(&self, dev: usize) -> BlkifStats {
        let mut s = BlkifStats::default();
        for &r in &self.devices[dev].rings {
            s.add(&self.rings[r].totals());
        }
        s
    }

    /// The pool target of ring `r` at `now`, as the variant decides.
    fn pool_target(&self, r: usize, now: u64) -> u64 {
        let dev = &self.devices[self.rings[r].dev];
        self.pool.target(
            self.params.max_buffer_pages,
            jiffies_ns(now),
            self.pressure_end,
            dev.buffer_squeeze_end,
        )
    }
}

impl Machine {
    pub fn xen(&self) -> &XenBackend {
        self.xen.as_ref().expect("a Xen dom0")
    }

    pub fn xen_mut(&mut self) -> &mut XenBackend {
        self.xen.as_mut().expect("a Xen dom0")
    }

    /// Take the next request off ring `r` at `at`, map it and submit it.
    pub fn blkback_dispatch(&mut self, r: usize, at: u64, t: &mut TaskCtx) -> Dispatch {
        let x = self.xen_mut();
        let fixed = x.pool.fixed_array();
        let ring = &x.rings[r];
        let Some(req) = ring.requests.front() else {
            return Dispatch::Empty;
        };
        let free = if fixed { x.b0_free } else { ring.pending_free };
        if free == 0 {
            x.rings[r].stats.oo_req += 1;
            return Dispatch::NoSlot;
        }
        // Which segments need a map: everything but idle persistent grants.
        let persistent = ring.persistent;
        let misses = if persistent {
            req.grefs
                .iter()
                .filter(|g| ring.pgnts.tree.get(g).is_none_or(|p| p.active))
                .count() as u64
        } else {
            req.grefs.len() as u64
        };
        // Pages for the misses: under B0 non-persistent maps use the request's array pages;
        // otherwise the pool must hold them all before anything is mapped.
        let need = if fixed && !persistent { 0 } else { misses };
        let mut cost = 0u64;
        while (self.xen().rings[r].pool.len() as u64) < need {
            let backing = self.xen().backing.clone();
            t.begin_step();
            let got = backing.alloc(self, t);
            cost += t.cost_ns;
            match got {
                Ok(page) => {
                    let x = self.xen_mut();
                    x.rings[r].pool.push(page);
                    x.counters.pool_grown += 1;
                    cost += x.cost.pool_alloc_ns;
                }
                Err(a) => return Dispatch::Blocked(a, cost),
            }
        }
        let x = self.xen_mut();
        if fixed {
            x.b0_free -= 1;
        } else {
            x.rings[r].pending_free -= 1;
        }
        let req = x.rings[r].requests.pop_front().expect("checked above");
        let c = &x.cost;
        cost += c.request_ns;
        let lookup_ns = c.lookup_ns;
        let ring = &mut x.rings[r];
        ring.pool_max = ring.pool_max.max(ring.pool.len() as u64);
        let mut fl = InFlight {
            done_at: 0,
            tag: req.tag,
            persistent: ring.take_list(),
            mapped: ring.take_list(),
        };
        let mut new_maps = 0u64;
        let mut hits = 0u64;
        for &g in &req.grefs {
            if persistent {
                cost += lookup_ns;
                if ring.pgnts.get(g).is_some() {
                    fl.persistent.push(g);
                    hits += 1;
                    continue;
                }
            }
            new_maps += 1;
            let page = if need == 0 {
                B0_PAGE
            } else {
                ring.pool.pop().expect("the pool was filled")
            };
            // A gref already in the tree (in use by another request) cannot be added twice.
            if persistent
                && ring.pgnts.count() < ring.max_pgrants
                && !ring.pgnts.tree.contains_key(&g)
            {
                ring.pgnts.add(g, page);
                fl.persistent.push(g);
            } else {
                if persistent {
                    ring.overflow = true;
                }
                fl.mapped.push(page);
            }
        }
        ring.mapped_now += fl.mapped.len() as u64;
        let (sect, write, segments) = (req.bytes / 512, req.write, req.grefs.len() as u64);
        let bytes = req.bytes;
        ring.give_list(req.grefs);
        if write {
            ring.stats.wr_req += 1;
            ring.stats.wr_sect += sect;
        } else {
            ring.stats.rd_req += 1;
            ring.stats.rd_sect += sect;
        }
        let dev = ring.dev;
        x.counters.requests += 1;
        x.counters.segments += segments;
        x.counters.persistent_hits += hits;
        cost += x.map_grants(new_maps);
        // The bio: a ramdisk copies with this CPU; a device queues for its bandwidth.
        let d = &mut x.devices[dev];
        let t0 = at + cost;
        let done_at = if d.device.ramdisk {
            cost += bytes.div_ceil(4096) * x.cost.ramdisk_page_ns;
            at + cost
        } else {
            let xfer = match d.device.bandwidth {
                0 => 0,
                bw => (bytes as u128 * 1_000_000_000 / bw as u128) as u64,
            };
            d.busy_until = d.busy_until.max(t0) + xfer;
            d.busy_until + d.device.latency_ns
        };
        fl.done_at = done_at;
        let ring = &mut x.rings[r];
        // Completions leave in order of their time (a FIFO device keeps it; a ramdisk
        // completes at once).
        let pos = ring.inflight.partition_point(|f| f.done_at <= done_at);
        ring.inflight.insert(pos, fl);
        Dispatch::Done(cost)
    }

    /// Complete the requests of ring `r` the device finished by `at`, up to the first that
    /// needed an unmap.
    pub fn blkback_complete(&mut self, r: usize, at: u64) -> Work {
        let mut w = Work::default();
        loop {
            let x = self.xen_mut();
            let ring = &mut x.rings[r];
            let Some(f) = ring.inflight.front() else {
                break;
            };
            if f.done_at > at + w.cpu_ns {
                break;
            }
            let f = ring.inflight.pop_front().expect("checked");
            let now = at + w.cpu_ns;
            for &g in &f.persistent {
                ring.pgnts.put(g, now);
            }
            ring.mapped_now -= f.mapped.len() as u64;
            ring.responses.push_back((f.tag, now));
            if x.pool.fixed_array() {
                x.b0_free += 1;
            } else {
                x.rings[r].pending_free += 1;
            }
            // The non-persistent pages: one unmap hypercall, then back to the pool.
            let (cpu, ipi) = x.unmap_grants(r, f.mapped.len() as u64, 1, at, now);
            w.cpu_ns += cpu + x.cost.request_ns / 2;
            w.ipi_ns += ipi;
            let ring = &mut x.rings[r];
            ring.pool
                .extend(f.mapped.iter().copied().filter(|&p| p != B0_PAGE));
            ring.pool_max = ring.pool_max.max(ring.pool.len() as u64);
            let unmapped = !f.mapped.is_empty();
            ring.give_list(f.persistent);
            ring.give_list(f.mapped);
            // One flush per call: the lock is booked in the order the world runs, so a step
            // must not book flushes far beyond the time the others are at.
            if unmapped {
                break;
            }
        }
        w
    }

    /// The kthread's housekeeping on ring `r` at `now`: purge, shrink, stats.
    pub fn blkback_housekeeping(&mut self, r: usize, now: u64) -> Work {
        let mut w = Work::default();
        let x = self.xen_mut();
        let purges = x.grants.purges();
        let ring = &mut x.rings[r];
        if ring.persistent && purges && now > ring.next_lru {
            ring.next_lru = now + LRU_INTERVAL_NS;
            let max = ring.max_pgrants;
            let unused = x.params.persistent_grant_unused_seconds * 1_000_000_000;
            let mut overflow = ring.overflow;
            let pages = ring.pgnts.purge(max, unused, now, &mut overflow);
            ring.overflow = overflow;
            if !pages.is_empty() {
                // Unmapped by a work item, 11 to a hypercall; the pages join the pool.
                let n = pages.len() as u64;
                ring.pool.extend(pages);
                x.counters.purged += n;
                let (cpu, ipi) = x.unmap_grants(r, n, n.div_ceil(11), now, now);
                w.cpu_ns += cpu;
                w.ipi_ns += ipi;
            }
        }
        let x = self.xen_mut();
        if !x.pool.fixed_array() {
            let target = x.pool_target(r, now);
            let len = x.rings[r].pool.len() as u64;
            if target < x.params.max_buffer_pages && len > target {
                x.counters.squeezes += 1;
            }
            let mut batch = 0;
            while (self.xen().rings[r].pool.len() as u64) > target {
                let x = self.xen_mut();
                let page = x.rings[r].pool.pop().expect("longer than the target");
                x.counters.pool_freed += 1;
                let backing = x.backing.clone();
                let at = backing.free(self, page, now);
                w.balloon(at);
                batch += 1;
                if batch == NUM_BATCH_FREE_PAGES {
                    batch = 0;
                    w.cpu_ns += self.xen().cost.pool_alloc_ns;
                }
            }
            if batch > 0 {
                w.cpu_ns += self.xen().cost.pool_alloc_ns;
            }
            let ring = &mut self.xen_mut().rings[r];
            if ring.pool.len() as u64 > target {
                ring.over_target += 1;
            }
        }
        let x = self.xen_mut();
        if x.params.log_stats && now > x.rings[r].st_print {
            let ring = &mut x.rings[r];
            let s = ring.stats;
            let line = format!(
                "blkback.{}.{}-{}: oo {:3} | rd {:4} | wr {:4} | f {:4} | ds {:4} | pg: {:4}/{:4}",
                x.devices[ring.dev].domid,
                x.devices[ring.dev].name,
                ring.queue,
                s.oo_req,
                s.rd_req,
                s.wr_req,
                s.f_req,
                s.ds_req,
                ring.pgnts.count(),
                ring.max_pgrants
            );
            ring.log.push((now, line));
            ring.printed.add(&s);
            ring.stats = BlkifStats::default();
            ring.st_print = now + STATS_INTERVAL_NS;
        }
        w
    }

    /// The pressure detector ran (its shrinker's `count_objects`) at `now`.
    pub fn xen_memory_pressure(&mut self, now: u64) {
        let x = self.xen_mut();
        x.counters.pressure_calls += 1;
        let until = jiffies_ns(now) + msecs_to_jiffies_ns(x.params.buffer_squeeze_duration_ms);
        let pool = x.pool.clone();
        pool.on_pressure(x, until);
    }
}

/// The frame behind a pool page, if it is dom0 RAM.
pub fn frame_of(page: u32) -> Option<u32> {
    (page != NO_FRAME && page != B0_PAGE).then_some(page)
}
