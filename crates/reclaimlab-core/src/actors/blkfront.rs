//! A block I/O job in a Xen domU (`[guest.workload.blkio]`) and its blkfront: it keeps up to
//! `iodepth` requests on its ring (32 slots), builds each from grant references, notifies
//! the backend through the event channel, and takes the responses.
//!
//! - `sequential` I/O is merged into the largest request the frontend sends (its indirect
//!   segments, or 11), as a page-cache writeback or read-ahead would; `random` sends one
//!   request per I/O; `fresh_grefs` does too, granting a never-used page for every segment
//!   (the malicious guest of seed 003's DoS discussion).
//! - With persistent grants the frontend reuses the pages it granted (most recently released
//!   first) and copies each segment to or from them; without, it grants and ends foreign
//!   access per segment. Both costs are the guest's (`[xen.cost]` guest_*).

use std::any::Any;
use std::collections::HashMap;

use crate::actors::workload::spec::BlkioSpec;
use crate::machine::xen::blkback::BlkifRequest;
use crate::machine::xen::{
    BLKIF_MAX_SEGMENTS_PER_REQUEST, SEGS_PER_INDIRECT_FRAME, XEN_BLKIF_REQS_PER_PAGE,
};
use crate::world::{Actor, MachineId, StepCx, Wake};

/// What the job did, for its results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlkioStats {
    pub requests: u64,
    pub ios: u64,
    pub bytes: u64,
    /// First submission and last completion.
    pub first_ns: u64,
    pub last_ns: u64,
    /// Guest CPU spent in blkfront, and the part copying to or from persistent grants.
    pub guest_cpu_ns: u64,
    pub copied_bytes: u64,
    /// Sum of request latencies (submission to response).
    pub latency_ns: u64,
}

impl BlkioStats {
    /// Several jobs as one: their sums, from the first submission to the last completion.
    pub fn total(jobs: &[&BlkioStats]) -> BlkioStats {
        let mut t = BlkioStats {
            first_ns: u64::MAX,
            ..Default::default()
        };
        for s in jobs.iter().filter(|s| s.requests > 0) {
            t.requests += s.requests;
            t.ios += s.ios;
            t.bytes += s.bytes;
            t.guest_cpu_ns += s.guest_cpu_ns;
            t.copied_bytes += s.copied_bytes;
            t.latency_ns += s.latency_ns;
            t.first_ns = t.first_ns.min(s.first_ns);
            t.last_ns = t.last_ns.max(s.last_ns);
        }
        if t.first_ns == u64::MAX {
            t.first_ns = 0;
        }
        t
    }
}

/// One finished run of a repeated job: bytes, and its first submission to last completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlkioRun {
    pub bytes: u64,
    pub first_ns: u64,
    pub last_ns: u64,
}

#[derive(Debug)]
pub struct Blkfront {
    name: String,
    dom0: MachineId,
    ring: usize,
    cpu: u32,
    spec: BlkioSpec,
    persistent: bool,
    max_segments: u32,
    /// I/Os not yet submitted (`u64::MAX`: until the end).
    left: u64,
    end_ns: Option<u64>,
    /// Requests on the ring or in the backend: tag → (I/Os, bytes, grefs, submitted).
    outstanding: HashMap<u64, (u64, u64, Vec<u32>, u64)>,
    next_tag: u64,
    /// Granted pages free for reuse (persistent mode), most recent last.
    free_grefs: Vec<u32>,
    next_gref: u32,
    /// Runs still to start after this one, and when the current one started.
    runs_left: u64,
    run_start: u64,
    run_bytes: u64,
    /// Waiting out the pause between runs until then.
    paused_until: Option<u64>,
    /// Its vCPU is busy with its own work until then (a response does not interrupt it).
    busy_until: u64,
    pub stats: BlkioStats,
    pub runs: Vec<BlkioRun>,
}

impl Blkfront {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        dom0: MachineId,
        ring: usize,
        cpu: u32,
        spec: BlkioSpec,
        persistent: bool,
        max_segments: u32,
        end_ns: Option<u64>,
        first_gref: u32,
    ) -> Blkfront {
        Blkfront {
            name,
            dom0,
            ring,
            cpu,
            left: spec.count.unwrap_or(u64::MAX),
            runs_left: spec.repeat.saturating_sub(1),
            run_start: 0,
            run_bytes: 0,
            paused_until: None,
            busy_until: 0,
            spec,
            persistent,
            max_segments,
            end_ns,
            outstanding: HashMap::new(),
            next_tag: 0,
            free_grefs: Vec::new(),
            next_gref: first_gref,
            stats: BlkioStats::default(),
            runs: Vec::new(),
        }
    }

    fn gref(&mut self, fresh: bool) -> u32 {
        if !fresh {
            if let Some(g) = self.free_grefs.pop() {
                return g;
            }
        }
        self.next_gref = self.next_gref.wrapping_add(1);
        self.next_gref
    }

    /// Build the next request into `grefs` (an empty list): (I/Os in it, bytes, indirect pages).
    fn build(&mut self, grefs: &mut Vec<u32>) -> (u64, u64, u32) {
        let bs = self.spec.bs_bytes;
        let ios = if self.spec.pattern == "sequential" {
            let per_req = (self.max_segments as u64 * 4096 / bs).max(1);
            per_req.min(self.left)
        } else {
            1
        };
        let bytes = ios * bs;
        let segs = bytes.div_ceil(4096) as u32;
        let indirect = if segs > BLKIF_MAX_SEGMENTS_PER_REQUEST {
            segs.div_ceil(SEGS_PER_INDIRECT_FRAME)
        } else {
            0
        };
        // Reused grants only where the frontend keeps them; the flood never reuses.
        let fresh = !self.persistent || self.spec.pattern == "fresh_grefs";
        grefs.extend((0..segs + indirect).map(|_| self.gref(fresh)));
        (ios, bytes, indirect)
    }
}

