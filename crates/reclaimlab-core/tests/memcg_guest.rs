//! A VM limited as a process (issue 34, item 1): a `[[guest]]` with `cgroup = "name"` has its
//! VM process in that host cgroup, so the guest RAM the host backs is charged there, the
//! cgroup's `memory.max` reclaims it (to swap) or kills the VM inside the cgroup, and its
//! host faults' stalls count in the cgroup's pressure.

use reclaimlab_core::scenario::{parse_str, Scenario};
use reclaimlab_core::{run, InvariantMode, RunOptions, RunOutput};
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// A 4 GiB host; a 1 GiB guest whose program writes 768 MiB and holds it, its VM process in
/// cgroup "vm" (memory.max `max`); a host workload in cgroup "side" writes 256 MiB.
fn scenario(vm_max: &str, swap: &str) -> Scenario {
    let text = format!(
        "name = \"vm-in-cgroup\"\n[sim]\nduration = \"12s\"\nsample_interval = \"500ms\"\n\
         [host]\nram = \"4GiB\"\ncpus = 2\n[swap]\nsize = \"{swap}\"\n\
         [[cgroup]]\nname = \"vm\"\nmemory.max = \"{vm_max}\"\n\
         [[cgroup]]\nname = \"side\"\n\
         [[workload]]\nname = \"side\"\ncgroup = \"side\"\n\
         anon = {{ size = \"256MiB\", hold = \"10s\" }}\n\
         [[guest]]\nname = \"vm1\"\nram = \"1GiB\"\nboot_resident = \"100MiB\"\ncgroup = \"vm\"\n\
         [[guest.workload]]\nname = \"p\"\nstart = \"1s\"\n\
         anon = {{ size = \"768MiB\", hold = \"8s\" }}\n"
    );
    parse_str(&text, "vm.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn go(scn: &Scenario) -> RunOutput {
    let opts = RunOptions {
        invariants: InvariantMode::Periodic(997),
        ..Default::default()
    };
    run(scn, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The largest sample of a time-series column.
fn peak(out: &RunOutput, name: &str) -> u64 {
    let col = out
        .timeseries
        .column(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    col.into_iter().max().unwrap() as u64
}

#[test]
fn the_vm_s_guest_ram_is_charged_to_its_cgroup() {
    let out = go(&scenario("max", "1GiB"));
    let s: Value = serde_json::from_str(&out.summary_json).unwrap();
    let cg = &s["cgroups"];
    // The guest's boot memory and its program's (868 MiB) are charged to "vm", as host pages
    // of the VM process; the side workload's 256 MiB to "side", nothing of it to "vm".
    let vm = peak(&out, "cgroup/vm/memory.current");
    assert!((860 * MIB..=900 * MIB).contains(&vm), "vm peak {vm}");
    assert_eq!(u(&cg["vm"]["memory.peak"]), vm);
    let side = u(&cg["side"]["memory.peak"]);
    assert!((256 * MIB..=260 * MIB).contains(&side), "side peak {side}");
    // Unlimited and with memory to spare: no reclaim, no event.
    for e in ["max", "oom", "oom_kill"] {
        assert_eq!(u(&cg["vm"]["memory.events"][e]), 0, "{e}");
    }
}

#[test]
fn memory_max_swaps_the_vm_s_memory_and_without_swap_kills_the_vm_alone() {
    // Limited to 512 MiB with swap: the host reclaims the VM's pages to swap inside the
    // cgroup; the VM lives, its cgroup stalls.
    let out = go(&scenario("512M", "2GiB"));
    let s: Value = serde_json::from_str(&out.summary_json).unwrap();
    let vm = &s["cgroups"]["vm"];
    assert!(peak(&out, "cgroup/vm/memory.current") <= 512 * MIB);
    assert!(u(&vm["memory.events"]["max"]) > 0);
    assert_eq!(u(&vm["memory.events"]["oom_kill"]), 0);
    // What does not fit is in swap: the program and boot memory less the limit, at least.
    let swapped = peak(&out, "cgroup/vm/memory.swap.current");
    assert!(swapped >= 350 * MIB, "swap {swapped}");
    let pressure = peak(&out, "cgroup/vm/memory.pressure.some_total_us");
    assert!(
        pressure > 0,
        "the VM's limit reclaim is a stall of its cgroup"
    );
    assert_eq!(peak(&out, "cgroup/side/memory.pressure.some_total_us"), 0);
    // Without swap the limit cannot be met: the cgroup's OOM killer takes the VM (the only
    // process there); the side workload keeps its memory.
    let out = go(&scenario("512M", "0"));
    let s: Value = serde_json::from_str(&out.summary_json).unwrap();
    let cg = &s["cgroups"];
    assert_eq!(u(&cg["vm"]["memory.events"]["oom_kill"]), 1);
    assert_eq!(u(&cg["side"]["memory.events"]["oom_kill"]), 0);
    assert!(u(&cg["side"]["memory.peak"]) >= 256 * MIB);
    let killed = out.timeseries.column("cgroup/vm/memory.current").unwrap();
    assert_eq!(
        *killed.last().unwrap(),
        0,
        "the killed VM's memory went back"
    );
}

#[test]
fn a_guest_cgroup_must_be_declared() {
    let err = |text: &str| match parse_str(text, "bad.toml") {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    };
    let e = err(
        "name = \"x\"\n[host]\nram = \"2GiB\"\n[[guest]]\nname = \"g\"\nram = \"1GiB\"\n\
         boot_resident = \"100MiB\"\ncgroup = \"nosuch\"\n",
    );
    assert!(
        e.contains("bad.toml") && e.contains("cgroup \"nosuch\" is not declared"),
        "{e}"
    );
    assert!(e.contains("add a [[cgroup]] table"), "{e}");
}
