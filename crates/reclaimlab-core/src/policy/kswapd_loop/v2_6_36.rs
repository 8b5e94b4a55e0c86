//! The 2.6.3x `balance_pgdat`: kswapd keeps reclaiming at the requested order (lumpy reclaim);
//! a priority sweep that ends unbalanced restarts at DEF_PRIORITY (`loop_again`), and a sweep
//! that freed fewer than SWAP_CLUSTER_MAX pages gives the order up.

use crate::actors::kswapd::KswapdLoop;

#[derive(Debug)]
pub struct LoopAgain;

impl KswapdLoop for LoopAgain {
    fn order_zero_after_compact_gap(&self) -> bool {
        false
    }
    fn restart_unbalanced_sweep(&self) -> bool {
        true
    }
}
