//! The aging of the multi-generational LRU: `try_to_inc_max_seq` with its abstracted
//! page-table walk, and kswapd's `lru_gen_age_node` (docs/MODEL.md, "Multi-generational LRU").

use super::*;
use crate::machine::lru_gen::mmzone::{MM_LEAF_OLD, MM_LEAF_TOTAL, MM_LEAF_YOUNG};

impl Machine {
    /// `try_to_inc_max_seq` for memcg `id`'s lruvec (taken out of the node: `gen`, `lists`)
    /// whose caller read `max_seq`: unless an aging step for it already ran, the walk (with
    /// `LRU_GEN_MM_WALK` or `force_scan`, and anon evictable) promotes every mapped folio
    /// whose accessed bit is set to the youngest generation, clearing the bit (its
    /// generation field and the counters; it stays linked where it is); then
    /// the oldest generations full to four are merged (their folios moved, `inc_min_seq`) and
    /// `max_seq` advances. Its time goes to `cost`; its statistics to `gen.mm_stats` (entries
    /// tested, those found old, those found young: an entry tested whose folio is not mapped
    /// is neither, as a non-present PTE is in the kernel's count). Returns whether `max_seq`
    /// is past the caller's.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lru_gen_try_to_inc_max_seq(
        &mut self,
        id: usize,
        gen: &mut LruGen,
        lists: &mut GenLists,
        max_seq: u64,
        can_swap: bool,
        force_scan: bool,
        cost: &mut u64,
    ) -> bool {
        if max_seq <= gen.mm_seq {
            return max_seq < gen.max_seq;
        }
        let now = jiffies(self.now + *cost);
        let walk = self.lru_gen.as_deref().expect("lru_gen is on").caps & sysfs::LRU_GEN_MM_WALK;
        if walk != 0 || force_scan {
            // set_mm_walk(NULL): the reclaimer keeps the walk state until its shrink ends.
            self.lru_gen.as_deref_mut().expect("lru_gen is on").mm_walk = true;
        }
        let (mut walked, mut old_ptes, mut young_ptes) = (0u64, 0u64, 0u64);
        let zone_start = self.zone_start;
        let (node, gauge, frames) = parts!(self, id);
        if (walk != 0 || force_scan) && can_swap {
            let youngest = lru_gen_from_seq(gen.max_seq);
            // Every generation, the youngest's too: 6.1's walk clears each young entry of the
            // page tables it walks whatever its folio's generation (a folio already in the
            // youngest keeps it and loses its refs).
            for seq in gen.min_seq[ANON]..=gen.max_seq {
                let gi = lru_gen_from_seq(seq);
                let mut pfn = lists[gi][ANON].tail;
                while pfn != NIL {
                    let next = frames.prev(pfn);
                    walked += 1;
                    let vp = frames.owner(pfn);
                    let pte = if vp != NIL { self.pte[vp as usize] } else { 0 };
                    let hit = pte_young(pte);
                    old_ptes += (pte & (PTE_SWAP | PTE_MAPPED | PTE_YOUNG) == PTE_MAPPED) as u64;
                    young_ptes += hit as u64;
                    if hit {
                        let pte = &mut self.pte[vp as usize];
                        *pte &= !PTE_YOUNG;
                        let z = zone_of(&zone_start, pfn);
                        let old = frames.page_flags(pfn);
                        let (mut f, mut g) = (old, node.folios.get(pfn));
                        // The field and the counters move; the folio waits for sort_folio.
                        gen.folio_update_gen(gauge, &mut f, &mut g, z, 1, youngest);
                        node.folios.set(pfn, g);
                        store_flags(frames, pfn, old, f);
                    }
                    pfn = next;
                }
            }
        }
        // inc_min_seq's list moves: a type with four generations merges its oldest into the
        // next (anon only when it can be swapped: otherwise its folios stay and become part of
        // the youngest, as the kernel leaves them).
        for type_ in [FILE, ANON] {
            if gen.nr_gens(type_) < MAX_NR_GENS || (type_ == ANON && !can_swap) {
                continue;
            }
            let old_gen = lru_gen_from_seq(gen.min_seq[type_]);
            while lists[old_gen][type_].tail != NIL {
                let pfn = lists[old_gen][type_].tail;
                let z = zone_of(&zone_start, pfn);
                let old = frames.page_flags(pfn);
                let (mut f, mut g) = (old, node.folios.get(pfn));
                // A promoted folio keeps its (younger) generation and goes to its list.
                let new = gen.folio_inc_gen(gauge, &mut f, &mut g, z, 1, false);
                lists[old_gen][type_].remove(frames, pfn);
                lists[new][type_].push_tail(frames, pfn);
                g.set_list_gen(Some(new));
                node.folios.set(pfn, g);
                store_flags(frames, pfn, old, f);
            }
        }
        node.walked += walked;
        gen.mm_stats[MM_LEAF_TOTAL] += walked;
        gen.mm_stats[MM_LEAF_OLD] += old_ptes;
        gen.mm_stats[MM_LEAF_YOUNG] += young_ptes;
        *cost += walked * self.cfg.cost.lru_gen_walk_ns;
        gen.try_to_inc_max_seq_nowalk(max_seq, can_swap, now, gauge)
    }

    /// `lru_gen_age_node` (kswapd, each priority iteration): age every lruvec that needs a
    /// generation; with `min_ttl_ms`, when no lruvec's oldest generation is older than it,
    /// call the OOM killer (not for high-order reclaim).
    pub(in crate::machine::vmscan) fn lru_gen_age_node(&mut self, sc: &mut ScanControl) {
        let min_ttl = self.lru_gen.as_deref().expect("lru_gen is on").min_ttl;
        sc.last_reclaimed = sc.nr_reclaimed;
        if min_ttl == 0 && lru_gen_age_node_skips(&mut sc.memcgs_need_aging) {
            return;
        }
        let ids: Vec<usize> = match &self.memcg {
            None => vec![0],
            Some(mc) => mc.memory.preorder(0).map(|m| m as usize).collect(),
        };
        let mut success = false;
        for id in ids {
            let below_min = self
                .memcg
                .as_ref()
                .is_some_and(|mc| mc.memory.below_min(id as u16));
            let swappiness = self.lru_gen_swappiness();
            let (priority, now) = (sc.priority, jiffies(self.now + sc.cost_ns));
            let mut cost = sc.cost_ns;
            let r = self.with_lruvec(id, |m, gen, lists| {
                gen.age_lruvec(
                    below_min,
                    swappiness,
                    priority,
                    true,
                    min_ttl,
                    now,
                    |g, ms| {
                        let can_swap = swappiness != 0;
                        m.lru_gen_try_to_inc_max_seq(id, g, lists, ms, can_swap, false, &mut cost)
                    },
                )
            });
            sc.cost_ns = cost;
            success |= r.success();
        }
        // clear_mm_walk: kswapd's walk state is set again when it evicts.
        self.lru_gen.as_deref_mut().expect("lru_gen is on").mm_walk = false;
        if min_ttl_oom(success, min_ttl, sc.order) {
            let at = self.now + sc.cost_ns;
            if self.oom_kill_by_kswapd(at) {
                self.lru_gen
                    .as_deref_mut()
                    .expect("lru_gen is on")
                    .min_ttl_kills += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{age, aged_region, kswapd_pass, machine, untouched};
    use super::*;

    /// A walk promotes a young folio's generation field and counters at once and leaves it
    /// linked where it was, as 6.1 does: eviction's `sort_folio` then moves it (counted in
    /// `pgrefill`), where a model that moved it at once never met it there.
    #[test]
    fn a_promoted_folio_moves_when_eviction_meets_it() {
        let mut m = machine();
        let a = aged_region(&mut m);
        let hot = a.start + 7;
        m.pte[hot as usize] |= PTE_YOUNG;
        age(&mut m);
        let pfn = m.pte[hot as usize] & crate::machine::pte::PTE_PFN_MASK;
        let st = m.lru_gen_state(0).clone();
        assert_eq!((st.max_seq, st.min_seq[ANON]), (6, 3));
        let g = m.lru_gen.as_deref().unwrap().folios.get(pfn);
        assert_eq!(g.gen(), Some(lru_gen_from_seq(5)), "promoted by the walk");
        assert_eq!(
            g.list_gen(),
            Some(lru_gen_from_seq(3)),
            "still linked with A"
        );
        assert_eq!((st.gen_size(5, ANON), st.gen_size(3, ANON)), (1, 511));
        m.lru_gen_check().unwrap();
        assert_eq!(m.vm.get(VmEvent::Pgrefill), 0);
        kswapd_pass(&mut m);
        assert!(untouched(&m, hot), "the promoted folio is not evicted");
        let g = m.lru_gen.as_deref().unwrap().folios.get(pfn);
        assert_eq!(
            g.list_gen(),
            Some(lru_gen_from_seq(5)),
            "moved to its generation"
        );
        assert!(m.vm.get(VmEvent::Pgrefill) >= 1, "sorted");
        m.lru_gen_check().unwrap();
    }
}
