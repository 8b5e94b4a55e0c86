//! The page allocator's paths (core-mm §3): `get_page_from_freelist`, the slow path with kswapd
//! wakeups, direct reclaim, retries and the OOM killer.
//!
//! With `[host] pcp_lists`, order-0 pages come from and go to the current CPU's per-CPU page
//! lists (`pcp.rs`); otherwise, and for higher orders, the buddy lists directly.
//!
//! Time. Retries that the kernel makes in a loop happen in real time while I/O completes and
//! other CPUs reclaim. The simulator runs a task's slow path as one step; when reclaim made no
//! progress the task sleeps one jiffy (the kernel's `reclaim_throttle`/`cond_resched` back-off)
//! and retries on its next step, keeping `no_progress_loops` across steps.

pub mod direct_compact;
pub mod pcp;

use super::compaction::{CompactResult, CompactStats};
use super::frames::{pg, NIL};
use super::gfp::{self, gfp_migratetype, gfp_zone, Gfp};
use super::signal::Signal;
use super::tracepoint::Tracepoint;
use super::watermark::alloc_flags::*;
use super::watermark::{MIGRATE_MOVABLE, MIGRATE_PCPTYPES};
use super::zone::Zone;
use super::{Access, Machine, TaskCtx, JIFFY_NS};
use super::{MAX_NR_ZONES, PAGE_ALLOC_COSTLY_ORDER};
use crate::machine::vmstat::VmEvent;
use direct_compact::CompactPriority;

/// `MAX_RECLAIM_RETRIES`.
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// Immediate retries within one step when reclaim made progress but the freelist still failed.
const IMMEDIATE_RETRIES: u32 = 4;

impl Machine {
    /// Walk the zonelist and take a page from the first zone that passes the watermark. The
    /// check sees only the buddy's free pages; a page can then come off a per-CPU list.
    #[inline]
    pub fn get_page_from_freelist(
        &mut self,
        order: u32,
        flags: u32,
        hz: usize,
        mt: usize,
    ) -> Option<u32> {
        for z in (0..=hz).rev() {
            let zone = &self.zones[z];
            if !zone.is_managed() {
                continue;
            }
            // `zone_watermark_fast` checks an order-0 request that cannot sleep, at the min mark
            // of a boosted zone, against the unboosted min as well: the boost is there to wake
            // kswapd early, not to fail atomic allocations. Passing the boosted mark implies
            // passing the lower one, so the lower one alone decides.
            let mut mark = zone.wmark_pages(flags & ALLOC_WMARK_MASK);
            if zone.watermark_boost != 0 {
                mark = Self::boosted_zone_mark(zone, order, flags, mark);
            }
            if flags & ALLOC_NO_WATERMARKS == 0
                && !self.zone_watermark_ok(z, order, mark, hz, flags)
            {
                continue;
            }
            let page = if order == 0 && mt < MIGRATE_PCPTYPES && self.cfg.host.pcp_lists {
                self.rmqueue_pcplist(z, mt)
            } else {
                self.zones[z].free_area.rmqueue(
                    &mut self.frames,
                    &mut self.pageblock_mt,
                    order as usize,
                    mt,
                )
            };
            if let Some(p) = page {
                if self.zones[z].free_area.fragmentation_event {
                    self.external_fragmentation_event(z, flags);
                }
                self.zones[z].numa_hit += 1;
                self.vm.add(VmEvent::pgalloc(z), 1 << order);
                self.frames.set_flags(p, pg::ALLOCATED);
                self.guest_alloc(p, order);
                return Some(p);
            }
        }
        None
    }

    /// The mark a boosted zone is checked against: `mark` (boost included), or the unboosted
    /// min for an order-0 request that cannot sleep at the min mark. Out of line: only a
    /// boosted zone asks, and the allocation path pays one test of the boost (issue 33).
    #[cold]
    #[inline(never)]
    fn boosted_zone_mark(zone: &Zone, order: u32, flags: u32, mark: u64) -> u64 {
        if order == 0
            && flags & (ALLOC_NON_BLOCK | ALLOC_WMARK_MASK) == ALLOC_NON_BLOCK | ALLOC_WMARK_MIN
        {
            zone.wmark.min
        } else {
            mark
        }
    }

