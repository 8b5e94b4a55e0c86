//! The reverse map (`mm/rmap.c`): from a frame to the page-table entry that maps it.

use super::frames::{pg, NIL};
use super::memory::*;
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
}
