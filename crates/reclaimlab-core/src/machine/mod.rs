//! The memory model of one machine: a single NUMA node (`pg_data_t`) with its zones,
//! watermarks, page frames, buddy allocator, LRU lists, swap, page cache, writeback, OOM killer
//! and counters, plus the address spaces of its processes.
//!
//! A `Machine` is a value: it knows nothing of actors, scenario files or trace formats. Its
//! operations run on the caller's clock (`now` plus the cost the caller has accumulated) and
//! report what they need of the rest of the world as facts: a raised [`Signal`] (kswapd should
//! wake, a write was queued, a process was chosen for an OOM kill...), an [`Access`] result
//! (done, blocked until t, retry later) and the typed [`Tracepoint`]s of the kernel's reclaim
//! events. Kernel functions live in files named after the kernel source they model.

pub mod blkdev;
pub mod buddy;
pub mod compaction;
pub mod config;
pub mod cost;
pub mod filemap;
pub mod frames;
pub mod fs;
pub mod gfp;
pub mod huge_memory;
pub mod layout;
pub mod list_lru;
pub mod lru;
pub mod lru_gen;
pub mod madvise;
pub mod memcontrol;
pub mod memory;
pub mod oom_kill;
pub mod page_alloc;
pub mod page_counter;
pub mod page_reporting;
pub mod page_writeback;
pub mod policy;
pub mod psi;
pub mod pte;
pub mod rmap;
pub mod shrinker;
pub mod signal;
pub mod slab;
pub mod swap;
pub mod swap_state;
pub mod swapfile;
pub mod tracepoint;
pub mod vmscan;
pub mod vmstat;
pub mod vmstat_drift;
pub mod watermark;
pub mod workingset;
pub mod xen;
pub mod zone;

use blkdev::{BlockDevice, DeviceParams};
use buddy::FreeArea;
use compaction::CompactState;
use cost::CostModel;
use frames::{pg, Frames};
use layout::ZoneLayout;
use lru::Lruvec;
use memory::{Region, TaskMm};
use oom_kill::OomKill;
use policy::{PgdatBalanced, WatermarkBoost, WatermarkCheck, WatermarkSetup};
use pte::PTE_PFN_MASK;
use signal::Outbox;
use swapfile::SwapSpace;
use tracepoint::{Tracepoint, Tracepoints};
use vmstat::VmEvents;
use vmstat_drift::FreePagesStat;
use watermark::MIGRATE_MOVABLE;
use zone::{PerCpuPages, Zone};

pub use memory::{Access, TaskCtx};
pub use signal::Signal;

/// Base page size (x86_64, 4 KiB pages).
pub const PAGE_SIZE: u64 = 4096;
pub const PAGE_SHIFT: u32 = 12;
/// Orders 0..=10 (6.1's MAX_ORDER = 11 is exclusive).
pub const MAX_ORDER: usize = 11;
pub const PAGEBLOCK_ORDER: u32 = 9;
pub const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;

/// Zone indices as in `enum zone_type` with CONFIG_ZONE_DMA, DMA32 and ZONE_DEVICE on x86_64.
pub const ZONE_DMA: usize = 0;
pub const ZONE_DMA32: usize = 1;
pub const ZONE_NORMAL: usize = 2;
pub const ZONE_MOVABLE: usize = 3;
pub const ZONE_DEVICE: usize = 4;
pub const MAX_NR_ZONES: usize = 5;
pub const ZONE_NAMES: [&str; MAX_NR_ZONES] = ["DMA", "DMA32", "Normal", "Movable", "Device"];
/// Lower-case suffixes used by vmstat items (`pgalloc_dma32`, `allocstall_movable`, ...).
pub const ZONE_SUFFIXES: [&str; MAX_NR_ZONES] = ["dma", "dma32", "normal", "movable", "device"];

/// Kernel tick rate; timeouts written in jiffies use it (core-mm §0: Debian uses 250).
pub const HZ: u64 = 250;
pub const JIFFY_NS: u64 = 1_000_000_000 / HZ;

#[derive(Debug, Clone, Default)]
pub struct NodeStats {
    pub nr_anon_pages: u64,
    pub nr_file_pages: u64,
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    pub nr_swapcached: u64,
    /// `NR_PAGETABLE`: user page-table pages (`[host] page_tables`).
    pub nr_page_table_pages: u64,
    pub workingset_refault: [u64; 2],
    pub workingset_activate: [u64; 2],
    pub workingset_restore: [u64; 2],
    pub nr_vmscan_write: u64,
    pub nr_vmscan_immediate_reclaim: u64,
    pub nr_dirtied: u64,
    pub nr_written: u64,
}

