//! `echo N > /proc/sys/vm/drop_caches` at a time (`[workload.drop_caches]`): 1 drops the
//! clean page cache (`drop_pagecache`), 2 the slab caches through every shrinker at priority
//! 0 (`drop_slab`), 3 both (core-mm §6).

use std::any::Any;

use super::spec::DropCachesSpec;
use super::Origin;
use crate::world::{Actor, StepCx, Wake};

#[derive(Debug)]
pub struct DropCaches {
    pub name: String,
    pub pid: u32,
    pub cpu: u32,
    value: u64,
    pub at_ns: u64,
    /// Pages freed from the page cache and objects freed by the shrinkers.
    pub pagecache_freed: u64,
    pub slab_objects_freed: u64,
    pub done: bool,
}

impl DropCaches {
    pub fn new(o: &Origin, spec: &DropCachesSpec) -> DropCaches {
        DropCaches {
            name: format!("{}/drop_caches", o.workload),
            pid: o.pid,
            cpu: o.cpu,
            value: spec.value,
            at_ns: o.start_ns + spec.after_ns,
            pagecache_freed: 0,
            slab_objects_freed: 0,
            done: false,
        }
    }
}

impl Actor for DropCaches {
    fn name(&self) -> &str {
        &self.name
    }
    fn cpu(&self) -> u32 {
        self.cpu
    }
    fn pid(&self) -> Option<u32> {
        Some(self.pid)
    }
    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        if now < self.at_ns {
            return Wake::At(self.at_ns);
        }
        let m = cx.machine();
        let mut cost = 0;
        if self.value & 1 != 0 {
            self.pagecache_freed = m.drop_pagecache();
            cost += self.pagecache_freed * m.cfg.cost.free_page_ns;
        }
        if self.value & 2 != 0 {
            self.slab_objects_freed = m.drop_slab(now);
            cost += std::mem::take(&mut m.shrink_cost_ns) - std::mem::take(&mut m.shrink_sleep_ns);
        }
        self.done = true;
        cx.charge_cpu(cost);
        Wake::Done
    }
    fn holds_run_open(&self) -> bool {
        !self.done
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
