//! The multi-generational LRU's side of `mm/vmscan.c` (6.1, issue 35) as the machine runs it:
//! folios on and off the generation lists, the aging step (`try_to_inc_max_seq`, with the
//! page-table walk abstracted), the eviction (`lru_gen_shrink_lruvec` → `evict_folios` →
//! `isolate_folios` → `scan_folios`, then the common `shrink_folio_list`), kswapd's
//! `lru_gen_age_node` with the `min_ttl_ms` OOM kill, and the workingset tokens. The
//! arithmetic and every decision are the pure functions of `machine/lru_gen/`; this file
//! moves the folios and counts the events.
//!
//! Abstractions (docs/MODEL.md, "Multi-generational LRU"): one list per generation and type
//! (the zones share it, `lru_gen/lruvec.rs`); the page-table walk goes over the page tables
//! of the memcg's tasks' anonymous regions that its Bloom filters hold (`lru_gen/bloom.rs`),
//! tests and clears their accessed bits (`[cost] lru_gen_walk` each) and promotes a young
//! folio to the youngest generation (its field and the counters then; the folio stays linked
//! where it is until `sort_folio` or `inc_min_seq` meets it, as in 6.1: `FolioGen::list_gen`);
//! a walk is one walker's and is not cut by the reclaim quantum; the
//! shadow token carries no memcg id (a refault is judged against the new folio's lruvec).

use super::{ScanControl, DEF_PRIORITY};
use crate::machine::frames::{pg, Frames, List, NIL};
use crate::machine::lru::{ANON, FILE};
use crate::machine::lru_gen::aging::{jiffies, lru_gen_age_node_skips, min_ttl_oom};
use crate::machine::lru_gen::eviction::{
    should_abort_scan, AbortScan, IsolateCtl, ScanFolios, ScanOutcome, Sorted, ZoneFree,
};
use crate::machine::lru_gen::feedback::{get_swappiness, isolate_attempts, shrink_swappiness};
use crate::machine::lru_gen::lruvec::{LruGenLruvec, LruGenNode};
use crate::machine::lru_gen::mm_inline::{
    folio_inc_refs, folio_lru_refs, folio_type, lru_gen_add_active, lru_gen_from_seq, FolioGen,
};
use crate::machine::lru_gen::mmzone::{
    LruGen, ANON_AND_FILE, MAX_NR_GENS, MIN_LRU_BATCH, MIN_NR_GENS, NR_GENS,
};
use crate::machine::lru_gen::sysfs;
use crate::machine::lru_gen::workingset::LruGenShadow;
use crate::machine::pte::{
    pte_young, PTE_MAPPED, PTE_SWAP, PTE_YOUNG, SHADOW_AGE_MASK, SHADOW_WORKINGSET,
};
use crate::machine::vmstat::VmEvent;
use crate::machine::{Machine, MAX_NR_ZONES};

type GenLists = [[List; ANON_AND_FILE]; NR_GENS];

/// Store the page flags `new` a pure function left (it was handed `old`).
#[inline]
fn store_flags(frames: &mut Frames, pfn: u32, old: u16, new: u16) {
    let set = new & !old & pg::PAGE_FLAGS;
    let clr = old & !new & pg::PAGE_FLAGS;
    if set != 0 {
        frames.set(pfn, set);
    }
    if clr != 0 {
        frames.clear(pfn, clr);
    }
}

/// The pieces of the machine a folio move touches, borrowed at once: the node's generation
/// state, the gauge (`zone_size`) of memcg `$id`'s lruvec, the frames.
macro_rules! parts {
    ($m:ident, $id:expr) => {{
        let node: &mut LruGenNode = $m.lru_gen.as_deref_mut().expect("lru_gen is on");
        let lv = match &mut $m.memcg {
            None => &mut $m.lruvec,
            Some(mc) => mc.lruvec_of($id as u16, &mut $m.lruvec),
        };
        (node, &mut lv.zone_size, &mut $m.frames)
    }};
}

