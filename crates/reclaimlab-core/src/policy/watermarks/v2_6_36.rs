//! The 2.6.3x kernels: min_free_kbytes from the sqrt rule alone, capped at 64 MiB (no THP
//! floor), and low/high at min + min/4 and min + min/2 computed on present pages; no scale
//! factor (core-mm §2.1, §2.2 "Historical").

use crate::machine::policy::WatermarkSetup;
use crate::machine::watermark::{self, Watermarks};
use crate::machine::MAX_NR_ZONES;

/// The 2.6.3x cap on the default min_free_kbytes.
pub const MIN_FREE_KBYTES_CAP: u64 = 65_536;

#[derive(Debug)]
pub struct Legacy;

impl WatermarkSetup for Legacy {
    fn min_free_kbytes_default(&self, managed: &[u64; MAX_NR_ZONES], _thp: bool) -> u64 {
        watermark::min_free_kbytes_sqrt(managed).min(MIN_FREE_KBYTES_CAP)
    }

    fn setup(
        &self,
        _managed: &[u64; MAX_NR_ZONES],
        present: &[u64; MAX_NR_ZONES],
        min_free_kbytes: u64,
        _watermark_scale_factor: u64,
    ) -> [Watermarks; MAX_NR_ZONES] {
        watermark::setup_per_zone_wmarks_legacy(present, min_free_kbytes)
    }

    fn describe(&self) -> &'static str {
        "sqrt(16 x lowmem KiB) clamped to 128..65536 (watermarks v2.6.36)"
    }
}
