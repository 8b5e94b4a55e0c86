//! `[policy] lru`: the page-replacement algorithm (core-mm §5; issue 35). Since 6.1 a kernel
//! built with `CONFIG_LRU_GEN` can replace the active/inactive lists by the multi-generational
//! LRU, switched on at run time by `/sys/kernel/mm/lru_gen/enabled` (`[sysctl]
//! lru_gen_enabled`, 0x0007 by default under "mglru"). The switch changes the machine's data
//! structures (the generation lists and per-frame generation bytes of `machine::lru_gen`),
//! so the variant is read once, when the machine is built.

mod classic;
mod mglru;

use super::{Switch, Variant};
use crate::machine::policy::PageReplacement;

pub static SWITCH: Switch<dyn PageReplacement> = Switch {
    name: "lru",
    spec: "core-mm §5; docs/design/mglru.md",
    summary: "page replacement: the two-list (active/inactive) LRU, or the multi-generational LRU of 6.1",
    default: "classic",
    preset: None,
    variants: &[
        Variant {
            name: "classic",
            kernel: "2.6.28 - 6.1 (CONFIG_LRU_GEN off)",
            summary: "active and inactive lists per type, refault distance, get_scan_count's cost balance",
            make: || Box::new(classic::TwoListLru),
        },
        Variant {
            name: "mglru",
            kernel: "6.1 (CONFIG_LRU_GEN, lru_gen/enabled from [sysctl] lru_gen_enabled)",
            summary: "generations per type with min_seq/max_seq, aging by accessed bits, eviction of the oldest generation with tiers and the refault PID controller, min_ttl_ms",
            make: || Box::new(mglru::MultiGenLru),
        },
    ],
};
