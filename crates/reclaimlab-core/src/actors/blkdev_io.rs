//! A block device's completion handler: delivers the end of writeback (`folio_end_writeback`)
//! for the requests the device has finished, as they finish. One per device (swap, disk).

use std::any::Any;

use crate::machine::Signal;
use crate::world::{Actor, StepCx, Wake};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    Swap,
    Disk,
}

#[derive(Debug)]
pub struct BlkdevIo {
    pub device: Device,
}

impl BlkdevIo {
    fn next(&self, cx: &mut StepCx) -> Option<u64> {
        let m = cx.machine();
        match self.device {
            Device::Swap => m.swapdev.next_completion(),
            Device::Disk => m.disk.next_completion(),
        }
    }
}

impl Actor for BlkdevIo {
    fn name(&self) -> &str {
        match self.device {
            Device::Swap => "swap-io",
            Device::Disk => "disk-io",
        }
    }

    /// Completions come in the device's interrupt, not in a thread.
    fn is_thread(&self) -> bool {
        false
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        // Both devices' completions due by now land (the order they are delivered in is the
        // order the kernel's interrupt handlers would see them, device by device).
        let now = cx.now();
        cx.machine().process_io_completions(now);
        self.next(cx).map_or(Wake::Idle, Wake::At)
    }

    fn wants(&self, signal: Signal) -> bool {
        matches!(
            (self.device, signal),
            (Device::Swap, Signal::SwapIo) | (Device::Disk, Signal::DiskIo)
        )
    }

    fn on_signal(&mut self, _signal: Signal, cx: &mut StepCx) -> Option<Wake> {
        self.next(cx).map(Wake::NoLaterThan)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
