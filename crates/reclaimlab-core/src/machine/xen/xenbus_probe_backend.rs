//! The pressure detector of B2 and B3 (mechanisms.md §B.4): a shrinker whose `count_objects`
//! records that dom0 is reclaiming and returns 0, so it is never asked to scan and never
//! defers work. 6.1 registers it for every xenbus backend as `"xen-backend"` (the
//! `reclaim_memory` callback of each device, under a trylock that a simulation never finds
//! held); the seed's v2 patch registered blkback's own. It fires on every `shrink_slab`
//! call, from kswapd and from direct reclaim, so the deadline keeps moving while reclaim goes
//! on.

use super::super::shrinker::{ShrinkControl, ShrinkerOps, ShrinkerParams, DEFAULT_SEEKS};
use super::super::Machine;

#[derive(Debug)]
pub struct PressureDetector {
    symbol: &'static str,
}

impl ShrinkerOps for PressureDetector {
    fn scan_symbol(&self) -> &'static str {
        self.symbol
    }

    fn count_objects(&mut self, m: &mut Machine, sc: &mut ShrinkControl) -> u64 {
        m.xen_memory_pressure(sc.clock);
        0
    }

    fn scan_objects(&mut self, _m: &mut Machine, _sc: &mut ShrinkControl) -> u64 {
        0
    }
}

impl Machine {
    /// Register the pool variant's pressure detector, if it has one.
    pub fn register_xen_shrinker(&mut self) {
        let Some(name) = self.xen().pool.shrinker() else {
            return;
        };
        let symbol = if name == "xen-backend" {
            "xen_backend_shrink_count+0x0/0x60"
        } else {
            "blkif_shrink_count+0x0/0x30"
        };
        let params = ShrinkerParams {
            batch: 0,
            seeks: DEFAULT_SEEKS,
        };
        self.shrinkers
            .register(name, params, Box::new(PressureDetector { symbol }));
    }
}
