//! Latency histograms (HDR, three significant digits) with the percentiles the simoops and
//! mmtests reports print. Values are nanoseconds; recording is O(1) and allocation-free once
//! the histogram has grown to the largest value seen.

use hdrhistogram::Histogram;

#[derive(Debug, Clone)]
pub struct Latency {
    h: Histogram<u64>,
}

impl Default for Latency {
    fn default() -> Self {
        Latency::new()
    }
}

/// The summary a report prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Percentiles {
    pub count: u64,
    pub p50: u64,
    pub p95: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
    pub mean: u64,
}

impl Latency {
    pub fn new() -> Latency {
        Latency {
            h: Histogram::new(3).expect("3 significant digits is a valid precision"),
        }
    }

    pub fn record(&mut self, ns: u64) {
        // Auto-resizing histograms take any u64 but 0 is below their range: count it as 1 ns.
        self.h
            .record(ns.max(1))
            .expect("an auto-resizing histogram records any value");
    }

    pub fn count(&self) -> u64 {
        self.h.len()
    }

    pub fn merge(&mut self, other: &Latency) {
        self.h
            .add(&other.h)
            .expect("auto-resizing histograms merge");
    }

    pub fn percentiles(&self) -> Percentiles {
        if self.h.is_empty() {
            return Percentiles::default();
        }
        let q = |p: f64| self.h.value_at_quantile(p);
        Percentiles {
            count: self.h.len(),
            p50: q(0.50),
            p95: q(0.95),
            p99: q(0.99),
            p999: q(0.999),
            max: self.h.max(),
            mean: self.h.mean() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn percentiles_within_three_digits() {
        let mut l = super::Latency::new();
        for v in 1..=1000u64 {
            l.record(v * 1000);
        }
        let p = l.percentiles();
        assert_eq!(p.count, 1000);
        assert!((499_000..=501_000).contains(&p.p50), "{}", p.p50);
        assert!((989_000..=991_000).contains(&p.p99), "{}", p.p99);
        assert!((999_000..=1_001_000).contains(&p.max));
    }
}
