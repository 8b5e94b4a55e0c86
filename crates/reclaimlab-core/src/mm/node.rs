//! One NUMA node (`pg_data_t`): its zones, frames, LRU lists, swap and the address spaces of
//! the simulated processes, plus the page-fault and page-cache paths that workloads call.
//!
//! Virtual pages. Every anonymous region and every file gets a range of global virtual page
//! numbers (vpages). `pte[vpage]` says where the page is: `PTE_NONE` (never touched, or a file
//! page not in the page cache), a frame number (resident: mapped, or in the swap cache), or
//! `PTE_SWAP` (its only copy is on the swap device). As in a real page table, a resident
//! anonymous entry also carries the present/mapped bit and the hardware accessed (young) and
//! dirty bits: a user access touches only this array. `shadow[vpage]` holds the workingset
//! shadow entry left when the page was evicted (core-mm §5.11).

use super::buddy::FreeArea;
use super::compaction::CompactState;
use super::frames::{pg, Frames, NIL};
use super::gfp::Gfp;
use super::layout::ZoneLayout;
use super::lru::{self, Lruvec, ANON, FILE};
use super::swap::{BlockDevice, SwapSpace};
use super::watermark::{self, MIGRATE_MOVABLE};
use super::zone::Zone;
use super::{MAX_NR_ZONES, MAX_ORDER, PAGEBLOCK_ORDER, ZONE_NORMAL};
use crate::engine::Rng;
use crate::observe::ftrace::{TaskId, Tracer};
use crate::observe::vmstat::{VmEvent, VmEvents};
use crate::scenario::{CostModel, Scenario};

pub const PTE_NONE: u32 = u32::MAX;
/// The page's only copy is on the swap device (also set in `PTE_NONE`: neither is resident).
pub const PTE_SWAP: u32 = 0x8000_0000;
/// Resident and mapped by its owner; a resident entry without it is an unmapped swap-cache page.
pub const PTE_MAPPED: u32 = 0x4000_0000;
/// Hardware accessed bit, harvested by `folio_referenced`.
pub const PTE_YOUNG: u32 = 0x2000_0000;
/// Hardware dirty bit, moved to the page at unmap time.
pub const PTE_DIRTY: u32 = 0x1000_0000;
/// Frame number bits of a resident entry (frames are limited to 2^28, 1 TiB of RAM).
pub const PTE_PFN_MASK: u32 = 0x0fff_ffff;

#[inline]
pub fn pte_present(pte: u32) -> bool {
    pte & PTE_SWAP == 0
}
#[inline]
pub fn pte_pfn(pte: u32) -> u32 {
    pte & PTE_PFN_MASK
}
pub const SHADOW_NONE: u32 = u32::MAX;
const SHADOW_WORKINGSET: u32 = 0x8000_0000;
const SHADOW_AGE_MASK: u32 = 0x7fff_ffff;

/// Kernel tick rate; timeouts written in jiffies use it (core-mm §0: Debian uses 250).
pub const HZ: u64 = 250;
pub const JIFFY_NS: u64 = 1_000_000_000 / HZ;
/// kswapd0's pid in traces; workload threads get `FIRST_TASK_PID + thread index`.
pub const KSWAPD_PID: u32 = 70;
pub const FIRST_TASK_PID: u32 = 1000;

/// A contiguous range of vpages: one process's anonymous memory or one file.
#[derive(Debug, Clone)]
pub struct Region {
    pub base: u32,
    pub pages: u32,
    pub anon: bool,
    /// Owning task (process) index; files are owned by the task that uses them.
    pub task: usize,
}

/// The memory-management view of one process (`mm_struct` counters used by the OOM killer).
#[derive(Debug, Clone, Default)]
pub struct TaskMm {
    pub name: String,
    pub oom_score_adj: i32,
    /// MM_ANONPAGES: mapped anonymous pages.
    pub rss_anon: u64,
    /// MM_SWAPENTS: anonymous pages whose PTE holds a swap entry.
    pub swapents: u64,
    pub alive: bool,
    pub oom_killed: bool,
    /// Its anonymous regions (the `anon` table's, and a trace's anonymous objects).
    pub anon_regions: Vec<usize>,
}

/// Node statistics tracked by the model (the subset of `node_stat_item` that it changes).
#[derive(Debug, Clone, Default)]
pub struct NodeStats {
    pub nr_anon_pages: u64,
    pub nr_file_pages: u64,
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    pub nr_swapcached: u64,
    pub workingset_refault: [u64; 2],
    pub workingset_activate: [u64; 2],
    pub workingset_restore: [u64; 2],
    pub nr_vmscan_write: u64,
    pub nr_vmscan_immediate_reclaim: u64,
    pub nr_dirtied: u64,
    pub nr_written: u64,
}