    /// The allocation just served from zone `z` stole less than a pageblock from another
    /// migratetype (`steal_suitable_fallback`): boost the zone's watermarks, and if the
    /// allocation may wake kswapd, wake it to reclaim the boost (`rmqueue`'s
    /// ZONE_BOOSTED_WATERMARK test: gfp none, order 0, the zone's own index).
    #[cold]
    fn external_fragmentation_event(&mut self, z: usize, flags: u32) {
        let zone = &mut self.zones[z];
        zone.free_area.fragmentation_event = false;
        let Some(boost) = self.policy.boost.boost(
            zone.watermark_boost,
            zone.wmark.high,
            zone.managed(),
            self.cfg.sysctl.watermark_boost_factor,
        ) else {
            return;
        };
        zone.watermark_boost = boost;
        if flags & ALLOC_KSWAPD != 0 {
            self.wakeup_kswapd(z, 0, 0, z);
        }
    }

    /// An allocation that must not sleep or reclaim (read-ahead pages): the fast path, then
    /// kswapd is woken and the min watermark tried, as the slow path does before reclaiming.
    pub fn try_alloc_nowait(&mut self, gfp: Gfp) -> Option<u32> {
        let hz = gfp_zone(gfp);
        let mt = gfp_migratetype(gfp);
        if let Some(p) = self.get_page_from_freelist(0, ALLOC_WMARK_LOW, hz, mt) {
            return Some(p);
        }
        self.wake_all_kswapds(0, gfp, hz);
        self.get_page_from_freelist(0, ALLOC_WMARK_MIN, hz, mt)
    }

    /// `__alloc_pages`' first attempt: the fast path, at the low watermark.
    #[inline]
    pub fn alloc_pages_fast(&mut self, gfp: Gfp, order: u32, t: &mut TaskCtx) -> Option<u32> {
        let mut flags = ALLOC_WMARK_LOW;
        if gfp & gfp::__GFP_KSWAPD_RECLAIM != 0 {
            flags |= ALLOC_KSWAPD;
        }
        let p = self.get_page_from_freelist(order, flags, gfp_zone(gfp), gfp_migratetype(gfp))?;
        t.end_of_request();
        Some(p)
    }

    /// `__alloc_pages`: fast path at the low watermark, then the slow path.
    #[inline]
    pub fn alloc_pages(&mut self, gfp: Gfp, order: u32, t: &mut TaskCtx) -> Result<u32, Access> {
        // A task in the middle of direct reclaim for this request goes on with it.
        if !t.reclaiming_for(gfp, order) {
            if let Some(p) = self.alloc_pages_fast(gfp, order, t) {
                return Ok(p);
            }
        }
        let (hz, mt) = (gfp_zone(gfp), gfp_migratetype(gfp));
        let r = self.alloc_slowpath(gfp, order, hz, mt, t);
        self.kswapd.waker_ns = 0;
        if r.is_ok() {
            t.end_of_request();
        }
        r
    }

    fn gfp_to_alloc_flags(gfp: Gfp, order: u32) -> u32 {
        let mut flags = ALLOC_WMARK_MIN | ALLOC_CPUSET;
        if gfp & gfp::__GFP_HIGH != 0 {
            flags |= ALLOC_MIN_RESERVE;
        }
        if gfp & gfp::__GFP_KSWAPD_RECLAIM != 0 {
            flags |= ALLOC_KSWAPD;
        }
        let can_direct = gfp & gfp::__GFP_DIRECT_RECLAIM != 0;
        if !can_direct && gfp & gfp::__GFP_NOMEMALLOC == 0 {
            flags |= ALLOC_NON_BLOCK;
            if order > 0 && flags & ALLOC_MIN_RESERVE != 0 {
                flags |= ALLOC_HIGHATOMIC;
            }
        }
        if !can_direct && flags & ALLOC_MIN_RESERVE != 0 {
            flags &= !ALLOC_CPUSET;
        }
        flags
    }

