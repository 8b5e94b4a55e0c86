//! The policy variants a machine runs with, made from the registry (`crate::policy`) here and
//! nowhere else, all of a machine's in one call ([`variants`]): one line per switch. A
//! machine's `[policy]` choices (the host's, or a guest's own) pick the variant; the memory
//! model, its drivers (free page reporting, Xen's blkback) and its kernel threads (kswapd,
//! kcompactd) each take their part of the [`Variants`]. Making a variant has no side effect,
//! so a part a machine does not use (a host's hinting) is made and dropped.

use std::rc::Rc;

use crate::actors::kcompactd::KcompactdPolicy;
use crate::actors::kswapd::KswapdLoop;
use crate::actors::memcg_controller::MemcgController;
use crate::machine::page_reporting::FreePageHinting;
use crate::machine::policy::WatermarkSetup;
use crate::machine::xen::policy::{BlkbackPool, GnttabBacking, PersistentGrants};
use crate::machine::MachinePolicies;
use crate::policy::{self, Choices};

/// Every variant one machine runs with, by who takes it.
pub(crate) struct Variants {
    /// How the zones' watermarks are set up.
    pub watermarks: Box<dyn WatermarkSetup>,
    /// The variants the memory model consults.
    pub machine: MachinePolicies,
    pub drivers: Drivers,
    pub kthreads: KthreadPolicies,
    /// The userspace memory controller's variant, one instance per cgroup it controls.
    pub memcg_controller: Box<dyn Fn() -> Box<dyn MemcgController>>,
}

/// The variants of the drivers a machine is furnished with.
pub(crate) struct Drivers {
    /// A KVM guest's free page reporting.
    pub hinting: Box<dyn FreePageHinting>,
    /// dom0's blkback: its page pool, persistent grants and grant backing.
    pub blkback: (
        Rc<dyn BlkbackPool>,
        Rc<dyn PersistentGrants>,
        Rc<dyn GnttabBacking>,
    ),
}

/// The variants of a machine's kernel threads.
pub(crate) struct KthreadPolicies {
    /// kswapd's loop.
    pub kswapd_loop: Box<dyn KswapdLoop>,
    /// kcompactd's policy, twice: kswapd wakes kcompactd by the first, kcompactd runs by the
    /// second.
    pub kcompactd: [Box<dyn KcompactdPolicy>; 2],
}

/// The variants `choices` name.
pub(crate) fn variants(choices: &Choices) -> Variants {
    let c = |switch| choices.get(switch);
    Variants {
        watermarks: policy::watermarks::SWITCH.make(c("watermarks")),
        machine: MachinePolicies {
            balance: policy::kswapd_balance::SWITCH.make(c("kswapd_balance")),
            wmark_check: policy::watermark_check::SWITCH.make(c("watermark_check")),
            boost: policy::watermark_boost::SWITCH.make(c("watermark_boost")),
            shrinker: policy::shrinker::SWITCH.make(c("shrinker")).into(),
            xfs_reclaim: policy::xfs_reclaim::SWITCH.make(c("xfs_reclaim")),
            lru: policy::lru::SWITCH.make(c("lru")),
        },
        drivers: Drivers {
            hinting: policy::hinting::SWITCH.make(c("hinting")),
            blkback: (
                Rc::from(policy::blkback_pool::SWITCH.make(c("blkback_pool"))),
                Rc::from(policy::blkback_grants::SWITCH.make(c("blkback_grants"))),
                Rc::from(policy::blkback_backing::SWITCH.make(c("blkback_backing"))),
            ),
        },
        kthreads: KthreadPolicies {
            kswapd_loop: policy::kswapd_loop::SWITCH.make(c("kswapd_loop")),
            kcompactd: [
                policy::kcompactd::SWITCH.make(c("kcompactd")),
                policy::kcompactd::SWITCH.make(c("kcompactd")),
            ],
        },
        memcg_controller: {
            let name = c("memcg_controller");
            Box::new(move || policy::memcg_controller::SWITCH.make(name))
        },
    }
}
