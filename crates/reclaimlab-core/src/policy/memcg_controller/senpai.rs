//! senpai-like: a limit found by probing. The agent keeps its own limit for the cgroup,
//! starting from `memory.current` at its first adjustment, and writes it to `memory.high`
//! every interval. When the cgroup stalled less than `pressure` during the interval, it cuts
//! the limit by `max_probe × min(1, (err / coeff_probe)²)` of it, `err` being target over
//! stall; when it stalled more, it raises the limit by `max_backoff × min(1, (err /
//! coeff_backoff)²)`, `err` being stall over target. The limit stays within `[min_size,
//! max_size]` and never above the cgroup's `memory.max`. (The published agent works this
//! way; this is its rule as a policy of the model, not its code.)
//!
//! Worked example (`pressure` 10 ms, defaults): no stall at all cuts 1 % (the error is huge,
//! the cut is capped); a 5 ms stall (err 2) cuts 0.04 %; a 40 ms stall (err 4) raises 4 %; a
//! 1 s stall (err 100) doubles the limit.

use crate::actors::memcg_controller::{CgroupReading, ControllerConfig, Decision, MemcgController};
use crate::machine::PAGE_SIZE;

#[derive(Debug, Default)]
pub struct Senpai {
    /// The limit it steers (bytes); `None` until its first adjustment.
    limit: Option<u64>,
}

/// The step as a share of the limit: `-cut` or `+raise` (see the module's rule).
pub fn step_share(stall_us: u64, p: &ControllerConfig) -> f64 {
    let target = p.pressure_ns as f64 / 1000.0;
    let stall = stall_us as f64;
    if stall < target {
        let err = target / stall.max(1.0);
        -(p.max_probe * ((err / p.coeff_probe).powi(2)).min(1.0))
    } else {
        let err = stall / target;
        p.max_backoff * ((err / p.coeff_backoff).powi(2)).min(1.0)
    }
}

impl MemcgController for Senpai {
    fn name(&self) -> &'static str {
        "senpai"
    }

    fn decide(&mut self, r: &CgroupReading, p: &ControllerConfig) -> Decision {
        let limit = self.limit.unwrap_or(r.current) as f64;
        let next = limit * (1.0 + step_share(r.some_us, p));
        let upper = [p.max_size_bytes, r.max]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(u64::MAX >> 1);
        // Whole pages, as the file holds them.
        let bytes = (next as u64).clamp(p.min_size_bytes.min(upper), upper) / PAGE_SIZE * PAGE_SIZE;
        self.limit = Some(bytes);
        Decision::SetHigh(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> ControllerConfig {
        ControllerConfig::default()
    }

    /// The module's worked example, at the defaults (target 10 ms per interval).
    #[test]
    fn steps_grow_with_the_square_of_the_error_and_stop_at_their_caps() {
        let p = params();
        assert_eq!(p.pressure_ns, 10_000_000);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // No stall: the error is 10,000, the cut capped at 1 %.
        assert!(close(step_share(0, &p), -0.01));
        // 5 ms: err 2, (2 / 10)^2 x 1 % = 0.04 %.
        assert!(close(step_share(5_000, &p), -0.0004));
        // At the target exactly: err 1, a raise of (1 / 20)^2 = 0.25 %.
        assert!(close(step_share(10_000, &p), 0.0025));
        // 40 ms: err 4, (4 / 20)^2 = 4 %; 1 s: err 100, capped at 100 %.
        assert!(close(step_share(40_000, &p), 0.04));
        assert!(close(step_share(1_000_000, &p), 1.0));
    }

    #[test]
    fn the_limit_starts_at_the_usage_and_stays_within_its_bounds() {
        let mut p = params();
        p.min_size_bytes = 60 * 4096;
        let mut s = Senpai::default();
        let r = |current, some_us| CgroupReading {
            current,
            high: None,
            max: Some(1000 * 4096),
            some_us,
            interval_ns: 6_000_000_000,
        };
        // 100 pages, no stall: 99 pages (1 % cut, whole pages).
        assert_eq!(s.decide(&r(409_600, 0), &p), Decision::SetHigh(99 * 4096));
        // Its own limit goes on from there, whatever the usage reads.
        assert_eq!(s.decide(&r(1, 0), &p), Decision::SetHigh(98 * 4096));
        // A 1 s stall doubles it; memory.max caps it.
        assert_eq!(
            s.decide(&r(1, 1_000_000), &p),
            Decision::SetHigh(196 * 4096)
        );
        for _ in 0..4 {
            s.decide(&r(1, 1_000_000), &p);
        }
        assert_eq!(
            s.decide(&r(1, 1_000_000), &p),
            Decision::SetHigh(1000 * 4096)
        );
        // Cuts stop at min_size.
        for _ in 0..500 {
            s.decide(&r(1, 0), &p);
        }
        assert_eq!(s.decide(&r(1, 0), &p), Decision::SetHigh(60 * 4096));
    }
}
