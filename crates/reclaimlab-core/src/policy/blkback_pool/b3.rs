//! B3 (5.6 - 6.1): the generic xenbus backend shrinker (`"xen-backend"`) calls each device's
//! `reclaim_memory`, which sets that device's `buffer_squeeze_end`,
//! `buffer_squeeze_duration_ms` ahead; until it passes, the device's rings shrink their pools
//! to 0.

use crate::machine::xen::BlkbackPool;
use crate::machine::xen::XenBackend;

#[derive(Debug)]
pub struct DeviceSqueeze;

impl BlkbackPool for DeviceSqueeze {
    fn shrinker(&self) -> Option<&'static str> {
        Some("xen-backend")
    }

    fn on_pressure(&self, x: &mut XenBackend, until: u64) {
        for d in &mut x.devices {
            d.buffer_squeeze_end = until;
        }
    }

    fn target(&self, max_buffer_pages: u64, now: u64, _module_end: u64, device_end: u64) -> u64 {
        if now < device_end {
            0
        } else {
            max_buffer_pages
        }
    }
}