/// kswapd's per-node state (core-mm §4.1); the thread itself is `reclaim::kswapd::Kswapd`.
#[derive(Debug, Clone, Default)]
pub struct KswapdNode {
    pub order: u32,
    /// `kswapd_highest_zoneidx`; `None` is the kernel's MAX_NR_ZONES ("unset").
    pub highest_zoneidx: Option<usize>,
    pub failures: u32,
    /// kswapd is on `kswapd_wait` (napping or asleep) and can be woken.
    pub waiting: bool,
    /// Set by `wakeup_kswapd`; the simulation loop schedules the kswapd actor when it sees it.
    pub wake_requested: bool,
    pub pgdat_dirty: bool,
    pub pgdat_writeback: bool,
    pub lruvec_congested: bool,
    /// Number of `mm_vmscan_wakeup_kswapd` events (actual wakes of a waiting kswapd).
    pub wakeups_requested: u64,
}

/// One recorded OOM kill.
#[derive(Debug, Clone, PartialEq)]
pub struct OomKill {
    pub time_ns: u64,
    pub victim: String,
    pub victim_task: usize,
    pub trigger_task: usize,
    pub rss_pages: u64,
    pub swapents: u64,
    pub badness: i64,
}

/// What a task is doing in its current chunk: simulated time used so far and slow-path state.
#[derive(Debug, Clone, Default)]
pub struct TaskCtx {
    pub task: usize,
    /// Simulated time consumed in this chunk (added to the actor's clock when it yields).
    pub cost_ns: u64,
    /// Time spent in direct reclaim during this chunk.
    pub stall_ns: u64,
    /// `no_progress_loops` of the allocation that is being retried.
    pub no_progress_loops: u32,
}

/// Result of one page access by a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Done; its cost is in the context.
    Done,
    /// Done, but the task waits for I/O until this time (major fault, read miss).
    Block(u64),
    /// Not done: the allocation must be retried after sleeping this long.
    Retry(u64),
    /// The task was chosen as the OOM victim while allocating.
    Killed,
}

/// Cost-model figures and policy knobs the node needs at run time.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    pub swappiness: u64,
    pub cost: CostModel,
    pub readahead_pages: u64,
    pub dirty_ratio: u64,
    pub dirty_background_ratio: u64,
}

/// The policy variants the memory model consults (`[policy]`, built from the registry).
#[derive(Debug)]
pub struct MachinePolicies {
    pub balance: Box<dyn super::policy::PgdatBalanced>,
    pub wmark_check: Box<dyn super::policy::WatermarkCheck>,
}

#[derive(Debug)]
pub struct Node {
    pub nid: usize,
    pub zones: [Zone; MAX_NR_ZONES],
    pub frames: Frames,
    pub pageblock_mt: Vec<u8>,
    pub lruvec: Lruvec,
    pub swap: SwapSpace,
    pub swapdev: BlockDevice,
    pub disk: BlockDevice,
    pub vm: VmEvents,
    pub stat: NodeStats,
    pub kswapd: KswapdNode,
    pub pte: Vec<u32>,
    pub shadow: Vec<u32>,
    pub regions: Vec<Region>,
    pub tasks: Vec<TaskMm>,
    pub cfg: NodeConfig,
    pub policy: MachinePolicies,
    pub min_free_kbytes: u64,
    /// Current simulated time (set by the simulation loop before each actor step).
    pub now: u64,
    /// Dirty file pages waiting for the flusher, oldest first: (vpage, time dirtied).
    pub dirty_queue: std::collections::VecDeque<(u32, u64)>,
    /// OOM victim whose memory is not yet reaped (no new kill until it is).
    pub oom_victim_pending: Option<usize>,
    pub oom_kills: Vec<OomKill>,
    /// A kill made during the last step, for the simulation loop to stop the victim's threads.
    pub oom_kill_event: Option<usize>,
    /// Set when the OOM killer found nothing to kill (the kernel panics); the run stops.
    pub oom_panic: Option<String>,
    /// Scratch list for isolated pages (kept to avoid allocating per reclaim pass).
    pub scratch: Vec<u32>,
    /// Per-zone compaction state.
    pub compact: [CompactState; MAX_NR_ZONES],
    /// Set by kswapd before its nap (`wakeup_kcompactd`): (order, highest_zoneidx).
    pub kcompactd_wake: Option<(u32, usize)>,
    /// The ftrace stream, when the run records one.
    pub trace: Option<Box<Tracer>>,
    /// Trace identities: index 0 is kswapd0, then one per workload thread.
    pub trace_tasks: Vec<TaskId>,
    /// Index into `trace_tasks` of the actor being run.
    pub current: usize,
}

