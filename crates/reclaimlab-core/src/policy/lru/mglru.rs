//! The multi-generational LRU of 6.1 (`machine/lru_gen/`, driven from
//! `machine/vmscan/lru_gen.rs`): built in, and on when `[sysctl] lru_gen_enabled` has its core
//! bit.

use crate::machine::policy::PageReplacement;

#[derive(Debug)]
pub struct MultiGenLru;

impl PageReplacement for MultiGenLru {
    fn lru_gen_built(&self) -> bool {
        true
    }
}
