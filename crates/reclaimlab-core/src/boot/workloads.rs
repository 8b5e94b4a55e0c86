//! A machine's workload threads, built from its `[[workload]]`s: each workload is a process of
//! the machine with its regions and files; its anonymous, file, trace and highorder streams are
//! `Thread`s, its filesystem workloads (fsmark, simoops, stat, drop_caches) actors of their own.

use crate::actors::workload::drop_caches::DropCaches;
use crate::actors::workload::fsmark::Fsmark;
use crate::actors::workload::lru_gen_write::LruGenWriter;
use crate::actors::workload::memory_reclaim::MemoryReclaimWriter;
use crate::actors::workload::simoops::Simoops;
use crate::actors::workload::stat::Stat;
use crate::actors::workload::trace::TraceReplay;
use crate::actors::workload::{Origin, Thread};
use crate::engine::ActorId;
use crate::machine::{Machine, PAGE_SIZE};
use crate::observe::ftrace::TaskId;
use crate::scenario::Workload;
use crate::sim_error::SimError;
use crate::world::{Actor, MachineId};

use super::cast::{Add, Cast, Member};

/// Workload threads get pids from here on, in thread order (kswapd0 is 70).
pub const FIRST_TASK_PID: u32 = 1000;

/// A machine's workload threads, built from its `[[workload]]`s.
pub(crate) struct WorkloadThreads {
    pub threads: Vec<Thread>,
    /// The filesystem workloads' threads (their own actor types): (start, who, actor).
    pub fs_threads: Vec<(u64, TaskId, Box<dyn Actor>)>,
    /// Anonymous pages of the traces' objects (known only once the traces are scanned).
    pub trace_anon_pages: u64,
}

/// Build the threads of `workloads` on `machine` (its processes, regions and files), in
/// scenario order, their times shifted by `offset_ns` (a guest's start).
pub(crate) fn workload_threads(
    workloads: &[Workload],
    machine: &mut Machine,
    cpus: u32,
    seed: u64,
    offset_ns: u64,
    poll: &mut dyn FnMut() -> bool,
) -> Result<WorkloadThreads, SimError> {
    // Workload threads, in scenario order: each workload is a process of the machine.
    let mut threads: Vec<Thread> = Vec::new();
    // The filesystem workloads' threads (their own actor types), after the others.
    let mut fs_threads: Vec<(u64, TaskId, Box<dyn Actor>)> = Vec::new();
    let mut trace_anon_pages = 0u64;
    for w in workloads {
        let task = machine.add_task(&w.name, w.oom_score_adj);
        if let (Some(name), Some(mc)) = (&w.cgroup, machine.memcg.as_mut()) {
            let id = mc.id_of(name).ok_or_else(|| {
                SimError::Config(format!("workload {}: no cgroup named {name}", w.name))
            })?;
            mc.set_task_memcg(task, id);
        }
        let psi_group = machine.task_psi_group(task);
        let start_ns = w.start_ns + offset_ns;
        let deadline = w.duration_ns.map(|d| start_ns + d);
        let origin = |i: usize| Origin {
            workload: &w.name,
            task,
            pid: FIRST_TASK_PID + i as u32,
            cpu: (i as u32 + 1) % cpus,
            seed,
            start_ns,
            deadline_ns: deadline,
            // Its memcg's group (the system group without cgroups or in the root).
            psi_group,
        };
        let region = |m: &mut Machine, pages: u64, anon: bool| {
            m.add_region(task, pages, anon)
                .map(|r| m.regions[r].base)
                .map_err(SimError::Config)
        };
        if let Some(a) = &w.anon {
            let pages = a.size_bytes.div_ceil(PAGE_SIZE);
            let base = region(machine, pages, true)?;
            threads.push(Thread::anon(&origin(threads.len()), a, base, pages as u32));
        }
        if let Some(f) = &w.file {
            let pages = f.size_bytes.div_ceil(PAGE_SIZE);
            let base = region(machine, pages, false)?;
            threads.push(Thread::file(&origin(threads.len()), f, base, pages as u32));
        }
        if let Some(spec) = &w.trace {
            let mut replay = TraceReplay::scan_polled(spec, poll)
                .map_err(SimError::Trace)?
                .ok_or(SimError::Interrupted)?;
            let mut bases = [0u32; 2];
            for (i, (pages, anon)) in [(replay.anon_pages, true), (replay.file_pages, false)]
                .into_iter()
                .enumerate()
            {
                if pages > 0 {
                    bases[i] = region(machine, pages, anon)?;
                }
            }
            trace_anon_pages += replay.anon_pages;
            replay.place(bases[0], bases[1]);
            threads.push(Thread::trace(&origin(threads.len()), spec, replay));
        }
        if let Some(spec) = &w.highorder {
            threads.push(Thread::highorder(
                &origin(threads.len()),
                spec,
                machine.cfg.host.thp_defrag,
            ));
        }
        build_fs_threads(w, machine, &origin, threads.len(), &mut fs_threads)
            .map_err(SimError::Config)?;
    }
    Ok(WorkloadThreads {
        threads,
        fs_threads,
        trace_anon_pages,
    })
}

