//! A VM's life as its guest sees it: at its start the guest kernel has booted, and the memory it
//! holds (`boot_resident`) has been written, so the host backs it; at its shutdown the VM's
//! process exits on the host (its memory goes back there) and the guest stops. A VM killed by
//! its host's OOM killer is stopped by the world (`World::halt_machine`).

use std::any::Any;

use crate::machine::frames::pg;
use crate::machine::page_reporting::SlotEvent;
use crate::world::{Actor, MachineId, StepCx, Wake};

#[derive(Debug)]
pub struct Vm {
    pub name: String,
    /// The host and the VM's process there.
    pub host: MachineId,
    pub task: usize,
    pub shutdown_ns: Option<u64>,
    booted: bool,
}

impl Vm {
    pub fn new(name: &str, host: MachineId, task: usize, shutdown_ns: Option<u64>) -> Vm {
        Vm {
            name: format!("vm:{name}"),
            host,
            task,
            shutdown_ns,
            booted: false,
        }
    }
}

impl Actor for Vm {
    fn name(&self) -> &str {
        &self.name
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        if !self.booted {
            self.booted = true;
            // Every frame the booted kernel holds was written during boot.
            let m = cx.machine();
            let held: Vec<u32> = (0..m.frames.len() as u32)
                .filter(|&p| m.frames.flags(p) & pg::ALLOCATED != 0)
                .collect();
            let g = m.guest_mut();
            g.events
                .extend(held.into_iter().map(|p| SlotEvent::Touch(p, 0)));
            m.guest_start();
            return match self.shutdown_ns {
                Some(t) => Wake::At(t.max(cx.now())),
                None => Wake::Done,
            };
        }
        // Shutdown: the process exits on the host, the guest stops.
        let (host, task) = (self.host, self.task);
        cx.machine_of(host).exit_mmap(task);
        let me = cx.home();
        cx.halt_machine(me);
        Wake::Done
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