    /// `__alloc_pages_slowpath` (core-mm §3.3) for one step of the allocating task.
    fn alloc_slowpath(
        &mut self,
        gfp: Gfp,
        order: u32,
        hz: usize,
        mt: usize,
        t: &mut TaskCtx,
    ) -> Result<u32, Access> {
        let can_direct_reclaim = gfp & gfp::__GFP_DIRECT_RECLAIM != 0;
        let costly = order > PAGE_ALLOC_COSTLY_ORDER;
        let mut alloc_flags = Self::gfp_to_alloc_flags(gfp, order);
        // Resuming a direct reclaim that yielded: straight back into it.
        let mut resume = t.reclaiming_for(gfp, order);
        if !resume {
            // A reclaim left for another request is abandoned.
            self.abandon_reclaim(t);
            t.slowpath_entries = t.slowpath_entries.wrapping_add(1);
            t.cost_ns += self.cfg.cost.slowpath_ns;
            if alloc_flags & ALLOC_KSWAPD != 0 {
                self.kswapd.waker_ns = t.cost_ns;
                self.wake_all_kswapds(order, gfp, hz);
            }
            if let Some(p) = self.get_page_from_freelist(order, alloc_flags, hz, mt) {
                return Ok(p);
            }
            // Costly or unmovable high-order requests try compaction before reclaim.
            if can_direct_reclaim && order > 0 && (costly || mt != MIGRATE_MOVABLE) {
                let (page, _) =
                    self.direct_compact(order, alloc_flags, hz, mt, t, CompactPriority::Async);
                if let Some(p) = page {
                    return Ok(p);
                }
            }
        }
        let is_victim = self.tasks.get(t.task).is_some_and(|m| m.oom_killed);
        let mut immediate = 0;
        loop {
            // An OOM victim may dip into the reserves to exit quickly.
            if is_victim && gfp & gfp::__GFP_NOMEMALLOC == 0 {
                alloc_flags = ALLOC_OOM | (alloc_flags & ALLOC_KSWAPD);
            }
            if !resume {
                if alloc_flags & ALLOC_KSWAPD != 0 {
                    self.kswapd.waker_ns = t.cost_ns;
                    self.wake_all_kswapds(order, gfp, hz);
                }
                if let Some(p) = self.get_page_from_freelist(order, alloc_flags, hz, mt) {
                    return Ok(p);
                }
                if !can_direct_reclaim {
                    return Err(Access::Retry(JIFFY_NS));
                }
            }
            resume = false;
            let before = t.cost_ns;
            // `__perform_reclaim` is a memory stall. A reclaim that yields leaves it and
            // enters it again as it resumes: what it covers is exactly `stall_ns`.
            self.psi.memstall_enter(&mut t.psi, self.now + before);
            let progress = self.try_to_free_pages(gfp, order, t);
            self.psi.memstall_leave(&mut t.psi, self.now + t.cost_ns);
            t.stall_ns += t.cost_ns - before;
            let Some(progress) = progress else {
                return Err(Access::Yield);
            };
            if progress > 0 {
                if let Some(p) = self.get_page_from_freelist(order, alloc_flags, hz, mt) {
                    return Ok(p);
                }
                // Reclaimed pages may sit on per-CPU lists, where the watermark check cannot
                // see them: give every list back to the buddy and try once more.
                self.drain_all_pages();
                if let Some(p) = self.get_page_from_freelist(order, alloc_flags, hz, mt) {
                    return Ok(p);
                }
            }
            let mut compact_result = CompactResult::Skipped;
            if order > 0 {
                let prio = t.compact_priority;
                let (page, result) = self.direct_compact(order, alloc_flags, hz, mt, t, prio);
                if let Some(p) = page {
                    return Ok(p);
                }
                compact_result = result;
            }
            if gfp & gfp::__GFP_NORETRY != 0 {
                return Err(Access::Retry(JIFFY_NS));
            }
            if costly && gfp & gfp::__GFP_RETRY_MAYFAIL == 0 {
                return Err(Access::Retry(JIFFY_NS));
            }
            if self.should_reclaim_retry(order, alloc_flags, hz, progress > 0, t) {
                if progress > 0 && immediate < IMMEDIATE_RETRIES {
                    immediate += 1;
                    continue;
                }
                return Err(Access::Retry(JIFFY_NS));
            }
            // Compaction is worth another round (at a higher priority) only if reclaim made
            // progress: it needs free pages to migrate into.
            if progress > 0 && self.should_compact_retry(order, hz, compact_result, t) {
                if immediate < IMMEDIATE_RETRIES {
                    immediate += 1;
                    continue;
                }
                return Err(Access::Retry(JIFFY_NS));
            }
            // Reclaim cannot help any more: the OOM killer.
            return match self.may_oom(gfp, order, hz, mt, t) {
                Ok(p) => Ok(p),
                Err(a) => Err(a),
            };
        }
    }

