//! Linux 6.1 `__zone_watermark_ok`: free pages (less the high-order atomic reserve for callers
//! without reserve rights) above the mark plus lowmem_reserve, then, for order > 0, one free
//! block of at least that order on a list the caller may use. The arithmetic is the machine's
//! own (`machine/watermark.rs`), exact to the kernel's.

use crate::machine::policy::{BuiltinCheck, WatermarkCheck};
use crate::machine::zone::Zone;

#[derive(Debug)]
pub struct FreeBlocks;

impl WatermarkCheck for FreeBlocks {
    #[inline]
    fn ok(&self, zone: &Zone, order: u32, mark: u64, hz: usize, flags: u32) -> bool {
        BuiltinCheck::FreeBlocks.ok(zone, order, mark, hz, flags)
    }

    fn ok_safe(&self, zone: &Zone, order: u32, mark: u64, hz: usize, flags: u32) -> bool {
        BuiltinCheck::FreeBlocks.ok_safe(zone, order, mark, hz, flags)
    }

    fn builtin(&self) -> Option<BuiltinCheck> {
        Some(BuiltinCheck::FreeBlocks)
    }
}
