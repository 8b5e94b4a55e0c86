//! Linux 6.1: min_free_kbytes from the sqrt rule (clamped to 128 KiB .. 256 MiB), raised by
//! khugepaged's recommendation when THP is on; watermarks spaced by the larger of min/4 and
//! `watermark_scale_factor` ten-thousandths of the zone's managed pages.

use crate::machine::policy::WatermarkSetup;
use crate::machine::watermark::{self, Watermarks};
use crate::machine::MAX_NR_ZONES;

#[derive(Debug)]
pub struct ScaleFactor;

impl WatermarkSetup for ScaleFactor {
    fn min_free_kbytes_default(&self, managed: &[u64; MAX_NR_ZONES], thp: bool) -> u64 {
        // Small machines boot with THP off, so the THP floor applies only above 512 MiB.
        let thp = thp && watermark::thp_enabled_by_default(managed);
        watermark::min_free_kbytes_default(managed, thp)
    }

    fn setup(
        &self,
        managed: &[u64; MAX_NR_ZONES],
        _present: &[u64; MAX_NR_ZONES],
        min_free_kbytes: u64,
        watermark_scale_factor: u64,
    ) -> [Watermarks; MAX_NR_ZONES] {
        watermark::setup_per_zone_wmarks(managed, min_free_kbytes, watermark_scale_factor)
    }

    fn describe(&self) -> &'static str {
        "sqrt(16 x lowmem KiB) clamped to 128..262144, raised to khugepaged's recommendation \
         when THP is on and RAM >= 512 MiB (watermarks v6.1)"
    }
}