/// kswapd's per-node state (core-mm §4.1); the thread itself is `actors::kswapd::Kswapd`.
#[derive(Debug, Clone, Default)]
pub struct KswapdNode {
    pub order: u32,
    /// `kswapd_highest_zoneidx`; `None` is the kernel's MAX_NR_ZONES ("unset").
    pub highest_zoneidx: Option<usize>,
    pub failures: u32,
    /// kswapd is on `kswapd_wait` (napping or asleep) and can be woken.
    pub waiting: bool,
    /// kswapd is fully asleep (not napping, not balancing): read by observers.
    pub asleep: bool,
    pub pgdat_dirty: bool,
    pub pgdat_writeback: bool,
    pub lruvec_congested: bool,
    /// Number of `mm_vmscan_wakeup_kswapd` events (actual wakes of a waiting kswapd).
    pub wakeups_requested: u64,
    /// How far into its step the allocating task's clock is (its `t.cost_ns`) while it is in
    /// the allocator's slow path or its swap readahead; 0 elsewhere. A task's step batches
    /// many accesses, and a wake-up it issues happens where its clock is, not at the step's
    /// start.
    pub waker_ns: u64,
    /// When the last `wakeup_kswapd` that woke kswapd was issued: its wake-up latency counts
    /// from there.
    pub woken_at: u64,
}

/// The machine's configuration, whole, as the scenario's machine tables give it (`config.rs`,
/// `cost.rs`): the memory model reads its keys here (`m.cfg.sysctl.swappiness`).
#[derive(Debug, Clone)]
pub struct MachineConfig {
    pub host: config::HostConfig,
    pub sysctl: config::Sysctl,
    pub swap: config::SwapDevice,
    pub disk: config::DiskDevice,
    pub writeback: config::WritebackConfig,
    pub cost: CostModel,
}

/// The policy variants the memory model consults (`[policy]`, built from the registry).
#[derive(Debug)]
pub struct MachinePolicies {
    pub balance: Box<dyn PgdatBalanced>,
    pub wmark_check: Box<dyn WatermarkCheck>,
    pub boost: Box<dyn WatermarkBoost>,
    /// `do_shrink_slab` (shared so `shrink_slab` can hold it while the shrinkers run).
    pub shrinker: std::rc::Rc<dyn shrinker::ShrinkerDeferral>,
    /// XFS inode reclaim walk (consulted only when a filesystem is mounted).
    pub xfs_reclaim: Box<dyn fs::xfs::xfs_icache::XfsReclaimWalk>,
    /// The page-replacement algorithm the kernel is built with (read when the machine is
    /// built: see `lru_gen`).
    pub lru: Box<dyn policy::PageReplacement>,
}

/// Everything a machine is built from.
#[derive(Debug)]
pub struct MachineParams {
    pub layout: ZoneLayout,
    /// The protection a captured zoneinfo printed, when the layout comes from one.
    pub captured_protection: Option<[[u64; MAX_NR_ZONES]; MAX_NR_ZONES]>,
    pub config: MachineConfig,
    pub watermarks: Box<dyn WatermarkSetup>,
    pub policy: MachinePolicies,
    /// Seeds the devices' latency streams.
    pub seed: u64,
    /// Record tracepoints.
    pub trace: bool,
}

