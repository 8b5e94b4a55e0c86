use crate::machine::policy::WatermarkBoost;

/// Before 5.0: a fallback steal leaves the watermarks alone.
#[derive(Debug)]
pub struct NoBoost;

impl WatermarkBoost for NoBoost {
    fn boost(&self, _boost: u64, _high: u64, _managed: u64, _factor: u64) -> Option<u64> {
        None
    }
}