    /// Scanner and isolation counters; kcompactd also counts its own scans.
    pub fn account_compaction(&mut self, st: &CompactStats, daemon: bool) {
        self.vm
            .add(VmEvent::CompactMigrateScanned, st.migrate_scanned);
        self.vm.add(VmEvent::CompactFreeScanned, st.free_scanned);
        self.vm.add(VmEvent::CompactIsolated, st.isolated);
        if daemon {
            self.vm
                .add(VmEvent::CompactDaemonMigrateScanned, st.migrate_scanned);
            self.vm
                .add(VmEvent::CompactDaemonFreeScanned, st.free_scanned);
        }
    }

    /// Simulated CPU time of a compaction attempt.
    pub fn compaction_cost(&self, st: &CompactStats) -> u64 {
        let c = &self.cfg.cost;
        (st.migrate_scanned + st.free_scanned) * c.compact_scan_ns + st.migrated * c.migrate_page_ns
    }

    /// `wakeup_kcompactd`: ignored for order 0, and only when some zone <= hz would compact.
    pub fn wakeup_kcompactd(&mut self, order: u32, hz: usize) {
        if order == 0 {
            return;
        }
        let suitable = self.zonelist(hz).any(|z| {
            let mark = self.zones[z].min_wmark_pages();
            self.compaction_suitable(z, order, mark, hz, 0) == CompactResult::Continue
        });
        if suitable {
            self.kcompactd_wake = Some((order, hz));
            self.outbox.raise(Signal::KcompactdWake);
        }
    }

    /// `should_reclaim_retry`: would the allocation succeed if everything reclaimable were freed?
    fn should_reclaim_retry(
        &mut self,
        order: u32,
        alloc_flags: u32,
        hz: usize,
        did_some_progress: bool,
        t: &mut TaskCtx,
    ) -> bool {
        if did_some_progress && order <= PAGE_ALLOC_COSTLY_ORDER {
            t.no_progress_loops = 0;
        } else {
            t.no_progress_loops += 1;
        }
        if t.no_progress_loops > MAX_RECLAIM_RETRIES {
            return false;
        }
        self.zonelist(hz).any(|z| {
            let zone = &self.zones[z];
            let available = self.zone_reclaimable_pages(z) + zone.free_pages();
            super::watermark::zone_watermark_ok(
                available as i64,
                &zone.free_area.nr_free,
                zone.nr_reserved_highatomic,
                zone.lowmem_reserve[hz],
                order,
                zone.min_wmark_pages(),
                alloc_flags,
            )
        })
    }

    /// `wake_all_kswapds`: one node, so wake its kswapd for the first managed zone <= hz.
    pub fn wake_all_kswapds(&mut self, order: u32, gfp: Gfp, hz: usize) {
        let first = self.zonelist(hz).next();
        if let Some(z) = first {
            self.wakeup_kswapd(z, gfp, order, hz);
        }
    }

