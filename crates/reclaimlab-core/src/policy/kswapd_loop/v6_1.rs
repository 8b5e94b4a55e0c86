//! Linux 6.1 `balance_pgdat`: once a pass has reclaimed `compact_gap(order)` pages kswapd goes
//! on at order 0 and leaves the high-order block to kcompactd; when the priority runs out it
//! returns to `kswapd()`'s loop, which decides whether to sleep.

use crate::actors::kswapd::KswapdLoop;

#[derive(Debug)]
pub struct OrderZeroAfterGap;

impl KswapdLoop for OrderZeroAfterGap {
    fn order_zero_after_compact_gap(&self) -> bool {
        true
    }
    fn restart_unbalanced_sweep(&self) -> bool {
        false
    }
}
