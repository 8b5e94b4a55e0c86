//! The multi-generational LRU's state as the machine holds it: per lruvec (the node's, or
//! each memcg's) the generation bookkeeping ([`LruGen`], `lruvec->lrugen`) and its folio
//! lists, per frame the generation byte, and the node's `/sys/kernel/mm/lru_gen/` knobs
//! (`include/linux/mmzone.h`'s `struct lru_gen_struct` lists, 6.1).
//!
//! It sits beside `Machine::lruvec` (in `Machine::lru_gen`), not inside `Lruvec`, whose file
//! this folder reads for `ANON`/`FILE`; the active/inactive gauges stay in
//! `Lruvec::zone_size`, kept by the functions of `mm_inline.rs`.
//!
//! Abstracted: the kernel keeps one list per generation, type and zone; here the zones of a
//! generation share one list (the model's lists are node-wide, as the two-list LRU's are),
//! so a folio of a zone above the reclaim index is met on the shared list and sorted to the
//! next generation (`sort_folio`'s zone rule) instead of being walked last.

use super::debugfs_cmd::DebugfsWrites;
use super::mm_inline::FolioGens;
use super::mmzone::{LruGen, ANON_AND_FILE, NR_GENS};
use crate::machine::frames::List;

/// One lruvec's generations: the bookkeeping and the lists (`lrugen->folios[gen][type]`).
#[derive(Debug, Clone)]
pub struct LruGenLruvec {
    pub gen: LruGen,
    pub lists: [[List; ANON_AND_FILE]; NR_GENS],
}

impl LruGenLruvec {
    pub fn new(now: u64) -> LruGenLruvec {
        LruGenLruvec {
            gen: LruGen::new(now),
            lists: [[List::default(); ANON_AND_FILE]; NR_GENS],
        }
    }
}

/// The node's multi-generational LRU (present only when it is built in and enabled).
#[derive(Debug, Clone)]
pub struct LruGenNode {
    /// Each frame's generation and refs fields.
    pub folios: FolioGens,
    /// Indexed by memcg id (0: the root, or the node's only lruvec without cgroups).
    pub lruvecs: Vec<LruGenLruvec>,
    /// `lru_gen/enabled`: the capabilities that are on and supported.
    pub caps: u32,
    /// `lru_gen/min_ttl_ms`, in jiffies.
    pub min_ttl: u64,
    /// Kswapd OOM kills `min_ttl` called for (`lru_gen_age_node`).
    pub min_ttl_kills: u64,
    /// Page-table entries the aging walk tested (its cost is `[cost] lru_gen_walk` each).
    pub walked: u64,
    /// What the writes to `/sys/kernel/debug/lru_gen` did.
    pub debugfs: DebugfsWrites,
    /// The reclaimer under way has walk state (`current->reclaim_state->mm_walk`): kswapd
    /// and the debugfs writer always, direct reclaim once it has aged with the walk in this
    /// `lru_gen_shrink_lruvec` call. Decides how look-around promotes.
    pub mm_walk: bool,
}

impl LruGenNode {
    pub fn new(nframes: usize, nlruvecs: usize, caps: u32, min_ttl: u64, now: u64) -> Self {
        LruGenNode {
            folios: FolioGens::new(nframes),
            lruvecs: vec![LruGenLruvec::new(now); nlruvecs.max(1)],
            caps,
            min_ttl,
            min_ttl_kills: 0,
            walked: 0,
            debugfs: DebugfsWrites::default(),
            mm_walk: false,
        }
    }

    /// The lruvec of memcg `id`, made on first use (a memcg created after the machine).
    #[inline]
    pub fn lruvec(&mut self, id: usize, now: u64) -> &mut LruGenLruvec {
        if id >= self.lruvecs.len() {
            self.lruvecs.resize(id + 1, LruGenLruvec::new(now));
        }
        &mut self.lruvecs[id]
    }
}
