//! The memory cgroups of one machine (`struct mem_cgroup`, include/linux/memcontrol.h): the
//! tree and its counters, each memcg's lruvec, the memcg of every frame and swap entry, the
//! tasks' memcgs, `memory.events` and the event counts behind `memory.stat`.
//!
//! A machine without `[[cgroup]]` has none of this (`Machine::memcg` is `None`) and runs
//! exactly as before. With cgroups, the root memcg's lruvec is the machine's own
//! (`Machine::lruvec`), and each other memcg has one here. Reclaim scans one memcg's lruvec at
//! a time by swapping it into `Machine::lruvec` for the length of its `shrink_lruvec`
//! (`cur` says whose is there), so the LRU code keeps reading one lruvec; a page added or
//! removed meanwhile finds its own list through [`MemCgroups::lruvec_of`].

use super::kmem::KmemStat;
use super::{parse_memory_knob, parse_oom_group, MemcgEventCounts};
use crate::machine::config::CgroupConfig;
use crate::machine::lru::{Lruvec, NR_LRU_LISTS};
use crate::machine::page_counter::{CounterId, PageCounters, ROOT_COUNTER};
use crate::machine::MAX_NR_ZONES;

/// A memcg's own event counts (`memory.stat`'s event lines, before the subtree sum).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemcgStat {
    pub pgfault: u64,
    pub pgmajfault: u64,
    pub pgscan_kswapd: u64,
    pub pgscan_direct: u64,
    pub pgsteal_kswapd: u64,
    pub pgsteal_direct: u64,
    pub pgrefill: u64,
    pub pgactivate: u64,
    pub pgdeactivate: u64,
    /// Indexed by `lru::ANON`, `lru::FILE`.
    pub workingset_refault: [u64; 2],
    pub workingset_activate: [u64; 2],
    pub workingset_restore: [u64; 2],
}

/// What the proactive writes to one memcg did over the run (summary.json; not a kernel file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProactiveStats {
    /// Writes of `memory.reclaim`, and those that ended in `EAGAIN`.
    pub reclaim_writes: u64,
    pub reclaim_eagain: u64,
    /// Pages asked for by `memory.reclaim` writes and pages they reclaimed.
    pub reclaim_requested: u64,
    pub reclaim_reclaimed: u64,
    /// Writes of `memory.high`, and the pages their reclaim took.
    pub high_writes: u64,
    pub high_reclaimed: u64,
}

#[derive(Debug, Clone)]
pub struct MemCgroups {
    /// Index = memcg id; 0 is the root ("").
    pub names: Vec<String>,
    pub memory: PageCounters,
    pub swap: PageCounters,
    pub events: Vec<MemcgEventCounts>,
    pub stat: Vec<MemcgStat>,
    pub oom_group: Vec<bool>,
    /// Each memcg's lruvec; the root's slot holds nothing while the root's lruvec is the
    /// machine's, and holds the root's while another memcg's is swapped in (see `cur`).
    lruvecs: Vec<Lruvec>,
    /// The memcg whose lruvec is in `Machine::lruvec` now (the root's but during a memcg's
    /// `shrink_lruvec`).
    pub cur: CounterId,
    /// The memcg each frame is charged to (0: the root, or not a user page).
    pub frame: Vec<CounterId>,
    /// The memcg each swapped vpage's slot is charged to (`swap_cgroup`), root's not kept.
    pub swap_owner: std::collections::HashMap<u32, CounterId>,
    /// The memcg of each task (index = task; missing: the root).
    pub task: Vec<CounterId>,
    /// `memory_recursiveprot` (cgroup2 mount option; off by default).
    pub recursiveprot: bool,
    /// `memory_localevents` (off by default).
    pub localevents: bool,
    /// Time tasks of each memcg slept in `memory.high`'s penalty (ns).
    pub throttled_ns: Vec<u64>,
    /// What the writes of `memory.reclaim` and `memory.high` to each memcg did.
    pub proactive: Vec<ProactiveStats>,
    /// Each memcg's kernel memory (its own; `memory.stat` sums the subtree).
    pub kmem: Vec<KmemStat>,
}

