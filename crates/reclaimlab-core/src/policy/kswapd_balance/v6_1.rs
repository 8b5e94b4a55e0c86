//! Linux 6.1 `pgdat_balanced` (core-mm §4.5): balanced when any managed zone up to `hz` meets
//! its high watermark (boost included) at the order, counting its `lowmem_reserve[hz]`; also
//! balanced when no managed zone up to `hz` exists. The check is `zone_watermark_ok_safe`.

use crate::machine::policy::{PgdatBalanced, WatermarkCheck};
use crate::machine::zone::Zone;
use crate::machine::MAX_NR_ZONES;

#[derive(Debug)]
pub struct AnyZoneWithReserve;

impl PgdatBalanced for AnyZoneWithReserve {
    fn balanced(
        &self,
        zones: &[Zone; MAX_NR_ZONES],
        check: &dyn WatermarkCheck,
        order: u32,
        hz: usize,
    ) -> bool {
        let mut any_managed = false;
        for zone in &zones[..=hz.min(MAX_NR_ZONES - 1)] {
            if !zone.is_managed() {
                continue;
            }
            any_managed = true;
            if check.ok_safe(zone, order, zone.high_wmark_pages(), hz, 0) {
                return true;
            }
        }
        !any_managed
    }
}
