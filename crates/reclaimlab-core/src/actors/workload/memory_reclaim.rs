//! `echo N > memory.reclaim` (`[workload.memory_reclaim]`): a userspace writer asking a
//! cgroup's subtree to give back N bytes, once or at an interval (docs/design/memcg-psi.md
//! §2.4; the machine's `memory_reclaim`). Its reclaim is limit reclaim of the target cgroup,
//! paid for in the writer's CPU time; the write is not a memory stall of the writer, so what
//! it costs the cgroup's tasks shows only through their refaults and the stalls those bring.

use super::spec::MemoryReclaimSpec;
use super::task::{Origin, Task, Work};
use crate::machine::memcontrol::writes::ReclaimWrite;
use crate::machine::page_counter::CounterId;
use crate::machine::Machine;
use crate::world::{StepCx, Wake};

pub type MemoryReclaimWriter = Task<MemoryReclaimWork>;

#[derive(Debug)]
pub struct MemoryReclaimWork {
    /// The memcg written to.
    target: CounterId,
    amount_bytes: u64,
    every_ns: Option<u64>,
    /// When the next write is due.
    pub at_ns: u64,
    /// Writes made, those that ended in `EAGAIN`, and the pages they reclaimed.
    pub writes: u64,
    pub eagain: u64,
    pub reclaimed: u64,
}

impl MemoryReclaimWriter {
    /// The writer of `spec` to memcg `target` (resolved by the builder from the spec's
    /// cgroup, or the workload's own).
    pub fn new(o: &Origin, spec: &MemoryReclaimSpec, target: CounterId) -> MemoryReclaimWriter {
        let work = MemoryReclaimWork {
            target,
            amount_bytes: spec.amount_bytes,
            every_ns: spec.every_ns,
            at_ns: o.start_ns + spec.after_ns,
            writes: 0,
            eagain: 0,
            reclaimed: 0,
        };
        Task::from_origin(o, format!("{}/memory.reclaim", o.workload), work)
    }

    /// One write, at `now`: its reclaim in the thread's CPU time, then the next write's time
    /// (no sooner than the write's end), or the end.
    fn write(t: &mut MemoryReclaimWriter, m: &mut Machine, now: u64) -> Wake {
        let w = &mut t.work;
        let end = m.memory_reclaim(w.target, w.amount_bytes, &mut t.ctx);
        w.writes += 1;
        w.eagain += matches!(end, ReclaimWrite::Again { .. }) as u64;
        w.reclaimed += end.reclaimed();
        let (every, mut at) = (w.every_ns, w.at_ns);
        let done = now + t.ctx.cost_ns;
        let wake = t.next_write(m, &mut at, every, done);
        t.work.at_ns = at;
        wake
    }
}

impl Work for MemoryReclaimWork {
    /// A write to a cgroup file runs to its end.
    const OOM_KILLABLE: bool = false;

    fn step(t: &mut MemoryReclaimWriter, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        if now < t.work.at_ns && t.finished_ns.is_none() {
            return Wake::At(t.work.at_ns);
        }
        t.chunk(cx, MemoryReclaimWriter::write)
    }

    /// It never took a reference on an address space.
    fn exit(_: &mut MemoryReclaimWriter, _: &mut Machine) {}
}