impl MemCgroups {
    /// The tree of `cgroups` (parents declared before or after their children: the scenario
    /// checked that they form a tree), for a machine of `nframes` frames.
    pub fn new(cgroups: &[CgroupConfig], nframes: usize) -> Result<MemCgroups, String> {
        let mut memory = PageCounters::new();
        let mut swap = PageCounters::new();
        let mut names = vec![String::new()];
        let mut oom_group = vec![false];
        // Add each cgroup once its parent is in: at most one pass per level of the tree.
        let mut ids: Vec<Option<CounterId>> = vec![None; cgroups.len()];
        while ids.iter().any(Option::is_none) {
            let mut progress = false;
            for (i, c) in cgroups.iter().enumerate() {
                if ids[i].is_some() {
                    continue;
                }
                let parent = match &c.parent {
                    None => Some(ROOT_COUNTER),
                    Some(p) => cgroups
                        .iter()
                        .position(|o| &o.name == p)
                        .and_then(|j| ids[j]),
                };
                let Some(parent) = parent else { continue };
                let id = memory.add(parent)?;
                swap.add(parent)?;
                let m = &c.memory;
                let knob = |f: &str, v: &str| parse_memory_knob(f, v);
                memory.set_max(id, knob("memory.max", &m.max)?);
                memory.set_high(id, knob("memory.high", &m.high)?);
                memory.set_low(id, knob("memory.low", &m.low)?);
                memory.set_min(id, knob("memory.min", &m.min)?);
                swap.set_max(id, knob("memory.swap.max", &m.swap.max)?);
                names.push(c.name.clone());
                oom_group.push(parse_oom_group(&m.oom.group.to_string())?);
                ids[i] = Some(id);
                progress = true;
            }
            if !progress {
                return Err("the cgroups' parents do not form a tree".into());
            }
        }
        let n = names.len();
        Ok(MemCgroups {
            names,
            memory,
            swap,
            events: vec![MemcgEventCounts::default(); n],
            stat: vec![MemcgStat::default(); n],
            oom_group,
            lruvecs: vec![Lruvec::default(); n],
            cur: ROOT_COUNTER,
            frame: vec![ROOT_COUNTER; nframes],
            swap_owner: Default::default(),
            task: Vec::new(),
            recursiveprot: false,
            localevents: false,
            throttled_ns: vec![0; n],
            proactive: vec![ProactiveStats::default(); n],
            kmem: vec![KmemStat::default(); n],
        })
    }

    /// The memcg named `name` ("" or "/" is the root).
    pub fn id_of(&self, name: &str) -> Option<CounterId> {
        if name.is_empty() || name == "/" {
            return Some(ROOT_COUNTER);
        }
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| i as CounterId)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The memcg of `task`.
    #[inline]
    pub fn task_memcg(&self, task: usize) -> CounterId {
        self.task.get(task).copied().unwrap_or(ROOT_COUNTER)
    }

    /// Put `task` in memcg `id`.
    pub fn set_task_memcg(&mut self, task: usize, id: CounterId) {
        if self.task.len() <= task {
            self.task.resize(task + 1, ROOT_COUNTER);
        }
        self.task[task] = id;
    }

    /// The lruvec of memcg `id` when it is not the one in `Machine::lruvec` (`machine`).
    #[inline]
    pub fn lruvec_of<'a>(&'a mut self, id: CounterId, machine: &'a mut Lruvec) -> &'a mut Lruvec {
        if id == self.cur {
            machine
        } else if id == ROOT_COUNTER {
            &mut self.lruvecs[self.cur as usize]
        } else {
            &mut self.lruvecs[id as usize]
        }
    }

