//! Generation and tier arithmetic, the fields a folio carries under the multi-generational
//! LRU, and where a folio goes when it is added (`include/linux/mm_inline.h`'s lru_gen part,
//! and `folio_inc_refs` of `mm/swap.c`, 6.1.192; docs/design/mglru.md §2-§3).
//!
//! A folio on a generation list stores its generation plus one in a 3-bit field (0: on no
//! generation list) and a 2-bit count of accesses through file descriptors beyond the second;
//! `PG_referenced` and `PG_workingset` are the first two. The kernel keeps both fields in
//! `folio->flags`; the machine's frame words have no spare bits (`frames.rs`), so here they
//! are one byte per frame, [`FolioGen`], held in a [`FolioGens`] array beside the frames.
//!
//! The functions that move a folio between generations ([`LruGen::lru_gen_add_folio`],
//! [`LruGen::lru_gen_del_folio`], [`LruGen::folio_inc_gen`]) keep the page counts and the
//! active/inactive gauges (`Lruvec::zone_size`, the `nr_{in,}active_*` of `/proc/vmstat`) as
//! the kernel does; the list operation itself (head or tail of which list) is returned for the
//! caller, who owns the lists and `PG_lru`. Not modelled: unevictable folios (the model has
//! none) and lazy-free anon (file-typed anon), so a folio's type is its `PG_swapbacked`.

use super::mmzone::{
    LruGen, ANON_AND_FILE, LRU_GEN_WIDTH, LRU_REFS_WIDTH, MAX_NR_GENS, MIN_NR_GENS, NR_HIST_GENS,
};
use crate::machine::frames::pg;
use crate::machine::lru::{ANON, FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, NR_LRU_LISTS};
use crate::machine::MAX_NR_ZONES;

/// The active/inactive page gauges per zone and list (`Lruvec::zone_size`).
pub type LruGauge = [[u64; NR_LRU_LISTS]; MAX_NR_ZONES];

/// `lru_gen_from_seq`: the generation (array index) of a sequence number.
#[inline]
pub fn lru_gen_from_seq(seq: u64) -> usize {
    (seq % MAX_NR_GENS) as usize
}

/// `lru_hist_from_seq`: the statistics slot of a sequence number (always 0 here).
#[inline]
pub fn lru_hist_from_seq(seq: u64) -> usize {
    (seq % NR_HIST_GENS as u64) as usize
}

/// `order_base_2`: the smallest `k` with `2^k >= n` (0 for 0 and 1).
#[inline]
pub fn order_base_2(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        u64::BITS - (n - 1).leading_zeros()
    }
}

/// `lru_tier_from_refs`: refs 0, 1, 2-3, 4 are tiers 0, 1, 2, 3.
#[inline]
pub fn lru_tier_from_refs(refs: u32) -> usize {
    order_base_2(refs as u64 + 1) as usize
}

/// The LRU type of a folio with these flags (`folio_is_file_lru`): `FILE` unless swap-backed.
#[inline]
pub fn folio_type(flags: u16) -> usize {
    if flags & pg::SWAPBACKED != 0 {
        ANON
    } else {
        FILE
    }
}

const GEN_MASK: u8 = (1 << LRU_GEN_WIDTH) - 1;
const REFS_SHIFT: u32 = LRU_GEN_WIDTH;
const REFS_MASK: u8 = ((1 << LRU_REFS_WIDTH) - 1) << REFS_SHIFT;
/// The largest value of the refs field (it saturates there).
pub const MAX_REFS_FIELD: u8 = (1 << LRU_REFS_WIDTH) - 1;
/// `refs` of a folio whose counter saturated: the field full plus `PG_workingset`.
pub const REFS_SATURATED: u32 = 1 << LRU_REFS_WIDTH;
const LIST_SHIFT: u32 = LRU_GEN_WIDTH + LRU_REFS_WIDTH;

/// A folio's generation and refs fields: bits 0-2 hold `gen + 1` (0: on no generation list),
/// bits 3-4 the refs field. Bits 5-7 are the model's, not the kernel's flags: `gen + 1` of the
/// list the folio is linked on. The two generations differ after an aging walk or a
/// look-around promoted the folio: 6.1 moves the generation field and the size counters at
/// once and the folio itself only when `sort_folio` or `inc_min_seq` meets it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FolioGen(pub u8);