    /// `wakeup_kswapd` (core-mm §4.2).
    pub fn wakeup_kswapd(&mut self, zone: usize, gfp: Gfp, order: u32, hz: usize) {
        if !self.zones[zone].is_managed() {
            return;
        }
        let k = &mut self.kswapd;
        if k.highest_zoneidx.is_none_or(|cur| cur < hz) {
            k.highest_zoneidx = Some(hz);
        }
        if k.order < order {
            k.order = order;
        }
        if !k.waiting {
            return;
        }
        let boosted = (0..=hz).any(|z| self.zones[z].watermark_boost > 0);
        if self.kswapd.failures >= crate::machine::vmscan::MAX_RECLAIM_RETRIES
            || (self.pgdat_balanced(order, hz) && !boosted)
        {
            // kcompactd would be woken here for non-blocking high-order requests.
            return;
        }
        // Issued where the waking task's clock is (`waker_ns`).
        let (now, nid) = (self.now + self.kswapd.waker_ns, self.nid);
        self.kswapd.woken_at = now;
        self.trace(|| {
            let (zid, gfp) = (zone, gfp);
            (
                now,
                Tracepoint::WakeupKswapd {
                    nid,
                    zid,
                    order,
                    gfp,
                },
            )
        });
        self.kswapd.wakeups_requested += 1;
        // The wake-up takes kswapd off `kswapd_wait` at once: later requests in this step, or
        // while it waits for its CPU, only raise kswapd_order above (a real 6.1 guest traced
        // 535 wake-ups for 481 kswapd runs, not one per failing allocation).
        self.kswapd.waiting = false;
        self.outbox.raise(Signal::KswapdWake);
    }

    // ---------------------------------------------------------------- freeing

    /// Free an order-0 frame whose flags the caller cleared (`free_unref_page`): onto the
    /// current CPU's per-CPU list, or straight to the buddy without them. Always inlined: it
    /// is the reclaim and exit hot path, and the guest hooks around it are one test each.
    #[inline(always)]
    pub fn free_frame(&mut self, pfn: u32) {
        if self.memcg.is_some() {
            self.mem_cgroup_uncharge(pfn);
        }
        self.guest_free(pfn, 0);
        if self.lru_gen.is_some() {
            self.lru_gen_forget(pfn);
        }
        if self.cfg.host.pcp_lists {
            self.free_unref_page(pfn);
        } else {
            self.free_to_buddy(pfn);
        }
        self.guest_after_free();
    }

    #[inline]
    fn free_to_buddy(&mut self, pfn: u32) {
        let z = self.zone_of(pfn);
        self.frames.set_owner(pfn, NIL);
        self.zones[z]
            .free_area
            .free(&mut self.frames, &self.pageblock_mt, pfn, 0);
        self.vm.add(VmEvent::Pgfree, 1);
    }

    /// Free a kernel allocation of 2^order pages (`__free_pages`): order 0 through the per-CPU
    /// lists, larger blocks straight to the buddy.
    pub fn free_pages(&mut self, pfn: u32, order: u32) {
        for p in pfn..pfn + (1 << order) {
            self.frames.set_flags(p, 0);
        }
        if order == 0 {
            self.free_frame(pfn);
            return;
        }
        self.guest_free(pfn, order);
        let z = self.zone_of(pfn);
        self.zones[z]
            .free_area
            .free(&mut self.frames, &self.pageblock_mt, pfn, order as usize);
        self.vm.add(VmEvent::Pgfree, 1 << order);
        self.guest_after_free();
    }