impl Machine {
    /// Build the multi-generational LRU when the kernel has it (`[policy] lru = "mglru"`) and
    /// `lru_gen/enabled` has its core bit; otherwise the machine keeps the two-list LRU.
    pub(crate) fn lru_gen_init(&mut self) {
        if !self.policy.lru.lru_gen_built() {
            return;
        }
        let caps = (self.cfg.sysctl.lru_gen_enabled & u32::MAX as u64) as u32
            & sysfs::supported_caps(false);
        if caps & sysfs::LRU_GEN_CORE == 0 {
            return;
        }
        let min_ttl = sysfs::msecs_to_jiffies(self.cfg.sysctl.lru_gen_min_ttl_ms);
        let n = self.memcg.as_ref().map_or(1, |mc| mc.len());
        let node = LruGenNode::new(self.frames.len(), n, caps, min_ttl, jiffies(self.now));
        self.lru_gen = Some(Box::new(node));
    }

    /// `lru_gen_add_folio` for a folio whose `PG_lru` is set: placed by its flags, at the
    /// tail when reclaim puts it back (`reclaiming`).
    pub(crate) fn lru_gen_add_folio(&mut self, pfn: u32, reclaiming: bool) {
        let id = self.folio_memcg(pfn) as usize;
        let z = self.zone_of(pfn);
        let now = jiffies(self.now);
        let (node, gauge, frames) = parts!(self, id);
        let old = frames.page_flags(pfn);
        let (mut f, mut g) = (old, node.folios.get(pfn));
        let st = node.lruvec(id, now);
        let p = st
            .gen
            .lru_gen_add_folio(gauge, &mut f, &mut g, z, 1, reclaiming);
        g.set_list_gen(Some(p.gen));
        let list = &mut st.lists[p.gen][folio_type(f)];
        if p.tail {
            list.push_tail(frames, pfn);
        } else {
            list.push_head(frames, pfn);
        }
        node.folios.set(pfn, g);
        store_flags(frames, pfn, old, f);
    }

    /// `lru_gen_del_folio`: off its generation list (`PG_lru` is the caller's).
    pub(crate) fn lru_gen_del_folio(&mut self, pfn: u32, reclaiming: bool) {
        let id = self.folio_memcg(pfn) as usize;
        let z = self.zone_of(pfn);
        let now = jiffies(self.now);
        let (node, gauge, frames) = parts!(self, id);
        let old = frames.page_flags(pfn);
        let (mut f, mut g) = (old, node.folios.get(pfn));
        let Some(list_gen) = g.list_gen() else {
            debug_assert!(false, "lru_gen_del_folio of a folio on no generation list");
            return;
        };
        let st = node.lruvec(id, now);
        st.lists[list_gen][folio_type(f)].remove(frames, pfn);
        st.gen
            .lru_gen_del_folio(gauge, &mut f, &mut g, z, 1, reclaiming);
        g.set_list_gen(None);
        node.folios.set(pfn, g);
        store_flags(frames, pfn, old, f);
    }

    /// `folio_add_lru` inside a page fault: under the multi-generational LRU the folio is
    /// marked active (the youngest generation, `lru_gen_in_fault`); the two-list LRU adds it
    /// as its flags say.
    #[inline]
    pub fn lru_add_in_fault(&mut self, pfn: u32) {
        if self.lru_gen.is_some() && lru_gen_add_active(true, false) {
            self.frames.set(pfn, pg::ACTIVE);
        }
        self.lru_add(pfn);
    }

    /// `folio_mark_accessed` under the multi-generational LRU: `folio_inc_refs`, no list move.
    pub(crate) fn lru_gen_mark_accessed(&mut self, pfn: u32) {
        let node = self.lru_gen.as_deref_mut().expect("lru_gen is on");
        let old = self.frames.page_flags(pfn);
        let (mut f, mut g) = (old, node.folios.get(pfn));
        folio_inc_refs(&mut f, &mut g);
        node.folios.set(pfn, g);
        store_flags(&mut self.frames, pfn, old, f);
    }