#[derive(Debug)]
pub struct Machine {
    pub nid: usize,
    pub zones: [Zone; MAX_NR_ZONES],
    pub frames: Frames,
    pub pageblock_mt: Vec<u8>,
    pub lruvec: Lruvec,
    pub swap: SwapSpace,
    /// The offset-based swap readahead's global state (rotational swap only).
    pub swap_cluster_ra: swap_state::ClusterRa,
    pub swapdev: BlockDevice,
    /// Swap-outs held in a reclaimer's block plug (`blk_start_plug` in `shrink_lruvec`),
    /// direct reclaim's at 0 and kswapd's at 1: under writeback already, issued when the pass
    /// ends or the plug holds `swap_plug_pages` (`vmscan::blk_finish_plug`).
    pub swap_plug: [Vec<u32>; 2],
    /// `[swap] max_request` in pages; 0: no plug.
    pub swap_plug_pages: u64,
    pub disk: BlockDevice,
    pub vm: VmEvents,
    pub stat: NodeStats,
    pub kswapd: KswapdNode,
    /// The page table: one entry per vpage, resident or not; a non-resident entry also holds
    /// the page's workingset shadow (see `memory`).
    pub pte: Vec<u32>,
    pub regions: Vec<Region>,
    pub tasks: Vec<TaskMm>,
    pub cfg: MachineConfig,
    pub policy: MachinePolicies,
    pub min_free_kbytes: u64,
    /// Current simulated time (set by the world before each actor runs).
    pub now: u64,
    /// The CPU the running actor is on (set by the world with `now`, through `set_cpu`): whose
    /// per-CPU page lists allocations take from and frees go to.
    pub cpu: usize,
    /// When the next `vmstat_update` folds the per-CPU free-page differentials
    /// (`[host] vmstat_drift`; `u64::MAX` without).
    pub vmstat_fold_at: u64,
    /// Dirty file pages waiting for the flusher, oldest first: (vpage, time dirtied).
    pub dirty_queue: std::collections::VecDeque<(u32, u64)>,
    /// OOM victim whose memory is not yet reaped (no new kill until it is).
    pub oom_victim_pending: Option<usize>,
    pub oom_kills: Vec<OomKill>,
    /// Set when the OOM killer found nothing to kill (the kernel panics); the run stops.
    pub oom_panic: Option<String>,
    /// Scratch list for isolated pages (kept to avoid allocating per reclaim pass).
    pub scratch: Vec<u32>,
    /// The pages of a read miss's readahead window, allocated before any is inserted
    /// (`filemap::file_access`; kept to avoid allocating per miss).
    pub ra_window: Vec<u32>,
    /// Per-zone compaction state.
    pub compact: [CompactState; MAX_NR_ZONES],
    /// Set by kswapd before its nap (`wakeup_kcompactd`): (order, highest_zoneidx).
    pub kcompactd_wake: Option<(u32, usize)>,
    /// `policy.wmark_check` when it is one of the machine's own tests (set when the machine is
    /// built): the allocation hot path calls it directly.
    wmark_builtin: Option<policy::BuiltinCheck>,
    /// First frame of each managed zone (`u32::MAX` for an empty one), for `zone_of`.
    zone_start: [u32; MAX_NR_ZONES],
    /// Facts raised for the world since it last looked.
    pub outbox: Outbox,
    /// A guest's side of its host: hinting, and the frames it touched and reported (`None` on
    /// a machine that is not a guest).
    pub guest: Option<Box<page_reporting::GuestSide>>,
    /// Dom0's Xen drivers (`None` on a machine that is not a Xen dom0).
    pub xen: Option<Box<xen::XenBackend>>,
    /// Host pages their guest marked unused (s390 CMMA), one bit per vpage; empty unless a
    /// guest uses CMMA. Reclaim drops such a page instead of swapping it.
    pub pte_unused: Vec<u64>,
    /// Pages reclaim dropped that way.
    pub unused_discarded: u64,
    /// Reclaim events, when the run records them.
    pub tracepoints: Tracepoints,
    /// Registered slab shrinkers, in registration order (none: `shrink_slab` does nothing).
    pub shrinkers: shrinker::Shrinkers,
    /// `current->reclaim_state->reclaimed_slab`: pages freed by shrinkers since reclaim last
    /// collected them.
    pub reclaimed_slab: u64,
    /// Time the shrinkers of the running `shrink_slab` took (CPU, and asleep waiting for I/O
    /// or locks), collected by the caller.
    pub shrink_cost_ns: u64,
    pub shrink_sleep_ns: u64,
    /// Slab caches (kernel objects in pages taken from the buddy allocator).
    pub slab: slab::Slab,
    /// The mounted filesystem, if the scenario has one.
    pub fs: Option<Box<fs::Filesystem>>,
    /// The data device's page cache of metadata blocks (ext4's; `None` otherwise).
    pub bdev: Option<Box<fs::bdev::BdevCache>>,
    /// Draws kswapd's wake-up latencies from `[cost] wakeup_latency_samples` (untouched
    /// without samples).
    pub wakeup_rng: crate::engine::Rng,
    /// Memory cgroups (`[[cgroup]]`; `None` without: every page is the root's, and the
    /// machine has its one lruvec).
    pub memcg: Option<Box<memcontrol::mem_cgroup::MemCgroups>>,
    /// Pressure stall information: the system group (and, later, one per cgroup) on the
    /// machine's CPUs. It only observes: nothing in the model reads it back.
    pub psi: psi::Psi,
    /// The multi-generational LRU, beside the lruvecs (`[policy] lru = "mglru"` with
    /// `lru_gen_enabled`'s core bit; set by [`Machine::lru_gen_init`]). `None`: the two-list
    /// LRU, whose paths test only this.
    pub lru_gen: Option<Box<lru_gen::lruvec::LruGenNode>>,
}

