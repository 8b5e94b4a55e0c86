//! `[[cgroup]]`: memory cgroups v2 (docs/design/memcg-psi.md §1, §2). Each table is one cgroup
//! below the implicit root, with the `memory.*` interface files as dotted keys, written as the
//! kernel's files take them (`memory.max = "100M"`, `memory.swap.max = 0`,
//! `memory.oom.group = 1`); a `[[workload]]` joins one with `cgroup = "name"`.

use crate::actors::memcg_controller::ControllerConfig;
use crate::engine::units::{MIB, NS_PER_MS, NS_PER_SEC};
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
    doc: "a `[[cgroup]]`'s `parent`, a `[[workload]]`'s or a KVM `[[guest]]`'s `cgroup` and \
          the cgroup a `[workload.memory_reclaim]` writes must name a declared `[[cgroup]]`, \
          and following parents must reach the root",
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
            // A memory.reclaim writer writes a declared cgroup's file: its `cgroup`, else
            // its workload's (the root's write, a machine-wide reclaim, is not modelled).
            if let Some(r) = &w.memory_reclaim {
                match r.target.as_ref().or(w.cgroup.as_ref()) {
                    None => {
                        return Err(Fix::new(
                            format!(
                                "workload \"{}\": [workload.memory_reclaim] has no cgroup to write",
                                w.name
                            ),
                            "name one with cgroup = \"...\" in the table (or put the workload \
                             in a cgroup); the root cgroup's memory.reclaim is not modelled",
                        )
                        .at(format!("workload[{i}].memory_reclaim")));
                    }
                    Some(g) if find(g).is_none() => {
                        return Err(Fix::new(
                            format!(
                                "workload \"{}\": memory_reclaim cgroup \"{g}\" is not declared",
                                w.name
                            ),
                            names(),
                        )
                        .at(format!("workload[{i}].memory_reclaim.cgroup")));
                    }
                    Some(_) => {}
                }
            }
        }
        for (g, guest) in s.guests.iter().enumerate() {
            if let Some(c) = &guest.cgroup {
                if s.xen.is_some() {
                    return Err(Fix::new(
                        format!(
                            "guest \"{}\": a Xen domain is in no host cgroup",
                            guest.name
                        ),
                        "a domU's memory belongs to the hypervisor, not to a host process: \
                         leave cgroup out, or drop [xen] for a KVM host",
                    )
                    .at(format!("guest[{g}].cgroup")));
                }
                if find(c).is_none() {
                    return Err(Fix::new(
                        format!("guest \"{}\": cgroup \"{c}\" is not declared", guest.name),
                        names(),
                    )
                    .at(format!("guest[{g}].cgroup")));
                }
            }
            let in_cgroup =
                |w: &crate::scenario::Workload| w.cgroup.is_some() || w.memory_reclaim.is_some();
            if let Some(i) = guest.workloads.iter().position(in_cgroup) {
                return Err(Fix::new(
                    format!(
                        "guest \"{}\" workload \"{}\" names a cgroup or writes memory.reclaim; the [[cgroup]] tables are the host's",
                        guest.name, guest.workloads[i].name
                    ),
                    "leave cgroup and memory_reclaim out of a guest's workloads (guests have no memory cgroups yet)",
                )
                .at(format!(
                    "guest[{g}].workload[{i}].{}",
                    if guest.workloads[i].cgroup.is_some() { "cgroup" } else { "memory_reclaim" }
                )));
            }
        }
        Ok(())
    },
};

/// A fraction in (0, 1].
const SHARE: Ty = Ty::Float {
    min: 0.0,
    max: 1.0,
    min_open: true,
    max_open: false,
};
/// A positive factor.
const FACTOR: Ty = Ty::Float {
    min: 0.0,
    max: 1e6,
    min_open: true,
    max_open: false,
};

section! {
    ControllerConfig => pub static CONTROLLER = "controller",
        "The userspace memory controller's parameters (`[policy] memcg_controller`): every \
         `interval` it reads each leaf cgroup's memory.current, memory.high and the `some` \
         stall of its memory.pressure, and writes memory.high (senpai) or memory.reclaim (tmo). \
         Each variant reads its own keys; with memcg_controller = \"none\" the table is unused." {
        interval_ns: 6 * NS_PER_SEC => Key::new("interval", Ty::Duration { min: 1 }, "time between two adjustments of each cgroup");
        pressure_ns: 10 * NS_PER_MS => Key::new("pressure", Ty::Duration { min: 1 }, "senpai: the `some` stall per interval it steers toward (below: it lowers memory.high; above: it raises it)");
        max_probe: 0.01 => Key::new("max_probe", SHARE, "senpai: the largest cut of memory.high in one interval, as a share of it");
        max_backoff: 1.0 => Key::new("max_backoff", FACTOR, "senpai: the largest raise of memory.high in one interval, as a share of it");
        coeff_probe: 10.0 => Key::new("coeff_probe", FACTOR, "senpai: the ratio of target to stall at which a cut reaches max_probe (the step grows with the square of the ratio)");
        coeff_backoff: 20.0 => Key::new("coeff_backoff", FACTOR, "senpai: the ratio of stall to target at which a raise reaches max_backoff (the step grows with its square)");
        min_size_bytes: 100 * MIB => Key::new("min_size", Ty::Size { min: 0, max: u64::MAX >> 1 }, "senpai: memory.high is never set below this");
        max_size_bytes: None => Key::new("max_size", Ty::Size { min: 4096, max: u64::MAX >> 1 }, "senpai: memory.high is never set above this")
            .unset("no bound but the cgroup's memory.max");
        reclaim_ratio: 0.0005 => Key::new("reclaim_ratio", SHARE, "tmo: the share of memory.current reclaimed per interval when the cgroup does not stall");
        psi_threshold: 0.001 => Key::new("psi_threshold", SHARE, "tmo: the `some` stall share of the interval at which it stops reclaiming (the amount falls linearly to 0 there)");
    }
    children: [],
    rules: [],
    derived: None,
}

/// A controller needs cgroups to control.
pub const CONTROLLER_CGROUPS: Rule<Scenario> = Rule {
    name: "a memory controller has cgroups",
    doc: "`[policy] memcg_controller` other than \"none\" needs at least one `[[cgroup]]` (it \
          controls the leaf cgroups); a guest's must be \"none\" (guests have no cgroups)",
    check: |s, _| {
        let v = s.policy.choices.get("memcg_controller");
        if v != "none" && s.cgroups.is_empty() {
            return Err(Fix::new(
                format!("memcg_controller = \"{v}\" has no cgroup to control"),
                "add a [[cgroup]] table and put the workloads it should drive in it (cgroup = \"...\"), \
                 or set memcg_controller = \"none\"",
            )
            .at("policy.memcg_controller"));
        }
        // A guest has no memory cgroups of its own: its agent would control nothing.
        for (i, g) in s.guests.iter().enumerate() {
            let v = g.policy.choices.get("memcg_controller");
            if v != "none" {
                return Err(Fix::new(
                    format!("guest \"{}\": memcg_controller = \"{v}\", and guests have no memory cgroups", g.name),
                    "set the controller in the host's [policy] (it controls the host's [[cgroup]]s, a VM's \
                     process among them with [[guest]] cgroup = \"...\"), or leave it out of the guest",
                )
                .at(format!("guest[{i}].policy.memcg_controller")));
            }
        }
        Ok(())
    },
};