    /// `folio_rotate_reclaimable` under the multi-generational LRU (`lru_move_tail_fn`): off
    /// its generation, `PG_active` cleared, back at the tail of the oldest.
    pub(crate) fn lru_gen_rotate(&mut self, pfn: u32) {
        self.lru_gen_del_folio(pfn, false);
        self.frames.clear(pfn, pg::ACTIVE);
        self.lru_gen_add_folio(pfn, true);
    }

    /// A freed frame carries no generation or access count into its next use.
    #[inline]
    pub(crate) fn lru_gen_forget(&mut self, pfn: u32) {
        if let Some(node) = self.lru_gen.as_deref_mut() {
            node.folios.set(pfn, FolioGen::default());
        }
    }

    /// `lru_gen_eviction`: the shadow entry of an evicted folio (its type's oldest sequence
    /// number and its access count, the workingset bit for any access).
    pub(crate) fn lru_gen_eviction(&mut self, pfn: u32) -> u32 {
        let id = self.folio_memcg(pfn) as usize;
        let now = jiffies(self.now);
        let f = self.frames.page_flags(pfn);
        let node = self.lru_gen.as_deref_mut().expect("lru_gen is on");
        let refs = folio_lru_refs(f, node.folios.get(pfn));
        let sh = node
            .lruvec(id, now)
            .gen
            .lru_gen_eviction(folio_type(f), refs, 1);
        (sh.token & SHADOW_AGE_MASK) | if sh.workingset { SHADOW_WORKINGSET } else { 0 }
    }

    /// `lru_gen_refault` of the new folio `pfn` (before it is added to the LRU). The model's
    /// anon comes back only through page faults and its files only through `read`/`write`, so
    /// the fault test (`lru_gen_in_fault`) is the folio's type.
    pub(crate) fn lru_gen_refault(&mut self, pfn: u32, shadow: u32) {
        let id = self.folio_memcg(pfn);
        let now = jiffies(self.now);
        let old = self.frames.page_flags(pfn);
        let t = folio_type(old);
        let node = self.lru_gen.as_deref_mut().expect("lru_gen is on");
        let (mut f, mut g) = (old, node.folios.get(pfn));
        let sh = LruGenShadow {
            token: shadow & SHADOW_AGE_MASK,
            workingset: shadow & SHADOW_WORKINGSET != 0,
        };
        let r =
            node.lruvec(id as usize, now)
                .gen
                .lru_gen_refault(t, sh, t == ANON, 1, &mut f, &mut g);
        node.folios.set(pfn, g);
        store_flags(&mut self.frames, pfn, old, f);
        if r.counted {
            self.stat.workingset_refault[t] += 1;
            if let Some(mc) = &mut self.memcg {
                mc.stat[id as usize].workingset_refault[t] += 1;
            }
        }
        if r.restored {
            self.stat.workingset_restore[t] += 1;
            if let Some(mc) = &mut self.memcg {
                mc.stat[id as usize].workingset_restore[t] += 1;
            }
        }
    }

    /// `get_swappiness`: swappiness, or 0 with fewer than 64 pages of swap free.
    fn lru_gen_swappiness(&self) -> u64 {
        let free = self.swap.total - self.swap.used;
        get_swappiness(false, free, self.cfg.sysctl.swappiness)
    }

    /// Run `f` on memcg `id`'s generation state taken out of the node, so that aging can move
    /// folios through the machine meanwhile.
    fn with_lruvec<R>(
        &mut self,
        id: usize,
        f: impl FnOnce(&mut Machine, &mut LruGen, &mut GenLists) -> R,
    ) -> R {
        let now = jiffies(self.now);
        let node = self.lru_gen.as_deref_mut().expect("lru_gen is on");
        let mut st = std::mem::replace(node.lruvec(id, now), LruGenLruvec::new(0));
        let r = f(self, &mut st.gen, &mut st.lists);
        self.lru_gen.as_deref_mut().expect("lru_gen is on").lruvecs[id] = st;
        r
    }

