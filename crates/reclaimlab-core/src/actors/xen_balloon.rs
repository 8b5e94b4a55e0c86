//! Dom0's balloon worker (`balloon_process`): gives dom0 back the frames of freed blkback pool
//! pages once `[xen.blkback] balloon_delay` has passed. Woken by the ring that freed them.

use std::any::Any;

use crate::world::{Actor, StepCx, Wake};

#[derive(Debug, Default)]
pub struct BalloonWorker;

impl Actor for BalloonWorker {
    fn name(&self) -> &str {
        "xen-balloon"
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        match cx.machine().balloon_process(now) {
            Some(at) => Wake::At(at),
            None => Wake::Idle,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
