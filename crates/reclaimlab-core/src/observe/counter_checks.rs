//! Cross-checks of a machine's counters against one another, as the kernel's own accounting
//! relates them (issue 36). The invariant checker (`invariants.rs`) walks the state; these read
//! only what `/proc/vmstat`, `/proc/buddyinfo`, `/proc/zoneinfo` and a VM's host RSS report,
//! and check that the figures could all be true at once:
//!
//! - reclaim: `pgscan_kswapd + pgscan_direct = pgscan_anon + pgscan_file` (every scanned page is
//!   counted once by reclaimer and once by type, `shrink_inactive_list`), the same for
//!   `pgsteal_*`, and a reclaimer or type never frees more than it scanned;
//! - direct reclaim: pages scanned by direct reclaim only after an `allocstall` (the stall is
//!   counted on entry to `do_try_to_free_pages`, before any scan; a stall without a scan is
//!   legitimate: nothing was reclaimable, e.g. anonymous memory without swap);
//! - swap: a page read from swap (`pswpin`, its readahead pages included) left memory through
//!   reclaim first (`pgsteal_anon`; a read fault keeps the slot, so a clean swap-cache page can
//!   be dropped and read again without a second `pswpout`: `pswpin <= pswpout` is not the
//!   kernel's accounting, `pswpin <= pgsteal_anon` is); nothing is read before something was
//!   written; `swap_ra <= pswpin`, and `swap_ra_hit <= swap_ra + pgscan_anon` (PG_readahead is
//!   PG_reclaim, which reclaim sets too); each swap-in fault is a major fault;
//!   every swap-out is of a page anonymous reclaim scanned;
//! - workingset: a refault needs an eviction (`workingset_refault_* <= pgsteal_*`: only
//!   reclaim leaves shadow entries), an activation a refault, a restore an activation;
//! - the allocator: `free + pgalloc_* - pgfree` never changes (every page handed out is
//!   counted in `pgalloc_<zone>`, every page given back in `pgfree`, per-CPU lists included);
//!   buddyinfo's blocks add up to `nr_free_pages`; the folded `NR_FREE_PAGES` the watermark
//!   checks read is off from the exact count by at most 125 pages a CPU (the per-CPU
//!   differential is an `s8` bounded by `stat_threshold <= 125`);
//! - compaction: each direct compaction stall ends in one success or one failure;
//! - the OOM killer: `oom_kill` equals the kills recorded;
//! - slab: `nr_slab_reclaimable` / `nr_slab_unreclaimable` equal the allocated frames the
//!   caches hold;
//! - a guest: its VM process's host RSS is the guest frames mapped on the host, at most the
//!   frames present, at most its RAM.
//!
//! [`Counters::read`] takes the figures from a machine; [`Counters::check`] checks them. The
//! snapshot is plain data so that a test can make one counter wrong and see the check trip
//! (`tests/counter_checks.rs`).

use crate::machine::frames::FrameState;
use crate::machine::pte::{pte_present, PTE_MAPPED};
use crate::machine::vmstat::{NodeStat, VmEvent, NR_NODE_STATS, NR_VM_EVENTS};
use crate::machine::{Machine, MAX_NR_ZONES, MAX_ORDER};
use crate::virt::kvm_main::GuestMemory;

/// The largest `stat_threshold` the kernel uses (`calculate_normal_threshold` clamps to it).
pub const MAX_STAT_THRESHOLD: u64 = 125;

/// One zone's free-page figures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZoneCounts {
    /// `nr_free_pages` (exact: the buddy's count).
    pub nr_free_pages: u64,
    /// The folded `zone_page_state(NR_FREE_PAGES)` the watermark checks read.
    pub folded: i64,
    /// `/proc/buddyinfo`: free blocks per order.
    pub blocks: [u64; MAX_ORDER],
    /// Pages on the zone's per-CPU lists (free, not in `nr_free_pages`).
    pub pcp: u64,
    pub cpus: u64,
}

/// A machine's counters and the counts they must agree with.
#[derive(Clone, Debug)]
pub struct Counters {
    pub events: [u64; NR_VM_EVENTS],
    pub node: [u64; NR_NODE_STATS],
    pub zones: Vec<ZoneCounts>,
    /// Allocated frames on the slab caches' page lists: reclaimable, unreclaimable.
    pub slab_frames: [u64; 2],
    /// OOM kills the machine recorded.
    pub oom_kills: u64,
    /// The machine runs the multi-generational LRU, which counts the workingset otherwise.
    pub lru_gen: bool,
}

/// A guest's RAM as its host sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GuestCounts {
    /// The VM process's anonymous RSS on the host.
    pub rss: u64,
    /// Guest frames (its RAM in pages).
    pub frames: u64,
    /// Guest frames whose host page is resident, and those of them mapped.
    pub present: u64,
    pub mapped: u64,
    /// The VM is gone (its RSS is no longer kept).
    pub dead: bool,
}

