//! Kernel memory charged to memcgs (`mm/memcontrol.c`'s obj_cgroup API as 6.1's slab hooks
//! use it, docs/design/memcg-psi.md §3.7): objects of a cache created with `SLAB_ACCOUNT` (the
//! dentry cache, the filesystems' inode caches) are charged to the memcg of the task that
//! allocates them (`memcg_slab_pre_alloc_hook` / `memcg_slab_post_alloc_hook`) and uncharged
//! when freed (`memcg_slab_free_hook`), whoever frees them. A root task's objects, and every
//! object of a machine without cgroups, are charged to no memcg.
//!
//! An object is charged `obj_full_size`: its slot in the slab plus the pointer to its
//! obj_cgroup the slab keeps beside it. The page counter takes whole pages; the bytes of a page
//! charged and not yet used by an object wait in a stock (`obj_cgroup_charge`,
//! `refill_obj_stock`): a charge takes from the stock when it holds enough, else charges the
//! object's size rounded up to pages and puts the rest in the stock; a free puts the object's
//! bytes back, and whole pages beyond the first go back to the counter. `memory.current` thus
//! runs ahead of the objects' bytes by less than a page plus an object. The charged pages are
//! `MEMCG_KMEM` (memory.stat `kernel`); the objects' bytes are `NR_SLAB_RECLAIMABLE_B` or
//! `NR_SLAB_UNRECLAIMABLE_B` (memory.stat `slab_reclaimable`, `slab_unreclaimable`).
//!
//! Abstracted: the stock is the memcg's own, as if its tasks never shared a CPU with another
//! memcg's (the kernel's per-CPU stock holds one obj_cgroup at a time and, when another's
//! charge takes the CPU, gives whole pages back and parks the remainder in
//! `objcg->nr_charged_bytes` until the memcg's next refill: the same bytes, a page's difference
//! at most). The pages a charge takes go straight to the counter (no 64-page memcg stock, as
//! for page charges, `charge.rs`). The slab pages themselves are not charged (6.1 charges
//! objects, a slab page holds objects of many memcgs). The filesystems' other caches (XFS log
//! items and buffers, ext4's buffer heads and journal) are not `SLAB_ACCOUNT` in 6.1 and stay
//! uncharged here (6.1 charges a buffer head to its page's memcg through the active memcg:
//! not modelled; the block device's page itself is charged as page cache, `fs/bdev/`).

use crate::machine::gfp::{Gfp, __GFP_NOFAIL};
use crate::machine::page_counter::{CounterId, ROOT_COUNTER};
use crate::machine::slab::CacheId;
use crate::machine::{Access, Machine, TaskCtx, PAGE_SIZE};

/// One memcg's kernel-memory state (its own, not its subtree's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KmemStat {
    /// Bytes charged in whole pages that no object uses yet (the obj_cgroup stock).
    pub stock_bytes: u64,
    /// `MEMCG_KMEM`: pages charged for kernel memory (the stock's included).
    pub kmem_pages: u64,
    /// `NR_SLAB_RECLAIMABLE_B`, `NR_SLAB_UNRECLAIMABLE_B`: bytes of its charged objects.
    pub slab_bytes: [u64; 2],
    /// Objects charged to it now (for the invariant checks and summary).
    pub objects: u64,
    /// `NR_PAGETABLE`: its tasks' page-table pages (memory.stat `pagetables`), charged as
    /// whole kernel pages (inside `kmem_pages`).
    pub pagetables: u64,
}

impl KmemStat {
    /// `consume_obj_stock`, then the pages `obj_cgroup_charge` must take for `size` bytes:
    /// 0 when the stock covered them.
    pub fn pages_to_charge(&mut self, size: u64) -> u64 {
        if self.stock_bytes >= size {
            self.stock_bytes -= size;
            return 0;
        }
        size.div_ceil(PAGE_SIZE)
    }

    /// After `pages` were charged for `size` bytes: the rest of the last page to the stock
    /// (`refill_obj_stock` without uncharge: the stock may pass a page here).
    pub fn charged(&mut self, pages: u64, size: u64) {
        self.kmem_pages += pages;
        self.stock_bytes += pages * PAGE_SIZE - size;
    }

