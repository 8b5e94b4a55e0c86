//! Refault accounting under the multi-generational LRU (`mm/workingset.c`'s
//! `lru_gen_eviction` and `lru_gen_refault`, 6.1.192; docs/design/mglru.md §5.8).
//!
//! There is no refault distance. An evicted folio leaves a token: the oldest sequence number
//! of its type at that moment and its access count. A refault counts (for the PID controller
//! and `workingset_refault_*`) only if that oldest generation is still the oldest: the folio
//! came back before its generation's statistics were folded. A refault in a page fault, or of
//! a folio read through file descriptors at least four times, gets its access history back in
//! full (`workingset_restore_*`), so that its tier protects it at its next eviction.
//!
//! The model's shadow entry has 28 bits of eviction information (`pte::SHADOW_AGE_MASK`)
//! beside its workingset bit; the token takes them, leaving 26 bits of `min_seq` (the
//! kernel's amd64 shadow keeps 34; either is far more generations than a run makes). No node
//! or memcg id is stored: one node, and the memcg comparison is left to the cgroup wiring.

use super::mm_inline::{lru_hist_from_seq, lru_tier_from_refs, FolioGen, MAX_REFS_FIELD};
use super::mmzone::{LruGen, LRU_REFS_WIDTH};
use crate::machine::frames::pg;
use crate::machine::pte::SHADOW_AGE_MASK;

/// The token bits of a shadow entry.
pub const TOKEN_MASK: u32 = SHADOW_AGE_MASK;
/// The `min_seq` bits a token keeps.
pub const TOKEN_SEQ_MASK: u64 = (TOKEN_MASK >> LRU_REFS_WIDTH) as u64;
const TOKEN_REFS_MASK: u32 = (1 << LRU_REFS_WIDTH) - 1;

/// What an evicted folio leaves behind: the token and the workingset bit (`refs > 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LruGenShadow {
    pub token: u32,
    pub workingset: bool,
}

/// What `lru_gen_refault` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refault {
    /// The token matched the type's current oldest generation: counted in `refaulted` and in
    /// `workingset_refault_<type>`.
    pub counted: bool,
    pub tier: usize,
    /// Its access history was restored (`workingset_restore_<type>`).
    pub restored: bool,
}

impl LruGen {
    /// `lru_gen_eviction` for `n` pages of `type_` with `refs` accesses (`folio_lru_refs`):
    /// count them as evicted from their tier and make the shadow.
    pub fn lru_gen_eviction(&mut self, type_: usize, refs: u32, n: u64) -> LruGenShadow {
        let min_seq = self.min_seq[type_];
        let tier = lru_tier_from_refs(refs);
        self.evicted[lru_hist_from_seq(min_seq)][type_][tier] += n;
        let token = ((min_seq << LRU_REFS_WIDTH) as u32 | refs.saturating_sub(1)) & TOKEN_MASK;
        LruGenShadow {
            token,
            workingset: refs > 0,
        }
    }

