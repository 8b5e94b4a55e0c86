//! B2 (seed 000's v2 patch, not merged as such): blkback registers a shrinker whose count sets
//! one module-global deadline, `aggressive_shrinking_duration` ms ahead; until it passes,
//! every ring's housekeeping shrinks its pool to 0.

use crate::machine::xen::BlkbackPool;
use crate::machine::xen::XenBackend;

#[derive(Debug)]
pub struct GlobalSqueeze;

impl BlkbackPool for GlobalSqueeze {
    fn shrinker(&self) -> Option<&'static str> {
        Some("xen-blkback")
    }

    fn on_pressure(&self, x: &mut XenBackend, until: u64) {
        x.pressure_end = until;
    }

    fn target(&self, max_buffer_pages: u64, now: u64, module_end: u64, _device_end: u64) -> u64 {
        if now < module_end {
            0
        } else {
            max_buffer_pages
        }
    }
}
