//! Slab caches (`mm/slub.c`, as far as reclaim sees them): kernel objects packed into slabs
//! taken from the buddy allocator, so kernel memory competes with page cache and anonymous
//! memory. A slab is one page, or for objects larger than a page (`kmalloc-8k`) the smallest
//! block of 2^order pages that holds one (SLUB would take order 3 and four objects, falling
//! back to that minimum when order 3 fails: the model always takes the minimum). Objects are not tracked one by one: a cache knows how many objects are
//! live and which pages it holds (mechanisms §A.6 and core-mm §6 leave the packing as [recon]).
//!
//! Packing model: a new object goes into a partly used slab when there is room
//! (`objects < slabs * objs_per_slab`), else a fresh slab is allocated. Freed objects leave
//! holes spread over the pages, so a page empties only when the live objects would fit in the
//! remaining pages at an average occupancy of `(100 - fragmentation)` %: with 0 a page is freed
//! as soon as the objects fit in one page less (perfect packing); with 50 pages stay until the
//! cache is half empty. Whole pages freed this way are what reclaim counts (`reclaimed_slab`),
//! never objects.
//!
//! A cache created with `SLAB_ACCOUNT` ([`KmemCache::account`]) charges each object to the
//! allocating task's memcg before it is placed and uncharges it when it is freed
//! (`machine::memcontrol::kmem`); the caller keeps the memcg an object was charged to and
//! hands it back to [`Machine::kmem_cache_free_memcg`].

use super::gfp::{Gfp, __GFP_RECLAIMABLE};
use super::memory::{Access, TaskCtx};
use super::page_counter::{CounterId, ROOT_COUNTER};
use super::{Machine, PAGE_SIZE};

/// `sizeof(struct obj_cgroup *)`: what a charged object costs beyond its slot (the slab's
/// `objcgs` vector entry), part of `obj_full_size`.
pub const OBJCG_POINTER_BYTES: u64 = 8;

/// One `kmem_cache`.
#[derive(Debug, Clone)]
pub struct KmemCache {
    pub name: String,
    pub object_size: u64,
    pub objs_per_slab: u64,
    /// Each slab is 2^order pages.
    pub order: u32,
    /// `SLAB_RECLAIM_ACCOUNT`: its pages count as `nr_slab_reclaimable`.
    pub reclaimable: bool,
    /// `SLAB_ACCOUNT`: its objects are charged to the allocating task's memcg.
    pub account: bool,
    /// Percent of a page's room that freed objects leave as holes (0..=90).
    pub fragmentation: u64,
    /// Live objects (`active_objs`).
    pub objects: u64,
    /// Slabs held (each its first page), in allocation order.
    pub pages: Vec<u32>,
    /// Objects ever allocated and freed (for slabinfo-like reports).
    pub allocs: u64,
    pub frees: u64,
}

impl KmemCache {
    /// Slabs the cache must keep for `objects` live objects under its fragmentation.
    pub fn min_pages(&self, objects: u64) -> u64 {
        let per_page = self.objs_per_slab * (100 - self.fragmentation);
        (objects * 100).div_ceil(per_page)
    }

    /// `obj_full_size`: the bytes a charged object costs its memcg.
    pub fn obj_full_size(&self) -> u64 {
        self.object_size + OBJCG_POINTER_BYTES
    }

    pub fn nr_slabs(&self) -> u64 {
        self.pages.len() as u64
    }

    /// Pages held: every slab's 2^order.
    pub fn nr_pages(&self) -> u64 {
        self.nr_slabs() << self.order
    }
}

/// Identifies a cache of a machine.
pub type CacheId = usize;

/// The machine's slab caches.
#[derive(Debug, Clone, Default)]
pub struct Slab {
    pub caches: Vec<KmemCache>,
}

impl Slab {
    /// Pages held by reclaimable / unreclaimable caches.
    pub fn pages(&self) -> (u64, u64) {
        let mut r = (0, 0);
        for c in &self.caches {
            if c.reclaimable {
                r.0 += c.nr_pages();
            } else {
                r.1 += c.nr_pages();
            }
        }
        r
    }
}