impl FolioGen {
    /// On generation `gen` with this refs field.
    #[inline]
    pub fn on(gen: usize, refs_field: u8) -> FolioGen {
        let mut g = FolioGen(0);
        g.set_gen(Some(gen));
        g.set_refs_field(refs_field);
        g
    }

    /// `folio_lru_gen`: the generation the folio belongs to (its size counters'), if any.
    #[inline]
    pub fn gen(self) -> Option<usize> {
        self.gen_at(0)
    }

    #[inline]
    pub fn set_gen(&mut self, gen: Option<usize>) {
        self.set_gen_at(0, gen);
    }

    /// The `gen + 1` field (0: none) at bit `shift`.
    #[inline]
    fn gen_at(self, shift: u32) -> Option<usize> {
        match (self.0 >> shift) & GEN_MASK {
            0 => None,
            g => Some(g as usize - 1),
        }
    }

    #[inline]
    fn set_gen_at(&mut self, shift: u32, gen: Option<usize>) {
        debug_assert!(!matches!(gen, Some(g) if g >= MAX_NR_GENS as usize));
        let v = gen.map_or(0, |g| g as u8 + 1);
        self.0 = (self.0 & !(GEN_MASK << shift)) | (v << shift);
    }

    /// The generation of the list the folio is linked on, if any.
    #[inline]
    pub fn list_gen(self) -> Option<usize> {
        self.gen_at(LIST_SHIFT)
    }

    #[inline]
    pub fn set_list_gen(&mut self, gen: Option<usize>) {
        self.set_gen_at(LIST_SHIFT, gen);
    }

    #[inline]
    pub fn refs_field(self) -> u8 {
        (self.0 & REFS_MASK) >> REFS_SHIFT
    }

    #[inline]
    pub fn set_refs_field(&mut self, r: u8) {
        debug_assert!(r <= MAX_REFS_FIELD);
        self.0 = (self.0 & !REFS_MASK) | (r << REFS_SHIFT);
    }
}

/// The generation bytes of every frame (the `LRU_GEN_MASK`/`LRU_REFS_MASK` bits the kernel
/// keeps in `folio->flags`), indexed by frame number.
#[derive(Debug, Clone, Default)]
pub struct FolioGens(Vec<FolioGen>);

impl FolioGens {
    pub fn new(nframes: usize) -> FolioGens {
        FolioGens(vec![FolioGen::default(); nframes])
    }
    #[inline]
    pub fn get(&self, pfn: u32) -> FolioGen {
        self.0[pfn as usize]
    }
    #[inline]
    pub fn set(&mut self, pfn: u32, g: FolioGen) {
        self.0[pfn as usize] = g;
    }
}

/// `folio_lru_refs`: the refs field plus one for `PG_workingset` (0..=4).
#[inline]
pub fn folio_lru_refs(flags: u16, g: FolioGen) -> u32 {
    g.refs_field() as u32 + (flags & pg::WORKINGSET != 0) as u32
}

/// The tier of a folio (`lru_tier_from_refs(folio_lru_refs)`).
#[inline]
pub fn folio_lru_tier(flags: u16, g: FolioGen) -> usize {
    lru_tier_from_refs(folio_lru_refs(flags, g))
}

/// Clear the access history: the refs field, `PG_referenced` and `PG_workingset`.
#[inline]
pub fn clear_refs(flags: &mut u16, g: &mut FolioGen) {
    g.set_refs_field(0);
    *flags &= !(pg::REFERENCED | pg::WORKINGSET);
}

/// `folio_inc_refs` (what `folio_mark_accessed` does under MGLRU): the first access sets
/// `PG_referenced`, the second `PG_workingset`, the next three count in the refs field, which
/// then stays full. No activation, no list move.
#[inline]
pub fn folio_inc_refs(flags: &mut u16, g: &mut FolioGen) {
    if *flags & pg::REFERENCED == 0 {
        *flags |= pg::REFERENCED;
    } else if *flags & pg::WORKINGSET == 0 {
        *flags |= pg::WORKINGSET;
    } else if g.refs_field() < MAX_REFS_FIELD {
        g.set_refs_field(g.refs_field() + 1);
    }
}

