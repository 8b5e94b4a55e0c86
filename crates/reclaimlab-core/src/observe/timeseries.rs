//! The time series: main counters and free pages per zone, sampled at a fixed simulated interval.
//!
//! Samples go into a [`RowSpool`] as they are taken, so a long run's series lives on disk, not
//! in memory (see `observe/spool.rs`).

use std::any::Any;

use super::spool::RowSpool;

use crate::machine::lru::{LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE};
use crate::machine::psi::PSI_SYSTEM;
use crate::machine::vmstat::VmEvent;
use crate::machine::{Machine, MAX_NR_ZONES, ZONE_SUFFIXES};
use crate::world::{Observer, World};

/// The sampled time series: named columns (`time_ns` first) of equal length, stored by row.
#[derive(Debug, Clone)]
pub struct Timeseries {
    names: Vec<String>,
    rows: RowSpool,
}

/// Rows compared per read when comparing two series.
const COMPARE_ROWS: usize = 4096;

impl Timeseries {
    pub fn new(names: Vec<String>) -> Timeseries {
        let rows = RowSpool::new(names.len());
        Timeseries { names, rows }
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Samples taken.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Append a sample (one value per column).
    pub fn push(&mut self, row: &[i64]) {
        self.rows.push(row);
    }

    /// Samples `start..start + count` (clipped), row-major.
    pub fn rows(&self, start: usize, count: usize) -> Vec<i64> {
        self.rows.rows(start, count)
    }

    /// Samples held in memory now (the rest is on disk).
    pub fn rows_in_memory(&self) -> usize {
        self.rows.rows_in_memory()
    }

    /// One column, read back whole (for tests and small runs).
    pub fn column(&self, name: &str) -> Option<Vec<i64>> {
        let i = self.names.iter().position(|n| n == name)?;
        let w = self.names.len();
        let mut out = Vec::with_capacity(self.len());
        let mut start = 0;
        while start < self.len() {
            let chunk = self.rows(start, COMPARE_ROWS);
            out.extend(chunk.chunks_exact(w).map(|r| r[i]));
            start += COMPARE_ROWS;
        }
        Some(out)
    }

    /// Every column, read back whole (for tests and small runs).
    pub fn columns(&self) -> Vec<(String, Vec<i64>)> {
        self.names
            .iter()
            .map(|n| (n.clone(), self.column(n).expect("a named column")))
            .collect()
    }
}

impl PartialEq for Timeseries {
    fn eq(&self, other: &Timeseries) -> bool {
        if self.names != other.names || self.len() != other.len() {
            return false;
        }
        let mut start = 0;
        while start < self.len() {
            if self.rows(start, COMPARE_ROWS) != other.rows(start, COMPARE_ROWS) {
                return false;
            }
            start += COMPARE_ROWS;
        }
        true
    }
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
    series: Timeseries,
    last_time: Option<u64>,
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
        // Each memory cgroup's memory.current and memory.swap.current (none without).
        names.extend(super::memcg::timeseries_names(node));
        // Memory pressure of the system group as a read of /proc/pressure/memory gives it:
        // the totals in microseconds, avg10 in hundredths of a percent (the file's digits).
        for n in [
            "psi_memory_some_total_us",
            "psi_memory_full_total_us",
            "psi_memory_some_avg10_x100",
            "psi_memory_full_avg10_x100",
        ] {
            names.push(n.into());
        }
        // The multi-generational LRU's generations (none under the two-list LRU).
        names.extend(super::lru_gen::timeseries_names(node));
        Sampler {
            zones,
            cpus,
            interval_ns,
            series: Timeseries::new(names),
            last_time: None,
        }
    }

    pub fn sample(&mut self, now: u64, world: &World) {
        let node = &world.machines[0];
        let kswapd_awake = !node.kswapd.asleep;
        // The node's lists: every memcg's lruvec (the machine's one without cgroups).
        let l = |lru: usize| node.node_lru_size(lru);
        let allocstall: u64 = (0..MAX_NR_ZONES)
            .map(|z| node.vm.get(VmEvent::allocstall(z)))
            .sum();
        let mut vals: Vec<u64> = Vec::with_capacity(self.series.names.len());
        vals.push(now);
        vals.extend(self.zones.iter().map(|&z| node.zones[z].free_pages()));
        vals.extend([
            node.total_free_pages(),
            l(LRU_INACTIVE_ANON),
            l(LRU_ACTIVE_ANON),
            l(LRU_INACTIVE_FILE),
            l(LRU_ACTIVE_FILE),
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
        // Every PSI group read at once (one copy of the state, however many cgroups).
        let pressure = node.psi.read_all(now);
        super::memcg::timeseries_values(node, &pressure, &mut vals);
        let p = &pressure[PSI_SYSTEM as usize];
        vals.extend([
            p.total_ns[0] / 1000,
            p.total_ns[1] / 1000,
            p.avg_x100(false, 0),
            p.avg_x100(true, 0),
        ]);
        super::lru_gen::timeseries_values(node, &mut vals);
        let row: Vec<i64> = vals.into_iter().map(|v| v as i64).collect();
        self.series.push(&row);
        self.last_time = Some(now);
    }

    pub fn last_time(&self) -> Option<u64> {
        self.last_time
    }

    pub fn finish(self) -> Timeseries {
        self.series
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
