//! Per-CPU page lists (core-mm §1.5): the `rmqueue_pcplist`, `free_unref_page`,
//! `free_pcppages_bulk` and `drain_all_pages` part of mm/page_alloc.c.
//!
//! Each zone keeps, for every CPU, free order-0 pages off the buddy lists (`Zone::pcp`), one
//! list per migratetype. An allocation takes the newest page of its CPU's list, refilling the
//! list with a batch from the buddy when it is empty; a free puts the page at the head and,
//! once the lists hold `high` pages (four batches while kswapd reclaims the zone), gives the
//! oldest back to the buddy. NR_FREE_PAGES counts buddy pages only, so it drops when a list is
//! refilled, not when the page is handed out, and the watermark checks never see the pages on
//! the lists: up to one low watermark per node of free memory is invisible to them.
//!
//! Modelled: order 0 only, the three list types (unmovable, movable, reclaimable), `batch`,
//! `high`, `free_factor` (capped at `CONFIG_PCP_BATCH_SCALE_MAX`), `ZONE_RECLAIM_ACTIVE`,
//! round-robin give-back, `drain_all_pages` in the slow path. Not modelled: the order 1-3 and
//! THP lists (those orders use the buddy directly), the vmstat refresh that drains remote-node
//! lists (one node), CPU hotplug and `percpu_pagelist_high_fraction`.

use super::super::watermark::{MIGRATE_MOVABLE, MIGRATE_PCPTYPES};
use super::super::zone::PerCpuPages;
use super::super::{Machine, MAX_NR_ZONES, PAGEBLOCK_ORDER};
use crate::machine::vmstat::VmEvent;

/// `CONFIG_PCP_BATCH_SCALE_MAX` (6.1.192): frees in a row scale the give-back by at most 2^5.
pub const PCP_BATCH_SCALE_MAX: u32 = 5;

/// `nr_pcp_high`: the list limit, four batches at most while kswapd reclaims the zone.
#[inline]
fn nr_pcp_high(pcp: &PerCpuPages, reclaim_active: bool) -> u32 {
    if reclaim_active {
        pcp.high.min(pcp.batch << 2)
    } else {
        pcp.high
    }
}

/// `nr_pcp_free`: pages to give back once the list reached `high`, a batch doubled per free
/// since the last allocation, leaving at least a batch on the list.
#[inline]
fn nr_pcp_free(pcp: &mut PerCpuPages, high: u32) -> u32 {
    let batch = pcp.batch;
    if high < batch {
        return 1;
    }
    let (min_nr, max_nr) = (batch, high - batch);
    let n = batch << pcp.free_factor;
    if n < max_nr && pcp.free_factor < PCP_BATCH_SCALE_MAX {
        pcp.free_factor += 1;
    }
    // The kernel's clamp: the upper bound wins if the bounds cross.
    n.max(min_nr).min(max_nr)
}

impl Machine {
    /// `rmqueue_pcplist` for one order-0 page of migratetype `mt` from zone `z`: the newest page
    /// of the current CPU's list, or the first of a refill when the list is empty. Inlined into
    /// the allocator; the refill is kept out of line so the common case stays short.
    #[inline(always)]
    pub(super) fn rmqueue_pcplist(&mut self, z: usize, mt: usize) -> Option<u32> {
        let pcp = &mut self.zones[z].pcp[self.cpu];
        pcp.free_factor >>= 1;
        if let Some(p) = pcp.lists[mt].pop_front() {
            pcp.count -= 1;
            return Some(p);
        }
        self.rmqueue_bulk(z, mt)
    }

    /// `rmqueue_bulk`: refill the current CPU's empty list with `max(batch >> order, 2)` blocks
    /// at order 0 (one for a boot-sized batch) from the buddy; the caller's watermark check
    /// covers the whole batch. The first block taken is handed out, the others wait in the
    /// order the buddy gave them.
    #[inline(never)]
    fn rmqueue_bulk(&mut self, z: usize, mt: usize) -> Option<u32> {
        let zone = &mut self.zones[z];
        let pcp = &mut zone.pcp[self.cpu];
        let n = if pcp.batch > 1 { pcp.batch.max(2) } else { 1 };
        let fa = &mut zone.free_area;
        let first = fa.rmqueue(&mut self.frames, &mut self.pageblock_mt, 0, mt)?;
        let list = &mut pcp.lists[mt];
        list.reserve(n as usize);
        let mut got = 0;
        for _ in 1..n {
            let Some(p) = fa.rmqueue(&mut self.frames, &mut self.pageblock_mt, 0, mt) else {
                break;
            };
            self.frames.set_pcp(p, mt);
            list.push_back_reserved(p);
            got += 1;
        }
        pcp.count += got;
        Some(first)
    }

