//! `[policy] memcg_controller`: a userspace agent that drives the memory cgroups from their
//! pressure (issue 34; `actors/memcg_controller.rs` runs it, `[controller]` holds its
//! parameters). Fleets do proactive reclaim this way: the kernel gives the pressure signal
//! (`memory.pressure`) and two writes that reclaim (`memory.high`, `memory.reclaim`); how
//! much to take is user space's decision. The two designs differ in the write: senpai moves a
//! limit and lets the kernel's `memory.high` throttling enforce it, TMO asks for an amount
//! and leaves no limit behind.

mod none;
mod senpai;
mod tmo;

use super::{Switch, Variant};
use crate::actors::memcg_controller::MemcgController;

pub static SWITCH: Switch<dyn MemcgController> = Switch {
    name: "memcg_controller",
    spec: "docs/design/memcg-psi.md §10",
    summary: "a userspace agent that sets memory.high or writes memory.reclaim from each leaf cgroup's memory pressure",
    default: "none",
    preset: None,
    variants: &[
        Variant {
            name: "none",
            kernel: "any",
            summary: "no agent: the cgroups keep the limits the scenario gives them",
            make: || Box::new(none::NoAgent),
        },
        Variant {
            name: "senpai",
            kernel: "6.1 interface (memory.high, memory.pressure)",
            summary: "senpai-like: each interval lowers memory.high while the cgroup stalls less than the target and raises it when it stalls more, by steps that grow with the square of the error",
            make: || Box::new(senpai::Senpai::default()),
        },
        Variant {
            name: "tmo",
            kernel: "6.1 interface (memory.reclaim, memory.pressure)",
            summary: "TMO-like: each interval writes memory.reclaim with a share of memory.current that shrinks linearly to 0 as the stall share reaches psi_threshold",
            make: || Box::new(tmo::Tmo),
        },
    ],
};
