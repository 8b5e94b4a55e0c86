//! The aging of the multi-generational LRU: `try_to_inc_max_seq` with its page-table walk
//! and Bloom filters, and kswapd's `lru_gen_age_node` (docs/MODEL.md, "Multi-generational
//! LRU").

use super::*;
use crate::machine::lru_gen::aging::suitable_to_scan;
use crate::machine::lru_gen::bloom::table_item;
use crate::machine::lru_gen::mmzone::{
    MM_LEAF_OLD, MM_LEAF_TOTAL, MM_LEAF_YOUNG, MM_NONLEAF_ADDED, MM_NONLEAF_FOUND, MM_NONLEAF_TOTAL,
};
use crate::machine::pte::{PTE_PFN_MASK, PTRS_PER_PTE};

impl Machine {
    /// `try_to_inc_max_seq` for memcg `id`'s lruvec (taken out of the node: `gen`, `lists`)
    /// whose caller read `max_seq`: unless an aging step for it already ran, the walk (with
    /// `LRU_GEN_MM_WALK` or `force_scan`: [`Self::lru_gen_walk_mm_list`]) promotes the mapped
    /// folios whose accessed bit it finds set, in the page tables its Bloom filter holds, to
    /// the youngest generation, clearing the bit (its generation field and the counters; it
    /// stays linked where it is); then
    /// the oldest generations full to four are merged (their folios moved, `inc_min_seq`) and
    /// `max_seq` advances. Its time goes to `cost`; its statistics to `gen.mm_stats`. Returns
    /// whether `max_seq` is past the caller's.
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
        let zone_start = self.zone_start;
        if walk != 0 || force_scan {
            self.lru_gen_walk_mm_list(id, gen, max_seq, can_swap, force_scan, cost);
        }
        let (node, gauge, frames) = parts!(self, id);
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
        gen.try_to_inc_max_seq_nowalk(max_seq, can_swap, now, gauge)
    }

    /// One iteration of memcg `id`'s mm list for `max_seq` (`iterate_mm_list` and `walk_mm`,
    /// one walker): its tasks in the order they were made, each skipped when dead or with
    /// fewer than [`MIN_LRU_BATCH`] mapped pages of the types aged (anon only when it can be
    /// swapped: the model maps no file pages). If one is left, the filter the next walk reads
    /// is emptied and each one's anonymous regions are walked ([`Self::lru_gen_walk_table`]).
    /// The first iteration, and from the last task listed before it onwards every task made
    /// since the previous one, walks whatever the filters say (`force_scan`, as `mm_state.tail`
    /// makes the kernel do).
    fn lru_gen_walk_mm_list(
        &mut self,
        id: usize,
        gen: &mut LruGen,
        max_seq: u64,
        can_swap: bool,
        force_scan: bool,
        cost: &mut u64,
    ) {
        let ntasks = self.tasks.len();
        let listed = |m: &Machine, t: usize| m.tasks[t].alive && m.task_memcg(t) as usize == id;
        let mut force_from = match gen.mm_listed {
            None => 0,
            Some(n) if n < ntasks => (0..n).rev().find(|&t| listed(self, t)).unwrap_or(n),
            Some(_) => usize::MAX,
        };
        gen.mm_listed = Some(ntasks);
        let walked: Vec<usize> = (0..ntasks)
            .filter(|&t| listed(self, t) && can_swap && self.tasks[t].rss_anon >= MIN_LRU_BATCH)
            .collect();
        if walked.is_empty() {
            return;
        }
        gen.filters.reset(max_seq + 1);
        if force_scan {
            force_from = 0;
        }
        let mut entries = 0u64;
        let mut young = Vec::new();
        for t in walked {
            for i in 0..self.tasks[t].anon_regions.len() {
                let r = self.tasks[t].anon_regions[i];
                for k in 0..self.regions[r].pages.div_ceil(PTRS_PER_PTE) {
                    let force = t >= force_from;
                    entries += self.lru_gen_walk_table(id, gen, r, k, max_seq, force, &mut young);
                }
            }
        }
        self.lru_gen.as_deref_mut().expect("lru_gen is on").walked += entries;
        *cost += entries * self.cfg.cost.lru_gen_walk_ns;
    }

    /// The walk at page table `k` of region `r` (`walk_pmd_range`'s step for one PMD entry,
    /// then `walk_pte_range`): a table not allocated counts as one leaf entry; otherwise, with
    /// `LRU_GEN_NONLEAF_YOUNG`, one with no young entry is passed over (the model's stand-in
    /// for a PMD entry whose accessed bit is clear), and unless `force` one not in the filter
    /// of `max_seq` too. A table entered has each entry tested; a young mapped one of this
    /// memcg has its bit cleared and its folio promoted to the youngest generation (the field
    /// and the counters; it moves when `sort_folio` meets it). A dense table goes into the
    /// filter of `max_seq + 1`. Counts in `gen.mm_stats`; returns the entries tested, leaf and
    /// non-leaf (each costs `[cost] lru_gen_walk`). `young` is scratch space.
    #[allow(clippy::too_many_arguments)]
    fn lru_gen_walk_table(
        &mut self,
        id: usize,
        gen: &mut LruGen,
        r: usize,
        k: u32,
        max_seq: u64,
        force: bool,
        young: &mut Vec<u32>,
    ) -> u64 {
        let reg = &self.regions[r];
        let start = reg.base + k * PTRS_PER_PTE;
        let end = (start + PTRS_PER_PTE).min(reg.base + reg.pages);
        if self.cfg.host.page_tables && reg.pt.get(k as usize).is_none_or(|&p| p == NIL) {
            gen.mm_stats[MM_LEAF_TOTAL] += 1;
            return 1;
        }
        gen.mm_stats[MM_NONLEAF_TOTAL] += 1;
        let ptes = &self.pte[start as usize..end as usize];
        let caps = self.lru_gen.as_deref().expect("lru_gen is on").caps;
        if caps & sysfs::LRU_GEN_NONLEAF_YOUNG != 0 && !ptes.iter().any(|&e| pte_young(e)) {
            return 1;
        }
        let item = table_item(start);
        if !force && !gen.filters.test(max_seq, item) {
            return 1;
        }
        gen.mm_stats[MM_NONLEAF_FOUND] += 1;
        let total = (end - start) as u64;
        young.clear();
        for (vp, &e) in (start..end).zip(ptes) {
            if e & (PTE_SWAP | PTE_MAPPED) != PTE_MAPPED {
                continue;
            }
            if e & PTE_YOUNG == 0 {
                gen.mm_stats[MM_LEAF_OLD] += 1;
            } else if self.folio_memcg(e & PTE_PFN_MASK) as usize == id {
                young.push(vp);
            }
        }
        gen.mm_stats[MM_LEAF_TOTAL] += total;
        gen.mm_stats[MM_LEAF_YOUNG] += young.len() as u64;
        let youngest = lru_gen_from_seq(gen.max_seq);
        let zone_start = self.zone_start;
        let (node, gauge, frames) = parts!(self, id);
        for &vp in young.iter() {
            let pte = &mut self.pte[vp as usize];
            *pte &= !PTE_YOUNG;
            let pfn = *pte & PTE_PFN_MASK;
            let z = zone_of(&zone_start, pfn);
            let old = frames.page_flags(pfn);
            let (mut f, mut g) = (old, node.folios.get(pfn));
            gen.folio_update_gen(gauge, &mut f, &mut g, z, 1, youngest);
            node.folios.set(pfn, g);
            store_flags(frames, pfn, old, f);
        }
        if suitable_to_scan(total, young.len() as u64) {
            gen.mm_stats[MM_NONLEAF_ADDED] += 1;
            gen.filters.update(max_seq + 1, item);
        }
        1 + total
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
    use super::super::tests::{
        age, age_forced, aged_region, fault, kswapd_pass, machine, untouched,
    };
    use super::*;
    use crate::machine::lru_gen::mmzone::NR_MM_STATS;

    /// The walk's statistics since the last call, in `lru_gen_full`'s `L O Y N F A` order.
    fn stats_since(m: &Machine, last: &mut [u64; NR_MM_STATS]) -> [u64; NR_MM_STATS] {
        let now = m.lru_gen_state(0).mm_stats;
        let d = std::array::from_fn(|i| now[i] - last[i]);
        *last = now;
        d
    }

    fn set_young(m: &mut Machine, vps: impl Iterator<Item = u32>) {
        for vp in vps {
            m.pte[vp as usize] |= PTE_YOUNG;
        }
    }

    /// Worked example A5 of docs/design/mglru.md §4.4 on two page tables of one region: the
    /// first walk (no filter yet) enters both; the table with 64 young entries of 512 is dense
    /// (64 × 8 ≥ 512) and goes into the next walk's filter, the one with 63 is not (504 < 512)
    /// and drops out. The next walk enters only the first: a young entry in the second keeps
    /// its bit for eviction to meet.
    #[test]
    fn a_dense_table_stays_in_the_walk_and_a_sparse_one_drops_out() {
        let mut m = machine();
        let task = m.add_task("w", 0);
        let r = fault(&mut m, task, 1024);
        let (t0, t1) = (r.start, r.start + 512);
        let mut last = [0; NR_MM_STATS];
        set_young(&mut m, t0..t0 + 64);
        set_young(&mut m, t1..t1 + 63);
        age(&mut m);
        assert_eq!(
            stats_since(&m, &mut last),
            [1024, 1024 - 127, 127, 2, 2, 1],
            "both entered, one kept"
        );
        m.pte[(t0 + 300) as usize] |= PTE_YOUNG;
        m.pte[(t1 + 300) as usize] |= PTE_YOUNG;
        age(&mut m);
        assert_eq!(
            stats_since(&m, &mut last),
            [512, 511, 1, 2, 1, 0],
            "only the dense one entered (1 of 512 young: dropped now)"
        );
        assert_eq!(m.pte[(t0 + 300) as usize] & PTE_YOUNG, 0, "walked");
        assert_ne!(
            m.pte[(t1 + 300) as usize] & PTE_YOUNG,
            0,
            "left for eviction"
        );
        age(&mut m);
        assert_eq!(
            stats_since(&m, &mut last),
            [0, 0, 0, 2, 0, 0],
            "none entered"
        );
        m.lru_gen_check().unwrap();
    }

    /// Look-around feeds the walk: a window of 64 entries with 8 young (8 × 8 ≥ 64) puts its
    /// page table in the filter the next walk reads, which then enters it; with 7 young it
    /// does not.
    #[test]
    fn a_dense_look_around_window_brings_its_table_back_into_the_walk() {
        for (young, entered) in [(8u32, true), (7, false)] {
            let mut m = machine();
            let a = aged_region(&mut m);
            let mut last = [0; NR_MM_STATS];
            stats_since(&m, &mut last);
            let vp = a.start + 100;
            // The reclaimed page and the others of its window [68, 132).
            set_young(&mut m, (vp..).take(young as usize));
            let pfn = m.pte[vp as usize] & crate::machine::pte::PTE_PFN_MASK;
            m.lru_gen_look_around(vp, pfn, &mut 0);
            m.pte[(a.start + 400) as usize] |= PTE_YOUNG;
            age(&mut m);
            let s = stats_since(&m, &mut last);
            assert_eq!(s[MM_NONLEAF_FOUND], entered as u64, "{young} young: {s:?}");
            assert_eq!(
                m.pte[(a.start + 400) as usize] & PTE_YOUNG == 0,
                entered,
                "{young} young"
            );
        }
    }

    /// With `LRU_GEN_NONLEAF_YOUNG` a table in the filter but with no young entry is passed
    /// over at its PMD entry (N counted, not F); without it the walk tests its 512 entries.
    #[test]
    fn the_nonleaf_capability_skips_a_table_with_no_young_entry() {
        for caps in [
            sysfs::LRU_GEN_ALL_CAPS,
            sysfs::LRU_GEN_CORE | sysfs::LRU_GEN_MM_WALK,
        ] {
            let mut m = machine();
            m.lru_gen.as_deref_mut().unwrap().caps = caps;
            let task = m.add_task("w", 0);
            let r = fault(&mut m, task, 512);
            set_young(&mut m, r.clone());
            age(&mut m);
            let mut last = [0; NR_MM_STATS];
            stats_since(&m, &mut last);
            age(&mut m);
            let s = stats_since(&m, &mut last);
            let nonleaf = caps & sysfs::LRU_GEN_NONLEAF_YOUNG != 0;
            let want = if nonleaf {
                [0, 0, 0, 1, 0, 0]
            } else {
                [512, 512, 0, 1, 1, 0]
            };
            assert_eq!(s, want, "caps {caps:#x}");
        }
    }

    /// A task made after the last walk iteration is walked whatever the filter says, as is
    /// the one listed before it (the kernel's `mm_state.tail` starts forcing there): two
    /// sparse tables, the old task's and the new one's, are both entered once; the older
    /// task made before them is not.
    #[test]
    fn tasks_new_on_the_mm_list_are_walked_in_full() {
        let mut m = machine();
        let t0 = m.add_task("a", 0);
        let t1 = m.add_task("b", 0);
        let r0 = fault(&mut m, t0, 512);
        let r1 = fault(&mut m, t1, 512);
        age(&mut m);
        let t2 = m.add_task("c", 0);
        let r2 = fault(&mut m, t2, 512);
        for r in [&r0, &r1, &r2] {
            m.pte[r.start as usize] |= PTE_YOUNG;
        }
        age(&mut m);
        let young =
            |m: &Machine, r: &std::ops::Range<u32>| m.pte[r.start as usize] & PTE_YOUNG != 0;
        assert!(young(&m, &r0), "listed before the last iteration's end");
        assert!(!young(&m, &r1), "the last listed: forced from there");
        assert!(!young(&m, &r2), "new");
    }

    /// A forced walk enters every table, the first walk of an lruvec too (no filter yet).
    #[test]
    fn forced_walks_ignore_the_filter() {
        let mut m = machine();
        let a = aged_region(&mut m);
        m.pte[(a.start + 9) as usize] |= PTE_YOUNG;
        let mut last = [0; NR_MM_STATS];
        stats_since(&m, &mut last);
        age_forced(&mut m);
        assert_eq!(stats_since(&m, &mut last), [512, 511, 1, 1, 1, 0]);
    }

    /// A walk promotes a young folio's generation field and counters at once and leaves it
    /// linked where it was, as 6.1 does: eviction's `sort_folio` then moves it (counted in
    /// `pgrefill`), where a model that moved it at once never met it there.
    #[test]
    fn a_promoted_folio_moves_when_eviction_meets_it() {
        let mut m = machine();
        let a = aged_region(&mut m);
        let hot = a.start + 7;
        m.pte[hot as usize] |= PTE_YOUNG;
        age_forced(&mut m);
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

    /// Pages faulted before an aging step are a generation older than those faulted after
    /// it, and reclaim takes the older generation first: all of it before any of the younger.
    #[test]
    fn the_oldest_generation_is_evicted_first() {
        let mut m = machine();
        let task = m.add_task("w", 0);
        let a = fault(&mut m, task, 512);
        age(&mut m);
        let b = fault(&mut m, task, 512);
        age(&mut m);
        let st = m.lru_gen_state(0).clone();
        assert_eq!((st.max_seq, st.min_seq[ANON]), (5, 2));
        assert_eq!(st.gen_size(3, ANON), 512, "A in generation 3");
        assert_eq!(st.gen_size(4, ANON), 512, "B in generation 4");
        m.lru_gen_check().unwrap();
        // As kswapd: direct reclaim on a machine this empty stops at its first batch, which
        // here only retires the empty generation 2 (should_abort_scan).
        kswapd_pass(&mut m);
        // kswapd goes on until it has its 256 and the zones are above high: all from A.
        let gone_a = a.clone().filter(|&vp| !untouched(&m, vp)).count();
        let gone_b = b.clone().filter(|&vp| !untouched(&m, vp)).count();
        assert!(gone_a >= 256, "A lost {gone_a}");
        assert_eq!(gone_b, 0, "B is younger: untouched while A has pages");
        m.lru_gen_check().unwrap();
        // A page of A used again (accessed bit set): the next walk leaves A's page table
        // alone (no young entry in it at the last walk, so not in the Bloom filter), a forced
        // one promotes it.
        let hot = a.clone().find(|&vp| untouched(&m, vp)).unwrap();
        m.pte[hot as usize] |= PTE_YOUNG;
        let pfn = m.pte[hot as usize] & crate::machine::pte::PTE_PFN_MASK;
        let gen_of = |m: &Machine| m.lru_gen.as_deref().unwrap().folios.get(pfn).gen();
        let before = gen_of(&m);
        age(&mut m);
        assert_eq!(gen_of(&m), before, "a sparse table is not walked");
        assert_ne!(m.pte[hot as usize] & PTE_YOUNG, 0);
        age_forced(&mut m);
        assert_eq!(
            gen_of(&m),
            Some(lru_gen_from_seq(6)),
            "promoted to the then youngest"
        );
        assert_eq!(
            m.pte[hot as usize] & PTE_YOUNG,
            0,
            "the walk cleared the bit"
        );
        m.lru_gen_check().unwrap();
    }
}
