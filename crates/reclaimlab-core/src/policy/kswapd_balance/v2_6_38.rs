//! 2.6.38, "stop high-order balancing when any suitable zone is balanced" (seed 004, patch
//! 1/5): every zone must meet high at order 0, and for order > 0 one populated zone up to the
//! classzone must meet it at the order.

use super::{high_ok, order0_decides, populated};
use crate::machine::policy::{PgdatBalanced, WatermarkCheck};
use crate::machine::zone::Zone;
use crate::machine::MAX_NR_ZONES;

#[derive(Debug)]
pub struct AnyZone;

impl PgdatBalanced for AnyZone {
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
        zones[..=classzone.min(MAX_NR_ZONES - 1)]
            .iter()
            .filter(|z| populated(z))
            .any(|z| high_ok(z, check, order))
    }
}
