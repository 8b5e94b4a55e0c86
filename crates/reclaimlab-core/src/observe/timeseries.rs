//! The time series: main counters and free pages per zone, sampled at a fixed simulated interval.

use std::any::Any;

use crate::machine::lru::{LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE};
use crate::machine::vmstat::VmEvent;
use crate::machine::{Machine, MAX_NR_ZONES, ZONE_SUFFIXES};
use crate::world::{Observer, World};

/// Columnar time series: `columns[0]` is `time_ns`; every column has the same length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeseries {
    pub columns: Vec<(String, Vec<i64>)>,
}

/// Cumulative event counters sampled (kernel names).
const EVENTS: &[VmEvent] = &[
    VmEvent::PgscanKswapd,
    VmEvent::PgscanDirect,
    VmEvent::PgstealKswapd,
    VmEvent::PgstealDirect,
    VmEvent::Pswpin,
    VmEvent::Pswpout,
    VmEvent::Pgmajfault,
    VmEvent::Pgactivate,
    VmEvent::Pgdeactivate,
    VmEvent::OomKill,
];

#[derive(Debug, Clone)]
pub struct Sampler {
    zones: Vec<usize>,
    cpus: usize,
    interval_ns: u64,
    cols: Vec<(String, Vec<i64>)>,
}

impl Sampler {
    /// A sampler of machine 0 every `interval_ns`, with `cpus` CPUs.
    pub fn new(node: &Machine, cpus: usize, interval_ns: u64) -> Sampler {
        let zones: Vec<usize> = (0..MAX_NR_ZONES)
            .filter(|&z| node.zones[z].is_managed())
            .collect();
        let mut names: Vec<String> = vec!["time_ns".into()];
        names.extend(zones.iter().map(|&z| format!("free_{}", ZONE_SUFFIXES[z])));
        for n in [
            "nr_free_pages",
            "nr_inactive_anon",
            "nr_active_anon",
            "nr_inactive_file",
            "nr_active_file",
            "nr_dirty",
            "nr_writeback",
            "nr_swapcached",
            "swap_used",
            "allocstall",
            "workingset_refault_anon",
            "workingset_refault_file",
            "kswapd_awake",
        ] {
            names.push(n.into());
        }
        names.extend(EVENTS.iter().map(|e| e.name().to_string()));
        // CPU time per CPU, cumulative: busy (work charged) and run-queue wait.
        for c in 0..cpus {
            names.push(format!("cpu{c}_busy_ns"));
            names.push(format!("cpu{c}_runq_wait_ns"));
        }
        Sampler {
            zones,
            cpus,
            interval_ns,
            cols: names.into_iter().map(|n| (n, Vec::new())).collect(),
        }
    }

    pub fn sample(&mut self, now: u64, world: &World) {
        let node = &world.machines[0];
        let kswapd_awake = !node.kswapd.asleep;
        let l = &node.lruvec;
        let allocstall: u64 = (0..MAX_NR_ZONES)
            .map(|z| node.vm.get(VmEvent::allocstall(z)))
            .sum();
        let mut vals: Vec<u64> = Vec::with_capacity(self.cols.len());
        vals.push(now);
        vals.extend(self.zones.iter().map(|&z| node.zones[z].free_pages()));
        vals.extend([
            node.total_free_pages(),
            l.size(LRU_INACTIVE_ANON),
            l.size(LRU_ACTIVE_ANON),
            l.size(LRU_INACTIVE_FILE),
            l.size(LRU_ACTIVE_FILE),
            node.stat.nr_dirty,
            node.stat.nr_writeback,
            node.stat.nr_swapcached,
            node.swap.used,
            allocstall,
            node.stat.workingset_refault[0],
            node.stat.workingset_refault[1],
            kswapd_awake as u64,
        ]);
        vals.extend(EVENTS.iter().map(|&e| node.vm.get(e)));
        for c in world.cpus[0].cpu.iter().take(self.cpus) {
            vals.extend([c.busy_ns, c.runq_wait_ns]);
        }
        for ((_, col), v) in self.cols.iter_mut().zip(vals) {
            col.push(v as i64);
        }
    }

    pub fn last_time(&self) -> Option<u64> {
        self.cols[0].1.last().map(|&t| t as u64)
    }

    pub fn finish(self) -> Timeseries {
        Timeseries { columns: self.cols }
    }
}

impl Observer for Sampler {
    fn observe(&mut self, now: u64, world: &World) -> Option<u64> {
        self.sample(now, world);
        Some(now + self.interval_ns)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}