    /// `lru_gen_shrink_lruvec` on the lruvec being reclaimed (the node's, or the memcg's the
    /// walk of `shrink_node_memcgs` switched to).
    pub(super) fn lru_gen_shrink_lruvec(&mut self, sc: &mut ScanControl) {
        let id = self.memcg.as_ref().map_or(0, |mc| mc.cur as usize);
        let seq_at_entry = self.lru_gen_state(id).max_seq;
        let reclaimed0 = sc.nr_reclaimed;
        let (mut need_swapping, mut scanned) = (false, 0u64);
        let mut need_aging;
        let protected = false;
        let mut done = false;
        // set_mm_walk: kswapd's walk state is the node's; direct reclaim gets one when it ages.
        self.lru_gen.as_deref_mut().expect("lru_gen is on").mm_walk = sc.kswapd;
        loop {
            let swappiness =
                shrink_swappiness(sc.may_swap, sc.cgroup_reclaim(), self.lru_gen_swappiness());
            let can_swap = swappiness != 0;
            let (priority, kswapd) = (sc.priority, sc.kswapd);
            let mut cost = sc.cost_ns;
            let (nr_to_scan, need) = self.with_lruvec(id, |m, gen, lists| {
                gen.get_nr_to_scan(protected, can_swap, priority, kswapd, true, |g, ms| {
                    m.lru_gen_try_to_inc_max_seq(id, g, lists, ms, can_swap, false, &mut cost)
                })
            });
            sc.cost_ns = cost;
            need_aging = need;
            if nr_to_scan == 0 {
                done = true;
                break;
            }
            let delta = self.evict_folios(id, sc, swappiness, &mut need_swapping);
            if delta == 0 {
                done = true;
                break;
            }
            scanned += delta;
            if scanned >= nr_to_scan {
                break;
            }
            let zones: Vec<ZoneFree> = (0..=sc.reclaim_idx.min(MAX_NR_ZONES - 1))
                .map(|z| &self.zones[z])
                .filter(|z| z.is_managed())
                .map(|z| ZoneFree {
                    free: z.free_pages(),
                    low: z.low_wmark_pages(),
                    high: z.high_wmark_pages(),
                })
                .collect();
            let s = AbortScan {
                kswapd: sc.kswapd,
                cgroup_reclaim: sc.cgroup_reclaim(),
                fatal_signal: false,
                seq_at_entry,
                max_seq: self.lru_gen_state(id).max_seq,
                nr_reclaimed: sc.nr_reclaimed,
                nr_to_reclaim: sc.nr_to_reclaim,
                last_reclaimed: sc.last_reclaimed,
                need_swapping,
                priority: sc.priority,
            };
            if let Some(credit) = should_abort_scan(&s, &zones) {
                sc.nr_reclaimed += credit;
                break;
            }
        }
        if !done && sc.nr_reclaimed - reclaimed0 >= MIN_LRU_BATCH && !need_aging {
            sc.memcgs_need_aging = false;
        }
        self.lru_gen.as_deref_mut().expect("lru_gen is on").mm_walk = false;
    }

    /// Memcg `id`'s generation bookkeeping.
    pub fn lru_gen_state(&self, id: usize) -> &LruGen {
        let node = self.lru_gen.as_deref().expect("lru_gen is on");
        &node.lruvecs[id.min(node.lruvecs.len() - 1)].gen
    }