/// `folio_add_lru`'s test under MGLRU: a folio added by a task inside a page fault (one not
/// in a `VM_SEQ_READ`/`VM_RAND_READ` VMA, which do not mark the fault) and not itself
/// reclaiming (`PF_MEMALLOC`) gets `PG_active`, i.e. goes to the youngest generation.
#[inline]
pub fn lru_gen_add_active(in_lru_fault: bool, memalloc: bool) -> bool {
    in_lru_fault && !memalloc
}

/// Where `lru_gen_add_folio` puts a folio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub seq: u64,
    pub gen: usize,
    /// At the tail (evicted first) when added by reclaim; else at the head.
    pub tail: bool,
}

/// The gauge list of `type_`, inactive or active.
#[inline]
fn gauge_lru(type_: usize, active: bool) -> usize {
    let inactive = if type_ == ANON {
        LRU_INACTIVE_ANON
    } else {
        LRU_INACTIVE_FILE
    };
    inactive + active as usize
}

#[inline]
fn gauge_add(g: &mut u64, delta: i64) {
    debug_assert!(*g as i64 + delta >= 0, "a gauge would go negative");
    *g = (*g as i64 + delta) as u64;
}

impl LruGen {
    /// `lru_gen_is_active`: the two youngest generations count as active.
    #[inline]
    pub fn lru_gen_is_active(&self, gen: usize) -> bool {
        gen == lru_gen_from_seq(self.max_seq) || gen == lru_gen_from_seq(self.max_seq - 1)
    }

    /// Pages of generation `seq` of `type_` over all zones (negative counts read as 0).
    pub fn gen_size(&self, seq: u64, type_: usize) -> u64 {
        self.nr_pages[lru_gen_from_seq(seq)][type_]
            .iter()
            .map(|&n| n.max(0) as u64)
            .sum()
    }

    /// The active/inactive gauges these page counts imply (for invariant checks: the
    /// bookkeeping of [`LruGen::update_size`] and `inc_max_seq` must keep `Lruvec::zone_size`
    /// equal to this).
    pub fn recount_gauge(&self) -> LruGauge {
        let mut gauge: LruGauge = [[0; NR_LRU_LISTS]; MAX_NR_ZONES];
        for (gen, per_type) in self.nr_pages.iter().enumerate() {
            let active = self.lru_gen_is_active(gen);
            for (type_, per_zone) in per_type.iter().enumerate() {
                for (zone, &n) in per_zone.iter().enumerate() {
                    gauge[zone][gauge_lru(type_, active)] += n.max(0) as u64;
                }
            }
        }
        gauge
    }

    /// `lru_gen_update_size`: `n` pages of `type_` in `zone` move from generation `old` to
    /// `new` (`None`: off the lists). The gauges follow addition, deletion and promotion from
    /// an inactive to an active generation; a single folio never goes from active to inactive
    /// (whole generations turn inactive in `inc_max_seq`).
    pub fn update_size(
        &mut self,
        gauge: &mut LruGauge,
        type_: usize,
        zone: usize,
        old: Option<usize>,
        new: Option<usize>,
        n: i64,
    ) {
        if let Some(o) = old {
            self.nr_pages[o][type_][zone] -= n;
        }
        if let Some(g) = new {
            self.nr_pages[g][type_][zone] += n;
        }
        let g = &mut gauge[zone];
        match (old, new) {
            (None, Some(to)) => gauge_add(&mut g[gauge_lru(type_, self.lru_gen_is_active(to))], n),
            (Some(from), None) => {
                gauge_add(&mut g[gauge_lru(type_, self.lru_gen_is_active(from))], -n)
            }
            (Some(from), Some(to)) => {
                let (a, b) = (self.lru_gen_is_active(from), self.lru_gen_is_active(to));
                debug_assert!(!a || b, "a folio demoted from an active generation");
                if !a && b {
                    gauge_add(&mut g[gauge_lru(type_, false)], -n);
                    gauge_add(&mut g[gauge_lru(type_, true)], n);
                }
            }
            (None, None) => {}
        }
    }

