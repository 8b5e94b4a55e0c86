//! The reverse map (`mm/rmap.c`): from a frame to the page-table entry that maps it.

use super::frames::{pg, NIL};
use super::pte::*;
use super::*;

impl Machine {
    // ---------------------------------------------------------------- rmap

    /// Is the page mapped by its owner's page table (`folio_mapped`)?
    #[inline]
    pub fn page_mapped(&self, pfn: u32) -> bool {
        let vp = self.frames.owner(pfn);
        vp != NIL && self.pte[vp as usize] & (PTE_SWAP | PTE_MAPPED) == PTE_MAPPED
    }

    /// `folio_referenced`: the number of young PTEs mapping the page (0 or 1), clearing them.
    #[inline]
    pub fn folio_referenced(&mut self, pfn: u32) -> u32 {
        let vp = self.frames.owner(pfn);
        if vp == NIL {
            return 0;
        }
        let e = &mut self.pte[vp as usize];
        if pte_young(*e) {
            *e &= !PTE_YOUNG;
            1
        } else {
            0
        }
    }

    /// `try_to_unmap` of an anonymous page in the swap cache: the PTE keeps the swap entry
    /// (here: the frame, unmapped) and its dirty bit moves to the page.
    pub fn try_to_unmap(&mut self, pfn: u32) {
        let vp = self.frames.owner(pfn);
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

    /// The guest using this host page marked it unused (s390 CMMA's `ESSA SET_UNUSED`).
    #[inline]
    pub fn pte_unused_test(&self, vp: u32) -> bool {
        let i = vp as usize;
        self.pte_unused
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Mark host pages `[vp, vp + n)` unused by their guest, or stable again.
    pub fn mark_pte_unused(&mut self, vp: u32, n: u32, unused: bool) {
        let need = self.pte.len().div_ceil(64);
        if self.pte_unused.len() < need {
            self.pte_unused.resize(need, 0);
        }
        for v in vp..vp + n {
            let (w, b) = (v as usize / 64, v % 64);
            if unused {
                self.pte_unused[w] |= 1 << b;
            } else {
                self.pte_unused[w] &= !(1 << b);
            }
        }
    }

    /// Reclaim drops a mapped anonymous page its guest marked unused: the entry becomes none,
    /// nothing is written.
    pub(super) fn discard_unused(&mut self, pfn: u32, vp: u32) {
        self.pte[vp as usize] = super::pte::PTE_NONE;
        self.stat.nr_anon_pages -= 1;
        if let Some(task) = self.anon_owner(vp) {
            self.tasks[task].rss_anon -= 1;
        }
        self.mark_pte_unused(vp, 1, false);
        self.unused_discarded += 1;
        let _ = pfn;
    }
}