    /// `evict_folios`: isolate a batch from the oldest generation, retire emptied
    /// generations, reclaim the batch with `shrink_folio_list`. Returns the pages scanned (0
    /// when the lruvec is down to its last two generations of the type it must keep).
    fn evict_folios(
        &mut self,
        id: usize,
        sc: &mut ScanControl,
        swappiness: u64,
        need_swapping: &mut bool,
    ) -> u64 {
        self.process_io_completions(self.now + sc.cost_ns);
        let (type_, mut scanned) = self.isolate_folios(id, sc, swappiness);
        let now = jiffies(self.now);
        let node = self.lru_gen.as_deref_mut().expect("lru_gen is on");
        let st = node.lruvec(id, now);
        let occupied = occupancy(&st.lists);
        let gen = &mut st.gen;
        scanned += gen.try_to_inc_min_seq_lists(swappiness != 0, &occupied) as u64;
        let keep = if swappiness != 0 { ANON } else { FILE };
        if gen.nr_gens(keep) == MIN_NR_GENS {
            scanned = 0;
        }
        if self.scratch.is_empty() {
            return scanned;
        }
        let mut stat = super::ReclaimStat::default();
        let list = std::mem::take(&mut self.scratch);
        let reclaimed = self.shrink_folio_list(&list, sc, &mut stat);
        self.scratch = list;
        sc.nr_reclaimed += reclaimed;
        self.count_reclaim(true, type_ == FILE, reclaimed, sc);
        if type_ == ANON {
            *need_swapping = true;
        }
        scanned
    }

    /// `isolate_folios`: the type the feedback loop picks first, then the other when it
    /// gave nothing (not at swappiness 0). Fills `self.scratch`; returns the type and the
    /// pages scanned.
    fn isolate_folios(&mut self, id: usize, sc: &mut ScanControl, swappiness: u64) -> (usize, u64) {
        self.scratch.clear();
        let (mut type_, mut tier) = self.lru_gen_state(id).first_type_to_scan(swappiness);
        for _ in 0..isolate_attempts(swappiness) {
            let tier_idx = tier.unwrap_or_else(|| self.lru_gen_state(id).get_tier_idx(type_));
            let scanned = self.scan_folios(id, sc, type_, tier_idx);
            if scanned > 0 {
                return (type_, scanned);
            }
            type_ = 1 - type_;
            tier = None;
        }
        (type_, 0)
    }

