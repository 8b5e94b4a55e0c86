//! Linux 6.1 `__zone_watermark_ok`: free pages (less the high-order atomic reserve for callers
//! without reserve rights) above the mark plus lowmem_reserve, then, for order > 0, one free
//! block of at least that order on a list the caller may use.

use crate::machine::policy::WatermarkCheck;
use crate::machine::watermark::zone_watermark_ok;
use crate::machine::zone::Zone;

#[derive(Debug)]
pub struct FreeBlocks;

impl WatermarkCheck for FreeBlocks {
    #[inline]
    fn ok(&self, zone: &Zone, order: u32, mark: u64, hz: usize, flags: u32) -> bool {
        zone_watermark_ok(
            zone.free_pages() as i64,
            &zone.free_area.nr_free,
            zone.nr_reserved_highatomic,
            zone.lowmem_reserve[hz],
            order,
            mark,
            flags,
        )
    }
}