impl Node {
    /// Build the node for a scenario: zones, watermarks, frames, all memory free.
    pub fn new(scn: &Scenario, layout: &ZoneLayout, seed: u64) -> Result<Node, String> {
        let managed = layout.managed();
        if managed.iter().sum::<u64>() == 0 {
            return Err("the host has no managed memory".into());
        }
        // Frame index space: each zone starts at a multiple of the largest buddy block.
        let align = 1u64 << (MAX_ORDER - 1);
        let mut base = [0u64; MAX_NR_ZONES];
        let mut next = 0u64;
        for z in 0..MAX_NR_ZONES {
            base[z] = next;
            if managed[z] > 0 {
                next = (next + managed[z]).div_ceil(align) * align;
            }
        }
        if next > PTE_PFN_MASK as u64 {
            return Err(format!(
                "{next} pages of RAM is more than the simulator's 2^28-frame (1 TiB) limit"
            ));
        }
        let nframes = next as usize;
        let mut frames = Frames::new(nframes);
        let pageblock_mt = vec![MIGRATE_MOVABLE as u8; nframes.div_ceil(1 << PAGEBLOCK_ORDER)];

        let choices = &scn.policy.choices;
        let setup = crate::policy::watermarks::SWITCH.make(choices.get("watermarks"));
        let min_free_kbytes = scn
            .sysctl
            .min_free_kbytes
            .unwrap_or_else(|| setup.min_free_kbytes_default(&managed, scn.host.thp));
        let wm = setup.setup(
            &managed,
            &layout.present(),
            min_free_kbytes,
            scn.sysctl.watermark_scale_factor,
        );
        let reserve = watermark::setup_lowmem_reserve(&managed, &scn.sysctl.lowmem_reserve_ratio);

        if let Some(z) = scn.host.fragmented_zone.filter(|&z| managed[z] == 0) {
            let name = super::ZONE_NAMES[z];
            return Err(format!(
                "host.fragmented_zone = \"{name}\", but this host has no {name} zone; \
                 name a zone it has (see its zoneinfo) or change ram/lowmem"
            ));
        }
        let zones: [Zone; MAX_NR_ZONES] = std::array::from_fn(|z| {
            let start = base[z] as u32;
            let end = (base[z] + managed[z]) as u32;
            let mut fa = FreeArea::new(start, end);
            for f in &mut frames.flags[start as usize..end as usize] {
                *f = 0;
            }
            if scn.host.fragmented_zone == Some(z) {
                // An aged zone: the page in the middle of every stride-aligned block is a
                // long-lived kernel allocation (allocated, no owner, never on an LRU), so the
                // free pages around it can merge only up to half the stride.
                let stride = scn.host.fragment_stride;
                let mut from = start;
                let mut pin = start.next_multiple_of(stride) + stride / 2;
                while pin < end {
                    fa.free_range(&mut frames, &pageblock_mt, from, pin);
                    frames.flags[pin as usize] = pg::ALLOCATED;
                    frames.owner[pin as usize] = NIL;
                    from = pin + 1;
                    pin += stride;
                }
                fa.free_range(&mut frames, &pageblock_mt, from, end);
            } else {
                fa.free_range(&mut frames, &pageblock_mt, start, end);
            }
            Zone {
                idx: z,
                span: layout.zones[z],
                free_area: fa,
                wmark: wm[z],
                watermark_boost: 0,
                lowmem_reserve: reserve[z],
                nr_reserved_highatomic: 0,
                numa_hit: 0,
            }
        });

        let swap_pages = scn.swap.size_bytes / super::PAGE_SIZE;
        Ok(Node {
            nid: 0,
            zones,
            frames,
            pageblock_mt,
            lruvec: Lruvec::default(),
            swap: SwapSpace {
                total: swap_pages,
                used: 0,
            },
            swapdev: BlockDevice::new(
                scn.swap.read_latency_ns,
                scn.swap.write_latency_ns,
                scn.swap.bandwidth_bytes_per_sec,
                scn.swap.latency_jitter,
                Rng::for_actor(seed, "swap-device"),
            ),
            disk: BlockDevice::new(
                scn.disk.read_latency_ns,
                scn.disk.write_latency_ns,
                scn.disk.bandwidth_bytes_per_sec,
                scn.disk.latency_jitter,
                Rng::for_actor(seed, "disk"),
            ),
            vm: VmEvents::new(),
            stat: NodeStats::default(),
            kswapd: KswapdNode::default(),
            pte: Vec::new(),
            shadow: Vec::new(),
            regions: Vec::new(),
            tasks: Vec::new(),
            cfg: NodeConfig {
                swappiness: scn.sysctl.swappiness,
                cost: scn.cost.clone(),
                readahead_pages: scn.disk.readahead_pages.max(1),
                dirty_ratio: scn.writeback.dirty_ratio,
                dirty_background_ratio: scn.writeback.dirty_background_ratio,
            },
            policy: MachinePolicies {
                balance: crate::policy::kswapd_balance::SWITCH.make(choices.get("kswapd_balance")),
                wmark_check: crate::policy::watermark_check::SWITCH
                    .make(choices.get("watermark_check")),
            },
            min_free_kbytes,
            now: 0,
            dirty_queue: Default::default(),
            oom_victim_pending: None,
            oom_kills: Vec::new(),
            oom_kill_event: None,
            oom_panic: None,
            scratch: Vec::with_capacity(64),
            compact: [CompactState::default(); MAX_NR_ZONES],
            kcompactd_wake: None,
            trace: None,
            trace_tasks: vec![TaskId::new("kswapd0", KSWAPD_PID, 0)],
            current: 0,
        })
    }