    /// `lru_gen_refault` of `n` pages of `type_` (before the new folio is added to the LRU;
    /// `flags` and `g` are the new folio's). `in_fault`: the task is in a page fault
    /// (`lru_gen_in_fault`).
    pub fn lru_gen_refault(
        &mut self,
        type_: usize,
        shadow: LruGenShadow,
        in_fault: bool,
        n: u64,
        flags: &mut u16,
        g: &mut FolioGen,
    ) -> Refault {
        let min_seq = self.min_seq[type_];
        let refs = (shadow.token & TOKEN_REFS_MASK) + shadow.workingset as u32;
        let tier = lru_tier_from_refs(refs);
        if (shadow.token >> LRU_REFS_WIDTH) as u64 != min_seq & TOKEN_SEQ_MASK {
            return Refault {
                counted: false,
                tier,
                restored: false,
            };
        }
        self.refaulted[lru_hist_from_seq(min_seq)][type_][tier] += n;
        // 6.1.192 restores from three refs on (6.1.0: only saturated ones, four).
        let restored = in_fault || refs >= MAX_REFS_FIELD as u32;
        if restored {
            g.set_refs_field(MAX_REFS_FIELD);
            *flags |= pg::WORKINGSET;
        }
        Refault {
            counted: true,
            tier,
            restored,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::lru::{ANON, FILE};
    use crate::machine::lru_gen::mm_inline::{folio_inc_refs, folio_lru_refs};

    /// E7 (a)-(c).
    #[test]
    fn refault_token_e7() {
        let mut l = LruGen::new(0);
        l.min_seq = [37, 37];
        l.max_seq = 39;
        // A file folio read 4 times: refs 3.
        let (mut f, mut g) = (0u16, FolioGen::on(1, 0));
        for _ in 0..4 {
            folio_inc_refs(&mut f, &mut g);
        }
        assert_eq!(folio_lru_refs(f, g), 3);
        let shadow = l.lru_gen_eviction(FILE, 3, 1);
        assert_eq!(l.evicted[0][FILE], [0, 0, 1, 0]);
        assert_eq!(
            shadow,
            LruGenShadow {
                token: 37 * 4 + 2,
                workingset: true
            }
        );
        // (a) It comes back through read() at the same min_seq: tier 2, restored (refs >= 3).
        let mut l_a = l.clone();
        let (mut f, mut g) = (0u16, FolioGen::default());
        let r = l_a.lru_gen_refault(FILE, shadow, false, 1, &mut f, &mut g);
        assert_eq!(
            r,
            Refault {
                counted: true,
                tier: 2,
                restored: true
            }
        );
        assert_eq!(l_a.refaulted[0][FILE], [0, 0, 1, 0]);
        assert_eq!((g.refs_field(), f), (3, pg::WORKINGSET));
        // Restored: refs 4, saturated, so sort_folio protects it whatever the tier index.
        assert_eq!(folio_lru_refs(f, g), 4);
        // (b) After min_seq[FILE] moved to 38: nothing counted, nothing restored.
        let mut l_b = l.clone();
        l_b.min_seq[FILE] = 38;
        let (mut f, mut g) = (0u16, FolioGen::default());
        let r = l_b.lru_gen_refault(FILE, shadow, true, 1, &mut f, &mut g);
        assert!(!r.counted && !r.restored);
        assert_eq!(
            (l_b.refaulted[0][FILE], f, g),
            ([0; 4], 0, FolioGen::default())
        );
        // (c) Evicted with refs 0, refaulting in a fault: tier 0, counted and restored.
        let mut l_c = l.clone();
        let shadow0 = l_c.lru_gen_eviction(ANON, 0, 1);
        assert_eq!(
            shadow0,
            LruGenShadow {
                token: 37 * 4,
                workingset: false
            }
        );
        let (mut f, mut g) = (pg::SWAPBACKED, FolioGen::default());
        let r = l_c.lru_gen_refault(ANON, shadow0, true, 1, &mut f, &mut g);
        assert_eq!(
            r,
            Refault {
                counted: true,
                tier: 0,
                restored: true
            }
        );
        // The same outside a fault: counted, not restored.
        let (mut f, mut g) = (pg::SWAPBACKED, FolioGen::default());
        let r = l_c.lru_gen_refault(ANON, shadow0, false, 1, &mut f, &mut g);
        assert_eq!((r.counted, r.restored, f), (true, false, pg::SWAPBACKED));
        assert_eq!(l_c.refaulted[0][ANON], [2, 0, 0, 0]);
        // refs 2 (three reads) outside a fault: counted at tier 2, not restored.
        let mut l_d = l.clone();
        let s2 = l_d.lru_gen_eviction(FILE, 2, 1);
        let (mut f, mut g) = (0u16, FolioGen::default());
        let r = l_d.lru_gen_refault(FILE, s2, false, 1, &mut f, &mut g);
        assert_eq!((r.tier, r.restored), (2, false));
    }

    /// The token keeps 26 bits of min_seq: a generation 2^26 later aliases (and counts),
    /// one later does not.
    #[test]
    fn token_truncation() {
        assert_eq!(TOKEN_SEQ_MASK, (1 << 26) - 1);
        let mut l = LruGen::new(0);
        l.min_seq[FILE] = 5;
        let s = l.lru_gen_eviction(FILE, 1, 1);
        assert_eq!(s.token, 5 << 2);
        let (mut f, mut g) = (0u16, FolioGen::default());
        l.min_seq[FILE] = 5 + (1 << 26);
        assert!(l.lru_gen_refault(FILE, s, false, 1, &mut f, &mut g).counted);
        l.min_seq[FILE] = 6 + (1 << 26);
        assert!(!l.lru_gen_refault(FILE, s, false, 1, &mut f, &mut g).counted);
    }
}
