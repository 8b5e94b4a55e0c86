//! A Xen host end to end: blkback's pages against dom0's memory (invariants), byte-identical
//! reruns, the pool variants' targets, persistent grants and their cap, and scenarios a Xen
//! host must refuse.

use reclaimlab_core::scenario::parse_str;
use reclaimlab_core::{run, InvariantMode, RunOptions, RunOutput};
use serde_json::Value;

/// Dom0 of 1 GiB whose services nearly fill it, next to 3 guests with 4 busy network VBDs each;
/// `{pool}`, `{backing}` and `{grants}` are filled in per test.
fn pressure(pool: &str, backing: &str, persistent: bool) -> String {
    let mut s = format!(
        r#"
name = "xen"
[sim]
duration = "12s"
sample_interval = "1s"
[host]
ram = "1GiB"
cpus = 2
[swap]
size = "1GiB"
[xen]
ram = "8GiB"
[xen.blkback]
log_stats = true
[policy]
blkback_pool = "{pool}"
blkback_backing = "{backing}"
[[workload]]
name = "services"
anon = {{ size = "900MiB", pattern = "zipf", passes = 1000000, think = "2us" }}
"#
    );
    for g in 0..3 {
        s += &format!("[[guest]]\nname = \"vm{g}\"\nram = \"128MiB\"\nboot_resident = \"32MiB\"\n");
        for v in 0..4 {
            s += &format!(
                "[[guest.vbd]]\nname = \"xvd{v}\"\nbackend = \"network\"\npersistent = {persistent}\n"
            );
        }
        for v in 0..4 {
            s += &format!(
                "[[guest.workload]]\nname = \"dd{v}\"\nstart = \"{}ms\"\nblkio = {{ vbd = \"xvd{v}\", \
                 bs = \"4KiB\", count = 8192, repeat = 100, pause = \"2s\" }}\n",
                (g * 4 + v) * 311 % 2000
            );
        }
    }
    s
}

fn go(text: &str, invariants: InvariantMode) -> RunOutput {
    let scn = parse_str(text, "xen.toml").unwrap();
    let opts = RunOptions {
        invariants,
        ..Default::default()
    };
    run(&scn, &opts, &mut |_, _| true).unwrap()
}

fn xen(out: &RunOutput) -> Value {
    let s: Value = serde_json::from_str(&out.summary_json).unwrap();
    s["xen"].clone()
}

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.counters.iter().find(|(n, _)| n == name).unwrap().1
}

fn rings(x: &Value) -> Vec<Value> {
    x["devices"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["rings"].as_array().unwrap().clone())
        .collect()
}

#[test]
fn balloon_pages_add_up_with_dom0_and_reruns_are_identical() {
    let text = pressure("B3", "balloon", false);
    // The checker holds blkback's frames against dom0's: each a kernel page, held once, and
    // all of them exactly the pages handed to Xen.
    let a = go(&text, InvariantMode::Periodic(997));
    let b = go(&text, InvariantMode::Off);
    assert_eq!(a.summary_json, b.summary_json);
    assert_eq!(a.vmstat, b.vmstat);
    let x = xen(&a);
    assert!(
        x["squeezes"].as_u64().unwrap() > 0,
        "dom0 never squeezed: {x}"
    );
    assert!(x["pressure_calls"].as_u64().unwrap() > 0);
    // Ballooned-out pages are the rings' pages (pool + mapped) plus those awaiting the balloon
    // worker (none: no delay).
    let out = x["balloon"]["ballooned_out_pages"].as_u64().unwrap();
    let held = x["pool_pages"].as_u64().unwrap() + x["mapped_pages"].as_u64().unwrap();
    assert_eq!(out, held);
    let target = x["balloon"]["target_kb"].as_u64().unwrap();
    assert_eq!(
        x["balloon"]["current_kb"].as_u64().unwrap(),
        target - out * 4
    );
    for r in rings(&x) {
        assert_eq!(r["pool_over_target"], 0, "{r}");
    }
    let log = &a
        .extra_files
        .iter()
        .find(|(n, _)| n == "xen/log_stats")
        .unwrap()
        .1;
    assert!(log.contains("blkback.1.vm0/xvd0-0: oo"), "{log}");
}

#[test]
fn b1_keeps_its_pools_and_swaps_where_b3_squeezes_them() {
    let b1 = go(&pressure("B1", "balloon", false), InvariantMode::Off);
    let b3 = go(&pressure("B3", "balloon", false), InvariantMode::Off);
    let (x1, x3) = (xen(&b1), xen(&b3));
    assert_eq!(x1["squeezes"], 0);
    assert_eq!(x1["pressure_calls"], 0, "B1 registers no shrinker");
    assert!(x1["pool_pages"].as_u64().unwrap() > x3["pool_pages"].as_u64().unwrap());
    assert!(
        counter(&b1, "pswpout") > counter(&b3, "pswpout"),
        "B1 {} vs B3 {}",
        counter(&b1, "pswpout"),
        counter(&b3, "pswpout")
    );
    // B1's idle rings keep up to max_buffer_pages; never more after housekeeping.
    for r in rings(&x1) {
        assert!(r["pool_pages"].as_u64().unwrap() <= 1024);
        assert!(r["pool_pages_max"].as_u64().unwrap() > 0);
    }
}

