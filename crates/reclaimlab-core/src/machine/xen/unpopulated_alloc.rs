//! Unpopulated pool pages (`drivers/xen/unpopulated-alloc.c`, 6.1's default; mechanisms.md
//! §B.2): ZONE_DEVICE pages over physical address space with no RAM behind it. Taking or
//! freeing one costs dom0 no memory; the cost is their `struct page`s, added a 128 MiB section
//! at a time and never freed: 64 bytes per page, 512 dom0 pages per section.

use super::super::gfp::GFP_KERNEL;
use super::super::memory::{Access, TaskCtx};
use super::super::Machine;
use super::PAGES_PER_SECTION;

/// Dom0 pages of `struct page` per section (32768 × 64 B).
pub const MEMMAP_PAGES_PER_SECTION: u64 = PAGES_PER_SECTION * 64 / 4096;

#[derive(Debug, Clone, Default)]
pub struct Unpopulated {
    /// Pages on the free list.
    pub free: u64,
    /// Sections added.
    pub sections: u64,
    /// Dom0 frames holding the sections' memmap (allocated so far, for the section being
    /// added too).
    pub memmap: Vec<u32>,
}

impl Machine {
    /// `xen_alloc_unpopulated_pages(1)`: one page off the list, adding a section first if the
    /// list is empty (its memmap comes from dom0 and may reclaim).
    pub fn unpopulated_alloc_page(&mut self, t: &mut TaskCtx) -> Result<(), Access> {
        let u = &self.xen.as_ref().expect("a Xen dom0").unpopulated;
        if u.free == 0 {
            let need = (u.sections + 1) * MEMMAP_PAGES_PER_SECTION;
            while (self
                .xen
                .as_ref()
                .expect("a Xen dom0")
                .unpopulated
                .memmap
                .len() as u64)
                < need
            {
                let pfn = self.alloc_pages(GFP_KERNEL, 0, t)?;
                self.mark_kernel_pages(pfn, 0);
                self.xen
                    .as_mut()
                    .expect("a Xen dom0")
                    .unpopulated
                    .memmap
                    .push(pfn);
            }
            let u = &mut self.xen.as_mut().expect("a Xen dom0").unpopulated;
            u.sections += 1;
            u.free += PAGES_PER_SECTION;
        }
        self.xen.as_mut().expect("a Xen dom0").unpopulated.free -= 1;
        Ok(())
    }

    /// `xen_free_unpopulated_pages(1)`: back on the list.
    pub fn unpopulated_free_page(&mut self) {
        self.xen.as_mut().expect("a Xen dom0").unpopulated.free += 1;
    }
}