impl Machine {
    /// `kmem_cache_create`: a cache of `object_size`-byte objects in order-0 slabs, or for
    /// objects larger than a page in the smallest order that holds one.
    pub fn kmem_cache_create(
        &mut self,
        name: &str,
        object_size: u64,
        reclaimable: bool,
        fragmentation: u64,
    ) -> CacheId {
        let size = object_size.max(8);
        let order = size
            .div_ceil(PAGE_SIZE)
            .next_power_of_two()
            .trailing_zeros();
        self.slab.caches.push(KmemCache {
            name: name.to_string(),
            object_size: size,
            objs_per_slab: (PAGE_SIZE << order) / size,
            order,
            reclaimable,
            account: false,
            fragmentation: fragmentation.min(90),
            objects: 0,
            pages: Vec::new(),
            allocs: 0,
            frees: 0,
        });
        self.slab.caches.len() - 1
    }

    /// `kmem_cache_alloc(cache, gfp)`: one object; a fresh slab page comes from the page
    /// allocator with `gfp` (which may reclaim, and so run the shrinkers, possibly of this very
    /// cache). Returns the memcg the object is charged to (the root: none), or the failure of
    /// the charge or of the page allocator.
    pub fn kmem_cache_alloc(
        &mut self,
        id: CacheId,
        gfp: Gfp,
        t: &mut TaskCtx,
    ) -> Result<CounterId, Access> {
        self.kmem_cache_alloc_charge(id, gfp, gfp, t)
    }

    /// [`kmem_cache_alloc`](Self::kmem_cache_alloc) whose memcg charge is made with
    /// `charge_gfp` (a `__GFP_NOFAIL` allocation is forced past `memory.max`), its slab page
    /// with `gfp`.
    pub fn kmem_cache_alloc_charge(
        &mut self,
        id: CacheId,
        gfp: Gfp,
        charge_gfp: Gfp,
        t: &mut TaskCtx,
    ) -> Result<CounterId, Access> {
        let memcg = self.memcg_slab_pre_alloc_hook(id, charge_gfp, t)?;
        if let Err(a) = self.slab_alloc(id, gfp, t) {
            self.memcg_slab_free_hook(id, memcg, 1, false);
            return Err(a);
        }
        self.memcg_slab_post_alloc_hook(id, memcg);
        Ok(memcg)
    }

    /// Place one object in cache `id`'s slabs.
    fn slab_alloc(&mut self, id: CacheId, gfp: Gfp, t: &mut TaskCtx) -> Result<(), Access> {
        let c = &self.slab.caches[id];
        if c.objects >= c.nr_slabs() * c.objs_per_slab {
            let gfp = if c.reclaimable {
                gfp | __GFP_RECLAIMABLE
            } else {
                gfp
            };
            let order = c.order;
            let pfn = self.alloc_pages(gfp, order, t)?;
            let c = &self.slab.caches[id];
            if c.objects < c.nr_slabs() * c.objs_per_slab {
                // The allocation reclaimed, and the shrinkers freed objects of this very cache:
                // there is room again, so the fresh slab is not needed.
                self.free_pages(pfn, order);
            } else {
                self.mark_kernel_pages(pfn, order);
                self.slab.caches[id].pages.push(pfn);
            }
        }
        let c = &mut self.slab.caches[id];
        c.objects += 1;
        c.allocs += 1;
        Ok(())
    }

    /// `kmem_cache_free` of `n` objects charged to no memcg: pages the remaining objects no
    /// longer need are returned to the buddy allocator (newest first) and counted in
    /// `reclaimed_slab`. Returns the pages freed.
    pub fn kmem_cache_free(&mut self, id: CacheId, n: u64) -> u64 {
        self.kmem_cache_free_memcg(id, ROOT_COUNTER, n)
    }

    /// `kmem_cache_free` of `n` objects charged to memcg `memcg`: uncharged, then freed.
    pub fn kmem_cache_free_memcg(&mut self, id: CacheId, memcg: CounterId, n: u64) -> u64 {
        self.memcg_slab_free_hook(id, memcg, n, true);
        let c = &mut self.slab.caches[id];
        let n = n.min(c.objects);
        c.objects -= n;
        c.frees += n;
        let keep = c.min_pages(c.objects);
        let order = c.order;
        let mut freed = 0;
        while self.slab.caches[id].nr_slabs() > keep {
            let pfn = self.slab.caches[id]
                .pages
                .pop()
                .expect("nr_slabs > keep >= 0");
            self.free_pages(pfn, order);
            freed += 1 << order;
        }
        self.reclaimed_slab += freed;
        freed
    }
}

