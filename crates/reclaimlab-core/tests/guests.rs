//! Guests on a host, end to end: invariants across machines, byte-identical reruns, a VM killed
//! by its host's OOM killer.

use reclaimlab_core::scenario::parse_str;
use reclaimlab_core::{run, InvariantMode, RunOptions};
use serde_json::Value;

/// A host with swap and three guests with different hinting, under host pressure: each program
/// writes 1 GiB and exits, the next guest starts while the host reclaims (and, for the CMMA
/// guest, drops frames marked unused).
const THREE: &str = r#"
name = "guests"
[sim]
duration = "40s"
sample_interval = "1s"
[host]
ram = "2560MiB"
cpus = 4
[swap]
size = "1GiB"
[[guest]]
name = "reporting"
ram = "1536MiB"
boot_resident = "200MiB"
policy.hinting = "D4"
[[guest.workload]]
name = "p"
start = "1s"
anon = { size = "1GiB", pattern = "sequential" }
[[guest]]
name = "cmma"
ram = "1536MiB"
start = "5s"
boot_resident = "200MiB"
policy.hinting = "D3cmma"
[[guest.workload]]
name = "p"
start = "1s"
anon = { size = "1GiB", pattern = "sequential" }
[[guest]]
name = "arrays"
ram = "1536MiB"
start = "10s"
boot_resident = "200MiB"
fragment_stride = 1024
policy.hinting = "D2"
[[guest.workload]]
name = "p"
start = "1s"
anon = { size = "1200MiB", pattern = "sequential" }
"#;

fn file(out: &reclaimlab_core::RunOutput, name: &str) -> String {
    out.extra_files
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, t)| t.clone())
        .unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn invariants_hold_across_machines_and_reruns_are_identical() {
    let scn = parse_str(THREE, "guests.toml").unwrap();
    let opts = RunOptions {
        invariants: InvariantMode::Periodic(499),
        ..Default::default()
    };
    let a = run(&scn, &opts, &mut |_, _| true).unwrap();
    let b = run(&scn, &RunOptions::default(), &mut |_, _| true).unwrap();
    assert_eq!(a.summary_json, b.summary_json);
    assert_eq!(file(&a, "vm_rss.csv"), file(&b, "vm_rss.csv"));
    assert_eq!(
        file(&a, "guests/cmma/vmstat"),
        file(&b, "guests/cmma/vmstat")
    );
    let s: Value = serde_json::from_str(&a.summary_json).unwrap();
    let g = s["guests"].as_array().unwrap();
    assert_eq!(g.len(), 3);
    // D4 returned its program's memory; the host swapped or dropped guest memory under pressure.
    assert!(g[0]["bytes_reported"].as_u64().unwrap() > 512 << 20);
    assert!(g[0]["host_rss_bytes"].as_u64().unwrap() < 600 << 20);
    let counter = |name: &str| {
        a.counters
            .iter()
            .find(|(n, _)| n == name)
            .map(|x| x.1)
            .unwrap()
    };
    assert!(counter("pswpout") > 0, "the host never swapped");
    // The aged D2 guest captured its program's frees.
    assert!(g[2]["frees_captured"].as_u64().unwrap() > 200_000);
}

