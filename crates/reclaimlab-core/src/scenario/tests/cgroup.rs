//! `[[cgroup]]` and a workload's `cgroup`: values as the kernel's files take them, and the
//! tree's checks with their positions.

use super::schema::{check_complete, check_declared_defaults};
use crate::machine::config::{CgroupConfig, CgroupMemory, CgroupOom, CgroupSwap};
use crate::machine::memcontrol::parse_memory_knob;
use crate::machine::page_counter::PAGE_COUNTER_MAX;
use crate::scenario::sections::*;
use crate::scenario::*;

const WORK: &str = "[[workload]]\nname = \"w\"\ncgroup = \"a\"\nanon.size = \"1MiB\"\n";

fn err(text: &str) -> ScenarioError {
    parse_str(text, "t.toml").expect_err("should fail")
}

#[test]
fn cgroup_files_parse_as_the_kernel_takes_them() {
    let text = format!(
        "[[cgroup]]\nname = \"p\"\nmemory.max = \"1G\"\nmemory.oom.group = 1\n\
         [[cgroup]]\nname = \"a\"\nparent = \"p\"\nmemory.max = 104857600\n\
         memory.high = \"max\"\nmemory.low = \"10M\"\nmemory.swap.max = 0\n{WORK}"
    );
    let s = parse_str(&text, "t.toml").unwrap();
    assert_eq!(s.cgroups.len(), 2);
    let (p, a) = (&s.cgroups[0], &s.cgroups[1]);
    assert_eq!((p.name.as_str(), p.parent.as_deref()), ("p", None));
    assert_eq!(p.memory.oom.group, 1);
    assert_eq!(a.parent.as_deref(), Some("p"));
    assert_eq!(s.workloads[0].cgroup.as_deref(), Some("a"));
    let pages = |f: &str, v: &str| parse_memory_knob(f, v).unwrap();
    assert_eq!(pages("max", &p.memory.max), 262_144);
    assert_eq!(pages("max", &a.memory.max), 25_600);
    assert_eq!(pages("high", &a.memory.high), PAGE_COUNTER_MAX);
    assert_eq!(pages("low", &a.memory.low), 2_560);
    assert_eq!(pages("swap.max", &a.memory.swap.max), 0);
    // Unset files read as the kernel's defaults.
    assert_eq!(pages("min", &p.memory.min), 0);
    assert_eq!(pages("swap.max", &p.memory.swap.max), PAGE_COUNTER_MAX);
    // The printed scenario parses back to the same.
    let again = parse_str(&to_toml(&s), "t.toml").unwrap();
    assert_eq!(again.cgroups, s.cgroups);
    assert_eq!(again.workloads[0].cgroup, s.workloads[0].cgroup);
}

#[test]
fn a_value_the_kernel_refuses_is_an_error_at_its_place() {
    let e = err(&format!(
        "[[cgroup]]\nname = \"a\"\nmemory.max = \"100MiB\"\n{WORK}"
    ));
    assert_eq!((e.line, e.col), (3, 14), "{e}");
    assert!(e.to_string().contains("EINVAL"), "{e}");
    let e = err(&format!(
        "[[cgroup]]\nname = \"a\"\nmemory.oom.group = 2\n{WORK}"
    ));
    assert_eq!(e.line, 3, "{e}");
    assert!(e.to_string().contains("between 0 and 1"), "{e}");
}

#[test]
fn the_tree_is_checked() {
    // Unknown parent.
    let e = err(&format!(
        "[[cgroup]]\nname = \"a\"\nparent = \"nope\"\n{WORK}"
    ));
    assert_eq!((e.line, e.field.as_str()), (3, "cgroup[0].parent"), "{e}");
    assert!(
        e.to_string().contains("\"nope\" is not a declared cgroup"),
        "{e}"
    );
    // A loop.
    let e = err(&format!(
        "[[cgroup]]\nname = \"a\"\nparent = \"b\"\n[[cgroup]]\nname = \"b\"\nparent = \"a\"\n{WORK}"
    ));
    assert_eq!(e.line, 3, "{e}");
    assert!(e.to_string().contains("its own ancestor"), "{e}");
    // A cgroup its own parent.
    let e = err(&format!("[[cgroup]]\nname = \"a\"\nparent = \"a\"\n{WORK}"));
    assert!(e.to_string().contains("its own ancestor"), "{e}");
    // Two cgroups of one name.
    let e = err(&format!(
        "[[cgroup]]\nname = \"a\"\n[[cgroup]]\nname = \"a\"\n{WORK}"
    ));
    assert_eq!(e.line, 4, "{e}");
    // memory.min above memory.max.
    let e = err(&format!(
        "[[cgroup]]\nname = \"a\"\nmemory.max = \"10M\"\nmemory.min = \"20M\"\n{WORK}"
    ));
    assert_eq!((e.line, e.col), (4, 14), "{e}");
    assert!(e.to_string().contains("memory.min"), "{e}");
    // A workload in a cgroup nobody declared.
    let e = err("[[cgroup]]\nname = \"b\"\n[[workload]]\nname = \"w\"\ncgroup = \"a\"\nanon.size = \"1MiB\"\n");
    assert_eq!((e.line, e.field.as_str()), (5, "workload[0].cgroup"), "{e}");
    assert!(e.to_string().contains("declared cgroups are: b"), "{e}");
}

#[test]
fn every_cgroup_field_is_reachable_from_exactly_one_key() {
    check_complete(
        &CGROUP,
        &CgroupConfig::default(),
        &[("memory", "memory")],
        &[],
    );
    check_complete(
        &CGROUP_MEMORY,
        &CgroupMemory::default(),
        &[("swap", "swap"), ("oom", "oom")],
        &[],
    );
    check_complete(&CGROUP_SWAP, &CgroupSwap::default(), &[], &[]);
    check_complete(&CGROUP_OOM, &CgroupOom::default(), &[], &[]);
    check_declared_defaults(&CGROUP);
    check_declared_defaults(&CGROUP_MEMORY);
    check_declared_defaults(&CGROUP_SWAP);
    check_declared_defaults(&CGROUP_OOM);
}
