//! 2.6.38, "stop high-order balancing when any suitable zone is balanced" (seed 004, patch
//! 1/5): every zone must meet high at order 0, and for order > 0 one populated zone up to the
//! classzone must meet it at the order.

use super::{all_zones_ok, high_ok, populated};
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
        if !all_zones_ok(zones, check, 0) {
            return false;
        }
        if order == 0 {
            return true;
        }
        zones[..=classzone.min(MAX_NR_ZONES - 1)]
            .iter()
            .filter(|z| populated(z))
            .any(|z| high_ok(z, check, order))
    }
}
