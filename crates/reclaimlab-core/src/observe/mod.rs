//! Observation: counters with the kernel's names and semantics and the kernel's text formats.

pub mod counter_checks;
pub mod fs;
pub mod ftrace;
pub mod guests;
pub mod invariants;
pub mod lru_gen;
pub mod memcg;
pub mod output;
pub mod procfs;
pub mod render;
pub mod slab_invariants;
pub mod spool;
pub mod summary;
pub mod timeseries;
pub mod vm_rss;
pub mod xen;
