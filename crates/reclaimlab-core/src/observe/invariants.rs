//! Consistency checks of the whole machine state, run between events by tests
//! (`InvariantMode`): every frame is in exactly one place (a buddy block, a per-CPU list, an
//! LRU list, a kernel allocation), buddy free + per-CPU + used = total per zone, list
//! counts match their contents, reverse and forward maps agree, swap slots add up, and the
//! vmstat event counters never decrease. The packed encodings are checked too: every frame's
//! state word holds a valid state that agrees with where the frame is, frames off every list
//! have no links, and every page-table entry is in canonical form for its region's kind.

use crate::machine::frames::{pg, FrameState, NIL};
use crate::machine::lru::{lru_of, NR_LRU_LISTS};
use crate::machine::pte::{
    pte_is_none, pte_is_swap, pte_pfn, pte_present, pte_shadow, PTE_MAPPED, PTE_NOSHADOW,
    PTE_PFN_MASK, PTE_SHADOW_MASK, SHADOW_AGE_MASK, SHADOW_NONE,
};
use crate::machine::vmstat::NR_VM_EVENTS;
use crate::machine::Machine;
use crate::machine::{MAX_NR_ZONES, MAX_ORDER};

#[derive(Debug, Clone)]
pub struct Checker {
    prev_events: [u64; NR_VM_EVENTS],
    /// Where each frame was found: 0 nowhere, 1 free, 2 on an LRU list, 3 a kernel page,
    /// 4 on a per-CPU list.
    seen: Vec<u8>,
}

impl Checker {
    pub fn new(node: &Machine) -> Checker {
        Checker {
            prev_events: [0; NR_VM_EVENTS],
            seen: vec![0; node.frames.len()],
        }
    }

    /// What a frame holds, for a violation's message: its state word, flags and links.
    fn describe(node: &Machine, p: u32) -> String {
        let fr = &node.frames;
        let link = |x: u32| {
            if x == NIL {
                "-".to_string()
            } else {
                x.to_string()
            }
        };
        format!(
            "state {:?}, flags {:#x}, links {}/{}",
            fr.state(p),
            fr.flags(p),
            link(fr.prev(p)),
            link(fr.next(p))
        )
    }