    /// `obj_cgroup_uncharge` of `size` bytes (`refill_obj_stock` with uncharge): the pages to
    /// give back to the counter, whole pages of a stock past one page.
    pub fn uncharge(&mut self, size: u64) -> u64 {
        self.stock_bytes += size;
        if self.stock_bytes <= PAGE_SIZE {
            return 0;
        }
        let pages = self.stock_bytes / PAGE_SIZE;
        self.stock_bytes %= PAGE_SIZE;
        self.kmem_pages -= pages;
        pages
    }
}

impl Machine {
    /// `memcg_slab_pre_alloc_hook` for one object of cache `cache` allocated by task `t` with
    /// `gfp`: charge it to the task's memcg before the slab is touched. Returns the memcg
    /// charged (the root: none). A charge over `memory.max` reclaims inside the memcg (with
    /// `gfp`: a NOFS caller's limit reclaim cannot prune the filesystem), then OOM-kills inside
    /// it; if that does not let it through the allocation fails (`Retry` a jiffy later, or
    /// `Killed`), unless `gfp` has `__GFP_NOFAIL` (XFS's inode allocation): then the charge
    /// is forced over the limit.
    pub fn memcg_slab_pre_alloc_hook(
        &mut self,
        cache: CacheId,
        gfp: Gfp,
        t: &mut TaskCtx,
    ) -> Result<CounterId, Access> {
        if self.memcg.is_none() || !self.slab.caches[cache].account {
            return Ok(ROOT_COUNTER);
        }
        let id = self.task_memcg(t.task);
        if id == ROOT_COUNTER {
            return Ok(ROOT_COUNTER);
        }
        let size = self.slab.caches[cache].obj_full_size();
        let mc = self.memcg.as_mut().expect("cgroups");
        let pages = mc.kmem[id as usize].pages_to_charge(size);
        if pages > 0 {
            match self.try_charge_memcg_gfp(id, pages, gfp, t) {
                Ok(()) => {}
                Err(_) if gfp & __GFP_NOFAIL != 0 => {
                    let mc = self.memcg.as_mut().expect("cgroups");
                    mc.memory.charge(id, pages);
                }
                Err(f) => return Err(f.access()),
            }
            let mc = self.memcg.as_mut().expect("cgroups");
            mc.kmem[id as usize].charged(pages, size);
            self.note_over_high(id, pages, t);
        }
        Ok(id)
    }

    /// `memcg_slab_post_alloc_hook`: the object is in its slab; count its bytes in memcg
    /// `id`'s slab statistics.
    pub fn memcg_slab_post_alloc_hook(&mut self, cache: CacheId, id: CounterId) {
        if id == ROOT_COUNTER {
            return;
        }
        let c = &self.slab.caches[cache];
        let (size, idx) = (c.obj_full_size(), !c.reclaimable as usize);
        if let Some(mc) = &mut self.memcg {
            let k = &mut mc.kmem[id as usize];
            k.slab_bytes[idx] += size;
            k.objects += 1;
        }
    }

    /// `memcg_slab_free_hook` for `n` objects of cache `cache` charged to memcg `id`; also
    /// the undo of a pre-alloc charge whose slab allocation failed (`stat`: false).
    pub fn memcg_slab_free_hook(&mut self, cache: CacheId, id: CounterId, n: u64, stat: bool) {
        if id == ROOT_COUNTER || n == 0 {
            return;
        }
        let c = &self.slab.caches[cache];
        let (size, idx) = (c.obj_full_size(), !c.reclaimable as usize);
        let Some(mc) = &mut self.memcg else { return };
        let k = &mut mc.kmem[id as usize];
        if stat {
            k.slab_bytes[idx] -= n * size;
            k.objects -= n;
        }
        let pages = k.uncharge(n * size);
        if pages > 0 {
            mc.memory.uncharge(id, pages);
        }
    }

    /// A user page-table page allocated for task `t` (`GFP_PGTABLE_USER` has `__GFP_ACCOUNT`:
    /// `__memcg_kmem_charge_page`): one kernel page charged to the task's memcg, with the
    /// allocation's `gfp` for its limit reclaim. The memcg charged (the root: none), or the
    /// allocation's failure; the caller frees the page then (`pte_alloc_one` returns NULL).
    pub fn memcg_pgtable_charge(&mut self, gfp: Gfp, t: &mut TaskCtx) -> Result<CounterId, Access> {
        if self.memcg.is_none() {
            return Ok(ROOT_COUNTER);
        }
        let id = self.task_memcg(t.task);
        if id == ROOT_COUNTER {
            return Ok(ROOT_COUNTER);
        }
        self.try_charge_memcg_gfp(id, 1, gfp, t)
            .map_err(|f| f.access())?;
        let k = &mut self.memcg.as_mut().expect("cgroups").kmem[id as usize];
        k.kmem_pages += 1;
        k.pagetables += 1;
        self.note_over_high(id, 1, t);
        Ok(id)
    }

