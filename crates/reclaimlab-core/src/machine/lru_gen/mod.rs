//! The multi-generational LRU (`lru_gen`, 6.1; docs/design/mglru.md): the second
//! page-replacement algorithm of `mm/vmscan.c`, which issue 35 adds beside the two-list LRU of
//! `machine/lru.rs` as a switch.
//!
//! This folder holds its arithmetic and its decisions over plain numbers: generation and tier
//! numbers, the per-lruvec sequence bookkeeping and page counts, where a folio is placed, when
//! to age, how the refault feedback chooses what to evict, when `min_ttl_ms` calls for an OOM
//! kill, and the text of its sysfs and debugfs files. Every function takes the folio's flags
//! (`pg::*`, as `Frames::page_flags` gives them) and its generation byte
//! ([`mm_inline::FolioGen`]) by value or `&mut`, and the active/inactive gauges as the
//! `Lruvec::zone_size` array. The state the machine holds (`lruvec.rs`: the lists, the
//! per-frame bytes, the knobs) sits in `Machine::lru_gen`; the machine's side of the kernel's
//! code (list moves, the walk, the eviction loop, the counters) is `vmscan/lru_gen.rs`, which
//! calls in here (issue 35, `[policy] lru = "mglru"`).
//!
//! Files, after the kernel parts they model:
//!
//! | file | kernel | what |
//! |---|---|---|
//! | `mmzone.rs` | `include/linux/mmzone.h` | constants, `struct lru_gen_struct` ([`mmzone::LruGen`]), the validity rule |
//! | `mm_inline.rs` | `include/linux/mm_inline.h`, `mm/swap.c` | seq → gen, refs → tier, the folio's gen/refs byte, size bookkeeping, placement, `folio_inc_refs`, `folio_update_gen`/`folio_inc_gen` |
//! | `feedback.rs` | `mm/vmscan.c`, refault feedback loop | the PID controller's positions and decisions, the moving averages, swappiness |
//! | `aging.rs` | `mm/vmscan.c`, the aging | `should_run_aging`, `inc_min_seq`, `try_to_inc_min_seq`, `inc_max_seq`, `age_lruvec` and `min_ttl`, look-around window and density |
//! | `bloom.rs` | `mm/vmscan.c`, Bloom filters | which page tables the aging walk enters |
//! | `eviction.rs` | `mm/vmscan.c`, the eviction | `get_nr_to_scan`, zone order, `sort_folio`, `isolate_folio`, `should_abort_scan` |
//! | `workingset.rs` | `mm/workingset.c` (`lru_gen_eviction`, `lru_gen_refault`) | the shadow token and refault accounting |
//! | `lruvec.rs` | `include/linux/mmzone.h` (`lrugen->folios`) | the generation lists and per-frame bytes the machine holds |
//! | `sysfs.rs`, `debugfs.rs` | `/sys/kernel/mm/lru_gen/`, `/sys/kernel/debug/lru_gen{,_full}` | `enabled`, `min_ttl_ms`, the generation dumps |
//! | `debugfs_cmd.rs` | `mm/vmscan.c`, `lru_gen_seq_write`/`run_cmd` | the commands written to `lru_gen`: how they read, their checks and end tests |
//!
//! Dependencies point one way: `bloom` ← `mmzone` ← `mm_inline` ← `feedback` ← `aging`, `eviction`,
//! `workingset`. Nothing here reads `vmscan/` or `Machine`, so the reclaim code can call in
//! without a loop; the state is meant to sit beside `Machine::lruvec` (not inside `Lruvec`,
//! whose file this folder reads for `ANON`/`FILE` and the gauge indexes).
//!
//! Where the switch plugs in (the machine's functions that stand for the kernel's hooks):
//! `Machine::lru_add`/`lru_del` (`folio_add_lru`, with `PG_active` set inside a fault:
//! `anon_fault`, `swapin_fault` and its read-ahead; not for `page_cache_insert` from
//! `file_access`), `mark_accessed` (→ `folio_inc_refs`), `end_writeback`'s rotation
//! (→ `lru_gen_add_folio` with `reclaiming`), `workingset_eviction`/`workingset_refault`
//! (→ [`workingset`]), `folio_referenced` in `folio_check_references` (look-around),
//! `shrink_lruvec` (→ `lru_gen_shrink_lruvec`; `prepare_scan_count` and `snapshot_refaults`
//! return at once), `kswapd_age_node` (→ `lru_gen_age_node`), and the invariant check that
//! recounts `Lruvec::zone_size` ([`mmzone::LruGen::recount_gauge`]).

pub mod aging;
pub mod bloom;
pub mod debugfs;
pub mod debugfs_cmd;
pub mod eviction;
pub mod feedback;
pub mod lruvec;
pub mod mm_inline;
pub mod mmzone;
pub mod sysfs;
pub mod workingset;

#[cfg(test)]
mod tests;
