//! `struct scan_control` and the reclaim constants (`mm/vmscan.c`).

use crate::machine::gfp::Gfp;

/// `DEF_PRIORITY`: a scan at priority p looks at `size >> p` pages of each list.
pub const DEF_PRIORITY: i32 = 12;
/// `SWAP_CLUSTER_MAX`: the reclaim batch.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// kswapd gives up on a node after this many balance runs without progress.
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// A reclaim pass yields after this much simulated time, at the next batch boundary, and
/// resumes where it stopped on its actor's next step. In the kernel kswapd and direct
/// reclaimers scan the same lists at the same time on different CPUs; the simulator runs one
/// actor step at a time, so a long pass (a lap of a large inactive list at priority 1 takes
/// hundreds of milliseconds) must be cut into slices for the others to run alongside it. An
/// abstraction of the engine, of the order of a scheduler time slice.
pub const RECLAIM_QUANTUM_NS: u64 = 1_000_000;

/// Per-pass page outcome counts (`struct reclaim_stat` plus `sc->nr`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReclaimStat {
    pub dirty: u64,
    pub unqueued_dirty: u64,
    pub congested: u64,
    pub writeback: u64,
    pub immediate: u64,
    pub pageout: u64,
    pub activate: [u64; 2],
    pub ref_keep: u64,
    pub unmap_fail: u64,
    pub file_taken: u64,
    pub taken: u64,
}

/// Where a preempted `shrink_lruvec` stopped: its remaining and original scan targets, what it
/// reclaimed so far, and whether it is direct reclaim's proportional pass (`proportional_reclaim`:
/// scan the whole targets whatever is reclaimed).
#[derive(Debug, Clone, Copy)]
pub struct LruvecCursor {
    pub nr: [u64; 4],
    pub targets: [u64; 4],
    pub reclaimed: u64,
    pub proportional: bool,
}

/// `struct scan_control`.
#[derive(Debug, Clone)]
pub struct ScanControl {
    pub nr_to_reclaim: u64,
    pub nr_reclaimed: u64,
    pub nr_scanned: u64,
    pub priority: i32,
    pub reclaim_idx: usize,
    pub order: u32,
    pub gfp: Gfp,
    pub may_writepage: bool,
    pub may_unmap: bool,
    pub may_swap: bool,
    /// Indexed by ANON/FILE.
    pub may_deactivate: [bool; 2],
    pub force_deactivate: bool,
    pub skipped_deactivate: bool,
    pub cache_trim_mode: bool,
    pub file_is_tiny: bool,
    pub compaction_ready: bool,
    pub anon_cost: u64,
    pub file_cost: u64,
    /// `sc->nr`: totals of the current `shrink_node` pass.
    pub nr: ReclaimStat,
    /// Reclaim run by kswapd (`current_is_kswapd()`).
    pub kswapd: bool,
    /// Simulated time taken by this reclaim (the caller's clock advances by it).
    pub cost_ns: u64,
    /// The part of `cost_ns` spent asleep (throttled, or waiting for a request slot): it
    /// passes on the clock but is not CPU time.
    pub sleep_ns: u64,
    /// The pass yields at the first batch boundary at or after this `cost_ns`
    /// ([`RECLAIM_QUANTUM_NS`] into the caller's step; `u64::MAX`: never).
    pub quantum_end: u64,
    /// Set when the pass yielded; `cursor` then says where to resume.
    pub preempted: bool,
    pub cursor: Option<LruvecCursor>,
    /// Inside `shrink_lruvec`, between `blk_start_plug` and `blk_finish_plug`: swap-outs go
    /// into the reclaimer's plug (`Machine::swap_plug`).
    pub plugged: bool,
    /// `sc.nr_reclaimed` when the current `shrink_node` pass began.
    pub node_reclaimed0: u64,
    /// `sc->target_mem_cgroup`: the memcg whose subtree this reclaim shrinks (0, the root:
    /// global reclaim; another: limit reclaim, `cgroup_reclaim(sc)`).
    pub target_memcg: u16,
    /// The memcg of the pass's walk whose `shrink_lruvec` yielded (resume there).
    pub memcg_pos: Option<u16>,
    /// `sc->memcg_low_reclaim`: the retry that reclaims memcgs below `memory.low`.
    pub memcg_low_reclaim: bool,
    /// `sc->memcg_low_skipped`: a memcg was spared for its `memory.low`.
    pub memcg_low_skipped: bool,
    /// `sc->memcgs_need_aging` (multi-generational LRU): kswapd's next aging step is due;
    /// cleared by an eviction pass that reclaimed enough without needing one.
    pub memcgs_need_aging: bool,
    /// `sc->last_reclaimed`: `nr_reclaimed` at kswapd's last aging step.
    pub last_reclaimed: u64,
}

impl ScanControl {
    pub fn new(gfp: Gfp, order: u32, reclaim_idx: usize, nr_to_reclaim: u64, kswapd: bool) -> Self {
        ScanControl {
            nr_to_reclaim,
            nr_reclaimed: 0,
            nr_scanned: 0,
            priority: DEF_PRIORITY,
            reclaim_idx,
            order,
            gfp,
            may_writepage: true,
            may_unmap: true,
            may_swap: true,
            may_deactivate: [false; 2],
            force_deactivate: false,
            skipped_deactivate: false,
            cache_trim_mode: false,
            file_is_tiny: false,
            compaction_ready: false,
            anon_cost: 0,
            file_cost: 0,
            nr: ReclaimStat::default(),
            kswapd,
            cost_ns: 0,
            sleep_ns: 0,
            quantum_end: u64::MAX,
            preempted: false,
            cursor: None,
            plugged: false,
            node_reclaimed0: 0,
            target_memcg: 0,
            memcg_pos: None,
            memcg_low_reclaim: false,
            memcg_low_skipped: false,
            memcgs_need_aging: false,
            last_reclaimed: 0,
        }
    }
}

impl ScanControl {
    /// `cgroup_reclaim(sc)`: limit reclaim of a memcg below the root.
    #[inline]
    pub fn cgroup_reclaim(&self) -> bool {
        self.target_memcg != 0
    }
}
