//! The refault feedback loop of the multi-generational LRU (`mm/vmscan.c`, 6.1;
//! docs/design/mglru.md §5.2, §5.5, §5.8): which type to evict and which tiers to protect.
//!
//! Eviction compares refault rates. For a type and tier, the "position" is its refaults over
//! the pages it lost (evicted, plus protected for tiers above 0), each the sum of a moving
//! average (the past generations) and the count since the oldest generation of that type began.
//! A comparison between a set point and a process variable (`positive_ctrl_err`) scales each
//! rate by a gain and smooths with +1 and +64; fewer than 64 refaults are too few to judge.
//! The type with the lower weighted rate at tier 0 is evicted; within it, tiers whose rate
//! stays within the gain of the reference are evicted too, the rest are protected. The
//! averages halve every time the oldest generation of a type is retired. All integer
//! arithmetic, wrapping at 64 bits like the kernel's `unsigned long`.
//!
//! Swappiness enters twice: 0 excludes anon altogether (and swap space under 64 pages makes
//! it 0), and otherwise it is anon's gain against file's `200 - swappiness`.

use super::mm_inline::lru_hist_from_seq;
use super::mmzone::{LruGen, ANON_AND_FILE, MAX_NR_TIERS, MIN_LRU_BATCH};
use crate::machine::lru::{ANON, FILE};

/// The ceiling of `vm.swappiness`: 200 means anon only, when both are equally old.
pub const MAX_SWAPPINESS: u64 = 200;

/// `struct ctrl_pos`: a refault rate (`refaulted / total`) and the gain it is weighted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CtrlPos {
    pub refaulted: u64,
    pub total: u64,
    pub gain: u64,
}

/// `positive_ctrl_err(sp, pv)`: may `pv` be evicted as freely as `sp`? True when `pv` has too
/// few refaults to judge, or its refault rate divided by its gain is at most `sp`'s (smoothed)
/// divided by `sp`'s gain.
#[inline]
pub fn positive_ctrl_err(sp: &CtrlPos, pv: &CtrlPos) -> bool {
    let lhs = pv
        .refaulted
        .wrapping_mul(sp.total.wrapping_add(MIN_LRU_BATCH))
        .wrapping_mul(sp.gain);
    let rhs = sp
        .refaulted
        .wrapping_add(1)
        .wrapping_mul(pv.total)
        .wrapping_mul(pv.gain);
    pv.refaulted < MIN_LRU_BATCH || lhs <= rhs
}

/// `get_swappiness` (6.1): 0 when the node cannot demote and fewer than 64 pages of swap are
/// usable (free swap for the root memcg), else the memcg's swappiness.
#[inline]
pub fn get_swappiness(can_demote: bool, nr_swap_pages: u64, swappiness: u64) -> u64 {
    if !can_demote && nr_swap_pages < MIN_LRU_BATCH {
        0
    } else {
        swappiness
    }
}

/// The swappiness of one turn of `lru_gen_shrink_lruvec`'s loop: `get_swappiness` when the
/// reclaimer may swap; otherwise 1 ("file first") for global reclaim with swap usable (as
/// boosted kswapd reclaim), 0 ("file only") else.
#[inline]
pub fn shrink_swappiness(may_swap: bool, cgroup_reclaim: bool, get_swappiness: u64) -> u64 {
    if may_swap {
        get_swappiness
    } else if !cgroup_reclaim && get_swappiness != 0 {
        1
    } else {
        0
    }
}

/// The PID gains of the two types at this swappiness (`gain[ANON]`, `gain[FILE]`).
#[inline]
pub fn type_gains(swappiness: u64) -> [u64; ANON_AND_FILE] {
    [swappiness, MAX_SWAPPINESS - swappiness]
}

/// The gain of the reference tier 0 and of the higher tiers in `get_tier_idx`: a tier may
/// refault up to twice as often as tier 0 before it is protected.
pub const TIER_GAINS: (u64, u64) = (1, 2);

