//! No agent: the cgroups keep the limits the scenario gave them (the kernel alone).

use crate::actors::memcg_controller::{CgroupReading, ControllerConfig, Decision, MemcgController};

#[derive(Debug)]
pub struct NoAgent;

impl MemcgController for NoAgent {
    fn name(&self) -> &'static str {
        "none"
    }

    fn active(&self) -> bool {
        false
    }

    fn decide(&mut self, _r: &CgroupReading, _p: &ControllerConfig) -> Decision {
        Decision::Keep
    }
}