#[cfg(test)]
mod tests {
    use crate::machine::gfp::GFP_KERNEL;
    use crate::machine::TaskCtx;

    fn machine() -> crate::machine::Machine {
        let text = "name = \"t\"\n[host]\nram = \"64MiB\"\n[[workload]]\nname = \"w\"\n\
                    anon = { size = \"1MiB\" }\n";
        let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
        crate::run::host_machine(&scn, 1, false).unwrap()
    }

    #[test]
    fn objects_pack_into_pages_and_pages_empty_only_past_fragmentation() {
        let mut m = machine();
        let free0 = m.total_free_pages();
        let c = m.kmem_cache_create("xfs_inode", 1024, true, 50);
        let mut t = TaskCtx::default();
        for _ in 0..400 {
            m.kmem_cache_alloc(c, GFP_KERNEL, &mut t).unwrap();
        }
        // 4 objects per page: 100 pages, taken from the free memory.
        assert_eq!(m.slab.caches[c].nr_slabs(), 100);
        assert_eq!(free0 - m.total_free_pages(), 100);
        assert_eq!(m.slab.pages(), (100, 0));
        // Freeing 100 objects (a quarter) frees no page at 50 % fragmentation: 300 objects
        // need 150 pages at half occupancy, more than the 100 held.
        assert_eq!(m.kmem_cache_free(c, 100), 0);
        // Down to 100 objects: 50 pages at half occupancy.
        assert_eq!(m.kmem_cache_free(c, 200), 50);
        assert_eq!(m.reclaimed_slab, 50);
        assert_eq!(free0 - m.total_free_pages(), 50);
        assert_eq!(m.kmem_cache_free(c, 1000), 50);
        assert_eq!(m.slab.caches[c].objects, 0);
        assert_eq!(m.total_free_pages(), free0);
    }

    #[test]
    fn objects_larger_than_a_page_take_a_block_each() {
        let mut m = machine();
        let free0 = m.total_free_pages();
        let c = m.kmem_cache_create("kmalloc-8k", 8192, false, 0);
        assert_eq!(
            (m.slab.caches[c].order, m.slab.caches[c].objs_per_slab),
            (1, 1)
        );
        let mut t = TaskCtx::default();
        for _ in 0..3 {
            m.kmem_cache_alloc(c, GFP_KERNEL, &mut t).unwrap();
        }
        // Three order-1 slabs: six unreclaimable pages out of free memory.
        assert_eq!(m.slab.caches[c].nr_slabs(), 3);
        assert_eq!(m.slab.pages(), (0, 6));
        assert_eq!(free0 - m.total_free_pages(), 6);
        // Freeing one object gives its two pages back, counted as reclaimed slab pages.
        assert_eq!(m.kmem_cache_free(c, 1), 2);
        assert_eq!(free0 - m.total_free_pages(), 4);
        assert_eq!(m.kmem_cache_free(c, 2), 4);
        assert_eq!(m.total_free_pages(), free0);
        // A 12 KiB object needs four pages (an order-2 block).
        let big = m.kmem_cache_create("big", 12288, false, 0);
        assert_eq!(
            (m.slab.caches[big].order, m.slab.caches[big].objs_per_slab),
            (2, 1)
        );
    }

    #[test]
    fn perfect_packing_frees_a_page_per_page_of_objects() {
        let mut m = machine();
        let c = m.kmem_cache_create("dentry", 192, true, 0);
        assert_eq!(m.slab.caches[c].objs_per_slab, 21);
        let mut t = TaskCtx::default();
        for _ in 0..42 {
            m.kmem_cache_alloc(c, GFP_KERNEL, &mut t).unwrap();
        }
        assert_eq!(m.slab.caches[c].nr_slabs(), 2);
        assert_eq!(m.kmem_cache_free(c, 20), 0);
        assert_eq!(m.kmem_cache_free(c, 1), 1);
    }
}
