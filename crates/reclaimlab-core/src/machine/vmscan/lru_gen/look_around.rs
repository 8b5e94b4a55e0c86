//! Look-around on eviction (`lru_gen_look_around`, docs/design/mglru.md §4.7): when reclaim's
//! reverse-map walk finds a mapped folio young, the entries of the same page table around it
//! are tested too, and the young ones' folios promoted to the youngest generation. Under the
//! multi-generational LRU the reverse-map walk runs only in eviction, so this is where
//! eviction feeds the aging. It is also why reclaim keeps every young mapped folio it meets,
//! where the two-list LRU reclaims a page referenced once: the first of a window is activated
//! (`pgactivate`), and its look-around marks the isolated neighbours it found young
//! referenced, which `shrink_folio_list` then keeps without counting them.

use super::*;
use crate::machine::lru_gen::aging::{look_around_activates, look_around_window, suitable_to_scan};
use crate::machine::lru_gen::bloom::table_item;
use crate::machine::pte::{pte_young, PTE_PFN_MASK, PTRS_PER_PTE};

/// Promotion candidates of one look-around: at most the window, 64 entries.
const WINDOW: usize = MIN_LRU_BATCH as usize;

impl Machine {
    /// Look around anonymous vpage `vp` (mapped, its accessed bit set), the page of the
    /// folio `pfn` being reclaimed: over the window of its page table clipped to its region,
    /// every mapped young entry of a folio of the same memcg has its accessed bit cleared
    /// (`vp`'s own among them); a folio off the LRU (isolated by this reclaim, the one being
    /// reclaimed too) gets `PG_referenced`, one on a generation older than the youngest is a
    /// candidate. Without walk state (direct reclaim that has not aged in this call) fewer
    /// than `PAGEVEC_SIZE` candidates are activated one by one (`folio_activate`, counted in
    /// `pgactivate`); otherwise their generations are updated (`folio_update_gen`,
    /// uncounted; the folios move when `sort_folio` meets them, counted in `pgrefill`).
    /// Costs `[cost] lru_gen_walk` per entry of the window.
    pub(in crate::machine::vmscan) fn lru_gen_look_around(
        &mut self,
        vp: u32,
        pfn: u32,
        cost: &mut u64,
    ) {
        let Some(r) = self.region_of(vp) else {
            return;
        };
        let (base, pages) = (self.regions[r].base, self.regions[r].pages);
        // The model's page tables start at the region's base (`Region::pt`).
        let (start, end) = look_around_window((vp - base) as u64, 0, pages as u64);
        *cost += (end - start) * self.cfg.cost.lru_gen_walk_ns;
        let id = self.folio_memcg(pfn);
        let (mut cand, mut n, mut young) = ([0u32; WINDOW], 0usize, 0u64);
        let max_seq = self.lru_gen_state(id as usize).max_seq;
        let youngest = lru_gen_from_seq(max_seq);
        for v in base + start as u32..base + end as u32 {
            let e = self.pte[v as usize];
            if !pte_young(e) {
                continue;
            }
            let q = e & PTE_PFN_MASK;
            if self.folio_memcg(q) != id {
                continue;
            }
            self.pte[v as usize] = e & !PTE_YOUNG;
            young += 1;
            let gen = self
                .lru_gen
                .as_deref()
                .expect("lru_gen is on")
                .folios
                .get(q)
                .gen();
            match gen {
                None => self.frames.set(q, pg::REFERENCED),
                Some(g) if g != youngest => {
                    cand[n] = q;
                    n += 1;
                }
                Some(_) => {}
            }
        }
        // Feedback to the aging walk: a dense window puts its page table in the filter the
        // next walk reads.
        if suitable_to_scan(end - start, young) {
            let table = base + (vp - base) / PTRS_PER_PTE * PTRS_PER_PTE;
            let now = jiffies(self.now);
            let node = self.lru_gen.as_deref_mut().expect("lru_gen is on");
            let lv = node.lruvec(id as usize, now);
            lv.gen.filters.update(max_seq, table_item(table));
        }
        if n == 0 {
            return;
        }
        let has_walk = self.lru_gen.as_deref().expect("lru_gen is on").mm_walk;
        if look_around_activates(has_walk, n) {
            for &q in &cand[..n] {
                self.lru_gen_del_folio(q, false);
                self.frames.set(q, pg::ACTIVE);
                self.lru_gen_add_folio(q, false);
            }
            self.vm.add(VmEvent::Pgactivate, n as u64);
            if let Some(st) = self.memcg_scan_stat() {
                st.pgactivate += n as u64;
            }
            return;
        }
        let zone_start = self.zone_start;
        let now = jiffies(self.now);
        let (node, gauge, frames) = parts!(self, id);
        for &q in &cand[..n] {
            let z = zone_of(&zone_start, q);
            let old = frames.page_flags(q);
            let (mut f, mut g) = (old, node.folios.get(q));
            let st = node.lruvec(id as usize, now);
            // As the walk: the field and the counters; the folio waits for sort_folio.
            st.gen
                .folio_update_gen(gauge, &mut f, &mut g, z, 1, youngest);
            node.folios.set(q, g);
            store_flags(frames, q, old, f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{aged_region, kswapd_pass, machine, untouched};
    use super::*;

    fn pfn_of(m: &Machine, vp: u32) -> u32 {
        m.pte[vp as usize] & PTE_PFN_MASK
    }

    fn gen_of(m: &Machine, vp: u32) -> Option<usize> {
        m.lru_gen
            .as_deref()
            .unwrap()
            .folios
            .get(pfn_of(m, vp))
            .gen()
    }

    /// 512 pages of one region, a generation older than the youngest, and the folio at
    /// index 100 taken off its list as eviction isolates it; the entries at `young` (indexes)
    /// and 100 itself set young. Returns the machine, the region's first vpage and the
    /// isolated folio.
    fn set_up(young: &[u32]) -> (Machine, u32, u32) {
        let mut m = machine();
        let base = aged_region(&mut m).start;
        let pfn = pfn_of(&m, base + 100);
        m.lru_gen_del_folio(pfn, false);
        m.frames.clear(pfn, pg::LRU);
        for &i in young.iter().chain([100].iter()) {
            m.pte[(base + i) as usize] |= PTE_YOUNG;
        }
        // A direct reclaimer that has not aged in this call (the ages above left walk state).
        m.lru_gen.as_deref_mut().unwrap().mm_walk = false;
        (m, base, pfn)
    }

    /// §4.7 on a worked case: the window around index 100 of a 512-page region is [68, 132);
    /// without walk state its five young neighbours there are activated (to the youngest
    /// generation, `pgactivate` 5), the isolated folio is marked referenced, every young bit
    /// in the window is cleared, and the young entry outside it (index 300) is left alone.
    #[test]
    fn without_walk_state_few_candidates_are_activated() {
        let (mut m, base, pfn) = set_up(&[68, 90, 91, 95, 131, 300]);
        let youngest = lru_gen_from_seq(m.lru_gen_state(0).max_seq);
        let older = gen_of(&m, base + 90).unwrap();
        assert_ne!(older, youngest);
        let mut cost = 0;
        m.lru_gen_look_around(base + 100, pfn, &mut cost);
        assert_eq!(cost, 64 * m.cfg.cost.lru_gen_walk_ns);
        assert_eq!(m.vm.get(VmEvent::Pgactivate), 5);
        for i in [68, 90, 91, 95, 131] {
            assert_eq!(gen_of(&m, base + i), Some(youngest), "index {i} promoted");
            assert_eq!(m.pte[(base + i) as usize] & PTE_YOUNG, 0);
        }
        assert_eq!(gen_of(&m, base + 67), Some(older), "outside the window");
        assert_eq!(gen_of(&m, base + 92), Some(older), "not young");
        assert_ne!(m.pte[(base + 300) as usize] & PTE_YOUNG, 0);
        assert_eq!(m.pte[(base + 100) as usize] & PTE_YOUNG, 0);
        assert!(m.frames.test(pfn, pg::REFERENCED));
        m.lru_add(pfn);
        m.lru_gen_check().unwrap();
    }

    /// With walk state (kswapd), or with 15 candidates or more, the generations are updated
    /// instead: the same promotion, no `pgactivate`.
    #[test]
    fn with_walk_state_or_many_candidates_generations_are_updated() {
        let (mut m, base, pfn) = set_up(&[90, 91]);
        m.lru_gen.as_deref_mut().unwrap().mm_walk = true;
        let youngest = lru_gen_from_seq(m.lru_gen_state(0).max_seq);
        m.lru_gen_look_around(base + 100, pfn, &mut 0);
        assert_eq!(m.vm.get(VmEvent::Pgactivate), 0);
        assert_eq!(gen_of(&m, base + 90), Some(youngest));
        m.lru_add(pfn);
        m.lru_gen_check().unwrap();

        let many: Vec<u32> = (70..85).collect();
        let (mut m, base, pfn) = set_up(&many);
        let youngest = lru_gen_from_seq(m.lru_gen_state(0).max_seq);
        m.lru_gen_look_around(base + 100, pfn, &mut 0);
        assert_eq!(
            m.vm.get(VmEvent::Pgactivate),
            0,
            "15 candidates: no activation"
        );
        assert_eq!(gen_of(&m, base + 70), Some(youngest));
        m.lru_add(pfn);
        m.lru_gen_check().unwrap();
    }

    /// Reclaim meeting young mapped folios keeps them all, where the two-list LRU would
    /// reclaim a page referenced once: kswapd over a region all of whose entries are young
    /// frees none of it. The first folio of a window is activated (`pgactivate`); its
    /// look-around clears its isolated neighbours' bits and marks them referenced, so they are
    /// kept by `shrink_folio_list`'s test for that, uncounted: about one activation per 64.
    #[test]
    fn reclaim_activates_every_young_mapped_folio() {
        let mut m = machine();
        let a = aged_region(&mut m);
        for vp in a.clone() {
            m.pte[vp as usize] |= PTE_YOUNG;
        }
        let sc = kswapd_pass(&mut m);
        assert!(sc.nr_scanned > 0, "reclaim isolated folios");
        assert!(
            a.clone().all(|vp| untouched(&m, vp)),
            "none freed or swapped"
        );
        let act = m.vm.get(VmEvent::Pgactivate);
        assert!(
            act >= sc.nr_scanned / 64 && act < sc.nr_scanned / 8,
            "pgactivate {act} for {} isolated",
            sc.nr_scanned
        );
        assert!(
            !m.lru_gen.as_deref().unwrap().mm_walk,
            "cleared on the way out"
        );
        m.lru_gen_check().unwrap();
    }
}