    /// Read-only [`lruvec_of`](Self::lruvec_of).
    #[inline]
    pub fn lruvec<'a>(&'a self, id: CounterId, machine: &'a Lruvec) -> &'a Lruvec {
        if id == self.cur {
            machine
        } else if id == ROOT_COUNTER {
            &self.lruvecs[self.cur as usize]
        } else {
            &self.lruvecs[id as usize]
        }
    }

    /// Swap memcg `id`'s lruvec into `machine` (the root's goes back there first). The
    /// node's workingset clock (`nonresident_age`, the root's) goes with whichever lruvec is
    /// in `machine`, so the eviction and activation paths always find it there.
    pub fn switch_lruvec(&mut self, id: CounterId, machine: &mut Lruvec) {
        if id == self.cur {
            return;
        }
        if self.cur != ROOT_COUNTER {
            let parked = &mut self.lruvecs[self.cur as usize];
            std::mem::swap(machine, parked);
            machine.nonresident_age = parked.nonresident_age;
            self.cur = ROOT_COUNTER;
        }
        if id != ROOT_COUNTER {
            let parked = &mut self.lruvecs[id as usize];
            std::mem::swap(machine, parked);
            machine.nonresident_age = parked.nonresident_age;
            self.cur = id;
        }
    }

    /// Pages per list per zone of `top`'s subtree (the kernel's hierarchical lruvec sizes;
    /// the root's is the node's).
    pub fn subtree_zone_size(
        &self,
        top: CounterId,
        machine: &Lruvec,
    ) -> [[u64; NR_LRU_LISTS]; MAX_NR_ZONES] {
        let mut out = [[0u64; NR_LRU_LISTS]; MAX_NR_ZONES];
        for m in self.memory.preorder(top) {
            let l = self.lruvec(m, machine);
            for (z, row) in out.iter_mut().enumerate() {
                for (i, v) in row.iter_mut().enumerate() {
                    *v += l.zone_size[z][i];
                }
            }
        }
        out
    }

    /// Pages per list of `top`'s subtree, all zones.
    pub fn subtree_size(&self, top: CounterId, machine: &Lruvec) -> [u64; NR_LRU_LISTS] {
        let mut out = [0u64; NR_LRU_LISTS];
        for m in self.memory.preorder(top) {
            let l = self.lruvec(m, machine);
            for (i, v) in out.iter_mut().enumerate() {
                *v += l.size(i);
            }
        }
        out
    }

    /// The sum of `top`'s subtree's kernel memory (memory.stat is hierarchical).
    pub fn subtree_kmem(&self, top: CounterId) -> KmemStat {
        let mut s = KmemStat::default();
        for m in self.memory.preorder(top) {
            let o = &self.kmem[m as usize];
            s.stock_bytes += o.stock_bytes;
            s.kmem_pages += o.kmem_pages;
            s.slab_bytes[0] += o.slab_bytes[0];
            s.slab_bytes[1] += o.slab_bytes[1];
            s.objects += o.objects;
            s.pagetables += o.pagetables;
        }
        s
    }

    /// The sum of `top`'s subtree's event counts (memory.stat is hierarchical).
    pub fn subtree_stat(&self, top: CounterId) -> MemcgStat {
        let mut s = MemcgStat::default();
        for m in self.memory.preorder(top) {
            let o = &self.stat[m as usize];
            s.pgfault += o.pgfault;
            s.pgmajfault += o.pgmajfault;
            s.pgscan_kswapd += o.pgscan_kswapd;
            s.pgscan_direct += o.pgscan_direct;
            s.pgsteal_kswapd += o.pgsteal_kswapd;
            s.pgsteal_direct += o.pgsteal_direct;
            s.pgrefill += o.pgrefill;
            s.pgactivate += o.pgactivate;
            s.pgdeactivate += o.pgdeactivate;
            for t in 0..2 {
                s.workingset_refault[t] += o.workingset_refault[t];
                s.workingset_activate[t] += o.workingset_activate[t];
                s.workingset_restore[t] += o.workingset_restore[t];
            }
        }
        s
    }
}