    /// The page-table page charged to memcg `id` is freed (`free_pgtables`).
    pub fn memcg_pgtable_uncharge(&mut self, id: CounterId) {
        if id == ROOT_COUNTER {
            return;
        }
        let Some(mc) = &mut self.memcg else { return };
        let k = &mut mc.kmem[id as usize];
        k.kmem_pages -= 1;
        k.pagetables -= 1;
        mc.memory.uncharge(id, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::KmemStat;
    use crate::machine::gfp::{__GFP_NOFAIL, GFP_KERNEL, GFP_NOFS};
    use crate::machine::page_counter::{CounterId, ROOT_COUNTER};
    use crate::machine::{Access, Machine, TaskCtx, JIFFY_NS};

    const A: CounterId = 1;

    /// A machine with memcg a (task 1 in it) at `memory.max` = 0 and an accounted
    /// 1024-byte cache (1032 bytes a charged object); the cache's id.
    fn machine() -> (Machine, usize) {
        let text = "name = \"t\"\n[host]\nram = \"64MiB\"\n[[cgroup]]\nname = \"a\"\n\
                    [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
        let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
        let mut m = crate::run::host_machine(&scn, 1, false).unwrap();
        m.setup_memcg(&scn.cgroups).unwrap();
        let mc = m.memcg.as_mut().unwrap();
        mc.set_task_memcg(1, A);
        mc.memory.set_max(A, 0);
        let c = m.kmem_cache_create("xfs_inode", 1024, true, 0);
        m.slab.caches[c].account = true;
        (m, c)
    }

    #[test]
    fn a_failed_charge_fails_the_allocation_unless_nofail_forces_it() {
        let (mut m, c) = machine();
        let mut t = TaskCtx {
            task: 1,
            ..Default::default()
        };
        // GFP_NOFS, nothing to reclaim, no task of a to kill: the first try, the drain pass
        // and 16 retries count 18 `max` events, the OOM one `oom`, and the allocation fails
        // (the kernel's NULL; here the caller retries a jiffy later). No object, no charge.
        assert_eq!(
            m.kmem_cache_alloc(c, GFP_NOFS, &mut t),
            Err(Access::Retry(JIFFY_NS))
        );
        let mc = m.memcg.as_ref().unwrap();
        assert_eq!((mc.events[1].hier.max, mc.events[1].hier.oom), (18, 1));
        assert_eq!(
            (mc.memory.get(A).usage, mc.kmem[1]),
            (0, KmemStat::default())
        );
        assert_eq!(m.slab.caches[c].objects, 0);
        // __GFP_NOFAIL (XFS's inode): the same path, then the page is forced past the limit.
        let got = m.kmem_cache_alloc_charge(c, GFP_NOFS, GFP_NOFS | __GFP_NOFAIL, &mut t);
        assert_eq!(got, Ok(A));
        let mc = m.memcg.as_ref().unwrap();
        assert_eq!((mc.events[1].hier.max, mc.events[1].hier.oom), (36, 2));
        assert_eq!(mc.memory.get(A).usage, 1);
        let k = mc.kmem[1];
        assert_eq!(
            (k.kmem_pages, k.stock_bytes, k.slab_bytes, k.objects),
            (1, 3064, [1032, 0], 1)
        );
        // Freed, its bytes go back to the stock (exactly a page: kept), and the next object
        // comes from the stock without touching the counter, over the limit or not.
        m.kmem_cache_free_memcg(c, A, 1);
        assert_eq!(m.memcg.as_ref().unwrap().kmem[1].stock_bytes, 4096);
        assert_eq!(m.kmem_cache_alloc(c, GFP_NOFS, &mut t), Ok(A));
        let mc = m.memcg.as_ref().unwrap();
        assert_eq!((mc.memory.get(A).usage, mc.events[1].hier.max), (1, 36));
        // A root task's object is no memcg's.
        let mut root = TaskCtx::default();
        assert_eq!(
            m.kmem_cache_alloc(c, GFP_KERNEL, &mut root),
            Ok(ROOT_COUNTER)
        );
        assert_eq!(m.slab.caches[c].objects, 2);
        assert_eq!(m.memcg.as_ref().unwrap().kmem[1].objects, 1);
    }

    #[test]
    fn the_stock_rounds_charges_to_pages_and_gives_back_whole_pages() {
        // 200-byte objects (a 192-byte dentry slot and its obj_cgroup pointer).
        let mut k = KmemStat::default();
        // The first object charges a page; 3896 bytes wait in the stock.
        assert_eq!(k.pages_to_charge(200), 1);
        k.charged(1, 200);
        assert_eq!((k.kmem_pages, k.stock_bytes), (1, 3896));
        // The next 19 come from the stock (19 * 200 = 3800), the 21st needs a page.
        for _ in 0..19 {
            assert_eq!(k.pages_to_charge(200), 0);
        }
        assert_eq!(k.stock_bytes, 96);
        assert_eq!(k.pages_to_charge(200), 1);
        k.charged(1, 200);
        assert_eq!((k.kmem_pages, k.stock_bytes), (2, 96 + 3896));
        // Freeing all 21: the first free takes the stock to 4192 bytes, past a page, so one
        // page goes back (96 bytes stay); the other 20 fill it to exactly a page, which it keeps.
        let mut back = 0;
        for _ in 0..21 {
            back += k.uncharge(200);
        }
        assert_eq!(back, 1);
        assert_eq!((k.kmem_pages, k.stock_bytes), (1, 4096));
        // An object larger than a page: 8200 bytes take 3 pages, 4088 bytes of the last to
        // the stock (which may now hold more than a page).
        let mut k = KmemStat::default();
        assert_eq!(k.pages_to_charge(8200), 3);
        k.charged(3, 8200);
        assert_eq!(k.stock_bytes, 3 * 4096 - 8200);
        assert_eq!(k.uncharge(8200), 3);
        assert_eq!((k.kmem_pages, k.stock_bytes), (0, 0));
    }

    #[test]
    fn page_tables_are_charged_to_the_task_s_memcg_and_given_back_at_exit() {
        // 1,000 pages touched by a task of memcg a: two page-table pages (512 entries each),
        // charged with the pages they map, and all of it uncharged when the region goes.
        let text = "name = \"t\"\n[host]\nram = \"64MiB\"\npage_tables = true\n\
                    [[cgroup]]\nname = \"a\"\n\
                    [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
        let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
        let mut m = crate::run::host_machine(&scn, 1, false).unwrap();
        m.setup_memcg(&scn.cgroups).unwrap();
        let task = m.add_task("w", 0);
        m.memcg.as_mut().unwrap().set_task_memcg(task, A);
        let r = m.add_region(task, 1000, true).unwrap();
        let base = m.regions[r].base;
        let mut t = TaskCtx {
            task,
            ..Default::default()
        };
        for vp in base..base + 1000 {
            assert_eq!(m.anon_access(vp, true, &mut t), Access::Done);
        }
        let mc = m.memcg.as_ref().unwrap();
        assert_eq!(mc.memory.get(A).usage, 1000 + 2);
        assert_eq!((mc.kmem[1].kmem_pages, mc.kmem[1].pagetables), (2, 2));
        assert_eq!(m.stat.nr_page_table_pages, 2);
        m.free_anon_region(r);
        let mc = m.memcg.as_ref().unwrap();
        assert_eq!(mc.memory.get(A).usage, 0);
        assert_eq!((mc.kmem[1].kmem_pages, mc.kmem[1].pagetables), (0, 0));
        assert_eq!(m.stat.nr_page_table_pages, 0);
        // A page table its memcg has no room for (memory.max 0) and nothing to reclaim: the
        // memcg's OOM killer takes the task itself, the fault fails and no page is kept.
        let (mut m, _) = machine();
        m.cfg.host.page_tables = true;
        let task = m.add_task("w", 0);
        m.memcg.as_mut().unwrap().set_task_memcg(task, A);
        t.task = task;
        let r = m.add_region(task, 8, true).unwrap();
        let vp = m.regions[r].base;
        assert_eq!(m.anon_access(vp, true, &mut t), Access::Killed);
        assert_eq!(m.memcg.as_ref().unwrap().events[1].hier.oom_kill, 1);
        assert_eq!(m.stat.nr_page_table_pages, 0);
        assert_eq!(m.memcg.as_ref().unwrap().kmem[1], KmemStat::default());
    }
}
