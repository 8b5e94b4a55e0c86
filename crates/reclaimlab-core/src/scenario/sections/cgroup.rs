//! `[[cgroup]]`: memory cgroups v2 (docs/design/memcg-psi.md §1, §2). Each table is one cgroup
//! below the implicit root, with the `memory.*` interface files as dotted keys, written as the
//! kernel's files take them (`memory.max = "100M"`, `memory.swap.max = 0`,
//! `memory.oom.group = 1`); a `[[workload]]` joins one with `cgroup = "name"`.

use crate::machine::config::{CgroupConfig, CgroupMemory, CgroupOom, CgroupSwap};
use crate::machine::memcontrol::parse_memory_knob;
use crate::scenario::schema::{section, Embedded, Fix, Rule, Ty};
use crate::scenario::Scenario;

const KNOB: Ty = Ty::MemoryKnob;

section! {
    CgroupSwap => pub static CGROUP_SWAP = "swap", "A cgroup's swap files (`memory.swap.*`)." {
        max: "max".to_string() => Key::new(
            "max",
            KNOB,
            "memory.swap.max: swap the cgroup and its descendants may hold; 0 makes reclaim of \
             the cgroup file-only",
        );
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    CgroupOom => pub static CGROUP_OOM = "oom", "A cgroup's OOM files (`memory.oom.*`)." {
        group: 0 => Key::new(
            "group",
            Ty::UInt { min: 0, max: 1 },
            "memory.oom.group: 1 kills every process of the cgroup (and its descendants) when \
             the OOM killer picks one of them",
        );
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    CgroupMemory => pub static CGROUP_MEMORY = "memory",
        "A cgroup's memory controller files (`memory.*`)." {
        max: "max".to_string() => Key::new(
            "max",
            KNOB,
            "memory.max: a charge that would take the cgroup past it reclaims from the cgroup's \
             subtree, then OOM-kills inside it",
        );
        high: "max".to_string() => Key::new(
            "high",
            KNOB,
            "memory.high: above it the charging task reclaims on return to user space (and is \
             throttled)",
        );
        low: "0".to_string() => Key::new(
            "low",
            KNOB,
            "memory.low: best-effort protection from reclaim (reclaimed only when nothing \
             unprotected is left)",
        );
        min: "0".to_string() => Key::new(
            "min",
            KNOB,
            "memory.min: hard protection, never reclaimed",
        );
        swap: CgroupSwap::default();
        oom: CgroupOom::default();
    }
    children: [
        Embedded::<CgroupMemory, CgroupSwap> {
            section: &CGROUP_SWAP,
            get: |m| &m.swap,
            get_mut: |m| &mut m.swap,
        },
        Embedded::<CgroupMemory, CgroupOom> {
            section: &CGROUP_OOM,
            get: |m| &m.oom,
            get_mut: |m| &mut m.oom,
        },
    ],
    rules: [],
    derived: None,
}

section! {
    CgroupConfig => pub static CGROUP = "cgroup",
        "One memory cgroup (v2) below the root; workloads join it with `cgroup = \"name\"`." {
        name: String::new() => Key::new(
            "name",
            Ty::Text { what: "cgroup name" },
            "unique name; names its output directory (cgroup/<name>/)",
        )
        .required("name = \"web\"");
        parent: None => Key::new(
            "parent",
            Ty::Text { what: "parent cgroup name" },
            "the parent cgroup's name",
        )
        .unset("the root cgroup");
        memory: CgroupMemory::default();
    }
    children: [
        Embedded::<CgroupConfig, CgroupMemory> {
            section: &CGROUP_MEMORY,
            get: |c| &c.memory,
            get_mut: |c| &mut c.memory,
        },
    ],
    rules: [Rule {
        name: "memory.min is at most memory.max",
        doc: "a cgroup's `memory.min` must not be above its `memory.max` (the protection could never be used)",
        check: |c, _| {
            let pages = |f: &str, v: &str| parse_memory_knob(f, v).unwrap_or(0);
            let (min, max) = (pages("memory.min", &c.memory.min), pages("memory.max", &c.memory.max));
            if min > max {
                return Err(Fix::new(
                    format!(
                        "cgroup \"{}\": memory.min ({}) is above memory.max ({})",
                        c.name, c.memory.min, c.memory.max
                    ),
                    "lower memory.min to at most memory.max, or raise memory.max",
                )
                .at("memory.min"));
            }
            Ok(())
        },
    }],
    derived: None,
}

/// The cgroup tree and the workloads' cgroups (checked once every table is read): a parent
/// must be declared, the tree must not loop, and a workload's cgroup must exist.
pub const CGROUP_TREE: Rule<Scenario> = Rule {
    name: "the cgroups form a tree",
    doc: "a `[[cgroup]]`'s `parent` and a `[[workload]]`'s `cgroup` must name a declared \
          `[[cgroup]]`, and following parents must reach the root",
    check: |s, _| {
        let find = |n: &str| s.cgroups.iter().position(|c| c.name == n);
        let names = || {
            let v: Vec<&str> = s.cgroups.iter().map(|c| c.name.as_str()).collect();
            if v.is_empty() {
                "none is declared: add a [[cgroup]] table with this name".to_string()
            } else {
                format!("the declared cgroups are: {}", v.join(", "))
            }
        };
        for (i, c) in s.cgroups.iter().enumerate() {
            let Some(p) = &c.parent else { continue };
            if find(p).is_none() {
                return Err(Fix::new(
                    format!(
                        "cgroup \"{}\": its parent \"{p}\" is not a declared cgroup",
                        c.name
                    ),
                    format!(
                        "name a [[cgroup]] or leave parent out for the root; {}",
                        names()
                    ),
                )
                .at(format!("cgroup[{i}].parent")));
            }
            // Follow the parents: more steps than cgroups means a loop.
            let mut cur = i;
            for _ in 0..=s.cgroups.len() {
                match s.cgroups[cur].parent.as_deref().and_then(find) {
                    Some(next) if next == i => {
                        return Err(Fix::new(
                            format!("cgroup \"{}\" is its own ancestor (the parents loop)", c.name),
                            "make one cgroup of the loop a child of the root (leave its parent out)",
                        )
                        .at(format!("cgroup[{i}].parent")));
                    }
                    Some(next) => cur = next,
                    None => break,
                }
            }
        }
        for (i, w) in s.workloads.iter().enumerate() {
            if let Some(g) = &w.cgroup {
                if find(g).is_none() {
                    return Err(Fix::new(
                        format!("workload \"{}\": cgroup \"{g}\" is not declared", w.name),
                        names(),
                    )
                    .at(format!("workload[{i}].cgroup")));
                }
            }
        }
        for (g, guest) in s.guests.iter().enumerate() {
            if let Some(i) = guest.workloads.iter().position(|w| w.cgroup.is_some()) {
                return Err(Fix::new(
                    format!(
                        "guest \"{}\" workload \"{}\" names a cgroup; the [[cgroup]] tables are the host's",
                        guest.name, guest.workloads[i].name
                    ),
                    "leave cgroup out of a guest's workloads (guests have no memory cgroups yet)",
                )
                .at(format!("guest[{g}].workload[{i}].cgroup")));
            }
        }
        Ok(())
    },
};