impl Actor for Blkfront {
    fn name(&self) -> &str {
        &self.name
    }

    fn cpu(&self) -> u32 {
        self.cpu
    }

    fn holds_run_open(&self) -> bool {
        self.left > 0
            || !self.outstanding.is_empty()
            || self.runs_left > 0
            || self.paused_until.is_some()
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        if now < self.busy_until {
            return Wake::At(self.busy_until);
        }
        let x = cx.machine_of(self.dom0).xen_mut();
        let c = x.cost.clone();
        let backend = x.rings[self.ring].backend;
        let mut cost = 0u64;
        // Responses.
        while let Some((tag, done)) = x.rings[self.ring].responses.pop_front() {
            let Some((ios, bytes, grefs, at)) = self.outstanding.remove(&tag) else {
                continue;
            };
            let segs = bytes.div_ceil(4096);
            if self.persistent && !self.spec.write {
                cost += segs * c.guest_copy_ns;
                self.stats.copied_bytes += segs * 4096;
            }
            self.stats.requests += 1;
            self.stats.ios += ios;
            self.stats.bytes += bytes;
            self.run_bytes += bytes;
            self.stats.last_ns = done.max(self.stats.last_ns);
            self.stats.latency_ns += done.saturating_sub(at);
            if self.persistent && self.spec.pattern != "fresh_grefs" {
                self.free_grefs.extend(grefs.iter().rev());
            }
            x.rings[self.ring].give_list(grefs);
        }
        // A new request, if the depth and the ring allow: one per step, so the program's own
        // CPU paces it.
        let expired = self.end_ns.is_some_and(|e| now >= e);
        if expired {
            self.left = 0;
            self.runs_left = 0;
        }
        if self.paused_until.is_some_and(|p| now >= p) {
            self.paused_until = None;
            self.left = self.spec.count.unwrap_or(u64::MAX);
            self.run_start = now;
        }
        if self.left == self.spec.count.unwrap_or(u64::MAX) && self.outstanding.is_empty() {
            self.run_start = now;
        }
        let depth = self.spec.iodepth.min(XEN_BLKIF_REQS_PER_PAGE) as usize;
        let mut pushed = false;
        if self.left > 0 && self.outstanding.len() < depth && self.paused_until.is_none() {
            let ring = &mut cx.machine_of(self.dom0).xen_mut().rings[self.ring];
            let (mut grefs, mut kept) = (ring.take_list(), ring.take_list());
            let (ios, bytes, indirect) = self.build(&mut grefs);
            // The grants come back for reuse only where the frontend keeps them.
            if self.persistent && self.spec.pattern != "fresh_grefs" {
                kept.extend_from_slice(&grefs);
            }
            let data_segs = grefs.len() as u64 - indirect as u64;
            cost += c.guest_request_ns + ios * self.spec.think_ns;
            if self.persistent {
                if self.spec.write {
                    cost += data_segs * c.guest_copy_ns;
                    self.stats.copied_bytes += data_segs * 4096;
                }
            } else {
                cost += grefs.len() as u64 * c.guest_grant_ns;
            }
            let tag = self.next_tag;
            self.next_tag += 1;
            if tag == 0 {
                self.stats.first_ns = now;
            }
            self.outstanding.insert(tag, (ios, bytes, kept, now + cost));
            self.left = self.left.saturating_sub(ios);
            let x = cx.machine_of(self.dom0).xen_mut();
            x.rings[self.ring].requests.push_back(BlkifRequest {
                tag,
                write: self.spec.write,
                bytes,
                grefs,
                indirect,
            });
            pushed = true;
        }
        if pushed {
            let ring = &mut cx.machine_of(self.dom0).xen_mut().rings[self.ring];
            if !ring.waiting_reqs {
                ring.waiting_reqs = true;
            }
            cx.wake(backend, Wake::NoLaterThan(now + cost + c.evtchn_ns));
        }
        self.stats.guest_cpu_ns += cost;
        self.busy_until = now + cost;
        cx.charge_cpu(cost);
        if self.left == 0 && self.outstanding.is_empty() && self.paused_until.is_none() {
            if self.run_bytes > 0 {
                self.runs.push(BlkioRun {
                    bytes: self.run_bytes,
                    first_ns: self.run_start,
                    last_ns: self.stats.last_ns,
                });
                self.run_bytes = 0;
            }
            if self.runs_left == 0 {
                return Wake::Done;
            }
            self.runs_left -= 1;
            let at = now + cost + self.spec.pause_ns;
            self.paused_until = Some(at);
            return Wake::At(at);
        }
        if let Some(p) = self.paused_until {
            return Wake::At(p);
        }
        if pushed && self.left > 0 && self.outstanding.len() < depth {
            return Wake::At(now + cost);
        }
        match self.end_ns {
            Some(e) if e > now && self.left > 0 => Wake::At(e),
            _ => Wake::Idle,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
