//! The policy variants a machine runs with, made from the registry (`crate::policy`) here and
//! nowhere else: one line per switch. A machine's `[policy]` choices (the host's, or a guest's
//! own) pick the variant; the memory model, kswapd, kcompactd, free page reporting and Xen's
//! blkback each take theirs from [`Policies`].

use std::rc::Rc;

use crate::actors::kcompactd::KcompactdPolicy;
use crate::actors::kswapd::KswapdLoop;
use crate::machine::page_reporting::FreePageHinting;
use crate::machine::policy::WatermarkSetup;
use crate::machine::xen::policy::{BlkbackPool, GnttabBacking, PersistentGrants};
use crate::machine::MachinePolicies;
use crate::policy::{self, Choices};

/// One machine's policy choices, as the variants they name.
pub(crate) struct Policies<'a>(&'a Choices);

impl<'a> Policies<'a> {
    pub fn of(choices: &'a Choices) -> Self {
        Policies(choices)
    }

    /// How the zones' watermarks are set up.
    pub fn watermarks(&self) -> Box<dyn WatermarkSetup> {
        policy::watermarks::SWITCH.make(self.0.get("watermarks"))
    }

    /// The variants the memory model consults.
    pub fn machine(&self) -> MachinePolicies {
        let c = self.0;
        MachinePolicies {
            balance: policy::kswapd_balance::SWITCH.make(c.get("kswapd_balance")),
            wmark_check: policy::watermark_check::SWITCH.make(c.get("watermark_check")),
            boost: policy::watermark_boost::SWITCH.make(c.get("watermark_boost")),
            shrinker: policy::shrinker::SWITCH.make(c.get("shrinker")).into(),
            xfs_reclaim: policy::xfs_reclaim::SWITCH.make(c.get("xfs_reclaim")),
        }
    }

    /// kswapd's loop.
    pub fn kswapd_loop(&self) -> Box<dyn KswapdLoop> {
        policy::kswapd_loop::SWITCH.make(self.0.get("kswapd_loop"))
    }

    /// kcompactd's policy: kswapd wakes kcompactd by it, and kcompactd runs by it.
    pub fn kcompactd(&self) -> Box<dyn KcompactdPolicy> {
        policy::kcompactd::SWITCH.make(self.0.get("kcompactd"))
    }

    /// A KVM guest's free page reporting.
    pub fn hinting(&self) -> Box<dyn FreePageHinting> {
        policy::hinting::SWITCH.make(self.0.get("hinting"))
    }

    /// dom0's blkback: its page pool, persistent grants and grant backing.
    pub fn blkback(
        &self,
    ) -> (
        Rc<dyn BlkbackPool>,
        Rc<dyn PersistentGrants>,
        Rc<dyn GnttabBacking>,
    ) {
        let c = self.0;
        (
            Rc::from(policy::blkback_pool::SWITCH.make(c.get("blkback_pool"))),
            Rc::from(policy::blkback_grants::SWITCH.make(c.get("blkback_grants"))),
            Rc::from(policy::blkback_backing::SWITCH.make(c.get("blkback_backing"))),
        )
    }
}
