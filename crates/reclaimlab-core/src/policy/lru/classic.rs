//! The two-list LRU (`machine/lru.rs`, `machine/vmscan/`): what every kernel before 6.1 runs,
//! and 6.1 with `CONFIG_LRU_GEN` off.

use crate::machine::policy::PageReplacement;

#[derive(Debug)]
pub struct TwoListLru;

impl PageReplacement for TwoListLru {
    fn lru_gen_built(&self) -> bool {
        false
    }
}