    /// The placement rule of `lru_gen_add_folio` (6.1.192; docs/design/mglru.md §2.4) for a
    /// folio with these flags, added by reclaim (`reclaiming`: the put-back at the tail) or not.
    pub fn placement(&self, flags: u16, reclaiming: bool) -> Placement {
        let type_ = folio_type(flags);
        let min_seq = self.min_seq[type_];
        let seq = if flags & pg::ACTIVE != 0 {
            self.max_seq
        } else if (type_ == ANON && flags & pg::SWAPCACHE == 0)
            || (flags & pg::RECLAIM != 0 && flags & (pg::DIRTY | pg::WRITEBACK) != 0)
        {
            // Anon outside the swap cache cannot be evicted before it gets a slot, and a folio
            // just submitted for writeback cannot be freed yet: both start second youngest.
            self.max_seq - 1
        } else if reclaiming || min_seq + MIN_NR_GENS >= self.max_seq {
            min_seq
        } else {
            min_seq + 1
        };
        Placement {
            seq,
            gen: lru_gen_from_seq(seq),
            tail: reclaiming,
        }
    }

    /// `lru_gen_add_folio`: place the folio (see [`LruGen::placement`]), store its
    /// generation, clear `PG_active`, count its `n` pages in `zone`.
    pub fn lru_gen_add_folio(
        &mut self,
        gauge: &mut LruGauge,
        flags: &mut u16,
        g: &mut FolioGen,
        zone: usize,
        n: i64,
        reclaiming: bool,
    ) -> Placement {
        debug_assert!(
            g.gen().is_none(),
            "the folio is on a generation list already"
        );
        let p = self.placement(*flags, reclaiming);
        g.set_gen(Some(p.gen));
        *flags &= !pg::ACTIVE;
        self.update_size(gauge, folio_type(*flags), zone, None, Some(p.gen), n);
        p
    }

    /// `lru_gen_del_folio`: take the folio off its generation (false if it is on none). Off
    /// the list for another purpose than reclaim, a folio from an active generation carries
    /// `PG_active`, so it comes back to the youngest generation.
    pub fn lru_gen_del_folio(
        &mut self,
        gauge: &mut LruGauge,
        flags: &mut u16,
        g: &mut FolioGen,
        zone: usize,
        n: i64,
        reclaiming: bool,
    ) -> bool {
        let Some(gen) = g.gen() else {
            return false;
        };
        debug_assert!(*flags & pg::ACTIVE == 0);
        if !reclaiming && self.lru_gen_is_active(gen) {
            *flags |= pg::ACTIVE;
        }
        g.set_gen(None);
        self.update_size(gauge, folio_type(*flags), zone, Some(gen), None, n);
        true
    }

    /// `folio_inc_gen`: move a folio of the oldest generation of its type to the next one
    /// (one that a walker promoted meanwhile keeps its newer generation), clearing its access
    /// history; `reclaiming` also sets `PG_reclaim`, so the end of its writeback rotates it.
    /// Returns the generation it is in now.
    pub fn folio_inc_gen(
        &mut self,
        gauge: &mut LruGauge,
        flags: &mut u16,
        g: &mut FolioGen,
        zone: usize,
        n: i64,
        reclaiming: bool,
    ) -> usize {
        let type_ = folio_type(*flags);
        let old = lru_gen_from_seq(self.min_seq[type_]);
        let cur = g.gen();
        debug_assert!(cur.is_some(), "folio_inc_gen of a folio on no list");
        if let Some(c) = cur.filter(|&c| c != old) {
            return c;
        }
        let new = (old + 1) % MAX_NR_GENS as usize;
        g.set_gen(Some(new));
        clear_refs(flags, g);
        if reclaiming {
            *flags |= pg::RECLAIM;
        }
        self.update_size(gauge, type_, zone, Some(old), Some(new), n);
        new
    }