    /// `scan_folios` over the oldest generation of `type_`, from its tail: each folio sorted
    /// (`sort_folio`: to a younger generation, counted in `pgrefill`), isolated into
    /// `self.scratch` (`pgscan_*`) or skipped (`pgskip_*`, back at the head).
    fn scan_folios(
        &mut self,
        id: usize,
        sc: &mut ScanControl,
        type_: usize,
        tier_idx: usize,
    ) -> u64 {
        let now = jiffies(self.now);
        if self
            .lru_gen
            .as_deref_mut()
            .expect("lru_gen is on")
            .lruvec(id, now)
            .gen
            .nr_gens(type_)
            == MIN_NR_GENS
        {
            return 0;
        }
        let ctl = IsolateCtl {
            may_unmap: sc.may_unmap,
            may_writepage: sc.may_writepage,
            gfp_io: sc.gfp & crate::machine::gfp::__GFP_IO != 0,
        };
        let zone_start = self.zone_start;
        let mut sf = ScanFolios::default();
        let mut skipped: Vec<u32> = Vec::new();
        let mut protected = 0u64;
        let scan_ns = self.cfg.cost.scan_unmapped_ns;
        {
            let (node, gauge, frames) = parts!(self, id);
            let st = &mut node.lruvecs[id];
            let oldest = lru_gen_from_seq(st.gen.min_seq[type_]);
            loop {
                let pfn = st.lists[oldest][type_].tail;
                if pfn == NIL {
                    break;
                }
                let z = zone_of(&zone_start, pfn);
                let old = frames.page_flags(pfn);
                let (mut f, mut g) = (old, node.folios.get(pfn));
                let sorted =
                    st.gen
                        .sort_folio(gauge, &mut f, &mut g, z, 1, sc.reclaim_idx, tier_idx, false);
                st.lists[oldest][type_].remove(frames, pfn);
                let outcome = match sorted {
                    Sorted::Isolate => {
                        let vp = frames.owner(pfn);
                        let mapped = vp != NIL
                            && self.pte[vp as usize] & (PTE_SWAP | PTE_MAPPED) == PTE_MAPPED;
                        if st
                            .gen
                            .isolate_folio(gauge, &mut f, &mut g, z, 1, mapped, ctl)
                        {
                            f &= !pg::LRU;
                            g.set_list_gen(None);
                            self.scratch.push(pfn);
                            ScanOutcome::Isolated
                        } else {
                            skipped.push(pfn);
                            ScanOutcome::Skipped
                        }
                    }
                    Sorted::Promoted { gen } | Sorted::Writeback { gen } => {
                        st.lists[gen][type_].push_head(frames, pfn);
                        g.set_list_gen(Some(gen));
                        ScanOutcome::Sorted
                    }
                    Sorted::Protected { gen, .. } | Sorted::Ineligible { gen } => {
                        protected += matches!(sorted, Sorted::Protected { .. }) as u64;
                        st.lists[gen][type_].push_tail(frames, pfn);
                        g.set_list_gen(Some(gen));
                        ScanOutcome::Sorted
                    }
                };
                node.folios.set(pfn, g);
                store_flags(frames, pfn, old, f);
                if !sf.record(z, 1, outcome) {
                    break;
                }
            }
            sf.zone_done();
            // Skipped folios go back at the head of their list, in their order.
            for &pfn in skipped.iter().rev() {
                st.lists[oldest][type_].push_head(frames, pfn);
            }
        }
        sc.cost_ns += sf.sorted * scan_ns;
        for (z, &n) in sf.skipped.iter().enumerate() {
            if n > 0 {
                self.vm.add(VmEvent::pgskip(z), n);
            }
        }
        if protected > 0 {
            self.stat.workingset_activate[type_] += protected;
            if let Some(mc) = &mut self.memcg {
                mc.stat[id].workingset_activate[type_] += protected;
            }
        }
        if let Some(st) = self.memcg_scan_stat() {
            st.pgrefill += sf.sorted;
        }
        if !sc.cgroup_reclaim() {
            self.vm.add(VmEvent::Pgrefill, sf.sorted);
        }
        self.count_reclaim(false, type_ == FILE, sf.isolated, sc);
        sf.result()
    }

    /// `evict_folios`' put-back of a folio `shrink_folio_list` kept: one waiting for its
    /// writeback to end keeps its place (and its `PG_referenced` back when it had
    /// `PG_workingset`); any other rejected folio loses its access history and goes to the
    /// youngest generation (`PG_active`). (6.1 retries clean, unmapped, unreferenced ones once
    /// instead; the model puts them back by the placement rule.)
    pub(super) fn lru_gen_putback(&mut self, pfn: u32) {
        let f = self.frames.page_flags(pfn);
        if f & pg::RECLAIM != 0 && f & (pg::DIRTY | pg::WRITEBACK) != 0 {
            if f & pg::WORKINGSET != 0 {
                self.frames.set(pfn, pg::REFERENCED);
            }
            return;
        }
        let mapped = self.page_mapped(pfn);
        if f & (pg::ACTIVE | pg::REFERENCED) != 0 || mapped || f & (pg::DIRTY | pg::WRITEBACK) != 0
        {
            let node = self.lru_gen.as_deref_mut().expect("lru_gen is on");
            let mut g = node.folios.get(pfn);
            g.set_refs_field(0);
            node.folios.set(pfn, g);
            self.frames.clear(pfn, pg::REFERENCED | pg::WORKINGSET);
            self.frames.set(pfn, pg::ACTIVE);
        }
    }
}

/// Which generation lists have a folio linked on them (what 6.1's `try_to_inc_min_seq` tests).
fn occupancy(lists: &GenLists) -> [[bool; ANON_AND_FILE]; NR_GENS] {
    let mut o = [[false; ANON_AND_FILE]; NR_GENS];
    for (g, per_type) in lists.iter().enumerate() {
        for (t, list) in per_type.iter().enumerate() {
            o[g][t] = list.tail != NIL;
        }
    }
    o
}

