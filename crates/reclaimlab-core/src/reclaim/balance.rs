//! "Is the node balanced?": the rule kswapd uses to decide it may stop reclaiming and sleep,
//! and `wakeup_kswapd` uses to decide it need not wake kswapd. One function per kernel
//! variant, selected by `[policy] kswapd_balance` (the historical variants of core-mm §4.8
//! slot in beside `v6_1`).

use crate::mm::node::Node;
use crate::mm::MAX_NR_ZONES;
use crate::scenario::KswapdBalance;

impl Node {
    /// `pgdat_balanced(order, highest_zoneidx)` under the scenario's policy.
    pub fn pgdat_balanced(&self, order: u32, hz: usize) -> bool {
        match self.cfg.kswapd_balance {
            KswapdBalance::V6_1 => v6_1(self, order, hz),
        }
    }
}

/// Linux 6.1 (core-mm §4.5): balanced when ANY managed zone <= hz meets its high watermark
/// (boost included) at `order`, counting its `lowmem_reserve[hz]`; also balanced when no
/// managed zone <= hz exists.
pub fn v6_1(node: &Node, order: u32, hz: usize) -> bool {
    let mut any_managed = false;
    for z in 0..=hz.min(MAX_NR_ZONES - 1) {
        let zone = &node.zones[z];
        if !zone.is_managed() {
            continue;
        }
        any_managed = true;
        if zone.watermark_ok(order, zone.high_wmark_pages(), hz, 0) {
            return true;
        }
    }
    !any_managed
}
