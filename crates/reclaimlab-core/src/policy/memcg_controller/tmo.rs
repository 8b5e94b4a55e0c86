//! TMO-like: reclaim in proportion to the pressure headroom, leaving no limit behind. Every
//! interval the agent writes `memory.reclaim` with `memory.current × reclaim_ratio × max(0, 1
//! − stall share / psi_threshold)`, the stall share being the `some` stall of the interval
//! over the interval. A cgroup that stalls at or above the threshold is left alone. (The
//! rule of Meta's Transparent Memory Offloading paper, ASPLOS 2022, as a policy of the
//! model.)
//!
//! Worked example (defaults: ratio 0.0005, threshold 0.1 %, interval 6 s): a 1 GiB cgroup
//! with no stall is asked for 536,870 bytes (131 pages, 536,576 bytes as written); with a
//! 3 ms stall (0.05 % of the interval) half of that, 268,435 bytes (65 pages); with 6 ms or
//! more, nothing.

use crate::actors::memcg_controller::{CgroupReading, ControllerConfig, Decision, MemcgController};
use crate::machine::PAGE_SIZE;

#[derive(Debug)]
pub struct Tmo;

/// The bytes to ask for (whole pages), 0 for none.
pub fn reclaim_bytes(r: &CgroupReading, p: &ControllerConfig) -> u64 {
    let share = r.some_us as f64 * 1000.0 / r.interval_ns.max(1) as f64;
    let headroom = (1.0 - share / p.psi_threshold).max(0.0);
    let bytes = (r.current as f64 * p.reclaim_ratio * headroom) as u64;
    bytes / PAGE_SIZE * PAGE_SIZE
}

impl MemcgController for Tmo {
    fn name(&self) -> &'static str {
        "tmo"
    }

    fn decide(&mut self, r: &CgroupReading, p: &ControllerConfig) -> Decision {
        match reclaim_bytes(r, p) {
            0 => Decision::Keep,
            b => Decision::Reclaim(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module's worked example, at the defaults.
    #[test]
    fn the_amount_falls_linearly_with_the_stall_share() {
        let p = ControllerConfig::default();
        let r = |some_us| CgroupReading {
            current: 1 << 30,
            high: None,
            max: None,
            some_us,
            interval_ns: 6_000_000_000,
        };
        assert_eq!(reclaim_bytes(&r(0), &p), 131 * 4096);
        assert_eq!(reclaim_bytes(&r(3_000), &p), 65 * 4096);
        assert_eq!(reclaim_bytes(&r(6_000), &p), 0);
        assert_eq!(reclaim_bytes(&r(60_000), &p), 0);
        let mut t = Tmo;
        assert_eq!(t.decide(&r(0), &p), Decision::Reclaim(131 * 4096));
        assert_eq!(t.decide(&r(6_000), &p), Decision::Keep);
    }
}
