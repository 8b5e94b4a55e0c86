//! Transparent huge page faults (mm/huge_memory.c): how hard a THP fault tries for its huge
//! page, by `/sys/kernel/mm/transparent_hugepage/defrag` (`[host] thp_defrag`).
//!
//! `vma_thp_gfp_mask` turns the setting into the fault's gfp mask; `vma_alloc_folio` then makes
//! its first attempt with `__GFP_THISNODE | __GFP_NORETRY` added, and tries once more with the
//! plain mask only when that mask may reclaim directly. The simulated THP stream (`gfp =
//! "transhuge"` of `[workload.highorder]`) faults in madvised regions (`MADV_HUGEPAGE`), as
//! the validation guest's program does. A mask that may not reclaim fails at once when no huge
//! page is free at the min watermark: no direct compaction, no direct reclaim, no kswapd
//! (`thp_fault_fallback`, and the fault takes a 4 KiB page). With a mask that may reclaim the
//! model makes the one full attempt (the first, non-retrying attempt is not modelled apart).

use super::gfp::{self, Gfp};

/// `transparent_hugepage/defrag`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThpDefrag {
    /// Direct reclaim and compaction for every THP fault.
    Always,
    /// Wake kswapd and kcompactd, never stall.
    Defer,
    /// Stall in madvised regions, wake kswapd/kcompactd elsewhere.
    DeferMadvise,
    /// Stall in madvised regions only (the upstream default).
    Madvise,
    /// Never stall, never wake kswapd: take a free huge page or fall back.
    Never,
}

impl ThpDefrag {
    pub const NAMES: &'static [&'static str] =
        &["always", "defer", "defer+madvise", "madvise", "never"];
    pub fn name(self) -> &'static str {
        match self {
            ThpDefrag::Always => "always",
            ThpDefrag::Defer => "defer",
            ThpDefrag::DeferMadvise => "defer+madvise",
            ThpDefrag::Madvise => "madvise",
            ThpDefrag::Never => "never",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        [
            ThpDefrag::Always,
            ThpDefrag::Defer,
            ThpDefrag::DeferMadvise,
            ThpDefrag::Madvise,
            ThpDefrag::Never,
        ]
        .into_iter()
        .find(|d| d.name() == s)
    }
}

/// `vma_thp_gfp_mask`: the gfp mask of a THP fault in a region that is (`madvised`) or is not
/// `MADV_HUGEPAGE`.
pub fn vma_thp_gfp_mask(defrag: ThpDefrag, madvised: bool) -> Gfp {
    use gfp::{__GFP_KSWAPD_RECLAIM, __GFP_NORETRY, GFP_TRANSHUGE, GFP_TRANSHUGE_LIGHT};
    match defrag {
        ThpDefrag::Always => GFP_TRANSHUGE | if madvised { 0 } else { __GFP_NORETRY },
        ThpDefrag::Defer => GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM,
        ThpDefrag::DeferMadvise if madvised => GFP_TRANSHUGE,
        ThpDefrag::DeferMadvise => GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM,
        ThpDefrag::Madvise if madvised => GFP_TRANSHUGE,
        ThpDefrag::Madvise | ThpDefrag::Never => GFP_TRANSHUGE_LIGHT,
    }
}

/// The mask the simulated THP fault allocates with: a madvised region's, and for a mask that
/// may not reclaim, `vma_alloc_folio`'s only attempt (`__GFP_THISNODE | __GFP_NORETRY`).
pub fn thp_fault_gfp(defrag: ThpDefrag) -> Gfp {
    let g = vma_thp_gfp_mask(defrag, true);
    if g & gfp::__GFP_DIRECT_RECLAIM == 0 {
        g | gfp::__GFP_THISNODE | gfp::__GFP_NORETRY
    } else {
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::gfp::*;

    #[test]
    fn the_defrag_settings_give_6_1s_masks() {
        assert_eq!(vma_thp_gfp_mask(ThpDefrag::Always, true), GFP_TRANSHUGE);
        assert_eq!(
            vma_thp_gfp_mask(ThpDefrag::Always, false),
            GFP_TRANSHUGE | __GFP_NORETRY
        );
        for madvised in [true, false] {
            assert_eq!(
                vma_thp_gfp_mask(ThpDefrag::Defer, madvised),
                GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM
            );
            assert_eq!(
                vma_thp_gfp_mask(ThpDefrag::Never, madvised),
                GFP_TRANSHUGE_LIGHT
            );
        }
        assert_eq!(
            vma_thp_gfp_mask(ThpDefrag::DeferMadvise, true),
            GFP_TRANSHUGE
        );
        assert_eq!(
            vma_thp_gfp_mask(ThpDefrag::DeferMadvise, false),
            GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM
        );
        assert_eq!(vma_thp_gfp_mask(ThpDefrag::Madvise, true), GFP_TRANSHUGE);
        assert_eq!(
            vma_thp_gfp_mask(ThpDefrag::Madvise, false),
            GFP_TRANSHUGE_LIGHT
        );
    }

    #[test]
    fn a_fault_that_may_not_reclaim_makes_one_local_non_retrying_attempt() {
        // What a 6.1 guest with defrag = never traced for its THP faults (mm_page_alloc).
        assert_eq!(
            thp_fault_gfp(ThpDefrag::Never),
            GFP_TRANSHUGE_LIGHT | __GFP_NORETRY | __GFP_THISNODE
        );
        assert_eq!(thp_fault_gfp(ThpDefrag::Madvise), GFP_TRANSHUGE);
        for d in ThpDefrag::NAMES {
            assert_eq!(ThpDefrag::from_name(d).unwrap().name(), *d);
        }
    }
}