    /// `folio_update_gen`: a young page-table entry promotes the folio to `gen` (the size
    /// counters move; its list position is fixed later by `sort_folio`), clearing its access
    /// history. A folio isolated at that moment (on no list) gets `PG_referenced` instead.
    /// Returns the generation it was in.
    pub fn folio_update_gen(
        &mut self,
        gauge: &mut LruGauge,
        flags: &mut u16,
        g: &mut FolioGen,
        zone: usize,
        n: i64,
        gen: usize,
    ) -> Option<usize> {
        let Some(old) = g.gen() else {
            *flags |= pg::REFERENCED;
            return None;
        };
        g.set_gen(Some(gen));
        clear_refs(flags, g);
        if old != gen {
            self.update_size(gauge, folio_type(*flags), zone, Some(old), Some(gen), n);
        }
        Some(old)
    }
}

// A generation field must hold every generation plus "none", and the refs field the counts
// beyond PG_referenced and PG_workingset up to the top tier.
const _: () = assert!(MAX_NR_GENS < 1 << LRU_GEN_WIDTH);
// The list's generation fits in the bits the kernel's two fields leave.
const _: () = assert!(LIST_SHIFT + LRU_GEN_WIDTH <= u8::BITS);
const _: () = assert!(ANON_AND_FILE == 2 && ANON == 0 && FILE == 1);

#[cfg(test)]
mod tests {
    use super::*;

    /// G1: max_seq 7, min_seq {5, 6}.
    #[test]
    fn generation_arithmetic_g1() {
        let mut l = LruGen::new(0);
        l.max_seq = 7;
        l.min_seq = [5, 6];
        assert_eq!((l.nr_gens(ANON), l.nr_gens(FILE)), (3, 2));
        assert!(l.seq_is_valid());
        let gens: Vec<usize> = (5..=8).map(lru_gen_from_seq).collect();
        assert_eq!(gens, [1, 2, 3, 0]);
        let active: Vec<bool> = (0..4).map(|g| l.lru_gen_is_active(g)).collect();
        assert_eq!(active, [false, false, true, true]);
        // A folio on seq 6's list stores 3.
        assert_eq!(FolioGen::on(lru_gen_from_seq(6), 0).0 & 0b111, 3);
        l.max_seq = 8;
        let active: Vec<bool> = (0..4).map(|g| l.lru_gen_is_active(g)).collect();
        assert_eq!(active, [true, false, false, true]);
    }

    /// §8.2 test 2: the validity rule.
    #[test]
    fn seq_is_valid_rejects_bad_states() {
        let mut l = LruGen::new(0);
        assert!(l.seq_is_valid(), "the initial state: four generations each");
        assert_eq!((l.max_seq, l.min_seq, l.mm_seq), (3, [0, 0], 2));
        l.max_seq = 7;
        for (min_seq, ok) in [
            ([6, 5], false), // file older than anon
            ([3, 3], false), // five generations
            ([4, 7], false), // file with one generation
            ([4, 4], true),
            ([4, 6], true),
            ([6, 6], true),
        ] {
            l.min_seq = min_seq;
            assert_eq!(l.seq_is_valid(), ok, "{min_seq:?}");
        }
    }

    /// T1: tiers from accesses through file descriptors.
    #[test]
    fn tiers_from_accesses_t1() {
        let tiers: Vec<usize> = (0..=4).map(lru_tier_from_refs).collect();
        assert_eq!(tiers, [0, 1, 2, 2, 3]);
        // (PG_referenced, PG_workingset, refs field, refs, tier) after N accesses.
        let table = [
            (false, false, 0, 0, 0),
            (true, false, 0, 0, 0),
            (true, true, 0, 1, 1),
            (true, true, 1, 2, 2),
            (true, true, 2, 3, 2),
            (true, true, 3, 4, 3),
            (true, true, 3, 4, 3),
            (true, true, 3, 4, 3),
        ];
        let (mut f, mut g) = (0u16, FolioGen::on(1, 0));
        for (n, &(r, w, field, refs, tier)) in table.iter().enumerate() {
            if n > 0 {
                folio_inc_refs(&mut f, &mut g);
            }
            let got = (
                f & pg::REFERENCED != 0,
                f & pg::WORKINGSET != 0,
                g.refs_field(),
                folio_lru_refs(f, g),
                folio_lru_tier(f, g),
            );
            assert_eq!(got, (r, w, field, refs, tier), "after {n} accesses");
        }
        assert_eq!(folio_lru_refs(f, g), REFS_SATURATED);
        // The generation is untouched by accesses.
        assert_eq!(g.gen(), Some(1));
    }

