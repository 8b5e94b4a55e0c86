//! The 2.6.36 - 4.3 `zone_watermark_ok`: __GFP_HIGH callers get half the mark, atomic ones a
//! further quarter, then the per-order walk in which the pages of smaller blocks stop counting
//! and the mark halves at each order (core-mm §2.5 "Historical").

use crate::machine::policy::WatermarkCheck;
use crate::machine::watermark::alloc_flags::{ALLOC_MIN_RESERVE, ALLOC_NON_BLOCK};
use crate::machine::watermark::zone_watermark_ok_legacy;
use crate::machine::zone::Zone;

#[derive(Debug)]
pub struct PerOrder;

impl WatermarkCheck for PerOrder {
    #[inline]
    fn ok(&self, zone: &Zone, order: u32, mark: u64, hz: usize, flags: u32) -> bool {
        let mut mark = mark;
        if flags & ALLOC_MIN_RESERVE != 0 {
            mark -= mark / 2;
        }
        if flags & ALLOC_NON_BLOCK != 0 {
            mark -= mark / 4;
        }
        zone_watermark_ok_legacy(
            zone.free_pages() as i64,
            &zone.free_area.nr_free,
            zone.lowmem_reserve[hz],
            order,
            mark,
        )
    }
}
