//! 2.6.39 / 3.0 `pgdat_balanced`: the zones balanced at the order must hold at least a quarter
//! of the present pages up to the classzone, so a 16 MiB DMA zone can never balance a node on
//! its own (the reviewer's corner case in seed 004); every zone must still meet order-0 high.

use super::{high_ok, order0_decides, populated};
use crate::machine::policy::{PgdatBalanced, WatermarkCheck};
use crate::machine::zone::Zone;
use crate::machine::MAX_NR_ZONES;

#[derive(Debug)]
pub struct QuarterOfNode;

impl PgdatBalanced for QuarterOfNode {
    fn balanced(
        &self,
        zones: &[Zone; MAX_NR_ZONES],
        check: &dyn WatermarkCheck,
        order: u32,
        classzone: usize,
    ) -> bool {
        if let Some(answer) = order0_decides(zones, check, order) {
            return answer;
        }
        let eligible = &zones[..=classzone.min(MAX_NR_ZONES - 1)];
        let present: u64 = eligible.iter().map(|z| z.span.present).sum();
        let balanced: u64 = eligible
            .iter()
            .filter(|z| populated(z) && high_ok(z, check, order))
            .map(|z| z.span.present)
            .sum();
        balanced >= present / 4
    }
}
