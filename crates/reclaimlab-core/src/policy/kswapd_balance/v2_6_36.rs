//! 2.6.36 `sleeping_prematurely`: every populated zone must meet its high watermark at the
//! requested order. One small zone that cannot hold a block of that order keeps kswapd awake.

use super::all_zones_ok;
use crate::machine::policy::{PgdatBalanced, WatermarkCheck};
use crate::machine::zone::Zone;
use crate::machine::MAX_NR_ZONES;

#[derive(Debug)]
pub struct AllZones;

impl PgdatBalanced for AllZones {
    fn balanced(
        &self,
        zones: &[Zone; MAX_NR_ZONES],
        check: &dyn WatermarkCheck,
        order: u32,
        _hz: usize,
    ) -> bool {
        all_zones_ok(zones, check, order)
    }
}
