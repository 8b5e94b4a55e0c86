//! Before 4.6 there is no kcompactd: a high-order request kswapd leaves unmet waits for direct
//! compaction by the allocating task.

use crate::actors::kcompactd::KcompactdPolicy;

#[derive(Debug)]
pub struct NoDaemon;

impl KcompactdPolicy for NoDaemon {
    fn woken_by_kswapd(&self) -> bool {
        false
    }
    fn proactive(&self) -> bool {
        false
    }
}
