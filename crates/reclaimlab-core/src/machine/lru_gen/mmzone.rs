//! The constants of the multi-generational LRU and the generation state of one lruvec
//! (`include/linux/mmzone.h`'s `struct lru_gen_struct`, 6.1; docs/design/mglru.md §1).
//!
//! A lruvec's folios are spread over up to four generations per type, numbered by unbounded
//! sequence numbers: `max_seq` is the youngest (shared by both types), `min_seq[type]` the
//! oldest of each type. Arrays are indexed by the generation, the sequence number modulo
//! [`MAX_NR_GENS`]. Held here: the sequence numbers, the birth time of each generation (in
//! jiffies), the pages per generation, type and zone, and the refault statistics the PID
//! controller reads (per type and tier; `NR_HIST_GENS = 1`, the kernel's value without
//! `CONFIG_LRU_GEN_STATS`, so every history index is 0). Also `mm_seq`, the `max_seq` the
//! last completed mm-list iteration was for (`lruvec->mm_state.seq`), which is all of the
//! page-table walk state the counter-only aging needs.
//!
//! The per-generation page lists (`folios[gen][type]`) sit beside this struct
//! (`lruvec.rs`); the machine keeps each list's length equal to its page count (the invariant
//! check compares them), so a list counts as empty here when its page count is not positive.
//! Page counts are signed as in the kernel (a walker's batched updates can make one briefly
//! negative there; here they cannot, but readers still clamp at 0 as the kernel does).

use super::bloom::BloomFilters;
use crate::machine::lru::{ANON, FILE};
use crate::machine::MAX_NR_ZONES;

/// Fewest generations a type keeps; the two youngest are the "active" ones.
pub const MIN_NR_GENS: u64 = 2;
/// Most generations a type can have; generation numbers are sequence numbers modulo this.
pub const MAX_NR_GENS: u64 = 4;
/// [`MAX_NR_GENS`] as an array length.
pub const NR_GENS: usize = MAX_NR_GENS as usize;
/// Tiers 0..=3 by accesses through file descriptors.
pub const MAX_NR_TIERS: usize = 4;
/// Bits of a folio's generation field: enough for `MAX_NR_GENS + 1` values (0 = off-list).
pub const LRU_GEN_WIDTH: u32 = 3;
/// Bits of a folio's refs field: `MAX_NR_TIERS - 2`, which Debian amd64's page-flags layout
/// has room for (docs/design/mglru.md §1).
pub const LRU_REFS_WIDTH: u32 = 2;
/// The small batch (`BITS_PER_LONG`): the PID controller's noise floor, the isolation stop,
/// the look-around window.
pub const MIN_LRU_BATCH: u64 = 64;
/// The large batch: folios walked per `scan_folios`, folios moved per `inc_min_seq`.
pub const MAX_LRU_BATCH: u64 = MIN_LRU_BATCH * MIN_LRU_BATCH;
/// Generations of refault statistics kept (1 without `CONFIG_LRU_GEN_STATS`).
pub const NR_HIST_GENS: usize = 1;
/// The two types, `ANON` (0) and `FILE` (1) of `machine::lru`.
pub const ANON_AND_FILE: usize = 2;
/// The page-table walk's statistics (`enum lru_gen_mm_stats`), in `lru_gen_full`'s order:
/// leaf entries tested, found old, found young; non-leaf entries tested, found in the Bloom
/// filter, added to it.
pub const NR_MM_STATS: usize = 6;
pub const MM_LEAF_TOTAL: usize = 0;
pub const MM_LEAF_OLD: usize = 1;
pub const MM_LEAF_YOUNG: usize = 2;
pub const MM_NONLEAF_TOTAL: usize = 3;
pub const MM_NONLEAF_FOUND: usize = 4;
pub const MM_NONLEAF_ADDED: usize = 5;