    /// `free_unref_page` for an order-0 page: onto the current CPU's list of its pageblock's
    /// migratetype (movable for any other type), then give back a batch if the list is full.
    /// Inlined into the callers (reclaim, exit); the give-back is out of line.
    #[inline(always)]
    pub(super) fn free_unref_page(&mut self, pfn: u32) {
        let z = self.zone_of(pfn);
        let mut mt = self.pageblock_mt[(pfn >> PAGEBLOCK_ORDER) as usize] as usize;
        if mt >= MIGRATE_PCPTYPES {
            mt = MIGRATE_MOVABLE;
        }
        self.frames.set_pcp(pfn, mt);
        self.vm.add(VmEvent::Pgfree, 1);
        let cpu = self.cpu;
        let zone = &mut self.zones[z];
        let pcp = &mut zone.pcp[cpu];
        pcp.lists[mt].push_front(pfn);
        pcp.count += 1;
        if pcp.count >= nr_pcp_high(pcp, zone.reclaim_active) {
            self.free_pcp_overflow(z, cpu, mt);
        }
    }

    /// The list of CPU `cpu` in zone `z` reached its limit after a free to list `mt`: give back
    /// `nr_pcp_free` pages.
    #[inline(never)]
    fn free_pcp_overflow(&mut self, z: usize, cpu: usize, mt: usize) {
        let zone = &mut self.zones[z];
        let high = nr_pcp_high(&zone.pcp[cpu], zone.reclaim_active);
        let n = nr_pcp_free(&mut zone.pcp[cpu], high);
        self.free_pcppages_bulk(z, cpu, n, mt);
    }

    /// `free_pcppages_bulk`: give `count` pages of CPU `cpu`'s lists of zone `z` back to the
    /// buddy, oldest first, taking the lists in turn from the one after `last`.
    fn free_pcppages_bulk(&mut self, z: usize, cpu: usize, count: u32, last: usize) {
        let zone = &mut self.zones[z];
        let pcp = &mut zone.pcp[cpu];
        let mut count = count.min(pcp.count);
        pcp.count -= count;
        let mut i = last;
        while count > 0 {
            // Some list is non-empty: `count` is at most the pages on them.
            loop {
                i = if i + 1 == MIGRATE_PCPTYPES { 0 } else { i + 1 };
                if !pcp.lists[i].is_empty() {
                    break;
                }
            }
            let list = &mut pcp.lists[i];
            while count > 0 {
                let Some(p) = list.pop_back() else { break };
                // A plain free frame again: the buddy makes it a block head only if it stays one.
                self.frames.clear_pcp(p);
                zone.free_area
                    .free_as(&mut self.frames, &self.pageblock_mt, p, 0, i);
                count -= 1;
            }
        }
    }

    /// `drain_all_pages(NULL)`: every CPU's lists of every zone back to the buddy.
    pub fn drain_all_pages(&mut self) {
        for z in 0..MAX_NR_ZONES {
            for cpu in 0..self.zones[z].pcp.len() {
                let n = self.zones[z].pcp[cpu].count;
                if n > 0 {
                    self.free_pcppages_bulk(z, cpu, n, 0);
                }
            }
        }
    }

    /// Pages of zone `z` on per-CPU lists, over all CPUs.
    pub fn pcp_pages(&self, z: usize) -> u64 {
        self.zones[z].pcp.iter().map(|p| p.count as u64).sum()
    }

    /// Take the free page `pfn` off whichever per-CPU list of zone `z` holds it; the caller
    /// owns it afterwards (compaction freeing a whole block around it). The lists are searched:
    /// rare, and each holds at most `high` pages.
    pub(crate) fn pcp_take(&mut self, z: usize, pfn: u32) {
        let mt = self
            .frames
            .pcp_mt(pfn)
            .expect("pcp_take of a page on a per-CPU list");
        for pcp in &mut self.zones[z].pcp {
            if pcp.lists[mt].remove(pfn) {
                pcp.count -= 1;
                return;
            }
        }
        panic!("per-CPU page {pfn} is on none of zone {z}'s lists");
    }
}

