//! The reclaim tracepoints (`include/trace/events/vmscan.h`), and the kprobe events the
//! validation boots place on the swap-in path, as typed records. The machine
//! records them with their timestamp when the run asks for a trace; turning them into ftrace
//! text is the observer's business (`observe::ftrace`), and so is knowing which task was
//! running.

use super::gfp::Gfp;
use super::zone::ThrottleReason;

/// Outcome counts of one `shrink_inactive_list` call, as the event prints them.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShrinkInactive {
    pub nr_scanned: u64,
    pub nr_reclaimed: u64,
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    pub nr_congested: u64,
    pub nr_immediate: u64,
    pub nr_activate_anon: u64,
    pub nr_activate_file: u64,
    pub nr_ref_keep: u64,
    pub nr_unmap_fail: u64,
}

/// How a shrinker variant's trace events read: 6.1's (and legacy's) `mm_shrink_slab_start`
/// and `_end`, or the seed 002 patch's own format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceStyle {
    V61,
    Chinner,
}

/// The figures one `do_shrink_slab` call's trace events print.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShrinkSlabTrace {
    /// Deferred work taken (`nr`; chinner's `deferred_count`).
    pub nr: u64,
    pub freeable: u64,
    pub delta: u64,
    /// Planned scan (`total_scan` / `scan_count`) as the start event prints it.
    pub total_scan: u64,
    /// Planned work left when the scan loop ended.
    pub remaining: u64,
    pub freed: u64,
    pub new_nr: u64,
}

/// One reclaim event.
#[derive(Debug, Clone)]
pub enum Tracepoint {
    KswapdSleep {
        nid: usize,
    },
    KswapdWake {
        nid: usize,
        order: u32,
    },
    WakeupKswapd {
        nid: usize,
        zid: usize,
        order: u32,
        gfp: Gfp,
    },
    DirectReclaimBegin {
        order: u32,
        gfp: Gfp,
        may_writepage: bool,
    },
    DirectReclaimEnd {
        nr_reclaimed: u64,
    },
    LruIsolate {
        classzone: usize,
        order: u32,
        nr_requested: u64,
        nr_scanned: u64,
        nr_skipped: u64,
        nr_taken: u64,
        lru: usize,
        may_unmap: bool,
    },
    WriteFolio {
        pfn: u32,
        file: bool,
    },
    LruShrinkInactive {
        nid: usize,
        stat: ShrinkInactive,
        priority: i32,
        file: bool,
    },
    LruShrinkActive {
        nid: usize,
        nr_taken: u64,
        nr_active: u64,
        nr_deactivated: u64,
        priority: i32,
        file: bool,
    },
    Throttled {
        nid: usize,
        usec_timeout: u64,
        usec_delayed: u64,
        reason: ThrottleReason,
    },
    /// `mm_shrink_slab_start`: one `do_shrink_slab` call's plan (`id` is the registered
    /// shrinker's number, standing in for its pointer).
    ShrinkSlabStart {
        symbol: &'static str,
        id: usize,
        gfp: Gfp,
        priority: i32,
        out: ShrinkSlabTrace,
        style: TraceStyle,
    },
    /// `mm_shrink_slab_end`: what the call did and the backlog it left.
    ShrinkSlabEnd {
        symbol: &'static str,
        id: usize,
        out: ShrinkSlabTrace,
        style: TraceStyle,
    },
    /// `swapin_lookup`: a swap-in fault's swap-cache lookup (`swap_cache_get_folio`), as the
    /// guest's kprobe of `initramfs.SWAPIN_PROBES` records it (docs/MODEL.md item 10): the
    /// slot, the faulting page and its region, and the global readahead hit counter before
    /// the lookup. Recorded on a rotational swap device only, where slots have places.
    SwapinLookup {
        slot: u32,
        vpage: u32,
        region: u32,
        hits: u32,
    },
    /// `swapin_cluster`: a miss entering `swap_cluster_readahead`, with the state its window
    /// is chosen from (the hit counter, the last faulting slot, the last window).
    SwapinCluster {
        slot: u32,
        hits: u32,
        prev: u32,
        last: u32,
    },
    /// `swapin_read`: one page read from swap (`swap_readpage`); `sync` for a window of one.
    SwapinRead {
        slot: u32,
        sync: bool,
    },
    /// A line a userspace agent wrote to `trace_marker` (`tracing_mark_write`): a memory
    /// controller's decision.
    Marker {
        text: String,
    },
}

/// The events recorded since the world last drained them, with their timestamps.
#[derive(Debug, Clone, Default)]
pub struct Tracepoints {
    pub enabled: bool,
    pub buf: Vec<(u64, Tracepoint)>,
}

impl Tracepoints {
    pub fn new(enabled: bool) -> Tracepoints {
        Tracepoints {
            enabled,
            buf: Vec::new(),
        }
    }
}