#[test]
fn unpopulated_pools_cost_dom0_only_their_memmap() {
    let out = go(
        &pressure("B1", "unpopulated", false),
        InvariantMode::Periodic(4001),
    );
    let x = xen(&out);
    assert_eq!(x["balloon"]["ballooned_out_pages"], 0);
    let sections = x["unpopulated"]["sections"].as_u64().unwrap();
    assert!(sections >= 1);
    assert_eq!(
        x["unpopulated"]["memmap_pages"].as_u64().unwrap(),
        sections * 512
    );
}

/// `guests` one-vCPU guests doing 4 KiB random I/O to ramdisks, against 24 dom0 vCPUs.
fn scaling(grants: &str, guests: u32, pattern: &str) -> String {
    let mut s = format!(
        r#"
name = "grants"
[sim]
duration = "100ms"
[host]
ram = "2GiB"
cpus = 24
cpu_contention = true
[swap]
size = "0"
[xen]
ram = "16GiB"
[policy]
blkback_grants = "{grants}"
"#
    );
    for g in 0..guests {
        s += &format!(
            "[[guest]]\nname = \"vm{g}\"\nram = \"128MiB\"\nboot_resident = \"32MiB\"\n\
             [[guest.vbd]]\nname = \"xvda\"\n[[guest.workload]]\nname = \"fio\"\n\
             blkio = {{ vbd = \"xvda\", pattern = \"{pattern}\", iodepth = 32 }}\n"
        );
    }
    s
}

#[test]
fn without_persistent_grants_every_request_unmaps_and_flushes_and_with_them_none_does() {
    let none = xen(&go(&scaling("none", 3, "random"), InvariantMode::Off));
    let v61 = xen(&go(&scaling("v61", 3, "random"), InvariantMode::Off));
    let req = none["requests"].as_u64().unwrap();
    assert!(req > 10_000);
    // One unmap per completed request; the requests still in flight at the end are not.
    let unmaps = none["unmap_hypercalls"].as_u64().unwrap();
    assert!(unmaps <= req && unmaps + 3 * 32 >= req, "{unmaps} of {req}");
    assert_eq!(none["tlb_flushes"], none["unmap_hypercalls"]);
    assert_eq!(
        none["ipis"].as_u64().unwrap(),
        23 * none["tlb_flushes"].as_u64().unwrap()
    );
    assert_eq!(v61["unmap_hypercalls"], 0);
    assert_eq!(v61["tlb_flushes"], 0);
    // The warm-up: one map per distinct gref a frontend uses: no more than it ever has in
    // flight (at most 32, one request being built).
    let maps = v61["map_ops"].as_u64().unwrap();
    assert!((3..=3 * 33).contains(&maps), "{maps}");
    assert!(v61["persistent_hits"].as_u64().unwrap() > 10_000);
}

#[test]
fn a_flood_of_fresh_grefs_never_passes_the_cap() {
    for (grants, cap) in [("v38", 352u64), ("v61", 1056)] {
        let x = xen(&go(&scaling(grants, 1, "fresh_grefs"), InvariantMode::Off));
        let r = &rings(&x)[0];
        assert_eq!(r["max_pgrants"].as_u64().unwrap(), cap);
        assert_eq!(r["persistent_gnt_max_seen"].as_u64().unwrap(), cap);
        assert_eq!(
            x["map_ops"], x["segments"],
            "{grants}: every fresh gref is mapped"
        );
        let held = x["mapped_pages"].as_u64().unwrap();
        assert_eq!(
            x["unmap_ops"].as_u64().unwrap(),
            x["segments"].as_u64().unwrap() - held,
            "{grants}: every mapping not held is unmapped"
        );
    }
}

#[test]
fn a_xen_host_refuses_what_it_cannot_hold() {
    let base = "name = \"x\"\n[host]\nram = \"2GiB\"\n";
    let guest = "[[guest]]\nname = \"vm\"\nram = \"1GiB\"\n[[guest.vbd]]\nname = \"xvda\"\n";
    let cases = [
        (
            format!("{base}[xen]\nram = \"2GiB\"\n{guest}"),
            "xen.ram",
        ),
        (
            format!(
                "{base}[xen]\nram = \"8GiB\"\n{guest}[[guest.workload]]\nname = \"dd\"\n\
                 blkio = {{ vbd = \"xvdb\" }}\n"
            ),
            "no VBD named \"xvdb\"",
        ),
        (format!("{base}{guest}"), "not a Xen host"),
        (
            format!("{base}[xen]\n{guest}[[guest.workload]]\nname = \"dd\"\nblkio = {{ vbd = \"xvda\", repeat = 3 }}\n"),
            "repeat needs count",
        ),
        (
            format!("{base}[[workload]]\nname = \"w\"\nblkio = {{ vbd = \"xvda\" }}\n"),
            "dom0 has no blkfront",
        ),
        (
            format!("{base}[xen]\nram = \"8GiB\"\n[policy]\nblkback_pool = \"B0\"\n{guest}"),
            "guest \"vm\" VBD \"xvda\" sends indirect requests of 32 segments",
        ),
    ];
    for (text, want) in cases {
        let e = parse_str(&text, "bad.toml").unwrap_err().to_string();
        assert!(e.contains(want), "{want:?} not in: {e}");
    }
    // B0 with direct requests only is accepted.
    let ok = format!(
        "{base}[xen]\nram = \"8GiB\"\n[policy]\nblkback_pool = \"B0\"\n{guest}max_indirect_segments = 0\n"
    );
    assert!(parse_str(&ok, "ok.toml").is_ok());
}