/// Against core-mm §1.5, on a 2 GiB host with 2 CPUs: DMA (3840 managed, low 106: batch 1,
/// high 53) and DMA32 (501824 managed, low 13972: batch 63, high 6986).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::units::GIB;
    use crate::machine::frames::pg;
    use crate::machine::watermark::alloc_flags::ALLOC_WMARK_LOW;
    use crate::machine::watermark::MIGRATE_UNMOVABLE;
    use crate::machine::zone::PerCpuPages;
    use crate::machine::{ZONE_DMA, ZONE_DMA32, ZONE_MOVABLE};
    use crate::observe::invariants::Checker;
    use crate::scenario::Scenario;

    const Z: usize = ZONE_DMA32;

    fn node() -> Machine {
        let mut scn = Scenario::default();
        scn.host.ram_bytes = 2 * GIB;
        scn.host.cpus = 2;
        scn.host.pcp_lists = true;
        crate::run::host_machine(&scn, 1, false).unwrap()
    }

    /// `n` movable pages allocated on `cpu` (they come from DMA32, the highest zone).
    fn alloc(m: &mut Machine, cpu: u32, n: usize, mt: usize) -> Vec<u32> {
        m.set_cpu(cpu);
        (0..n)
            .map(|_| {
                m.get_page_from_freelist(0, ALLOC_WMARK_LOW, ZONE_MOVABLE, mt)
                    .unwrap()
            })
            .collect()
    }

    /// Free pages on `cpu` until the list gives some back; returns (frees, pages given back).
    fn free_until_giveback(m: &mut Machine, cpu: u32, pages: &mut Vec<u32>) -> (u32, u64) {
        m.set_cpu(cpu);
        let before = m.zones[Z].free_pages();
        let mut frees = 0;
        while m.zones[Z].free_pages() == before {
            m.free_pages(pages.pop().unwrap(), 0);
            frees += 1;
        }
        (frees, m.zones[Z].free_pages() - before)
    }

    #[test]
    fn batch_and_high_follow_the_spec() {
        // §2.6's 16 GiB guest on 2 CPUs.
        let sizes = |managed, low| {
            let p = PerCpuPages::new(managed, low, 2);
            (p.batch, p.high)
        };
        assert_eq!(sizes(3840, 18), (1, 9));
        assert_eq!(sizes(782_000, 3945), (63, 1972));
        assert_eq!(sizes(3_400_000, 17_153), (63, 8576));
        // At least four batches.
        assert_eq!(PerCpuPages::new(782_000, 100, 4).high, 252);
        let m = node();
        for cpu in 0..2 {
            let (dma, dma32) = (&m.zones[ZONE_DMA].pcp[cpu], &m.zones[Z].pcp[cpu]);
            assert_eq!((dma.batch, dma.high, dma.count), (1, 53, 0));
            assert_eq!((dma32.batch, dma32.high, dma32.count), (63, 6986, 0));
        }
        assert_eq!(m.zones[Z].pcp.len(), 2);
    }

    #[test]
    fn an_empty_list_is_refilled_with_a_batch() {
        let mut m = node();
        let free0 = m.zones[Z].free_pages();
        let got = alloc(&mut m, 1, 1, MIGRATE_MOVABLE);
        // NR_FREE_PAGES dropped by the whole batch; 62 pages wait on CPU 1's movable list.
        assert_eq!(m.zones[Z].free_pages(), free0 - 63);
        let pcp = &m.zones[Z].pcp[1];
        assert_eq!((pcp.count, pcp.lists[MIGRATE_MOVABLE].len()), (62, 62));
        assert_eq!(m.zones[Z].pcp[0].count, 0);
        // The rest of the batch is handed out in the buddy's order without touching the buddy.
        let more = alloc(&mut m, 1, 62, MIGRATE_MOVABLE);
        assert_eq!(more[0], got[0] + 1);
        assert_eq!(m.zones[Z].free_pages(), free0 - 63);
        assert_eq!(m.zones[Z].pcp[1].count, 0);
        assert_eq!(m.zones[Z].numa_hit, 63);
        // The 64th allocation refills again.
        alloc(&mut m, 1, 1, MIGRATE_MOVABLE);
        assert_eq!(m.zones[Z].free_pages(), free0 - 126);
        // Each migratetype has its own list.
        alloc(&mut m, 1, 1, MIGRATE_UNMOVABLE);
        let pcp = &m.zones[Z].pcp[1];
        assert_eq!(pcp.lists[MIGRATE_UNMOVABLE].len(), 62);
        assert_eq!(pcp.lists[MIGRATE_MOVABLE].len(), 62);
        assert_eq!(pcp.count, 124);
        assert_eq!(m.zones[Z].free_pages(), free0 - 189);
        Checker::new(&m).check(&m).unwrap();
    }

    #[test]
    fn a_full_list_gives_back_growing_batches() {
        let mut m = node();
        let mut pages = alloc(&mut m, 1, 20_000, MIGRATE_MOVABLE);
        // Freed on CPU 0: the list fills to high (6986), then gives back the oldest pages,
        // batch << free_factor at a time, free_factor growing by one per give-back up to 5.
        let (frees, back) = free_until_giveback(&mut m, 0, &mut pages);
        assert_eq!((frees, back), (6986, 63));
        assert_eq!(m.zones[Z].pcp[0].count, 6923);
        assert_eq!(m.zones[Z].pcp[0].free_factor, 1);
        let mut seen = vec![];
        for _ in 0..6 {
            seen.push(free_until_giveback(&mut m, 0, &mut pages));
        }
        assert_eq!(
            seen,
            vec![
                (63, 126),
                (126, 252),
                (252, 504),
                (504, 1008),
                (1008, 2016),
                (2016, 2016)
            ]
        );
        assert_eq!(m.zones[Z].pcp[0].free_factor, PCP_BATCH_SCALE_MAX);
        // An allocation halves free_factor.
        alloc(&mut m, 0, 1, MIGRATE_MOVABLE);
        assert_eq!(m.zones[Z].pcp[0].free_factor, 2);
        Checker::new(&m).check(&m).unwrap();
    }

    #[test]
    fn the_oldest_pages_go_back_first() {
        let mut m = node();
        let mut pages = alloc(&mut m, 1, 8000, MIGRATE_MOVABLE);
        let order: Vec<u32> = pages.iter().rev().copied().collect();
        free_until_giveback(&mut m, 0, &mut pages);
        // The 63 pages freed first went back to the buddy; the 64th and later are still cached.
        assert!(order[..63].iter().all(|&p| m.frames.pcp_mt(p).is_none()));
        assert!(order[63..6986]
            .iter()
            .all(|&p| m.frames.pcp_mt(p) == Some(MIGRATE_MOVABLE)));
        // The newest is at the front, handed out first.
        assert_eq!(
            m.zones[Z].pcp[0].lists[MIGRATE_MOVABLE].front(),
            Some(order[6985])
        );
        assert_eq!(alloc(&mut m, 0, 1, MIGRATE_MOVABLE), vec![order[6985]]);
        Checker::new(&m).check(&m).unwrap();
    }

    #[test]
    fn reclaim_active_caps_the_list_at_four_batches() {
        let mut m = node();
        let mut pages = alloc(&mut m, 1, 10_000, MIGRATE_MOVABLE);
        m.zones[Z].reclaim_active = true;
        // high_eff = min(4 * 63, 6986) = 252; give-backs clamp to [63, 252 - 63].
        let seen: Vec<_> = (0..4)
            .map(|_| free_until_giveback(&mut m, 0, &mut pages))
            .collect();
        assert_eq!(seen, vec![(252, 63), (63, 126), (126, 189), (189, 189)]);
        assert_eq!(m.zones[Z].pcp[0].count, 63);
        // free_factor stops growing once the batch reaches the clamp.
        assert_eq!(m.zones[Z].pcp[0].free_factor, 2);
        // Back to the full high once kswapd is done.
        m.zones[Z].reclaim_active = false;
        let (frees, _) = free_until_giveback(&mut m, 0, &mut pages);
        assert_eq!(frees, 6986 - 63);
    }

    #[test]
    fn drain_all_pages_empties_every_list() {
        let mut m = node();
        let managed = m.zones[Z].managed();
        let mut pages = alloc(&mut m, 1, 100, MIGRATE_MOVABLE);
        m.set_cpu(0);
        for _ in 0..50 {
            m.free_pages(pages.pop().unwrap(), 0);
        }
        // CPU 1 holds 2 * 63 - 100 = 26 pages, CPU 0 the 50 freed ones.
        assert_eq!((m.zones[Z].pcp[0].count, m.zones[Z].pcp[1].count), (50, 26));
        assert_eq!(m.pcp_pages(Z), 76);
        assert_eq!(m.zones[Z].free_pages(), managed - 126);
        Checker::new(&m).check(&m).unwrap();
        m.drain_all_pages();
        assert_eq!(m.pcp_pages(Z), 0);
        assert_eq!(m.zones[Z].free_pages(), managed - 50);
        Checker::new(&m).check(&m).unwrap();
    }

    #[test]
    fn compaction_takes_a_page_off_its_list() {
        let mut m = node();
        let got = alloc(&mut m, 1, 10, MIGRATE_MOVABLE);
        // The front of CPU 1's list is the next page the buddy handed over.
        let p = got[9] + 1;
        assert_eq!(m.zones[Z].pcp[1].lists[MIGRATE_MOVABLE].front(), Some(p));
        let mid = p + 20;
        m.pcp_take(Z, mid);
        m.frames.set_flags(mid, pg::ALLOCATED);
        assert_eq!(m.zones[Z].pcp[1].count, 52);
        assert_eq!(m.zones[Z].pcp[1].lists[MIGRATE_MOVABLE].len(), 52);
        Checker::new(&m).check(&m).unwrap();
    }
}