    pub fn check(&mut self, node: &Machine) -> Result<(), String> {
        self.seen.iter_mut().for_each(|s| *s = 0);
        let fr = &node.frames;
        let nframes = fr.len() as u32;
        let mut used_per_zone = [0u64; MAX_NR_ZONES];
        // The packed words first, so that the walks below cannot index out of range: links
        // point at frames, states are valid, owners are vpages, and padding is reserved.
        let in_zone = |p: u32| {
            node.zones
                .iter()
                .any(|z| z.is_managed() && p >= z.free_area.start && p < z.free_area.end)
        };
        for p in 0..nframes {
            let (prev, next) = (fr.prev(p), fr.next(p));
            if (prev != NIL && prev >= nframes) || (next != NIL && next >= nframes) {
                return Err(format!("frame {p}: links {prev}, {next} out of range"));
            }
            match fr.state(p) {
                FrameState::Invalid(s) => {
                    return Err(format!("frame {p}: invalid state word {s:#x}"));
                }
                FrameState::Owner(vp) if vp as usize >= node.pte.len() => {
                    return Err(format!("frame {p}: owner {vp} is not a vpage"));
                }
                FrameState::Reserved
                    if in_zone(p) || fr.page_flags(p) != 0 || (prev, next) != (NIL, NIL) =>
                {
                    return Err(format!(
                        "reserved frame {p} is managed, or has flags or links"
                    ));
                }
                FrameState::Reserved => {}
                _ if !in_zone(p) => {
                    return Err(format!("padding frame {p} is not reserved"));
                }
                _ => {}
            }
        }
        // Buddy free lists.
        for (z, zone) in node.zones.iter().enumerate() {
            let fa = &zone.free_area;
            let mut free = 0u64;
            for o in 0..MAX_ORDER {
                for (mt, list) in fa.lists[o].iter().enumerate() {
                    let mut n = 0u64;
                    for head in list.iter_from_tail(fr) {
                        n += 1;
                        if fr.state(head) != (FrameState::Buddy { order: o, mt })
                            || fr.page_flags(head) != 0
                        {
                            return Err(format!("zone {z}: block {head} on order-{o} type-{mt} list is not a free head of that order and type, or has flags ({})", Self::describe(node, head)));
                        }
                        if head % (1 << o) != 0 || head < fa.start || head + (1 << o) > fa.end {
                            return Err(format!(
                                "zone {z}: block {head} order {o} misaligned or outside the zone"
                            ));
                        }
                        for p in head..head + (1 << o) {
                            if self.seen[p as usize] != 0 {
                                return Err(format!("frame {p} is in two places (free list)"));
                            }
                            self.seen[p as usize] = 1;
                            if p != head
                                && (fr.state(p) != FrameState::NoOwner
                                    || fr.page_flags(p) != 0
                                    || (fr.prev(p), fr.next(p)) != (NIL, NIL))
                            {
                                return Err(format!(
                                    "free frame {p} inside block {head} has a state, flags or links ({})",
                                    Self::describe(node, p)
                                ));
                            }
                        }
                        free += 1 << o;
                    }
                    if n != list.len || n != fa.nr_free[o][mt] {
                        return Err(format!(
                            "zone {z}: order {o} type {mt}: list has {n} blocks, len {} nr_free {}",
                            list.len, fa.nr_free[o][mt]
                        ));
                    }
                }
            }
            if free != fa.free_pages {
                return Err(format!(
                    "zone {z}: NR_FREE_PAGES {} but free lists hold {free}",
                    fa.free_pages
                ));
            }
            // Per-CPU lists: free order-0 pages of this zone, not in the buddy's count, kept in
            // rings (no links).
            for (cpu, pcp) in zone.pcp.iter().enumerate() {
                let mut count = 0u64;
                for (mt, list) in pcp.lists.iter().enumerate() {
                    for p in list.iter() {
                        if p < fa.start || p >= fa.end {
                            return Err(format!(
                                "zone {z} cpu {cpu}: page {p} is outside the zone"
                            ));
                        }
                        if fr.state(p) != (FrameState::Pcp { mt })
                            || fr.page_flags(p) != 0
                            || (fr.prev(p), fr.next(p)) != (NIL, NIL)
                        {
                            return Err(format!("zone {z} cpu {cpu}: page {p} on the type-{mt} per-CPU list is not a free page of that type, or has flags or links ({})", Self::describe(node, p)));
                        }
                        if self.seen[p as usize] != 0 {
                            return Err(format!("frame {p} is in two places (per-CPU list)"));
                        }
                        self.seen[p as usize] = 4;
                        used_per_zone[z] += 1;
                    }
                    count += list.len() as u64;
                }
                if count != pcp.count as u64 {
                    return Err(format!(
                        "zone {z} cpu {cpu}: pcp count {} but its lists hold {count}",
                        pcp.count
                    ));
                }
            }
        }
        // LRU lists.
        let mut zone_size = [[0u64; NR_LRU_LISTS]; MAX_NR_ZONES];
        let mut swapcache = 0u64;
        // Every memcg's lruvec (the machine's one without cgroups); a page is on its memcg's.
        let lruvecs: Vec<(u16, &crate::machine::lru::Lruvec)> = match &node.memcg {
            None => vec![(0, &node.lruvec)],
            Some(mc) => (0..mc.len() as u16)
                .map(|id| (id, mc.lruvec(id, &node.lruvec)))
                .collect(),
        };
        // Under the multi-generational LRU the folios are on its generation lists, each
        // counted in the gauge (inactive or active) its generation stands for.
        let lists: Vec<(u16, &crate::machine::frames::List, usize)> = match &node.lru_gen {
            None => lruvecs
                .iter()
                .flat_map(|&(id, lv)| lv.lists.iter().enumerate().map(move |(l, li)| (id, li, l)))
                .collect(),
            Some(lg) => lg
                .lruvecs
                .iter()
                .enumerate()
                .flat_map(|(id, st)| {
                    st.lists.iter().enumerate().flat_map(move |(gi, per_type)| {
                        per_type.iter().enumerate().map(move |(t, li)| {
                            let active = st.gen.lru_gen_is_active(gi) as usize;
                            (id as u16, li, 2 * t + active)
                        })
                    })
                })
                .collect(),
        };
        for (memcg, list, l) in lists {
            let mut n = 0u64;
            for pfn in list.iter_from_tail(fr) {
                n += 1;
                let f = fr.flags(pfn);
                if self.seen[pfn as usize] != 0 {
                    return Err(format!("frame {pfn} is in two places (LRU list {l})"));
                }
                if node.folio_memcg(pfn) != memcg {
                    return Err(format!(
                        "frame {pfn} of memcg {} on memcg {memcg}'s LRU list {l}",
                        node.folio_memcg(pfn)
                    ));
                }
                self.seen[pfn as usize] = 2;
                // Under the generations a folio counts as active or inactive by its generation
                // field, which a promotion moves before the folio leaves its list.
                let l = match node.lru_gen.as_deref() {
                    None => l,
                    Some(lg) => match lg.folios.get(pfn).gen() {
                        Some(g) => {
                            let active = node.lru_gen_state(memcg as usize).lru_gen_is_active(g);
                            (l & !1) | active as usize
                        }
                        None => {
                            return Err(format!("frame {pfn} on LRU list {l} has no generation"))
                        }
                    },
                };
                // A folio on a generation list never carries PG_active.
                let on = if node.lru_gen.is_some() {
                    lru_of(f) ^ (l & 1)
                } else {
                    lru_of(f)
                };
                if f & pg::LRU == 0 || f & !pg::PAGE_FLAGS != 0 || on != l {
                    return Err(format!("frame {pfn} on LRU list {l} has flags {f:#x}"));
                }
                let z = node.zone_of(pfn);
                zone_size[z][l] += 1;
                used_per_zone[z] += 1;
                if f & pg::SWAPCACHE != 0 {
                    swapcache += 1;
                }
                let vp = fr.owner(pfn);
                if vp != NIL
                    && (!pte_present(node.pte[vp as usize])
                        || pte_pfn(node.pte[vp as usize]) != pfn)
                {
                    return Err(format!(
                        "frame {pfn} owned by vpage {vp} whose pte is {:#x}",
                        node.pte[vp as usize]
                    ));
                }
                if vp == NIL && f & pg::SWAPBACKED == 0 {
                    return Err(format!("file frame {pfn} on the LRU without an owner"));
                }
            }
            if n != list.len {
                return Err(format!("LRU list {l}: {n} entries but len {}", list.len));
            }
        }
        // Each memcg's memory.current is the frames charged to its subtree and the pages its
        // kernel memory charged.
        if let Some(mc) = &node.memcg {
            let mut own = vec![0u64; mc.len()];
            for &id in &mc.frame {
                own[id as usize] += 1;
            }
            for id in 1..mc.len() as u16 {
                let frames: u64 = mc.memory.preorder(id).map(|c| own[c as usize]).sum();
                let kmem = mc.subtree_kmem(id).kmem_pages;
                if frames + kmem != mc.memory.get(id).usage {
                    return Err(format!(
                        "memcg {}: memory.current {} pages but {frames} frames and {kmem} kmem pages charged",
                        mc.names[id as usize],
                        mc.memory.get(id).usage
                    ));
                }
            }
        }
        if zone_size != node.node_lru_zone_size() {
            return Err(format!(
                "per-zone LRU sizes {:?} but counted {zone_size:?}",
                node.node_lru_zone_size()
            ));
        }
        node.lru_gen_check()?;
        // Every managed frame is free, on an LRU list, or a kernel allocation (high-order
        // workloads); padding frames are nowhere.
        for (z, zone) in node.zones.iter().enumerate() {
            for p in zone.free_area.start..zone.free_area.end {
                let f = fr.flags(p);
                if self.seen[p as usize] == 0 && f & pg::ALLOCATED != 0 {
                    if f != pg::ALLOCATED
                        || fr.state(p) != FrameState::Allocated
                        || (fr.prev(p), fr.next(p)) != (NIL, NIL)
                    {
                        return Err(format!("kernel frame {p} has flags {f:#x} or links"));
                    }
                    self.seen[p as usize] = 3;
                    used_per_zone[z] += 1;
                }
            }
            // `used_per_zone` includes the pages on per-CPU lists: free, but not NR_FREE_PAGES.
            let total = zone.free_pages() + used_per_zone[z];
            if total != zone.managed() {
                return Err(format!(
                    "zone {z}: free {} + per-CPU and used {} != managed {}",
                    zone.free_pages(),
                    used_per_zone[z],
                    zone.managed()
                ));
            }
            for p in zone.free_area.start..zone.free_area.end {
                if self.seen[p as usize] == 0 {
                    return Err(format!(
                        "frame {p} of zone {z} is neither free, on a per-CPU or LRU list, nor a kernel page"
                    ));
                }
            }
        }
        // Forward map: resident PTEs point at frames that point back; non-resident entries
        // are canonical, only anonymous pages are swapped, only evicted pages have shadows
        // (and no shadow is younger than the workingset clock); swap slots add up.
        let mut swapped = 0u64;
        let age = node.lruvec.nonresident_age;
        let mut covered = 0usize;
        for r in &node.regions {
            covered += r.pages as usize;
            for vp in r.base..r.base + r.pages {
                let pte = node.pte[vp as usize];
                if !pte_present(pte) {
                    if pte & PTE_NOSHADOW != 0 && pte & PTE_SHADOW_MASK != PTE_SHADOW_MASK {
                        return Err(format!("vpage {vp}: entry {pte:#x} is not canonical"));
                    }
                    let shadow = pte_shadow(pte);
                    // (The multi-generational LRU's shadows are generation tokens.)
                    if shadow != SHADOW_NONE
                        && node.lru_gen.is_none()
                        && age <= SHADOW_AGE_MASK as u64
                        && (shadow & SHADOW_AGE_MASK) as u64 >= age
                    {
                        return Err(format!(
                            "vpage {vp}: shadow {shadow:#x} is younger than the clock {age}"
                        ));
                    }
                    if pte_is_swap(pte) {
                        if !r.anon || shadow == SHADOW_NONE {
                            return Err(format!(
                                "vpage {vp}: swap entry {pte:#x} of a file or without a shadow"
                            ));
                        }
                        swapped += 1;
                    } else {
                        debug_assert!(pte_is_none(pte));
                        if r.anon && shadow != SHADOW_NONE {
                            return Err(format!("vpage {vp}: anonymous none entry with a shadow"));
                        }
                    }
                    continue;
                }
                let pfn = pte_pfn(pte);
                if pfn >= nframes {
                    return Err(format!("vpage {vp} maps frame {pfn}, beyond RAM"));
                }
                if fr.owner(pfn) != vp {
                    return Err(format!(
                        "vpage {vp} maps frame {pfn} owned by {}",
                        fr.owner(pfn)
                    ));
                }
                if !r.anon && pte & !PTE_PFN_MASK != 0 {
                    return Err(format!("vpage {vp}: file entry {pte:#x} with MMU bits"));
                }
                if pte & PTE_MAPPED != 0 && !fr.test(pfn, pg::SWAPBACKED) {
                    return Err(format!("vpage {vp}: a mapped page that is not anonymous"));
                }
            }
        }
        if covered != node.pte.len() {
            return Err(format!(
                "regions cover {covered} vpages but the page table has {}",
                node.pte.len()
            ));
        }
        if swapped + swapcache != node.swap.used {
            return Err(format!(
                "swap: {swapped} swapped + {swapcache} swap-cache pages but {} slots used",
                node.swap.used
            ));
        }
        if node.swap.used > node.swap.total {
            return Err("more swap slots used than exist".into());
        }
        if node.stat.nr_swapcached != swapcache {
            return Err(format!(
                "nr_swapcached {} but {swapcache} swap-cache pages",
                node.stat.nr_swapcached
            ));
        }
        // Counters never decrease.
        for (i, (&now, &before)) in node.vm.c.iter().zip(self.prev_events.iter()).enumerate() {
            if now < before {
                return Err(format!(
                    "vmstat event {} went down from {before} to {now}",
                    crate::machine::vmstat::VmEvent::ALL[i].name()
                ));
            }
        }
        self.prev_events = node.vm.c;
        super::slab_invariants::check(node)?;
        node.bdev_check()?;
        match &node.xen {
            Some(x) => x.check(&node.frames),
            None => Ok(()),
        }
    }
}