    /// Create a task (process) and return its index.
    pub fn add_task(&mut self, name: &str, oom_score_adj: i32) -> usize {
        self.tasks.push(TaskMm {
            name: name.to_string(),
            oom_score_adj,
            alive: true,
            ..Default::default()
        });
        self.tasks.len() - 1
    }

    /// Reserve `pages` vpages for an anonymous region or a file; returns the region index.
    pub fn add_region(&mut self, task: usize, pages: u64, anon: bool) -> Result<usize, String> {
        let base = self.pte.len() as u64;
        if base + pages >= PTE_SWAP as u64 {
            return Err("the workloads' address spaces exceed 2^31 pages".into());
        }
        self.pte.resize((base + pages) as usize, PTE_NONE);
        self.shadow.resize((base + pages) as usize, SHADOW_NONE);
        self.regions.push(Region {
            base: base as u32,
            pages: pages as u32,
            anon,
            task,
        });
        let r = self.regions.len() - 1;
        if anon {
            self.tasks[task].anon_regions.push(r);
        }
        Ok(r)
    }

    /// The task whose anonymous region holds `vpage` (None for file pages).
    #[inline]
    pub fn anon_owner(&self, vpage: u32) -> Option<usize> {
        // Few regions: a linear scan from the end is cheaper than a search structure.
        self.regions
            .iter()
            .find(|r| vpage >= r.base && vpage < r.base + r.pages)
            .filter(|r| r.anon)
            .map(|r| r.task)
    }

    #[inline]
    pub fn zone_of(&self, pfn: u32) -> usize {
        // Zones are laid out in index order; only managed ones hold frames.
        let mut z = 0;
        for i in 1..MAX_NR_ZONES {
            if self.zones[i].is_managed() && pfn >= self.zones[i].free_area.start {
                z = i;
            }
        }
        z
    }

    pub fn total_free_pages(&self) -> u64 {
        self.zones.iter().map(|z| z.free_pages()).sum()
    }

    pub fn total_managed_pages(&self) -> u64 {
        self.zones.iter().map(|z| z.managed()).sum()
    }

    // ---------------------------------------------------------------- freeing

    /// Free an order-0 frame to the buddy allocator (`free_unref_page`, PCP lists abstracted away).
    #[inline]
    pub fn free_frame(&mut self, pfn: u32) {
        let z = self.zone_of(pfn);
        self.frames.owner[pfn as usize] = NIL;
        self.zones[z]
            .free_area
            .free(&mut self.frames, &self.pageblock_mt, pfn, 0);
        self.vm.add(VmEvent::Pgfree, 1);
    }

    /// Free a kernel allocation of 2^order pages (`__free_pages`).
    pub fn free_pages(&mut self, pfn: u32, order: u32) {
        for f in &mut self.frames.flags[pfn as usize..(pfn + (1 << order)) as usize] {
            *f = 0;
        }
        let z = self.zone_of(pfn);
        self.zones[z]
            .free_area
            .free(&mut self.frames, &self.pageblock_mt, pfn, order as usize);
        self.vm.add(VmEvent::Pgfree, 1 << order);
    }

    /// Mark a fresh high-order block as a kernel allocation (not on any LRU list).
    pub fn mark_kernel_pages(&mut self, pfn: u32, order: u32) {
        for p in pfn..pfn + (1 << order) {
            self.frames.flags[p as usize] = pg::ALLOCATED;
            self.frames.owner[p as usize] = NIL;
        }
    }

    // ---------------------------------------------------------------- LRU helpers

    /// Put a new page on the LRU list its flags select (`folio_add_lru`).
    #[inline]
    pub fn lru_add(&mut self, pfn: u32) {
        let f = self.frames.flags[pfn as usize] | pg::LRU;
        self.frames.flags[pfn as usize] = f;
        let z = self.zone_of(pfn);
        self.lruvec
            .add_head(&mut self.frames, pfn, lru::lru_of(f), z);
    }

    #[inline]
    pub fn lru_del(&mut self, pfn: u32) {
        let f = self.frames.flags[pfn as usize];
        debug_assert!(f & pg::LRU != 0);
        let z = self.zone_of(pfn);
        self.lruvec.del(&mut self.frames, pfn, lru::lru_of(f), z);
        self.frames.flags[pfn as usize] = f & !pg::LRU;
    }

