//! `[policy] kcompactd`: whether a compaction daemon exists and what wakes it. Since 4.6 kswapd
//! hands the high-order request it could not satisfy to kcompactd before it sleeps; since 5.9
//! kcompactd also compacts on its own when the node's free memory is fragmented (proactive
//! compaction). The 2.6.3x kernels had no such thread (they relied on lumpy reclaim inside
//! kswapd).

mod none;
mod v4_6;
mod v6_1;

use super::{Preset, Switch, Variant};
use crate::actors::kcompactd::KcompactdPolicy;

pub static SWITCH: Switch<dyn KcompactdPolicy> = Switch {
    name: "kcompactd",
    spec: "core-mm §4.6",
    summary: "whether kswapd wakes a compaction daemon for the order before it sleeps",
    default: "v6.1",
    preset: Some(Preset {
        follows: "kswapd_balance",
        rule: |b| {
            if super::era_of(b) == "v6.1" {
                "v6.1"
            } else {
                "none"
            }
        },
        doc: "\"v6.1\" with kswapd_balance = \"v6.1\", else \"none\" (the rule's era)",
    }),
    variants: &[
        Variant {
            name: "none",
            kernel: "2.6.36 - 4.5",
            summary: "no compaction daemon",
            make: || Box::new(none::NoDaemon),
        },
        Variant {
            name: "v4.6",
            kernel: "4.6 - 5.8",
            summary: "kswapd wakes kcompactd for the original order before its nap",
            make: || Box::new(v4_6::WokenByKswapd),
        },
        Variant {
            name: "v6.1",
            kernel: "5.9 - 6.1",
            summary: "as v4.6, and every 500 ms kcompactd compacts a fragmented node (vm.compaction_proactiveness)",
            make: || Box::new(v6_1::Proactive),
        },
    ],
};
