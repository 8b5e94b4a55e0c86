//! The 2.6.36 - 4.3 `zone_watermark_ok`: __GFP_HIGH callers get half the mark, atomic ones a
//! further quarter, then the per-order walk in which the pages of smaller blocks stop counting
//! and the mark halves at each order (core-mm §2.5 "Historical"). The arithmetic is the
//! machine's own (`machine/watermark.rs`).

use crate::machine::policy::{BuiltinCheck, WatermarkCheck};
use crate::machine::zone::Zone;

#[derive(Debug)]
pub struct PerOrder;

impl WatermarkCheck for PerOrder {
    #[inline]
    fn ok(&self, zone: &Zone, order: u32, mark: u64, hz: usize, flags: u32) -> bool {
        BuiltinCheck::PerOrder.ok(zone, order, mark, hz, flags)
    }

    fn ok_safe(&self, zone: &Zone, order: u32, mark: u64, hz: usize, flags: u32) -> bool {
        BuiltinCheck::PerOrder.ok_safe(zone, order, mark, hz, flags)
    }

    fn builtin(&self) -> Option<BuiltinCheck> {
        Some(BuiltinCheck::PerOrder)
    }
}