    /// `folio_mark_accessed` for an unmapped page-cache page (core-mm §5.1).
    #[inline]
    pub fn mark_accessed(&mut self, pfn: u32) {
        let f = self.frames.flags[pfn as usize];
        if f & pg::REFERENCED == 0 {
            self.frames.flags[pfn as usize] = f | pg::REFERENCED;
        } else if f & pg::ACTIVE == 0 {
            if f & pg::LRU != 0 {
                self.lru_del(pfn);
                self.frames.set(pfn, pg::ACTIVE);
                self.lru_add(pfn);
                self.vm.add(VmEvent::Pgactivate, 1);
            } else {
                self.frames.set(pfn, pg::ACTIVE);
            }
            self.frames.clear(pfn, pg::REFERENCED);
            // workingset_activation: activations advance the workingset clock.
            self.lruvec.nonresident_age += 1;
        }
    }

    // ---------------------------------------------------------------- workingset

    /// `workingset_eviction`: the shadow entry for a page leaving memory.
    #[inline]
    pub fn workingset_eviction(&mut self, pfn: u32) -> u32 {
        let age = self.lruvec.nonresident_age;
        self.lruvec.nonresident_age += 1;
        let ws = self.frames.test(pfn, pg::WORKINGSET);
        (age as u32 & SHADOW_AGE_MASK) | if ws { SHADOW_WORKINGSET } else { 0 }
    }

    /// `workingset_refault`: decide whether a page faulted back in belongs on the active list.
    /// Sets ACTIVE/WORKINGSET on the frame as the kernel does before it is added to the LRU.
    pub fn workingset_refault(&mut self, pfn: u32, shadow: u32) {
        let file = !self.frames.test(pfn, pg::SWAPBACKED);
        let t = if file { FILE } else { ANON };
        let eviction = shadow & SHADOW_AGE_MASK;
        let now = self.lruvec.nonresident_age as u32 & SHADOW_AGE_MASK;
        let distance = now.wrapping_sub(eviction) & SHADOW_AGE_MASK;
        self.stat.workingset_refault[t] += 1;
        let l = &self.lruvec;
        let mut ws = l.size(lru::LRU_ACTIVE_FILE);
        if !file {
            ws += l.size(lru::LRU_INACTIVE_FILE);
        }
        if self.swap.has_free() {
            ws += l.size(lru::LRU_ACTIVE_ANON);
            if file {
                ws += l.size(lru::LRU_INACTIVE_ANON);
            }
        }
        if distance as u64 > ws {
            return;
        }
        self.frames.set(pfn, pg::ACTIVE);
        self.lruvec.nonresident_age += 1;
        self.stat.workingset_activate[t] += 1;
        if shadow & SHADOW_WORKINGSET != 0 {
            self.frames.set(pfn, pg::WORKINGSET);
            self.lruvec.note_cost(file, 1);
            self.stat.workingset_restore[t] += 1;
        }
    }

    // ---------------------------------------------------------------- anonymous memory

    /// One user access to anonymous vpage `vp` (the workload hot path).
    #[inline]
    pub fn anon_access(&mut self, vp: u32, write: bool, t: &mut TaskCtx) -> Access {
        let e = &mut self.pte[vp as usize];
        let pte = *e;
        if pte & (PTE_SWAP | PTE_MAPPED) == PTE_MAPPED {
            // Plain access: the MMU sets the accessed (and dirty) bit in the PTE.
            *e = pte | PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
            t.cost_ns += self.cfg.cost.anon_touch_ns;
            return Access::Done;
        }
        if pte_present(pte) {
            return self.swapcache_fault(vp, pte_pfn(pte), write, t);
        }
        if pte == PTE_NONE {
            self.anon_fault(vp, write, t)
        } else {
            self.swapin_fault(vp, write, t)
        }
    }

    /// First touch: allocate, zero and map a page (`do_anonymous_page`).
    fn anon_fault(&mut self, vp: u32, write: bool, t: &mut TaskCtx) -> Access {
        let pfn = match self.alloc_pages(super::gfp::GFP_HIGHUSER_MOVABLE, 0, t) {
            Ok(p) => p,
            Err(a) => return a,
        };
        self.vm.add(VmEvent::Pgfault, 1);
        t.cost_ns += self.cfg.cost.anon_fault_ns;
        self.frames.flags[pfn as usize] = pg::SWAPBACKED;
        self.frames.owner[pfn as usize] = vp;
        self.pte[vp as usize] = pfn | PTE_MAPPED | PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
        self.stat.nr_anon_pages += 1;
        self.tasks[t.task].rss_anon += 1;
        self.lru_add(pfn);
        Access::Done
    }

    /// The page is in the swap cache but unmapped: a minor fault maps it again.
    fn swapcache_fault(&mut self, vp: u32, pfn: u32, write: bool, t: &mut TaskCtx) -> Access {
        self.vm.add(VmEvent::Pgfault, 1);
        t.cost_ns += self.cfg.cost.swapcache_fault_ns;
        self.pte[vp as usize] = pfn | PTE_MAPPED | PTE_YOUNG;
        self.stat.nr_anon_pages += 1;
        let task = &mut self.tasks[t.task];
        task.rss_anon += 1;
        task.swapents = task.swapents.saturating_sub(1);
        self.after_swapin_map(pfn, write);
        Access::Done
    }