#[test]
fn a_vm_killed_by_its_host_stops_and_gives_its_memory_back() {
    let text = r#"
name = "oom"
[host]
ram = "2GiB"
[[guest]]
name = "a"
ram = "1536MiB"
boot_resident = "100MiB"
[[guest.workload]]
name = "p"
start = "1s"
anon = { size = "1200MiB", pattern = "sequential", hold = "30s" }
[[guest]]
name = "b"
ram = "1536MiB"
start = "5s"
boot_resident = "100MiB"
[[guest.workload]]
name = "p"
start = "1s"
anon = { size = "1200MiB", pattern = "sequential" }
"#;
    let scn = parse_str(text, "oom.toml").unwrap();
    let opts = RunOptions {
        invariants: InvariantMode::Periodic(997),
        ..Default::default()
    };
    let out = run(&scn, &opts, &mut |_, _| true).unwrap();
    let s: Value = serde_json::from_str(&out.summary_json).unwrap();
    let g = s["guests"].as_array().unwrap();
    let killed: Vec<&Value> = g.iter().filter(|x| !x["killed_at_s"].is_null()).collect();
    assert_eq!(killed.len(), 1, "{g:?}");
    // The victim (the larger VM) is gone from the host; the other ran to its end.
    assert_eq!(killed[0]["host_rss_bytes"].as_u64(), Some(0));
    let other = g.iter().find(|x| x["killed_at_s"].is_null()).unwrap();
    assert!(other["threads"][0]["finished_s"].as_f64().is_some());
}

/// One aged D2 guest of the seed's shape (mechanisms.md §D.5), whose 4 GB program exits at
/// about 5 s, idling to 45 s with `background_frees` pages a second of its own activity.
fn idle_d2_guest(background: u64) -> Value {
    let scn = parse_str(
        &format!(
            r#"
name = "idle"
[sim]
duration = "45s"
sample_interval = "1s"
[host]
ram = "8GiB"
cpus = 4
[[guest]]
name = "vm1"
ram = "5GB"
vcpus = 2
boot_resident = "800MB"
fragment_stride = 1024
background_frees = {background}
policy.hinting = "D2"
[[guest.workload]]
name = "p"
start = "1s"
anon = {{ size = "4GB", pattern = "sequential" }}
"#
        ),
        "idle.toml",
    )
    .unwrap();
    let out = run(&scn, &RunOptions::default(), &mut |_, _| true).unwrap();
    let vmstat = file(&out, "guests/vm1/vmstat");
    let pgfree = vmstat
        .lines()
        .find_map(|l| l.strip_prefix("pgfree "))
        .map(|v| v.parse::<u64>().unwrap())
        .unwrap();
    let mut s: Value = serde_json::from_str(&out.summary_json).unwrap();
    let mut g = s["guests"][0].take();
    g["pgfree"] = pgfree.into();
    g
}

/// A guest is never quite idle: `background_frees` adds that many frees a second on its
/// vCPUs, and the RFC v8 arrays (D2) report what they still hold after the program's exit only
/// once enough of them arrive (mechanisms.md §D2: the kthread runs on a full array).
#[test]
fn a_guests_background_frees_feed_its_hinting() {
    let quiet = idle_d2_guest(0);
    let measured = idle_d2_guest(1);
    let busy = idle_d2_guest(500);
    // The program's 4 GB comes back in every case; the background adds its own frees, about
    // rate x (45 s - the 1 s mean lifetime of what is still held).
    let program = quiet["pgfree"].as_u64().unwrap();
    assert!(program >= 4_000_000_000 / 4096, "{program}");
    let extra = |g: &Value| g["pgfree"].as_u64().unwrap() - program;
    assert!(
        (30..=60).contains(&extra(&measured)),
        "{}",
        extra(&measured)
    );
    assert!(
        (19_000..=24_000).contains(&extra(&busy)),
        "{}",
        extra(&busy)
    );
    // At the measured rate the arrays keep their last entries; a busy guest's frees fill them
    // and the kthread reports the program's memory that was still waiting.
    let reported = |g: &Value| g["bytes_reported"].as_u64().unwrap();
    assert_eq!(quiet["reports"], measured["reports"]);
    assert!(
        reported(&quiet).abs_diff(reported(&measured)) < 64 << 20,
        "{} vs {}",
        reported(&quiet),
        reported(&measured)
    );
    assert!(
        busy["reports"].as_u64() > quiet["reports"].as_u64(),
        "{quiet}\n{busy}"
    );
    assert!(
        reported(&busy) > reported(&quiet) + (1 << 30),
        "{} vs {}",
        reported(&busy),
        reported(&quiet)
    );
}