impl Counters {
    pub fn read(node: &Machine) -> Counters {
        let zones = (0..MAX_NR_ZONES)
            .map(|z| {
                let zone = &node.zones[z];
                ZoneCounts {
                    nr_free_pages: zone.free_pages(),
                    folded: zone.nr_free_pages_state(),
                    blocks: zone.free_area.nr_free_total(),
                    pcp: zone.pcp.iter().map(|p| p.count as u64).sum(),
                    cpus: zone.pcp.len() as u64,
                }
            })
            .collect();
        let mut slab_frames = [0u64; 2];
        for c in &node.slab.caches {
            // Every page of each slab (a slab is 2^order pages from its first).
            let held = c
                .pages
                .iter()
                .flat_map(|&p| p..p + (1 << c.order))
                .filter(|&p| node.frames.state(p) == FrameState::Allocated)
                .count() as u64;
            slab_frames[usize::from(!c.reclaimable)] += held;
        }
        Counters {
            events: node.vm.c,
            node: super::render::node_stats(node),
            zones,
            slab_frames,
            oom_kills: node.oom_kills.len() as u64,
            lru_gen: node.lru_gen.is_some(),
        }
    }

    #[inline]
    pub fn ev(&self, e: VmEvent) -> u64 {
        self.events[e as usize]
    }

    #[inline]
    pub fn stat(&self, s: NodeStat) -> u64 {
        self.node[s as usize]
    }

    /// `free + Σ pgalloc - pgfree`, free pages on per-CPU lists included: the same at every
    /// moment of a run (compare a run's end with its start).
    pub fn free_balance(&self) -> i128 {
        let free: u64 = self.zones.iter().map(|z| z.nr_free_pages + z.pcp).sum();
        let alloc: u64 = (0..MAX_NR_ZONES)
            .map(|z| self.ev(VmEvent::pgalloc(z)))
            .sum();
        free as i128 + alloc as i128 - self.ev(VmEvent::Pgfree) as i128
    }