/// A machine's workload actors, by their ids in the world.
pub(crate) struct Workloads {
    pub threads: Vec<ActorId>,
    pub fs_threads: Vec<ActorId>,
    /// Every workload actor with its identity in a trace (threads first).
    pub tasks: Vec<(ActorId, TaskId)>,
}

/// Cast a machine's workload threads, then its filesystem workloads' actors, each started at
/// its own start.
pub(crate) fn cast_workloads(
    cast: &mut Cast,
    machine: MachineId,
    wt: WorkloadThreads,
) -> Workloads {
    let mut out = Workloads {
        threads: Vec::new(),
        fs_threads: Vec::new(),
        tasks: Vec::new(),
    };
    let mut add = |a: Box<dyn Actor>, start: u64| {
        cast.push(Add {
            member: Member::Actor(machine, a),
            start: Some(start),
        });
        (cast.len() - 1) as ActorId
    };
    for t in wt.threads {
        let (start, who) = (t.start_ns, TaskId::new(&t.name, t.pid, t.cpu));
        let id = add(Box::new(t), start);
        out.threads.push(id);
        out.tasks.push((id, who));
    }
    for (start, who, a) in wt.fs_threads {
        let id = add(a, start);
        out.fs_threads.push(id);
        out.tasks.push((id, who));
    }
    out
}

/// Pids of the filesystem workloads' threads start here (the others start at 1000).
pub const FIRST_FS_TASK_PID: u32 = 2000;

/// The fsmark, simoops, drop_caches and memory.reclaim threads of workload `w`, appended to `out` as (start,
/// trace identity, actor). `origin(i)` is the workload's origin for its `i`th thread overall;
/// `before` threads of other kinds came first.
pub fn build_fs_threads<'a>(
    w: &'a Workload,
    m: &mut Machine,
    origin: &dyn Fn(usize) -> Origin<'a>,
    before: usize,
    out: &mut Vec<(u64, TaskId, Box<dyn Actor>)>,
) -> Result<(), String> {
    let next = |out: &Vec<_>| {
        let n = out.len();
        let mut o = origin(before + n);
        o.pid = FIRST_FS_TASK_PID + n as u32;
        o
    };
    if let Some(spec) = &w.fsmark {
        for k in 0..spec.threads {
            let o = next(out);
            let a = Fsmark::build(&o, spec, k, m)?;
            out.push((o.start_ns, TaskId::new(&a.name, a.pid, a.cpu), Box::new(a)));
        }
    }
    if let Some(spec) = &w.simoops {
        let o = origin(before);
        let pages = spec.file_size_bytes.div_ceil(PAGE_SIZE) as u32;
        let base = if pages > 0 {
            let r = m.add_region(o.task, spec.files * pages as u64, false)?;
            m.regions[r].base
        } else {
            crate::machine::fs::NONE
        };
        let first = m.fs_add_cold_files(spec.files as u32, base, pages);
        for k in 0..spec.threads {
            let o = next(out);
            let a = Simoops::build(&o, spec, k, (first, spec.files), m)?;
            out.push((o.start_ns, TaskId::new(&a.name, a.pid, a.cpu), Box::new(a)));
        }
    }
    if let Some(spec) = &w.stat {
        for k in 0..spec.threads {
            let o = next(out);
            let a = Stat::build(&o, spec, k, m);
            out.push((o.start_ns, TaskId::new(&a.name, a.pid, a.cpu), Box::new(a)));
        }
    }
    if let Some(spec) = &w.drop_caches {
        let o = next(out);
        let a = DropCaches::new(&o, spec);
        out.push((a.at_ns, TaskId::new(&a.name, a.pid, a.cpu), Box::new(a)));
    }
    if let Some(spec) = &w.memory_reclaim {
        // The scenario checked that the cgroup is declared (its own, or the workload's).
        let name = spec.target.as_ref().or(w.cgroup.as_ref());
        let target = match (name, m.memcg.as_ref()) {
            (Some(n), Some(mc)) => mc.id_of(n),
            _ => None,
        }
        .ok_or_else(|| {
            format!(
                "workload {}: memory_reclaim has no declared cgroup to write",
                w.name
            )
        })?;
        let o = next(out);
        let a = MemoryReclaimWriter::new(&o, spec, target);
        out.push((a.at_ns, TaskId::new(&a.name, a.pid, a.cpu), Box::new(a)));
    }
    if let Some(spec) = &w.lru_gen {
        let o = next(out);
        let a = LruGenWriter::new(&o, spec);
        out.push((a.at_ns, TaskId::new(&a.name, a.pid, a.cpu), Box::new(a)));
    }
    Ok(())
}
