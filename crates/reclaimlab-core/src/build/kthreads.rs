//! A machine's kernel threads, the same for the host and every guest: kswapd, the swap and
//! disk completions, the flusher, the oom_reaper, kcompactd; xfsaild and the XFS reclaim
//! worker where XFS is mounted; the page reporting worker where the machine is a KVM guest.

use crate::actors::blkdev_io::{BlkdevIo, Device};
use crate::actors::flusher::{Flusher, FLUSHER_PERIOD_NS};
use crate::actors::hinting_worker::HintingWorker;
use crate::actors::kcompactd::Kcompactd;
use crate::actors::kswapd::Kswapd;
use crate::actors::oom_reaper::OomReaper;
use crate::actors::xfs_reclaim_worker::XfsReclaimWorker;
use crate::actors::xfsaild::Xfsaild;
use crate::engine::ActorId;
use crate::machine::fs::FsType;
use crate::scenario::Scenario;
use crate::world::{Actor, MachineId, World};

use super::policies::Policies;

/// Add the kernel threads of `machine` (described by `view`, the host's scenario or a guest's
/// view of it) to `world`, the machine booted at `start_ns`. They start idle but for the
/// periodic ones. Returns kswapd, whose figures the summary reads.
pub(crate) fn kernel_threads(
    world: &mut World,
    machine: MachineId,
    view: &Scenario,
    start_ns: u64,
) -> ActorId {
    let policies = Policies::of(&view.policy.choices);
    let add = |world: &mut World, a: Box<dyn Actor>| world.add_actor_on(machine, a);
    let kswapd = add(
        world,
        Box::new(Kswapd::new(policies.kswapd_loop(), policies.kcompactd())),
    );
    add(
        world,
        Box::new(BlkdevIo {
            device: Device::Swap,
        }),
    );
    add(
        world,
        Box::new(BlkdevIo {
            device: Device::Disk,
        }),
    );
    let flusher = add(world, Box::new(Flusher));
    world.start(flusher, start_ns + FLUSHER_PERIOD_NS);
    add(world, Box::new(OomReaper::new(view.oom.reaper_delay_ns)));
    let kcompactd = Kcompactd::new(policies.kcompactd(), start_ns);
    let first_check = kcompactd.proactive_check_at();
    let kcompactd = add(world, Box::new(kcompactd));
    if let Some(t) = first_check {
        world.start(kcompactd, t);
    }
    // ext4 has no filesystem-private inode reclaim: no xfsaild, no reclaim worker.
    if let Some(fs) = view.fs.as_ref().filter(|f| f.fs_type == FsType::Xfs) {
        let aild = add(world, Box::<Xfsaild>::default());
        world.start(aild, start_ns);
        let worker = add(world, Box::new(XfsReclaimWorker));
        world.start(
            worker,
            start_ns + XfsReclaimWorker::period_ns(fs.xfssyncd_centisecs),
        );
    }
    if world.guest_memory(machine).is_some() {
        add(world, Box::<HintingWorker>::default());
    }
    kswapd
}