impl Machine {
    /// Build a machine: zones, watermarks, frames, all memory free.
    pub fn new(p: MachineParams) -> Result<Machine, String> {
        let layout = &p.layout;
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

        let (host, sysctl, swap) = (&p.config.host, &p.config.sysctl, &p.config.swap);
        let min_free_kbytes = sysctl
            .min_free_kbytes
            .unwrap_or_else(|| p.watermarks.min_free_kbytes_default(&managed, host.thp));
        let wm = p.watermarks.setup(
            &managed,
            &layout.present(),
            min_free_kbytes,
            sysctl.watermark_scale_factor,
        );
        let reserve = watermark::boot_lowmem_reserve(
            &managed,
            &sysctl.lowmem_reserve_ratio,
            p.captured_protection.as_ref(),
        );
        let cpus = host.cpus.max(1) as u64;

        if let Some(z) = host.fragmented_zone.filter(|&z| managed[z] == 0) {
            let name = ZONE_NAMES[z];
            return Err(format!(
                "host.fragmented_zone = \"{name}\", but this host has no {name} zone; \
                 name a zone it has (see its zoneinfo) or change ram/lowmem"
            ));
        }
        let zones: [Zone; MAX_NR_ZONES] = std::array::from_fn(|z| {
            let start = base[z] as u32;
            let end = (base[z] + managed[z]) as u32;
            let mut fa = FreeArea::new(start, end);
            frames.set_managed(start, end);
            if host.fragmented_zone == Some(z) {
                // An aged zone: the page in the middle of every stride-aligned block is a
                // long-lived kernel allocation (allocated, no owner, never on an LRU), so the
                // free pages around it can merge only up to half the stride.
                let stride = host.fragment_stride;
                let mut from = start;
                let mut pin = start.next_multiple_of(stride) + stride / 2;
                while pin < end {
                    fa.free_range(&mut frames, &pageblock_mt, from, pin);
                    frames.set_flags(pin, pg::ALLOCATED);
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
                pcp: (0..cpus)
                    .map(|_| PerCpuPages::new(managed[z], wm[z].low, cpus))
                    .collect(),
                reclaim_active: false,
            }
        });

        let device = |d: &DeviceParams, stream: &str| {
            BlockDevice::new(d, crate::engine::Rng::for_actor(p.seed, stream))
        };
        let wmark_builtin = p.policy.wmark_check.builtin();
        let kernel_used = host.kernel_used_bytes / PAGE_SIZE;
        let mut m = Machine {
            nid: 0,
            zones,
            frames,
            pageblock_mt,
            lruvec: Lruvec::default(),
            swap: SwapSpace::new(swap.size_bytes / PAGE_SIZE, swap.rotational),
            swap_cluster_ra: Default::default(),
            swapdev: device(&swap.device(), "swap-device"),
            swap_plug: Default::default(),
            // The device's largest request, in pages: reclaim's block plug holds that many.
            swap_plug_pages: swap.max_request_bytes.div_ceil(PAGE_SIZE),
            disk: device(&p.config.disk.device(), "disk"),
            vm: VmEvents::new(),
            stat: NodeStats::default(),
            kswapd: KswapdNode {
                // kswapd starts asleep, waiting for the first wakeup_kswapd.
                waiting: true,
                asleep: true,
                ..Default::default()
            },
            pte: Vec::new(),
            regions: Vec::new(),
            tasks: Vec::new(),
            cfg: p.config,
            policy: p.policy,
            min_free_kbytes,
            now: 0,
            cpu: 0,
            vmstat_fold_at: u64::MAX,
            dirty_queue: Default::default(),
            oom_victim_pending: None,
            oom_kills: Vec::new(),
            oom_panic: None,
            scratch: Vec::with_capacity(64),
            ra_window: Vec::new(),
            compact: [CompactState::default(); MAX_NR_ZONES],
            kcompactd_wake: None,
            wmark_builtin,
            zone_start: std::array::from_fn(|z| {
                if managed[z] > 0 {
                    base[z] as u32
                } else {
                    u32::MAX
                }
            }),
            outbox: Outbox::default(),
            guest: None,
            xen: None,
            pte_unused: Vec::new(),
            unused_discarded: 0,
            tracepoints: Tracepoints::new(p.trace),
            shrinkers: Default::default(),
            reclaimed_slab: 0,
            shrink_cost_ns: 0,
            shrink_sleep_ns: 0,
            slab: Default::default(),
            fs: None,
            bdev: None,
            wakeup_rng: crate::engine::Rng::for_actor(p.seed, "kswapd-wakeup"),
            memcg: None,
            psi: psi::Psi::new(cpus as usize, HZ, 0),
            lru_gen: None,
        };
        m.boot_kernel_pages(kernel_used)?;
        if m.cfg.host.vmstat_drift {
            // refresh_zone_stat_thresholds at boot: the differentials start empty.
            for z in m.zones.iter_mut().filter(|z| z.is_managed()) {
                z.free_area.stat = FreePagesStat::new(z.managed(), &z.wmark, cpus);
            }
            m.vmstat_fold_at = vmstat_drift::STAT_INTERVAL_NS;
        }
        m.lru_gen_init();
        Ok(m)
    }

    /// `set_pgdat_percpu_threshold`: kswapd lowers the zones' vmstat thresholds while it is
    /// awake (`calculate_pressure_threshold`) and restores the normal ones before it sleeps.
    pub fn set_pgdat_percpu_threshold(&mut self, pressure: bool) {
        for z in &mut self.zones {
            z.free_area.stat.set_pressure(pressure);
        }
    }

    /// The periodic `vmstat_update`: once a second of simulated time has passed, every CPU's
    /// differentials go into the zone counters.
    #[cold]
    fn vmstat_update(&mut self) {
        for z in &mut self.zones {
            z.free_area.stat.fold_all();
        }
        let i = vmstat_drift::STAT_INTERVAL_NS;
        self.vmstat_fold_at = (self.now / i + 1) * i;
    }

    /// Run what follows on `cpu` (an actor's home CPU; one beyond the machine's wraps around).
    #[inline]
    pub fn set_cpu(&mut self, cpu: u32) {
        let n = self.zones[0].pcp.len();
        self.cpu = if (cpu as usize) < n {
            cpu as usize
        } else {
            cpu as usize % n
        };
        if self.vmstat_fold_at != u64::MAX {
            if self.now >= self.vmstat_fold_at {
                self.vmstat_update();
            }
            let cpu = self.cpu;
            for z in &mut self.zones {
                z.free_area.stat.cpu = cpu;
            }
        }
    }

    #[inline]
    pub fn zone_of(&self, pfn: u32) -> usize {
        // Zones are laid out in index order; only managed ones hold frames. The starts sit in
        // one small array (the zones themselves are large), and the loop has no branches.
        let mut z = 0;
        for i in 1..MAX_NR_ZONES {
            z = if pfn >= self.zone_start[i] { i } else { z };
        }
        z
    }

    pub fn total_free_pages(&self) -> u64 {
        self.zones.iter().map(|z| z.free_pages()).sum()
    }

    pub fn total_managed_pages(&self) -> u64 {
        self.zones.iter().map(|z| z.managed()).sum()
    }

    /// `zone_reclaimable_pages` (6.1.192: falls back to free pages when the zone has no LRU pages).
    pub fn zone_reclaimable_pages(&self, z: usize) -> u64 {
        let row;
        let s = if self.memcg.is_none() {
            &self.lruvec.zone_size[z]
        } else {
            // Every memcg's lists (out of line: the path without cgroups is the hot one).
            row = self.node_lru_zone_size()[z];
            &row
        };
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

    /// The zone watermark test under the machine's `watermark_check` policy.
    #[inline(always)]
    pub fn zone_watermark_ok(
        &self,
        z: usize,
        order: u32,
        mark: u64,
        hz: usize,
        flags: u32,
    ) -> bool {
        let zone = &self.zones[z];
        match self.wmark_builtin {
            Some(b) => b.ok(zone, order, mark, hz, flags),
            None => self.policy.wmark_check.ok(zone, order, mark, hz, flags),
        }
    }

    /// Record a reclaim event at `ts`, if the run records them.
    #[inline]
    pub fn trace(&mut self, f: impl FnOnce() -> (u64, Tracepoint)) {
        if self.tracepoints.enabled {
            let (ts, tp) = f();
            self.tracepoints.buf.push((ts, tp));
        }
    }
}