    /// Constants: a wrong width or generation count fails here.
    #[test]
    fn field_widths_follow_the_constants() {
        assert_eq!(LRU_GEN_WIDTH, order_base_2(MAX_NR_GENS + 1));
        assert_eq!((MIN_NR_GENS, MAX_NR_GENS), (2, 4));
        assert_eq!(MAX_REFS_FIELD, 3);
        assert_eq!(
            [order_base_2(0), order_base_2(1), order_base_2(2)],
            [0, 0, 1]
        );
        assert_eq!(
            [order_base_2(5), order_base_2(8), order_base_2(9)],
            [3, 3, 4]
        );
        // Every generation and the refs field round-trip through the byte independently.
        for gen in 0..4 {
            for r in 0..=MAX_REFS_FIELD {
                let g = FolioGen::on(gen, r);
                assert_eq!((g.gen(), g.refs_field()), (Some(gen), r));
            }
        }
        assert_eq!(FolioGen::default().gen(), None);
    }

    fn g2(min_seq: [u64; 2]) -> LruGen {
        let mut l = LruGen::new(0);
        l.max_seq = 7;
        l.min_seq = min_seq;
        l
    }

    /// G2 and the rows of the §2.4 table (6.1.192).
    #[test]
    fn placement_g2() {
        let anon = pg::SWAPBACKED;
        let swapcache = pg::SWAPBACKED | pg::SWAPCACHE;
        // (a) min_seq {5, 5}.
        let l = g2([5, 5]);
        let seq = |f: u16, r: bool| l.placement(f, r).seq;
        assert_eq!(seq(0, false), 5, "read() page: 5 + 2 >= 7");
        assert_eq!(l.placement(0, false).gen, 1);
        assert_eq!(seq(anon | pg::ACTIVE, false), 7, "faulted anon");
        assert_eq!(l.placement(anon | pg::ACTIVE, false).gen, 3);
        assert_eq!(seq(pg::ACTIVE, false), 7, "file fault and its read-ahead");
        assert_eq!(seq(swapcache | pg::ACTIVE, false), 7, "swap-in in a fault");
        assert_eq!(seq(anon, false), 6, "anon added outside a fault");
        let rotated = l.placement(0, true);
        assert_eq!(
            (rotated.seq, rotated.tail),
            (5, true),
            "rotated after writeback"
        );
        assert!(!l.placement(0, false).tail);
        assert_eq!(seq(swapcache, false), 5, "swap cache outside a fault");
        // Just submitted for writeback: second youngest, also when reclaim puts it back.
        assert_eq!(seq(swapcache | pg::RECLAIM | pg::WRITEBACK, true), 6);
        assert_eq!(seq(pg::RECLAIM | pg::DIRTY, false), 6);
        // PG_reclaim alone (written back and clean) does not count.
        assert_eq!(seq(pg::RECLAIM, false), 5);
        // (b) four generations: min_seq + 1.
        let l = g2([4, 4]);
        assert_eq!(l.placement(0, false).seq, 5);
        assert_eq!(l.placement(0, false).gen, 1);
        assert_eq!(l.placement(anon, false).seq, 6);
        assert_eq!(l.placement(swapcache, false).seq, 5);
        assert_eq!(
            l.placement(0, true).seq,
            4,
            "reclaim's tail insertion: the oldest"
        );
        // Three generations of file: 5 + 2 >= 7 again, while anon has four.
        let l = g2([4, 5]);
        assert_eq!(
            (l.placement(0, false).seq, l.placement(swapcache, false).seq),
            (5, 5)
        );
    }
}
