//! Each VM's host RSS over time (`vm_rss.csv`): the resident guest frames of every guest's
//! memory slot, sampled with the time series. The slot keeps the VM process's RSS counter equal
//! to its resident frames (checked with the invariants), so a sample reads the counter.

use std::any::Any;
use std::fmt::Write as _;

use crate::machine::PAGE_SIZE;
use crate::world::{Observer, World};

#[derive(Debug, Clone)]
pub struct VmRss {
    interval_ns: u64,
    names: Vec<String>,
    /// (time, host RSS bytes per VM).
    rows: Vec<(u64, Vec<u64>)>,
}

impl VmRss {
    /// A sampler of the VMs named `names` (in the world's guest order) every `interval_ns`.
    pub fn new(names: Vec<String>, interval_ns: u64) -> VmRss {
        VmRss {
            interval_ns,
            names,
            rows: Vec::new(),
        }
    }

    pub fn sample(&mut self, now: u64, world: &World) {
        let row = world
            .guest_memories()
            .map(|(_, h, s)| world.machines[h].tasks[s.task].rss_anon * PAGE_SIZE)
            .collect();
        self.rows.push((now, row));
    }

    pub fn last_time(&self) -> Option<u64> {
        self.rows.last().map(|r| r.0)
    }

    /// Peak host RSS of each VM, in bytes.
    pub fn peaks(&self) -> Vec<u64> {
        (0..self.names.len())
            .map(|i| self.rows.iter().map(|r| r.1[i]).max().unwrap_or(0))
            .collect()
    }

    /// The CSV text: `time_s` and one column of bytes per VM.
    pub fn csv(&self) -> String {
        let mut out = String::from("time_s");
        for n in &self.names {
            out.push(',');
            out.push_str(n);
        }
        out.push('\n');
        for (t, row) in &self.rows {
            let _ = write!(out, "{}.{:09}", t / 1_000_000_000, t % 1_000_000_000);
            for v in row {
                let _ = write!(out, ",{v}");
            }
            out.push('\n');
        }
        out
    }
}

impl Observer for VmRss {
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
