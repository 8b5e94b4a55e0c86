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

use super::super::frames::NIL;
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
    /// of the current CPU's list, after refilling an empty list with `batch` pages from the
    /// buddy (`rmqueue_bulk`; the caller's watermark check covers the whole batch).
    #[inline]
    pub(super) fn rmqueue_pcplist(&mut self, z: usize, mt: usize) -> Option<u32> {
        let zone = &mut self.zones[z];
        let pcp = &mut zone.pcp[self.cpu];
        pcp.free_factor >>= 1;
        if pcp.lists[mt].is_empty() {
            // `max(batch >> order, 2)` blocks at order 0, or one for a boot-sized batch.
            let n = if pcp.batch > 1 { pcp.batch.max(2) } else { 1 };
            for _ in 0..n {
                let Some(p) =
                    zone.free_area
                        .rmqueue(&mut self.frames, &mut self.pageblock_mt, 0, mt)
                else {
                    break;
                };
                self.frames.set_pcp(p, mt);
                pcp.lists[mt].push_tail(&mut self.frames, p);
                pcp.count += 1;
            }
        }
        let list = &mut pcp.lists[mt];
        let p = list.head;
        if p == NIL {
            return None;
        }
        list.remove(&mut self.frames, p);
        pcp.count -= 1;
        Some(p)
    }

    /// `free_unref_page` for an order-0 page: onto the current CPU's list of its pageblock's
    /// migratetype (movable for any other type), then give back a batch if the list is full.
    #[inline]
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
        pcp.lists[mt].push_head(&mut self.frames, pfn);
        pcp.count += 1;
        let high = nr_pcp_high(pcp, zone.reclaim_active);
        if pcp.count >= high {
            let n = nr_pcp_free(pcp, high);
            self.free_pcppages_bulk(z, cpu, n, mt);
        }
    }

    /// `free_pcppages_bulk`: give `count` pages of CPU `cpu`'s lists of zone `z` back to the
    /// buddy, oldest first, taking the lists in turn from the one after `last`.
    fn free_pcppages_bulk(&mut self, z: usize, cpu: usize, count: u32, last: usize) {
        let zone = &mut self.zones[z];
        let pcp = &mut zone.pcp[cpu];
        let mut count = count.min(pcp.count);
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
            while count > 0 && !list.is_empty() {
                let p = list.tail;
                list.remove(&mut self.frames, p);
                // A plain free frame again: the buddy makes it a block head only if it stays one.
                self.frames.set_flags(p, 0);
                count -= 1;
                pcp.count -= 1;
                zone.free_area
                    .free_as(&mut self.frames, &self.pageblock_mt, p, 0, i);
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
    /// owns it afterwards (compaction freeing a whole block around it). The list is found by
    /// walking to its head: rare, and at most `high` steps.
    pub(crate) fn pcp_take(&mut self, z: usize, pfn: u32) {
        let mt = self
            .frames
            .pcp_mt(pfn)
            .expect("pcp_take of a page on a per-CPU list");
        let mut head = pfn;
        while self.frames.prev(head) != NIL {
            head = self.frames.prev(head);
        }
        let zone = &mut self.zones[z];
        let pcp = zone
            .pcp
            .iter_mut()
            .find(|p| p.lists[mt].head == head)
            .expect("a per-CPU page is on one of its zone's lists");
        pcp.lists[mt].remove(&mut self.frames, pfn);
        pcp.count -= 1;
    }
}

#[cfg(test)]
mod tests;
