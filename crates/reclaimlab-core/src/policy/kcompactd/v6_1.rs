//! 5.9 and later (6.1): kcompactd is woken by kswapd as since 4.6, and when nothing woke it for
//! 500 ms it checks the node's fragmentation score and compacts proactively
//! (`vm.compaction_proactiveness`, 20 by default).

use crate::actors::kcompactd::KcompactdPolicy;

#[derive(Debug)]
pub struct Proactive;

impl KcompactdPolicy for Proactive {
    fn woken_by_kswapd(&self) -> bool {
        true
    }
    fn proactive(&self) -> bool {
        true
    }
}
