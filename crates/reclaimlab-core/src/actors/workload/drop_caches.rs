//! `echo N > /proc/sys/vm/drop_caches` at a time (`[workload.drop_caches]`): 1 drops the
//! clean page cache (`drop_pagecache`), 2 the slab caches through every shrinker at priority
//! 0 (`drop_slab`), 3 both (core-mm §6).

use super::spec::DropCachesSpec;
use super::task::{Origin, Task, Work};
use crate::machine::Machine;
use crate::world::{StepCx, Wake};

pub type DropCaches = Task<DropCachesWork>;

#[derive(Debug)]
pub struct DropCachesWork {
    value: u64,
    pub at_ns: u64,
    /// Pages freed from the page cache and objects freed by the shrinkers.
    pub pagecache_freed: u64,
    pub slab_objects_freed: u64,
}

impl DropCaches {
    pub fn new(o: &Origin, spec: &DropCachesSpec) -> DropCaches {
        let work = DropCachesWork {
            value: spec.value,
            at_ns: o.start_ns + spec.after_ns,
            pagecache_freed: 0,
            slab_objects_freed: 0,
        };
        Task::from_origin(o, format!("{}/drop_caches", o.workload), work)
    }
}

impl Work for DropCachesWork {
    /// A write to a sysctl file runs to its end.
    const OOM_KILLABLE: bool = false;

    fn step(t: &mut DropCaches, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        let w = &mut t.work;
        if now < w.at_ns {
            return Wake::At(w.at_ns);
        }
        let m = cx.machine();
        let mut cost = 0;
        if w.value & 1 != 0 {
            w.pagecache_freed = m.drop_pagecache();
            cost += w.pagecache_freed * m.cfg.cost.free_page_ns;
        }
        if w.value & 2 != 0 {
            w.slab_objects_freed = m.drop_slab(now);
            cost += std::mem::take(&mut m.shrink_cost_ns) - std::mem::take(&mut m.shrink_sleep_ns);
        }
        t.end(now, false);
        cx.charge_cpu(cost);
        Wake::Done
    }

    /// It never took a reference on the address space.
    fn exit(_: &mut DropCaches, _: &mut Machine) {}
}