impl LruGen {
    /// `read_ctrl_pos`: the position of `type_`'s `tier` with gain `gain`.
    pub fn read_ctrl_pos(&self, type_: usize, tier: usize, gain: u64) -> CtrlPos {
        let hist = lru_hist_from_seq(self.min_seq[type_]);
        let mut total = self.avg_total[type_][tier] + self.evicted[hist][type_][tier];
        if tier > 0 {
            total += self.protected[hist][type_][tier - 1];
        }
        CtrlPos {
            refaulted: self.avg_refaulted[type_][tier] + self.refaulted[hist][type_][tier],
            total,
            gain,
        }
    }

    /// `get_tier_idx`: the highest tier of `type_` still evicted; tiers above it are
    /// protected by `sort_folio`. The first tier whose weighted refault rate exceeds tier 0's
    /// ends the run.
    pub fn get_tier_idx(&self, type_: usize) -> usize {
        let sp = self.read_ctrl_pos(type_, 0, TIER_GAINS.0);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(type_, tier, TIER_GAINS.1);
            if !positive_ctrl_err(&sp, &pv) {
                break;
            }
            tier += 1;
        }
        tier - 1
    }

    /// `get_type_to_scan`: compare the two types' tier 0, weighted by their gains; evict file
    /// if its rate is no worse than anon's. The tiers of the chosen type are then compared
    /// with the other type's tier 0. Returns `(type, tier_idx)`.
    pub fn get_type_to_scan(&self, swappiness: u64) -> (usize, usize) {
        let gain = type_gains(swappiness);
        let sp = self.read_ctrl_pos(ANON, 0, gain[ANON]);
        let pv = self.read_ctrl_pos(FILE, 0, gain[FILE]);
        let type_ = if positive_ctrl_err(&sp, &pv) {
            FILE
        } else {
            ANON
        };
        let other = 1 - type_;
        let sp = self.read_ctrl_pos(other, 0, gain[other]);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(type_, tier, gain[type_]);
            if !positive_ctrl_err(&sp, &pv) {
                break;
            }
            tier += 1;
        }
        (type_, tier - 1)
    }

    /// `isolate_folios`' first choice of type: file only at swappiness 0, the older type when
    /// anon is older, file at 1, anon at 200, else the PID controller (which also picks the
    /// tier index; `None`: ask [`LruGen::get_tier_idx`] for the chosen type). When the
    /// chosen type gives nothing, `isolate_folios` tries the other one with its own tier
    /// index, unless swappiness is 0 ([`isolate_attempts`]).
    pub fn first_type_to_scan(&self, swappiness: u64) -> (usize, Option<usize>) {
        if swappiness == 0 {
            (FILE, None)
        } else if self.min_seq[ANON] < self.min_seq[FILE] {
            (ANON, None)
        } else if swappiness == 1 {
            (FILE, None)
        } else if swappiness == MAX_SWAPPINESS {
            (ANON, None)
        } else {
            let (t, tier) = self.get_type_to_scan(swappiness);
            (t, Some(tier))
        }
    }

    /// `reset_ctrl_pos` with carry-over, when `min_seq[type_]` advances: fold the counts of
    /// the retired generation into the moving averages (each halves the sum) and zero them.
    pub fn reset_ctrl_pos(&mut self, type_: usize) {
        let hist = lru_hist_from_seq(self.min_seq[type_]);
        for tier in 0..MAX_NR_TIERS {
            let refaulted = self.avg_refaulted[type_][tier] + self.refaulted[hist][type_][tier];
            self.avg_refaulted[type_][tier] = refaulted / 2;
            let mut total = self.avg_total[type_][tier] + self.evicted[hist][type_][tier];
            if tier > 0 {
                total += self.protected[hist][type_][tier - 1];
                self.protected[hist][type_][tier - 1] = 0;
            }
            self.avg_total[type_][tier] = total / 2;
            self.refaulted[hist][type_][tier] = 0;
            self.evicted[hist][type_][tier] = 0;
        }
    }
}

