//! Dom0's Xen drivers (mechanisms.md §B, §C): the block backend (`xen-blkback`), the grant
//! page cache it maps guests' pages into (`drivers/xen/grant-table.c`), where those pages come
//! from (the balloon driver or unpopulated ZONE_DEVICE memory), and the xenbus shrinker that
//! tells backends about dom0's memory pressure.
//!
//! The state lives in dom0's machine because it is dom0 kernel state: the shrinker that fires
//! from dom0's reclaim reads it, and in balloon mode every pool page is a dom0 frame. What
//! blkback does per ring is split by kernel source:
//!
//! - `blkback.rs`: devices, rings, each ring's page cache (`gnttab_page_cache`: grown a page
//!   at a time in the I/O path, shrunk in batches of 10), the request path (map, submit,
//!   complete) and the housekeeping of the ring kthread (`xen_blkif_schedule`).
//! - `persistent_gnt.rs`: the per-ring tree of persistent grants and its purge.
//! - `grant_table.rs`: the hypercalls' costs and counts (map batches, unmap batches with their
//!   TLB flush) and Xen's flush lock.
//! - `balloon.rs`, `unpopulated_alloc.rs`: the two backings of a pool page.
//! - `xenbus_probe_backend.rs`: the pressure detector of B2 and B3, a shrinker that never scans.
//!
//! The debated parts are policy switches (`policy/blkback_pool`, `policy/blkback_grants`,
//! `policy/blkback_backing`) consulted through the traits in `policy.rs` here.

pub mod balloon;
pub mod blkback;
pub mod grant_table;
pub mod persistent_gnt;
pub mod policy;
pub mod unpopulated_alloc;
pub mod xenbus_probe_backend;

use std::rc::Rc;

pub use balloon::Balloon;
pub use blkback::{Blkif, BlkifStats, Ring};
pub use grant_table::{FlushLock, XenCounters};
pub use policy::{BlkbackPool, GnttabBacking, PersistentGrants};
pub use unpopulated_alloc::Unpopulated;

/// `BLKIF_MAX_SEGMENTS_PER_REQUEST`: data segments of a direct request.
pub const BLKIF_MAX_SEGMENTS_PER_REQUEST: u32 = 11;
/// `XEN_BLKIF_REQS_PER_PAGE`: requests a one-page ring holds.
pub const XEN_BLKIF_REQS_PER_PAGE: u32 = 32;
/// Segment descriptors one indirect page holds (4096 / 8).
pub const SEGS_PER_INDIRECT_FRAME: u32 = 512;
/// `BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST`.
pub const MAX_INDIRECT_PAGES: u32 = 8;
/// `MAX_INDIRECT_SEGMENTS`: the most segments the backend accepts in an indirect request.
pub const MAX_INDIRECT_SEGMENTS: u32 = 256;
/// `LRU_INTERVAL`: the ring kthread's housekeeping period and the purge's.
pub const LRU_INTERVAL_NS: u64 = 100_000_000;
/// `LRU_PERCENT_CLEAN`.
pub const LRU_PERCENT_CLEAN: u32 = 5;
/// `NUM_BATCH_FREE_PAGES`: pool pages freed per `gnttab_free_pages` call.
pub const NUM_BATCH_FREE_PAGES: u64 = 10;
/// `GNTTAB_UNMAP_BATCH_SIZE` (Xen): unmap operations per TLB flush.
pub const GNTTAB_UNMAP_BATCH_SIZE: u32 = 32;
/// `PAGES_PER_SECTION`: unpopulated memory is added 128 MiB at a time.
pub const PAGES_PER_SECTION: u64 = 32768;
/// `log_stats` prints every 10 s.
pub const STATS_INTERVAL_NS: u64 = 10_000_000_000;

/// `/sys/module/xen_blkback/parameters/` and the related knobs (`[xen.blkback]`; defaults
/// there).
#[derive(Debug, Clone, PartialEq)]
pub struct BlkbackParams {
    /// `max_buffer_pages`: the pool size each ring keeps outside pressure.
    pub max_buffer_pages: u64,
    /// `buffer_squeeze_duration_ms` (B2: `aggressive_shrinking_duration`).
    pub buffer_squeeze_duration_ms: u64,
    /// `max_persistent_grants` (6.1; v3.8 has a fixed 352 per device).
    pub max_persistent_grants: u32,
    /// `persistent_grant_unused_seconds` (0 disables the idle pass).
    pub persistent_grant_unused_seconds: u64,
    /// `max_queues`: rings per device the backend offers (0: dom0's CPUs).
    pub max_queues: u32,
    /// `feature_persistent`: the backend offers persistent grants.
    pub feature_persistent: bool,
    /// `log_stats`: print each ring's statistics every 10 s.
    pub log_stats: bool,
    /// B0's `reqs`: the global number of pending requests (11 pages each).
    pub reqs: u32,
    /// Balloon mode: time from a pool page's free to its frame being back in dom0.
    pub balloon_delay_ns: u64,
}