    /// Every cross-check; `start` is what the machine read at the start of the run (for the
    /// allocator's balance).
    pub fn check(&self, start: &Counters) -> Result<(), String> {
        use VmEvent::*;
        let e = |x| self.ev(x);
        let le = |a: VmEvent, b: VmEvent| -> Result<(), String> {
            if e(a) > e(b) {
                return Err(format!(
                    "{} {} exceeds {} {}",
                    a.name(),
                    e(a),
                    b.name(),
                    e(b)
                ));
            }
            Ok(())
        };
        // Reclaim: each page scanned counts once by reclaimer and once by type.
        let by_who = e(PgscanKswapd) + e(PgscanDirect);
        let by_type = e(PgscanAnon) + e(PgscanFile);
        if by_who != by_type {
            return Err(format!(
                "pgscan_kswapd + pgscan_direct = {by_who} but pgscan_anon + pgscan_file = {by_type}"
            ));
        }
        let by_who = e(PgstealKswapd) + e(PgstealDirect);
        let by_type = e(PgstealAnon) + e(PgstealFile);
        if by_who != by_type {
            return Err(format!(
                "pgsteal_kswapd + pgsteal_direct = {by_who} but pgsteal_anon + pgsteal_file = {by_type}"
            ));
        }
        le(PgstealKswapd, PgscanKswapd)?;
        le(PgstealDirect, PgscanDirect)?;
        le(PgstealAnon, PgscanAnon)?;
        le(PgstealFile, PgscanFile)?;
        // Direct reclaim scans only inside a stall.
        let stalls: u64 = (0..MAX_NR_ZONES).map(|z| e(VmEvent::allocstall(z))).sum();
        if e(PgscanDirect) > 0 && stalls == 0 {
            return Err(format!(
                "pgscan_direct {} without an allocstall",
                e(PgscanDirect)
            ));
        }
        if e(PgscanDirectThrottle) > stalls {
            return Err(format!(
                "pgscan_direct_throttle {} exceeds the allocstalls {stalls}",
                e(PgscanDirectThrottle)
            ));
        }
        // Swap.
        le(Pswpin, PgstealAnon)?;
        if e(Pswpin) > 0 && e(Pswpout) == 0 {
            return Err(format!("pswpin {} without any pswpout", e(Pswpin)));
        }
        // PG_readahead is PG_reclaim: besides the readahead pages, reclaim tags the anonymous
        // pages it writes or finds under writeback, and a fault on one of those in the swap
        // cache counts a readahead hit in 6.1 too (`swap_cache_get_folio`). Each tag follows
        // a readahead read or a reclaim scan of the page.
        if e(SwapRaHit) > e(SwapRa) + e(PgscanAnon) {
            return Err(format!(
                "swap_ra_hit {} exceeds swap_ra {} + pgscan_anon {}",
                e(SwapRaHit),
                e(SwapRa),
                e(PgscanAnon)
            ));
        }
        le(SwapRa, Pswpin)?;
        if e(Pswpin) - e(SwapRa) > e(Pgmajfault) {
            return Err(format!(
                "pswpin {} - swap_ra {} swap-in faults but pgmajfault {}",
                e(Pswpin),
                e(SwapRa),
                e(Pgmajfault)
            ));
        }
        le(Pgmajfault, Pgfault)?;
        le(Pswpout, PgscanAnon)?;
        // Workingset: shadows come only from reclaim's evictions.
        let ws = [
            (
                NodeStat::WorkingsetRefaultAnon,
                NodeStat::WorkingsetActivateAnon,
                NodeStat::WorkingsetRestoreAnon,
                PgstealAnon,
            ),
            (
                NodeStat::WorkingsetRefaultFile,
                NodeStat::WorkingsetActivateFile,
                NodeStat::WorkingsetRestoreFile,
                PgstealFile,
            ),
        ];
        for (refault, activate, restore, steal) in ws {
            let (r, a, s) = (self.stat(refault), self.stat(activate), self.stat(restore));
            if r > e(steal) {
                return Err(format!(
                    "{} {r} exceeds the evictions {} {}",
                    refault.name(),
                    steal.name(),
                    e(steal)
                ));
            }
            // Under the multi-generational LRU, 6.1 counts an activation when sort_folio
            // protects a folio by its tier, not at a refault, and a restore at a refault in a
            // fault: only restore <= refault holds.
            if if self.lru_gen { s > r } else { a > r || s > a } {
                return Err(format!(
                    "{} {r}, {} {a}, {} {s}: not each at most the one before",
                    refault.name(),
                    activate.name(),
                    restore.name()
                ));
            }
        }
        // Compaction and the OOM killer.
        if e(CompactSuccess) + e(CompactFail) != e(CompactStall) {
            return Err(format!(
                "compact_stall {} but compact_success {} + compact_fail {}",
                e(CompactStall),
                e(CompactSuccess),
                e(CompactFail)
            ));
        }
        if e(OomKill) != self.oom_kills {
            return Err(format!(
                "oom_kill {} but {} kills recorded",
                e(OomKill),
                self.oom_kills
            ));
        }
        // The allocator.
        for (z, zc) in self.zones.iter().enumerate() {
            let in_blocks: u64 = zc.blocks.iter().enumerate().map(|(o, n)| n << o).sum();
            if in_blocks != zc.nr_free_pages {
                return Err(format!(
                    "zone {z}: buddyinfo's blocks hold {in_blocks} pages but nr_free_pages is {}",
                    zc.nr_free_pages
                ));
            }
            let drift = (zc.nr_free_pages as i64 - zc.folded).unsigned_abs();
            if drift > MAX_STAT_THRESHOLD * zc.cpus.max(1) {
                return Err(format!(
                    "zone {z}: NR_FREE_PAGES {} read as {} by the watermark checks: more than \
                     {MAX_STAT_THRESHOLD} pages a CPU apart on {} CPUs",
                    zc.nr_free_pages, zc.folded, zc.cpus
                ));
            }
        }
        let (now, then) = (self.free_balance(), start.free_balance());
        if now != then {
            return Err(format!(
                "free + pgalloc - pgfree went from {then} to {now}: {} pages handed out or \
                 given back uncounted",
                now - then
            ));
        }
        // Slab.
        let slab = [
            self.stat(NodeStat::NrSlabReclaimable),
            self.stat(NodeStat::NrSlabUnreclaimable),
        ];
        if slab != self.slab_frames {
            return Err(format!(
                "nr_slab_reclaimable {} and nr_slab_unreclaimable {} but the caches hold {} \
                 and {} allocated frames",
                slab[0], slab[1], self.slab_frames[0], self.slab_frames[1]
            ));
        }
        Ok(())
    }
}

impl GuestCounts {
    /// A guest's RAM as its host `host` holds it.
    pub fn read(slot: &GuestMemory, host: &Machine) -> GuestCounts {
        let mut g = GuestCounts {
            rss: host.tasks[slot.task].rss_anon,
            frames: slot.frames as u64,
            dead: slot.dead,
            ..GuestCounts::default()
        };
        for pfn in 0..slot.frames {
            let e = host.pte[(slot.base + pfn) as usize];
            if pte_present(e) {
                g.present += 1;
                if e & PTE_MAPPED != 0 {
                    g.mapped += 1;
                }
            }
        }
        g
    }

    pub fn check(&self) -> Result<(), String> {
        if self.present > self.frames || self.mapped > self.present {
            return Err(format!(
                "{} guest frames, {} present on the host, {} of them mapped",
                self.frames, self.present, self.mapped
            ));
        }
        if !self.dead && self.rss != self.mapped {
            return Err(format!(
                "the VM's host RSS is {} pages but {} of its frames are mapped on the host",
                self.rss, self.mapped
            ));
        }
        if self.rss > self.frames {
            return Err(format!(
                "the VM's host RSS is {} pages, more than its {} frames",
                self.rss, self.frames
            ));
        }
        Ok(())
    }
}