    /// `do_swap_page` after mapping: a write fault by the only user (or a swap more than half
    /// full) drops the swap copy; otherwise the page stays in the swap cache, clean.
    #[inline]
    fn after_swapin_map(&mut self, pfn: u32, write: bool) {
        if write {
            self.frames.set(pfn, pg::DIRTY);
        }
        let f = self.frames.flags[pfn as usize];
        if f & pg::SWAPCACHE != 0 && f & pg::WRITEBACK == 0 && (write || self.swap.is_half_full()) {
            self.frames.clear(pfn, pg::SWAPCACHE);
            self.frames.set(pfn, pg::DIRTY);
            self.swap.free();
            self.stat.nr_swapcached -= 1;
        }
    }

    /// The page is only on the swap device: read it back (major fault).
    fn swapin_fault(&mut self, vp: u32, write: bool, t: &mut TaskCtx) -> Access {
        let pfn = match self.alloc_pages(super::gfp::GFP_HIGHUSER_MOVABLE, 0, t) {
            Ok(p) => p,
            Err(a) => return a,
        };
        self.vm.add(VmEvent::Pgfault, 1);
        self.vm.add(VmEvent::Pgmajfault, 1);
        self.vm.add(VmEvent::Pswpin, 1);
        self.vm.add(VmEvent::Pgpgin, 4);
        t.cost_ns += self.cfg.cost.major_fault_ns;
        let done = self.swapdev.submit_read(self.now + t.cost_ns, 1);
        self.frames.flags[pfn as usize] = pg::SWAPBACKED | pg::SWAPCACHE;
        self.frames.owner[pfn as usize] = vp;
        let shadow = std::mem::replace(&mut self.shadow[vp as usize], SHADOW_NONE);
        if shadow != SHADOW_NONE {
            self.workingset_refault(pfn, shadow);
        }
        self.pte[vp as usize] = pfn | PTE_MAPPED | PTE_YOUNG;
        self.stat.nr_swapcached += 1;
        self.stat.nr_anon_pages += 1;
        let task = &mut self.tasks[t.task];
        task.rss_anon += 1;
        task.swapents = task.swapents.saturating_sub(1);
        self.lru_add(pfn);
        self.after_swapin_map(pfn, write);
        Access::Block(done)
    }

    /// Tear down an anonymous region (`exit_mmap`, or the oom_reaper): free its pages and swap.
    /// Pages under writeback cannot be freed yet: they lose their owner and reclaim frees them
    /// once the I/O is done.
    pub fn free_anon_region(&mut self, r: usize) {
        let Region { base, pages, .. } = self.regions[r];
        let task = self.regions[r].task;
        for vp in base..base + pages {
            let pte = self.pte[vp as usize];
            self.shadow[vp as usize] = SHADOW_NONE;
            if pte == PTE_NONE {
                continue;
            }
            self.pte[vp as usize] = PTE_NONE;
            if pte == PTE_SWAP {
                self.swap.free();
                continue;
            }
            let pfn = pte_pfn(pte);
            let f = self.frames.flags[pfn as usize];
            if pte & PTE_MAPPED != 0 {
                self.stat.nr_anon_pages -= 1;
            }
            self.frames.owner[pfn as usize] = NIL;
            if f & pg::WRITEBACK != 0 {
                continue;
            }
            if f & pg::LRU != 0 {
                self.lru_del(pfn);
            }
            if f & pg::SWAPCACHE != 0 {
                self.swap.free();
                self.stat.nr_swapcached -= 1;
            }
            self.frames.flags[pfn as usize] = 0;
            self.free_frame(pfn);
        }
        let tm = &mut self.tasks[task];
        tm.rss_anon = 0;
        tm.swapents = 0;
    }

    // ---------------------------------------------------------------- rmap

    /// Is the page mapped by its owner's page table (`folio_mapped`)?
    #[inline]
    pub fn page_mapped(&self, pfn: u32) -> bool {
        let vp = self.frames.owner[pfn as usize];
        vp != NIL && self.pte[vp as usize] & (PTE_SWAP | PTE_MAPPED) == PTE_MAPPED
    }

    /// `folio_referenced`: the number of young PTEs mapping the page (0 or 1), clearing them.
    #[inline]
    pub fn folio_referenced(&mut self, pfn: u32) -> u32 {
        let vp = self.frames.owner[pfn as usize];
        if vp == NIL {
            return 0;
        }
        let e = &mut self.pte[vp as usize];
        if *e & (PTE_SWAP | PTE_MAPPED | PTE_YOUNG) == PTE_MAPPED | PTE_YOUNG {
            *e &= !PTE_YOUNG;
            1
        } else {
            0
        }
    }