    /// The kernel's own memory at the start of the run (`[host] kernel_used`): unmovable
    /// order-0 pages from the highest zones down, as GFP_KERNEL allocations made at boot. They
    /// predate the run, so no allocation counter moves.
    pub(super) fn boot_kernel_pages(&mut self, mut n: u64) -> Result<(), String> {
        for z in (0..MAX_NR_ZONES).rev() {
            while n > 0 {
                let zone = &mut self.zones[z];
                let Some(p) = zone.free_area.rmqueue(
                    &mut self.frames,
                    &mut self.pageblock_mt,
                    0,
                    super::watermark::MIGRATE_UNMOVABLE,
                ) else {
                    break;
                };
                self.frames.set_flags(p, pg::ALLOCATED);
                n -= 1;
            }
            // Boosts from the boot's own fallbacks were reclaimed long before the run starts.
            self.zones[z].free_area.fragmentation_event = false;
        }
        if n > 0 {
            return Err(format!(
                "host.kernel_used is larger than the machine's memory ({n} pages short); lower it"
            ));
        }
        Ok(())
    }

    /// Mark a fresh high-order block as a kernel allocation (not on any LRU list).
    pub fn mark_kernel_pages(&mut self, pfn: u32, order: u32) {
        for p in pfn..pfn + (1 << order) {
            self.frames.set_flags(p, pg::ALLOCATED);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::machine::vmstat::VmEvent;

    fn machine(kernel_used: &str) -> crate::machine::Machine {
        let text = format!(
            "name = \"t\"\n[host]\nram = \"256MiB\"\nkernel_used = \"{kernel_used}\"\n\
             [[workload]]\nname = \"w\"\nanon = {{ size = \"1MiB\" }}\n"
        );
        let scn = crate::scenario::parse_str(&text, "t.toml").unwrap();
        crate::run::host_machine(&scn, 1, false).unwrap()
    }

    /// core-mm §2.5: at the min mark of a boosted zone, an order-0 request that cannot sleep
    /// is checked against the unboosted min; others keep the boosted one.
    #[test]
    fn an_atomic_order0_request_ignores_the_boost_at_the_min_mark() {
        use crate::machine::watermark::alloc_flags::*;
        use crate::machine::watermark::MIGRATE_UNMOVABLE;
        let mut m = machine("0");
        let z = 1; // DMA32
        m.zones[z].watermark_boost = 1000;
        let min = m.zones[z].wmark.min;
        // Leave DMA32 with its unboosted min + 100 free pages: below min + boost.
        while m.zones[z].free_pages() > min + 100 {
            m.get_page_from_freelist(0, ALLOC_NO_WATERMARKS, z, MIGRATE_UNMOVABLE)
                .unwrap();
        }
        let only_dma32 = |m: &mut crate::machine::Machine, flags: u32| {
            let before = m.zones[z].free_pages();
            m.get_page_from_freelist(0, flags, z, MIGRATE_UNMOVABLE)
                .filter(|_| m.zones[z].free_pages() < before)
                .is_some()
        };
        // DMA keeps plenty free; take it out of the picture.
        m.zones[0].watermark_boost = 1 << 30;
        assert!(!only_dma32(&mut m, ALLOC_WMARK_MIN | ALLOC_KSWAPD));
        assert!(only_dma32(&mut m, ALLOC_WMARK_MIN | ALLOC_NON_BLOCK));
        // Not at the min mark: no exception.
        assert!(!only_dma32(&mut m, ALLOC_WMARK_LOW | ALLOC_NON_BLOCK));
        // Unboosted, it is the ordinary check.
        m.zones[z].watermark_boost = 0;
        assert!(only_dma32(&mut m, ALLOC_WMARK_MIN));
    }

    #[test]
    fn the_booted_kernel_holds_its_pages_without_counting_allocations() {
        let idle = machine("0");
        let booted = machine("32MiB");
        // 32 MiB = 8192 pages fewer free, all of them from the highest zone (DMA32 here).
        assert_eq!(idle.total_free_pages() - booted.total_free_pages(), 8192);
        assert_eq!(idle.zones[0].free_pages(), booted.zones[0].free_pages());
        assert_eq!(booted.vm.get(VmEvent::pgalloc(1)), 0);
        assert_eq!(booted.vm.get(VmEvent::Pgfree), 0);
    }
}