/// What the grant and I/O path costs (`[xen.cost]`): mechanisms.md §C.6's structure, its
/// numbers estimates calibrated to seed 003, not measurements. Dom0's costs are charged to the
/// ring kthread's CPU, the guest's to the vCPU of the I/O thread. Defaults in `[xen.cost]`.
#[derive(Debug, Clone, PartialEq)]
pub struct XenCost {
    /// Blkback's own work per request (ring copy, bio set-up, response).
    pub request_ns: u64,
    /// One `GNTTABOP_map_grant_ref` hypercall, and each operation in it.
    pub map_ns: u64,
    pub map_op_ns: u64,
    /// One unmap hypercall, and each operation in it.
    pub unmap_ns: u64,
    pub unmap_op_ns: u64,
    /// A TLB flush of dom0's dirty CPU mask: fixed part, and per dom0 vCPU in the mask. The
    /// flush holds Xen's global flush lock while it runs.
    pub flush_ns: u64,
    pub flush_cpu_ns: u64,
    /// Added to a flush's hold time per flusher spinning on the lock (the lock's cache line
    /// bouncing between waiters).
    pub flush_contention_ns: u64,
    /// What a flush IPI costs each other dom0 CPU it interrupts.
    pub ipi_ns: u64,
    /// A persistent-grant tree lookup.
    pub lookup_ns: u64,
    /// Growing the pool by one page (besides any dom0 allocation it needs).
    pub pool_alloc_ns: u64,
    /// Event channel notification to the other end running.
    pub evtchn_ns: u64,
    /// Guest: blkfront and its block layer per request.
    pub guest_request_ns: u64,
    /// Guest: granting one page and ending foreign access after (non-persistent mode).
    pub guest_grant_ns: u64,
    /// Guest: copying one 4 KiB segment to or from its persistent grant buffer.
    pub guest_copy_ns: u64,
    /// A ramdisk copies data with the CPU: per 4 KiB.
    pub ramdisk_page_ns: u64,
}

/// One backend device behind a VBD: a ramdisk copies with the CPU; the others are a FIFO of
/// bandwidth with a fixed latency on top.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackendDevice {
    pub ramdisk: bool,
    pub latency_ns: u64,
    /// Bytes per second (0: unlimited).
    pub bandwidth: u64,
}

/// Dom0's Xen driver state.
#[derive(Debug)]
pub struct XenBackend {
    pub params: BlkbackParams,
    pub cost: XenCost,
    pub pool: Rc<dyn BlkbackPool>,
    pub grants: Rc<dyn PersistentGrants>,
    pub backing: Rc<dyn GnttabBacking>,
    /// Dom0's vCPUs (the TLB flush mask).
    pub dom0_cpus: u32,
    /// Dom0's reservation in pages (its RAM as the hypervisor gave it).
    pub reservation: u64,
    pub devices: Vec<Blkif>,
    pub rings: Vec<Ring>,
    pub balloon: Balloon,
    pub unpopulated: Unpopulated,
    /// B2's module-global `xen_blk_mem_pressure_end` (ns, on a jiffy).
    pub pressure_end: u64,
    /// B0: pending requests free in the global array, and its pages.
    pub b0_free: u32,
    pub b0_pages: Vec<u32>,
    pub flush_lock: FlushLock,
    pub counters: XenCounters,
}

impl XenBackend {
    pub fn new(
        params: BlkbackParams,
        cost: XenCost,
        pool: Rc<dyn BlkbackPool>,
        grants: Rc<dyn PersistentGrants>,
        backing: Rc<dyn GnttabBacking>,
        dom0_cpus: u32,
        reservation: u64,
    ) -> XenBackend {
        XenBackend {
            b0_free: params.reqs,
            params,
            cost,
            pool,
            grants,
            backing,
            dom0_cpus: dom0_cpus.max(1),
            reservation,
            devices: Vec::new(),
            rings: Vec::new(),
            balloon: Balloon::default(),
            unpopulated: Unpopulated::default(),
            pressure_end: 0,
            b0_pages: Vec::new(),
            flush_lock: FlushLock::default(),
            counters: XenCounters::default(),
        }
    }

    /// Pages of every ring's pool.
    pub fn pool_pages(&self) -> u64 {
        self.rings.iter().map(|r| r.pool.len() as u64).sum()
    }

    /// The accounting of blkback's pages against dom0's frames: every dom0 frame a ring holds
    /// (pool, mapped, persistent) or the balloon list holds is a kernel page of dom0, held
    /// once; in balloon mode they are exactly the pages handed to Xen, so that dom0's RAM plus
    /// pool plus mapped pages is its reservation.
    pub fn check(&self, frames: &super::frames::Frames) -> Result<(), String> {
        let mut held: Vec<u32> = self
            .rings
            .iter()
            .flat_map(|r| r.pages())
            .filter_map(blkback::frame_of)
            .chain(self.balloon.list.iter().map(|&(_, p)| p))
            .collect();
        let n = held.len() as u64;
        held.sort_unstable();
        if let Some(w) = held.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!(
                "xen: frame {} is held twice (pooled and mapped?)",
                w[0]
            ));
        }
        if let Some(&p) = held
            .iter()
            .find(|&&p| frames.flags(p) & super::frames::pg::ALLOCATED == 0)
        {
            return Err(format!(
                "xen: frame {p} held by blkback is not allocated in dom0"
            ));
        }
        if n != self.balloon.out {
            return Err(format!(
                "xen: {n} frames held by blkback and the balloon list, but {} handed to Xen",
                self.balloon.out
            ));
        }
        for (i, r) in self.rings.iter().enumerate() {
            if r.mapped_now
                != r.pages().count() as u64 - r.pool.len() as u64 - r.pgnts.count() as u64
            {
                return Err(format!("xen: ring {i}'s count of mapped pages is off"));
            }
        }
        Ok(())
    }

    /// Guest pages mapped into dom0 now (in-flight non-persistent segments and persistent
    /// grants).
    pub fn mapped_pages(&self) -> u64 {
        self.rings.iter().map(|r| r.mapped_pages()).sum()
    }
}
