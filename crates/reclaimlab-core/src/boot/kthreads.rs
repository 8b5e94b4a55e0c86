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
use crate::world::{Actor, MachineId};

use super::cast::{Add, Cast, Member};
use super::policies::KthreadPolicies;

/// Cast the kernel threads of `machine` (described by `view`, the host's scenario or a
/// guest's view of it, running `policies`), the machine booted at `start_ns`; `kvm_guest`: it
/// reports free pages to its host. They start idle but for the periodic ones. Returns kswapd,
/// whose figures the summary reads.
pub(crate) fn kernel_threads(
    cast: &mut Cast,
    machine: MachineId,
    view: &Scenario,
    policies: KthreadPolicies,
    start_ns: u64,
    kvm_guest: bool,
) -> ActorId {
    let mut add = |a: Box<dyn Actor>, start: Option<u64>| {
        cast.push(Add {
            member: Member::Actor(machine, a),
            start,
        });
        (cast.len() - 1) as ActorId
    };
    let [kswapd_kcompactd, kcompactd] = policies.kcompactd;
    let kswapd = add(
        Box::new(Kswapd::new(policies.kswapd_loop, kswapd_kcompactd)),
        None,
    );
    add(
        Box::new(BlkdevIo {
            device: Device::Swap,
        }),
        None,
    );
    add(
        Box::new(BlkdevIo {
            device: Device::Disk,
        }),
        None,
    );
    add(Box::new(Flusher), Some(start_ns + FLUSHER_PERIOD_NS));
    add(Box::new(OomReaper::new(view.oom.reaper_delay_ns)), None);
    let kcompactd = Kcompactd::new(kcompactd, start_ns);
    let first_check = kcompactd.proactive_check_at();
    add(Box::new(kcompactd), first_check);
    // ext4 has no filesystem-private inode reclaim: no xfsaild, no reclaim worker.
    if let Some(fs) = view.fs.as_ref().filter(|f| f.fs_type == FsType::Xfs) {
        add(Box::<Xfsaild>::default(), Some(start_ns));
        add(
            Box::new(XfsReclaimWorker),
            Some(start_ns + XfsReclaimWorker::period_ns(fs.xfssyncd_centisecs)),
        );
    }
    if kvm_guest {
        add(Box::<HintingWorker>::default(), None);
    }
    kswapd
}