/// Pages per generation, type and zone (`lrugen->nr_pages`).
pub type GenPages = [[[i64; MAX_NR_ZONES]; ANON_AND_FILE]; NR_GENS];
/// A statistic per type and tier.
pub type TierStat = [[u64; MAX_NR_TIERS]; ANON_AND_FILE];

/// The generation state of one lruvec (`struct lru_gen_struct` plus `mm_state.seq`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LruGen {
    /// The youngest generation's sequence number, for both types.
    pub max_seq: u64,
    /// The oldest generation's sequence number, per type.
    pub min_seq: [u64; ANON_AND_FILE],
    /// The jiffy at which each generation (by index) was created.
    pub timestamps: [u64; NR_GENS],
    pub nr_pages: GenPages,
    /// Moving averages of refaults and of evicted-plus-protected pages, per type and tier.
    pub avg_refaulted: TierStat,
    pub avg_total: TierStat,
    /// Refaults, evictions and protections counted since `min_seq[type]` last advanced.
    pub refaulted: [TierStat; NR_HIST_GENS],
    pub evicted: [TierStat; NR_HIST_GENS],
    /// Per tier 1..=3 (tier 0 is never protected by its tier), at index `tier - 1`.
    pub protected: [[[u64; MAX_NR_TIERS - 1]; ANON_AND_FILE]; NR_HIST_GENS],
    /// `mm_state.seq`: the `max_seq` for which the last mm-list iteration completed.
    pub mm_seq: u64,
    /// `mm_state.stats[0]`: the walk's statistics. With one history generation the kernel
    /// adds each walk's counts here and never clears them, so they run from boot.
    pub mm_stats: [u64; NR_MM_STATS],
    /// `mm_state.filters`: the page tables the next walks enter (`bloom.rs`).
    pub filters: BloomFilters,
    /// Tasks there were when the last walk iteration ended (None before the first): a task
    /// made since is new on the mm list, and the next iteration walks it whatever the filter
    /// says (`mm_state.tail`).
    pub mm_listed: Option<usize>,
}

impl LruGen {
    /// `lru_gen_init_lruvec` at jiffy `now`: generations 0..=3, all empty, all born now.
    pub fn new(now: u64) -> LruGen {
        LruGen {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0; ANON_AND_FILE],
            timestamps: [now; NR_GENS],
            nr_pages: [[[0; MAX_NR_ZONES]; ANON_AND_FILE]; NR_GENS],
            avg_refaulted: [[0; MAX_NR_TIERS]; ANON_AND_FILE],
            avg_total: [[0; MAX_NR_TIERS]; ANON_AND_FILE],
            refaulted: [[[0; MAX_NR_TIERS]; ANON_AND_FILE]; NR_HIST_GENS],
            evicted: [[[0; MAX_NR_TIERS]; ANON_AND_FILE]; NR_HIST_GENS],
            protected: [[[0; MAX_NR_TIERS - 1]; ANON_AND_FILE]; NR_HIST_GENS],
            mm_seq: MIN_NR_GENS,
            mm_stats: [0; NR_MM_STATS],
            filters: BloomFilters::default(),
            mm_listed: None,
        }
    }

    /// `get_nr_gens`: generations of `type` from its oldest to the youngest, both included
    /// (0 when `min_seq` has passed `max_seq`, which only a corrupted state has).
    #[inline]
    pub fn nr_gens(&self, type_: usize) -> u64 {
        (self.max_seq + 1).saturating_sub(self.min_seq[type_])
    }

    /// `seq_is_valid`: file keeps at least [`MIN_NR_GENS`] generations, never more than anon,
    /// and anon at most [`MAX_NR_GENS`]. (File can be ahead of anon only; while swap is
    /// usable the two oldest advance together.)
    pub fn seq_is_valid(&self) -> bool {
        let (anon, file) = (self.nr_gens(ANON), self.nr_gens(FILE));
        self.min_seq[ANON] <= self.max_seq
            && self.min_seq[FILE] <= self.max_seq
            && file >= MIN_NR_GENS
            && file <= anon
            && anon <= MAX_NR_GENS
    }
}