    /// `try_to_unmap` of an anonymous page in the swap cache: the PTE keeps the swap entry
    /// (here: the frame, unmapped) and its dirty bit moves to the page.
    pub fn try_to_unmap(&mut self, pfn: u32) {
        let vp = self.frames.owner[pfn as usize];
        let e = self.pte[vp as usize];
        if e & PTE_DIRTY != 0 {
            self.frames.set(pfn, pg::DIRTY);
        }
        self.pte[vp as usize] = pte_pfn(e);
        self.stat.nr_anon_pages -= 1;
        if let Some(task) = self.anon_owner(vp) {
            let m = &mut self.tasks[task];
            m.rss_anon -= 1;
            m.swapents += 1;
        }
    }

    // ---------------------------------------------------------------- page cache

    /// Buffered read or write of one page of a file (`filemap_read` / `generic_perform_write`).
    #[inline]
    pub fn file_access(
        &mut self,
        vp: u32,
        region_end: u32,
        write: bool,
        t: &mut TaskCtx,
    ) -> Access {
        let pte = self.pte[vp as usize];
        if pte != PTE_NONE {
            t.cost_ns += self.cfg.cost.file_hit_ns;
            if write {
                self.mark_dirty(vp, pte);
            }
            self.mark_accessed(pte);
            return Access::Done;
        }
        if write {
            // A whole-page write needs no read: allocate, insert, dirty.
            let pfn = match self.page_cache_alloc(vp, t) {
                Ok(p) => p,
                Err(a) => return a,
            };
            t.cost_ns += self.cfg.cost.file_hit_ns;
            self.mark_dirty(vp, pfn);
            self.mark_accessed(pfn);
            return Access::Done;
        }
        // Read miss: synchronous readahead of up to `readahead_pages` absent pages.
        let pfn = match self.page_cache_alloc(vp, t) {
            Ok(p) => p,
            Err(a) => return a,
        };
        let mut n = 1u64;
        let mut v = vp + 1;
        while n < self.cfg.readahead_pages && v < region_end && self.pte[v as usize] == PTE_NONE {
            // Readahead allocations must not block or OOM (__GFP_NORETRY): fast path only.
            match self.try_alloc_nowait(super::gfp::GFP_HIGHUSER_MOVABLE) {
                Some(p) => self.page_cache_insert(v, p),
                None => break,
            }
            n += 1;
            v += 1;
        }
        self.vm.add(VmEvent::Pgpgin, 4 * n);
        let done = self.disk.submit_read(self.now + t.cost_ns, n);
        self.mark_accessed(pfn);
        Access::Block(done)
    }

    fn page_cache_alloc(&mut self, vp: u32, t: &mut TaskCtx) -> Result<u32, Access> {
        let pfn = self.alloc_pages(super::gfp::GFP_HIGHUSER_MOVABLE, 0, t)?;
        t.cost_ns += self.cfg.cost.file_miss_ns;
        self.page_cache_insert(vp, pfn);
        Ok(pfn)
    }

    /// `filemap_add_folio`: insert a new page, check its shadow for a refault, add to the LRU.
    fn page_cache_insert(&mut self, vp: u32, pfn: u32) {
        self.frames.flags[pfn as usize] = 0;
        self.frames.owner[pfn as usize] = vp;
        let shadow = std::mem::replace(&mut self.shadow[vp as usize], SHADOW_NONE);
        if shadow != SHADOW_NONE {
            self.workingset_refault(pfn, shadow);
        }
        self.pte[vp as usize] = pfn;
        self.stat.nr_file_pages += 1;
        self.lru_add(pfn);
    }

    #[inline]
    fn mark_dirty(&mut self, vp: u32, pfn: u32) {
        if !self.frames.test(pfn, pg::DIRTY) {
            self.frames.set(pfn, pg::DIRTY);
            self.stat.nr_dirty += 1;
            self.stat.nr_dirtied += 1;
            self.dirty_queue.push_back((vp, self.now));
        }
    }

    /// Dirtyable memory (`global_dirtyable_memory`): free pages above the reserves plus file LRU.
    pub fn dirtyable_memory(&self) -> u64 {
        let reserve: u64 = self.totalreserve_pages();
        let free = self.total_free_pages().saturating_sub(reserve);
        free + self.lruvec.size(lru::LRU_INACTIVE_FILE) + self.lruvec.size(lru::LRU_ACTIVE_FILE)
    }

    /// (`dirty_thresh`, `background_thresh`) in pages (`global_dirty_limits`).
    pub fn dirty_limits(&self) -> (u64, u64) {
        let avail = self.dirtyable_memory();
        let thresh = avail * self.cfg.dirty_ratio / 100;
        let mut bg = avail * self.cfg.dirty_background_ratio / 100;
        if bg >= thresh {
            bg = thresh / 2;
        }
        (thresh, bg)
    }

