//! `vm.drop_caches` (`fs/drop_caches.c`): writing 1 invalidates the clean page cache of every
//! file, 2 runs `drop_slab` (`machine/shrinker.rs`), 3 both. Each write counts
//! `drop_pagecache` / `drop_slab` once.

use crate::machine::vmstat::VmEvent;
use crate::machine::Machine;

impl Machine {
    /// `drop_pagecache_sb` over every file: clean, unmapped pages not under writeback are
    /// dropped. Returns the pages freed.
    pub fn drop_pagecache(&mut self) -> u64 {
        self.vm.add(VmEvent::DropPagecache, 1);
        let mut freed = 0;
        for r in 0..self.regions.len() {
            let reg = &self.regions[r];
            if reg.anon {
                continue;
            }
            let (base, pages) = (reg.base, reg.pages);
            // The block device's pages give up their buffers first.
            if self
                .bdev
                .as_ref()
                .is_some_and(|b| b.block_of(base).is_some())
            {
                continue;
            }
            freed += self.invalidate_mapping_pages(base, pages);
        }
        freed + self.bdev_invalidate()
    }
}