/// `zone_of` over a copy of the zones' first frames.
#[inline]
fn zone_of(start: &[u32; MAX_NR_ZONES], pfn: u32) -> usize {
    let mut z = 0;
    for (i, &s) in start.iter().enumerate().skip(1) {
        z = if pfn >= s { i } else { z };
    }
    z
}

// DEF_PRIORITY is restated in lru_gen/aging.rs so that folder does not depend on this one.
const _: () = assert!(DEF_PRIORITY == crate::machine::lru_gen::aging::DEF_PRIORITY);

mod debugfs_write;
mod look_around;
mod show;
mod walk;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::gfp::GFP_KERNEL;
    use crate::machine::pte::PTE_YOUNG;
    use crate::machine::{Access, TaskCtx};

    /// A 64 MiB machine under the multi-generational LRU with 1 GiB of swap.
    pub(super) fn machine() -> Machine {
        let text = "name = \"t\"\n[host]\nram = \"64MiB\"\n[swap]\nsize = \"1GiB\"\n\
                    latency_jitter = 0.0\n[policy]\nlru = \"mglru\"\n\
                    [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
        let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
        let m = crate::run::host_machine(&scn, 1, false).unwrap();
        assert!(m.lru_gen.is_some());
        m
    }

    /// Fault `n` anon pages in a new region, their accessed bits cleared; returns the vpages.
    /// (Also the debugfs writer's tests'.)
    pub(super) fn fault(m: &mut Machine, task: usize, n: u32) -> std::ops::Range<u32> {
        let r = m.add_region(task, n as u64, true).unwrap();
        let base = m.regions[r].base;
        let mut t = TaskCtx {
            task,
            ..Default::default()
        };
        for vp in base..base + n {
            assert!(matches!(m.anon_access(vp, true, &mut t), Access::Done));
            m.pte[vp as usize] &= !PTE_YOUNG;
        }
        base..base + n
    }

    pub(super) fn age(m: &mut Machine) {
        m.with_lruvec(0, |m, g, l| {
            let ms = g.max_seq;
            assert!(m.lru_gen_try_to_inc_max_seq(0, g, l, ms, true, false, &mut 0));
        });
    }

    /// An aging step whose walk enters every page table whatever the Bloom filters say, as
    /// a write of `+ memcg node seq 1 1` to `lru_gen` does (`force_scan`).
    pub(super) fn age_forced(m: &mut Machine) {
        m.with_lruvec(0, |m, g, l| {
            let ms = g.max_seq;
            assert!(m.lru_gen_try_to_inc_max_seq(0, g, l, ms, true, true, &mut 0));
        });
    }

    /// 512 anon pages of a new region of a new task, their bits cleared, then aged twice: a
    /// generation older than the youngest. (Also the look-around's tests'.)
    pub(super) fn aged_region(m: &mut Machine) -> std::ops::Range<u32> {
        let task = m.add_task("w", 0);
        let a = fault(m, task, 512);
        age(m);
        age(m);
        a
    }

    /// A kswapd pass over the node at priority 0 for 256 pages. (Also the look-around's tests'.)
    pub(super) fn kswapd_pass(m: &mut Machine) -> ScanControl {
        let mut sc = ScanControl::new(GFP_KERNEL, 0, MAX_NR_ZONES - 1, 256, true);
        sc.priority = 0;
        m.shrink_node(&mut sc);
        sc
    }

    /// Resident and mapped, not in the swap cache. (Also the debugfs writer's tests'.)
    pub(super) fn untouched(m: &Machine, vp: u32) -> bool {
        let pte = m.pte[vp as usize];
        pte & PTE_MAPPED != 0
            && pte & PTE_SWAP == 0
            && !m
                .frames
                .test(pte & crate::machine::pte::PTE_PFN_MASK, pg::SWAPCACHE)
    }
}