    /// `totalreserve_pages` (core-mm §2.4).
    pub fn totalreserve_pages(&self) -> u64 {
        self.zones
            .iter()
            .map(|z| {
                let max_reserve = z.lowmem_reserve.iter().copied().max().unwrap_or(0);
                (max_reserve + z.high_wmark_pages()).min(z.managed())
            })
            .sum()
    }

    // ---------------------------------------------------------------- writeback completion

    /// `folio_end_writeback`: clear writeback; a page reclaim wanted goes to the inactive tail.
    pub fn end_writeback(&mut self, pfn: u32) {
        let f = self.frames.flags[pfn as usize];
        debug_assert!(f & pg::WRITEBACK != 0);
        self.frames.clear(pfn, pg::WRITEBACK);
        self.stat.nr_writeback -= 1;
        self.stat.nr_written += 1;
        if f & pg::RECLAIM != 0 {
            self.frames.clear(pfn, pg::RECLAIM);
            // folio_rotate_reclaimable: only an inactive page on the LRU moves.
            if f & pg::LRU != 0 && f & pg::ACTIVE == 0 {
                let z = self.zone_of(pfn);
                let l = lru::lru_of(f);
                self.lruvec.del(&mut self.frames, pfn, l, z);
                self.lruvec.add_tail(&mut self.frames, pfn, l, z);
                self.vm.add(VmEvent::Pgrotated, 1);
            }
        }
    }

    /// Deliver every device completion due by `t` (called by the I/O actors and by reclaim,
    /// which runs long enough for completions to land during it).
    pub fn process_io_completions(&mut self, t: u64) {
        while let Some(&(when, pfn)) = self.swapdev.completions.front() {
            if when > t {
                break;
            }
            self.swapdev.completions.pop_front();
            self.end_writeback(pfn);
        }
        while let Some(&(when, pfn)) = self.disk.completions.front() {
            if when > t {
                break;
            }
            self.disk.completions.pop_front();
            self.end_writeback(pfn);
        }
    }

    /// The flusher: start writeback of up to `max` dirty file pages, oldest first, that were
    /// dirtied before `older_than`. Returns the number of pages submitted.
    pub fn writeback_dirty(&mut self, max: u64, older_than: u64) -> u64 {
        let mut n = 0;
        while n < max {
            let Some(&(vp, when)) = self.dirty_queue.front() else {
                break;
            };
            if when > older_than {
                break;
            }
            self.dirty_queue.pop_front();
            let pfn = self.pte[vp as usize];
            if !pte_present(pfn) || !self.frames.test(pfn, pg::DIRTY) {
                continue;
            }
            if self.frames.test(pfn, pg::WRITEBACK) {
                // Still being written: look again later.
                self.dirty_queue.push_back((vp, when));
                break;
            }
            self.start_file_writeback(pfn);
            n += 1;
        }
        n
    }

    /// Clean a dirty file page by writing it to disk (flusher or kswapd `pageout`).
    pub fn start_file_writeback(&mut self, pfn: u32) {
        self.frames.clear(pfn, pg::DIRTY);
        self.frames.set(pfn, pg::WRITEBACK);
        self.stat.nr_dirty -= 1;
        self.stat.nr_writeback += 1;
        self.vm.add(VmEvent::Pgpgout, 4);
        self.disk.submit_write(self.now, pfn);
    }

    /// `zone_reclaimable_pages` (6.1.192: falls back to free pages when the zone has no LRU pages).
    pub fn zone_reclaimable_pages(&self, z: usize) -> u64 {
        let s = &self.lruvec.zone_size[z];
        let mut n = s[lru::LRU_INACTIVE_FILE] + s[lru::LRU_ACTIVE_FILE];
        if self.swap.has_free() {
            n += s[lru::LRU_INACTIVE_ANON] + s[lru::LRU_ACTIVE_ANON];
        }
        if n == 0 {
            n = self.zones[z].free_pages();
        }
        n
    }

    /// Managed zones up to `hz`, highest first (the zonelist order, core-mm §1.2).
    #[inline]
    pub fn zonelist(&self, hz: usize) -> impl Iterator<Item = usize> + '_ {
        (0..=hz.min(MAX_NR_ZONES - 1))
            .rev()
            .filter(|&z| self.zones[z].is_managed())
    }

    /// Highest managed zone index not above NORMAL-or-`hz` (for sizing decisions).
    pub fn highest_managed_zone(&self) -> usize {
        (0..MAX_NR_ZONES)
            .rev()
            .find(|&z| self.zones[z].is_managed())
            .unwrap_or(ZONE_NORMAL)
    }

    /// Emit a trace event as the current task, if tracing is on.
    #[inline]
    pub fn trace_event(&mut self, f: impl FnOnce(&mut Tracer, &TaskId)) {
        if let Some(t) = self.trace.as_deref_mut() {
            f(t, &self.trace_tasks[self.current]);
        }
    }

    pub fn gfp_can_io(gfp: Gfp) -> bool {
        gfp & super::gfp::__GFP_IO != 0
    }
}
