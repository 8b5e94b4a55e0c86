use crate::machine::policy::WatermarkBoost;
use crate::machine::watermark::boost_watermark;

/// 5.0 - 6.1: `boost_watermark`.
#[derive(Debug)]
pub struct BoostWatermark;

impl WatermarkBoost for BoostWatermark {
    fn boost(&self, boost: u64, high: u64, managed: u64, factor: u64) -> Option<u64> {
        boost_watermark(boost, high, managed, factor)
    }
}