/// How many types `isolate_folios` tries: one at swappiness 0 (file), else both.
#[inline]
pub fn isolate_attempts(swappiness: u64) -> usize {
    if swappiness == 0 {
        1
    } else {
        ANON_AND_FILE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state whose current counts are the given (refaulted, total) per tier of each type;
    /// the averages are 0, so a position is exactly these numbers.
    fn with(anon: &[(u64, u64)], file: &[(u64, u64)]) -> LruGen {
        let mut l = LruGen::new(0);
        for (t, tiers) in [(ANON, anon), (FILE, file)] {
            for (k, &(r, total)) in tiers.iter().enumerate() {
                l.refaulted[0][t][k] = r;
                l.evicted[0][t][k] = total;
            }
        }
        l
    }

    fn pos(refaulted: u64, total: u64, gain: u64) -> CtrlPos {
        CtrlPos {
            refaulted,
            total,
            gain,
        }
    }

    /// E3: the type choice at swappiness 60 and 100.
    #[test]
    fn type_choice_e3() {
        // (a) lhs = 500 * 1064 * 60 = 31 920 000 > rhs = 101 * 2000 * 140 = 28 280 000.
        assert!(!positive_ctrl_err(
            &pos(100, 1000, 60),
            &pos(500, 2000, 140)
        ));
        let l = with(&[(100, 1000)], &[(500, 2000)]);
        assert_eq!(l.get_type_to_scan(60).0, ANON);
        // (b) 12 768 000 <= 168 560 000: file.
        assert!(positive_ctrl_err(&pos(300, 1000, 60), &pos(200, 4000, 140)));
        let l = with(&[(300, 1000)], &[(200, 4000)]);
        assert_eq!(l.get_type_to_scan(60).0, FILE);
        // (c) 63 refaults are below the noise floor, whatever the totals; 64 are not.
        assert!(positive_ctrl_err(&pos(0, 1, 60), &pos(63, 1, 140)));
        assert!(!positive_ctrl_err(&pos(0, 1, 60), &pos(64, 1, 140)));
        let l = with(&[(0, 1000)], &[(63, 64)]);
        assert_eq!(l.get_type_to_scan(60).0, FILE);
        // (d) (a)'s numbers at swappiness 100: 53 200 000 > 20 200 000, anon.
        assert_eq!(type_gains(100), [100, 100]);
        assert!(!positive_ctrl_err(
            &pos(100, 1000, 100),
            &pos(500, 2000, 100)
        ));
        let l = with(&[(100, 1000)], &[(500, 2000)]);
        assert_eq!(l.get_type_to_scan(100).0, ANON);
        // The equality case is positive (<=): a swapped comparison or a strict test fails.
        // 64 * (0 + 64) * 1 = 4096 = (0 + 1) * 64 * 64.
        assert!(positive_ctrl_err(&pos(0, 0, 1), &pos(64, 64, 64)));
        assert!(!positive_ctrl_err(&pos(0, 0, 1), &pos(65, 64, 64)));
    }

    /// E4: the tier index, within file and in E3(b)'s type-choice path.
    #[test]
    fn tier_index_e4() {
        let file = [(200, 4000), (30, 500), (90, 1000), (400, 800)];
        let l = with(&[], &file);
        // Tier 2: 90 * 4064 * 1 = 365 760 <= 201 * 1000 * 2 = 402 000; tier 3 is not.
        assert_eq!(l.get_tier_idx(FILE), 2);
        // With gain 1 for the higher tiers too, tier 2 would already be protected.
        let sp = l.read_ctrl_pos(FILE, 0, 1);
        assert!(!positive_ctrl_err(&sp, &l.read_ctrl_pos(FILE, 2, 1)));
        assert!(positive_ctrl_err(&sp, &l.read_ctrl_pos(FILE, 2, 2)));
        // Nothing refaults: every tier is evicted (tier_idx 3).
        assert_eq!(with(&[], &[]).get_tier_idx(FILE), 3);
        // E3(b) with file tiers 1 (100, 2000) and 2 (600, 700): tier_idx 1.
        let l = with(&[(300, 1000)], &[(200, 4000), (100, 2000), (600, 700)]);
        assert_eq!(l.get_type_to_scan(60), (FILE, 1));
        // Tier 2: 600 * 1064 * 60 = 38 304 000 > 301 * 700 * 140 = 29 498 000.
        assert!(!positive_ctrl_err(&pos(300, 1000, 60), &pos(600, 700, 140)));
    }

    /// Protected pages count in a tier's total (tier k reads protected[k - 1]); tier 0 has none.
    #[test]
    fn positions_add_averages_and_protected() {
        let mut l = LruGen::new(0);
        l.avg_refaulted[FILE][2] = 10;
        l.refaulted[0][FILE][2] = 5;
        l.avg_total[FILE][2] = 100;
        l.evicted[0][FILE][2] = 50;
        l.protected[0][FILE][1] = 7;
        l.protected[0][FILE][0] = 1000;
        assert_eq!(l.read_ctrl_pos(FILE, 2, 3), pos(15, 157, 3));
        l.evicted[0][ANON][0] = 9;
        assert_eq!(l.read_ctrl_pos(ANON, 0, 1), pos(0, 9, 1));
    }

    /// The short-cuts of `isolate_folios` before the PID controller.
    #[test]
    fn first_type_short_cuts() {
        // File refaults a lot: the controller alone would pick anon.
        let mut l = with(&[(0, 1000)], &[(900, 1000)]);
        assert_eq!(l.first_type_to_scan(60), (ANON, Some(3)));
        assert_eq!(l.first_type_to_scan(0), (FILE, None));
        assert_eq!(l.first_type_to_scan(1), (FILE, None));
        assert_eq!(l.first_type_to_scan(200), (ANON, None));
        let l2 = with(&[(900, 1000)], &[(0, 1000)]);
        assert_eq!(l2.first_type_to_scan(60).0, FILE);
        assert_eq!(l2.first_type_to_scan(200), (ANON, None));
        // Anon older than file: anon, whatever the rates (but not at swappiness 0).
        l.min_seq = [4, 5];
        assert_eq!(l.first_type_to_scan(1), (ANON, None));
        assert_eq!(l.first_type_to_scan(0), (FILE, None));
        assert_eq!((isolate_attempts(0), isolate_attempts(1)), (1, 2));
    }

    /// §5.2: the swappiness of a reclaim turn.
    #[test]
    fn swappiness_split() {
        assert_eq!(get_swappiness(false, 63, 60), 0);
        assert_eq!(get_swappiness(false, 64, 60), 60);
        assert_eq!(get_swappiness(true, 0, 60), 60);
        assert_eq!(shrink_swappiness(true, false, 60), 60);
        assert_eq!(shrink_swappiness(false, false, 60), 1);
        assert_eq!(shrink_swappiness(false, true, 60), 0);
        assert_eq!(shrink_swappiness(false, false, 0), 0);
        assert_eq!(type_gains(60), [60, 140]);
    }

    /// E5: the fold halves sums in integers and zeroes the current counts.
    #[test]
    fn fold_e5() {
        let mut l = LruGen::new(0);
        l.avg_refaulted[FILE][2] = 100;
        l.refaulted[0][FILE][2] = 60;
        l.avg_total[FILE][2] = 1000;
        l.evicted[0][FILE][2] = 500;
        l.protected[0][FILE][1] = 100;
        l.avg_refaulted[FILE][1] = 7;
        l.evicted[0][ANON][0] = 40;
        l.reset_ctrl_pos(FILE);
        assert_eq!((l.avg_refaulted[FILE][2], l.avg_total[FILE][2]), (80, 800));
        assert_eq!(l.avg_refaulted[FILE][1], 3);
        assert_eq!(
            (
                l.refaulted[0][FILE][2],
                l.evicted[0][FILE][2],
                l.protected[0][FILE][1]
            ),
            (0, 0, 0)
        );
        // The other type is untouched.
        assert_eq!(l.evicted[0][ANON][0], 40);
    }
}
