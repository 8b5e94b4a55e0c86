//! Pressure per cgroup and proactive reclaim (issue 34, items 2, 3 and 5): each cgroup's
//! `memory.pressure`, writes of `memory.reclaim` (`[workload.memory_reclaim]`) and the
//! userspace controllers (`[policy] memcg_controller`: senpai-like, TMO-like) that write
//! `memory.high` or `memory.reclaim` from that pressure.

use reclaimlab_core::observe::ftrace::TraceFormat;
use reclaimlab_core::scenario::{parse_str, Scenario};
use reclaimlab_core::{run, InvariantMode, RunOptions, RunOutput};

const MIB: u64 = 1 << 20;
const PAGE: u64 = 4096;

fn scenario(text: &str) -> Scenario {
    parse_str(text, "proactive.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn go_with(scn: &Scenario, trace: Option<TraceFormat>) -> RunOutput {
    let opts = RunOptions {
        seed: None,
        invariants: InvariantMode::Periodic(2000),
        trace,
    };
    run(scn, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{}: {e}", scn.name))
}

fn go(text: &str) -> RunOutput {
    go_with(&scenario(text), None)
}

fn summary(out: &RunOutput) -> serde_json::Value {
    serde_json::from_str(&out.summary_json).unwrap()
}

fn file<'a>(out: &'a RunOutput, name: &str) -> &'a str {
    &out.extra_files
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no file {name}"))
        .1
}

/// `total=` of the `some` (or `full`) line of a pressure file, µs.
fn pressure_total(text: &str, line: &str) -> u64 {
    text.lines()
        .find(|l| l.starts_with(&format!("{line} ")))
        .and_then(|l| l.rsplit("total=").next())
        .unwrap_or_else(|| panic!("no {line} line in {text:?}"))
        .trim()
        .parse()
        .unwrap()
}

/// The last sample of time-series column `name` taken at or before `t_ns`.
fn at(out: &RunOutput, name: &str, t_ns: u64) -> u64 {
    let time = out.timeseries.column("time_ns").expect("time_ns");
    let col = out
        .timeseries
        .column(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    let i = time
        .iter()
        .rposition(|&t| t as u64 <= t_ns)
        .unwrap_or_else(|| panic!("no sample by {t_ns} ns"));
    col[i] as u64
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// A 1 GiB host; cgroup "tight" (memory.max 64M, below "pods") holds a workload touching 96 MiB
/// twice, so it reclaims inside its limit and stalls; cgroup "idle" holds one that touches
/// 8 MiB once and sleeps, never short of memory.
const TWO_CGROUPS: &str = "name = \"two\"\n[host]\nram = \"1GiB\"\ncpus = 2\n\
    [swap]\nsize = \"1GiB\"\n\
    [[cgroup]]\nname = \"pods\"\n\
    [[cgroup]]\nname = \"tight\"\nparent = \"pods\"\nmemory.max = \"64M\"\n\
    [[cgroup]]\nname = \"idle\"\n\
    [[workload]]\nname = \"hog\"\ncgroup = \"tight\"\n\
    anon = { size = \"96MiB\", passes = 2 }\n\
    [[workload]]\nname = \"quiet\"\ncgroup = \"idle\"\n\
    anon = { size = \"8MiB\", hold = \"1s\" }\n";

#[test]
fn each_cgroup_has_its_own_pressure_and_a_parent_counts_its_children_s_stalls() {
    let out = go(TWO_CGROUPS);
    let tight = file(&out, "cgroup/tight/memory.pressure");
    let pods = file(&out, "cgroup/pods/memory.pressure");
    let idle = file(&out, "cgroup/idle/memory.pressure");
    // The limited cgroup's task stalls in limit reclaim; the idle one's never does.
    let some = pressure_total(tight, "some");
    assert!(some > 1000, "tight: {tight}");
    assert!(pressure_total(tight, "full") > 0, "tight: {tight}");
    assert_eq!(pressure_total(idle, "some"), 0, "idle: {idle}");
    // "pods" has no task but tight's: its groups saw exactly the same changes.
    assert_eq!(pods, tight);
    // The system group counts every task: it stalled at least while tight did on some CPU.
    let system = file(&out, "pressure/memory");
    assert!(pressure_total(system, "some") > 0, "{system}");
    // summary.json and the time series say the same as the file.
    let s = summary(&out);
    let cg = &s["cgroups"]["tight"]["memory.pressure"];
    assert_eq!(u(&cg["some"]["total_us"]), some);
    assert_eq!(
        u(&s["cgroups"]["idle"]["memory.pressure"]["some"]["total_us"]),
        0
    );
    let col = out
        .timeseries
        .column("cgroup/tight/memory.pressure.some_total_us")
        .expect("the cgroup's pressure column");
    assert_eq!(*col.last().unwrap() as u64, some);
    assert!(col.windows(2).all(|w| w[0] <= w[1]), "a total never falls");
}

/// cgroup "app" holds 128 MiB for 5 s; a writer in the root asks its memory.reclaim for
/// `amount` at 2 s.
fn one_write(amount: &str, swap: &str) -> String {
    format!(
        "name = \"write\"\n[host]\nram = \"1GiB\"\ncpus = 2\n[swap]\nsize = \"{swap}\"\n\
         [[cgroup]]\nname = \"app\"\n\
         [[workload]]\nname = \"app\"\ncgroup = \"app\"\n\
         anon = {{ size = \"128MiB\", hold = \"5s\" }}\n\
         [[workload]]\nname = \"agent\"\n\
         memory_reclaim = {{ cgroup = \"app\", amount = \"{amount}\", after = \"2s\" }}\n"
    )
}

#[test]
fn a_memory_reclaim_write_takes_what_it_asks_and_is_no_memory_stall() {
    let out = go(&one_write("32MiB", "1GiB"));
    let s = summary(&out);
    let app = &s["cgroups"]["app"];
    let w = &app["proactive"]["memory.reclaim"];
    assert_eq!(u(&w["writes"]), 1);
    assert_eq!(u(&w["eagain"]), 0);
    assert_eq!(u(&w["requested"]), 32 * MIB);
    let got = u(&w["reclaimed"]);
    // 6.1 takes more than it is asked for a large request: one call's priority loop goes on
    // while the call's total is short of the request, but the pass that ends it compares only
    // its own reclaim with the whole request (`shrink_lruvec`'s local count), so the last pass
    // can take up to the request again on top of the earlier ones. (6.4 fixed it by asking
    // 32 pages a call: "mm:vmscan: fix inaccurate reclaim during proactive reclaim".) Bounds:
    // at least the request, at most twice it and a batch.
    assert!(
        got > 32 * MIB,
        "6.1 over-reclaims a 32 MiB request: reclaimed {got}"
    );
    assert!(got <= 64 * MIB + 32 * PAGE, "reclaimed {got}");
    // Nothing else reclaims and the application sleeps holding the rest: the cgroup holds
    // exactly what the write left (a page written to swap but not yet freed is still
    // charged, and holds its slot too).
    // (Read at 4 s: the application frees everything when it ends.)
    let current = at(&out, "cgroup/app/memory.current", 4_000_000_000);
    assert_eq!(current, 128 * MIB - got, "memory.current");
    assert!(at(&out, "cgroup/app/memory.swap.current", 4_000_000_000) >= got);
    // The writer's reclaim counts as direct reclaim of the cgroup, and as no event.
    let steal: u64 = file(&out, "cgroup/app/memory.stat")
        .lines()
        .find_map(|l| l.strip_prefix("pgsteal_direct "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(steal * PAGE, got);
    for e in ["low", "high", "max", "oom"] {
        assert_eq!(u(&app["memory.events"][e]), 0, "memory.events {e}");
    }
    // Nobody stalled: the write is not a memstall and the host never ran short.
    assert_eq!(pressure_total(file(&out, "pressure/memory"), "some"), 0);
    assert_eq!(
        pressure_total(file(&out, "cgroup/app/memory.pressure"), "some"),
        0
    );
}

#[test]
fn a_write_that_finds_nothing_to_reclaim_ends_in_eagain_and_one_below_a_page_asks_nothing() {
    // No swap: the cgroup's anonymous pages cannot go anywhere.
    let out = go(&one_write("32MiB", "0"));
    let w = &summary(&out)["cgroups"]["app"]["proactive"]["memory.reclaim"];
    assert_eq!(
        (u(&w["writes"]), u(&w["eagain"]), u(&w["reclaimed"])),
        (1, 1, 0)
    );
    // 100 bytes is no page: met at once, nothing reclaimed.
    let out = go(&one_write("100B", "1GiB"));
    let w = &summary(&out)["cgroups"]["app"]["proactive"]["memory.reclaim"];
    assert_eq!(
        (u(&w["writes"]), u(&w["eagain"]), u(&w["reclaimed"])),
        (1, 0, 0)
    );
}

/// An application with a cold part, in cgroup "app": 128 MiB written once and held ("cold"),
/// beside 32 MiB used with a strong skew ("hot"), both for 10 s; the agent adjusts every
/// 0.5 s. The host never runs short: what the cgroup gives back is the agent's doing.
fn controlled(variant: &str) -> Scenario {
    scenario(&format!(
        "name = \"ctl\"\n[host]\nram = \"1GiB\"\ncpus = 2\n[swap]\nsize = \"1GiB\"\n\
         [policy]\nmemcg_controller = \"{variant}\"\n\
         [controller]\ninterval = \"500ms\"\npressure = \"5ms\"\nmax_probe = 0.05\n\
         min_size = \"16MiB\"\nreclaim_ratio = 0.02\npsi_threshold = 0.01\n\
         [[cgroup]]\nname = \"app\"\n\
         [[workload]]\nname = \"cold\"\ncgroup = \"app\"\n\
         anon = {{ size = \"128MiB\", hold = \"10s\" }}\n\
         [[workload]]\nname = \"hot\"\ncgroup = \"app\"\nduration = \"10s\"\n\
         [workload.anon]\nsize = \"32MiB\"\npattern = \"zipf\"\nzipf_alpha = 1.1\n\
         passes = 1000\nthink = \"2us\"\n"
    ))
}

#[test]
fn the_controllers_take_cold_memory_each_by_its_own_write() {
    let (mut current, mut stall) = (Vec::new(), Vec::new());
    for variant in ["none", "senpai", "tmo"] {
        let scn = controlled(variant);
        let out = go_with(&scn, Some(TraceFormat::Kernel));
        let s = summary(&out);
        let app = &s["cgroups"]["app"];
        let pro = &app["proactive"];
        let high = file(&out, "cgroup/app/memory.high").trim().to_string();
        let marks = out
            .trace
            .as_deref()
            .unwrap()
            .matches(&format!("tracing_mark_write: {variant}: cgroup=app "))
            .count() as u64;
        match variant {
            "none" => {
                assert_eq!(high, "max");
                assert_eq!(u(&pro["memory.high"]["writes"]), 0);
                assert_eq!(u(&pro["memory.reclaim"]["writes"]), 0);
                assert_eq!(marks, 0);
            }
            "senpai" => {
                // One memory.high write per interval, each in the trace; the limit holds.
                let writes = u(&pro["memory.high"]["writes"]);
                assert!((18..=20).contains(&writes), "{writes} writes");
                assert_eq!(marks, writes);
                let limit: u64 = high.parse().expect("a limit in bytes");
                assert!(
                    limit < 160 * MIB && limit.is_multiple_of(PAGE),
                    "memory.high {limit}"
                );
                assert!(u(&pro["memory.high"]["reclaimed"]) > 0);
                assert_eq!(u(&pro["memory.reclaim"]["writes"]), 0);
            }
            _ => {
                // memory.reclaim writes, no limit left behind.
                assert_eq!(high, "max");
                let writes = u(&pro["memory.reclaim"]["writes"]);
                assert!(
                    writes > 0 && marks >= writes,
                    "{writes} writes, {marks} marks"
                );
                assert!(u(&pro["memory.reclaim"]["reclaimed"]) > 0);
                assert_eq!(u(&pro["memory.high"]["writes"]), 0);
            }
        }
        // What the cgroup holds just before the application ends (it frees everything then).
        current.push(at(&out, "cgroup/app/memory.current", 9_500_000_000));
        if variant != "none" {
            stall.push(at(
                &out,
                "cgroup/app/memory.pressure.some_total_us",
                9_500_000_000,
            ));
        }
        // Deterministic, agent included.
        let again = go_with(&scn, Some(TraceFormat::Kernel));
        assert_eq!(again.summary_json, out.summary_json, "{variant}");
    }
    // Without an agent nothing takes the cold pages: the host never runs short.
    assert!(current[0] >= 150 * MIB, "none: {}", current[0]);
    // senpai cuts 5 % of its limit a step while the cgroup stalls below its target (the cold
    // pages never come back): eighteen steps by 9.5 s leave 0.95^18 = 40 % of the start.
    assert!(current[1] < current[0] * 5 / 10, "senpai {current:?}");
    // TMO reclaims 2 % of memory.current a step (a little more: 6.1 over-reclaims), so it
    // takes less, in the same time, than senpai's 5 % cuts.
    assert!(
        current[2] < current[0] * 3 / 4 && current[2] > current[1],
        "tmo {current:?}"
    );
    // Each kept its cgroup below the stall it steers by: 5 ms an interval, 20 intervals.
    for (variant, some) in ["senpai", "tmo"].iter().zip(&stall) {
        assert!(*some < 20 * 5_000, "{variant}: {some} us of stall");
    }
}

#[test]
fn proactive_reclaim_scenario_errors_name_the_key_and_the_fix() {
    let err = |text: &str| match parse_str(text, "bad.toml") {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    };
    let host = "[host]\nram = \"1GiB\"\n";
    let e = err(&format!(
        "{host}[policy]\nmemcg_controller = \"senpai\"\n\
         [[workload]]\nname = \"w\"\nanon = {{ size = \"1MiB\" }}\n"
    ));
    assert!(
        e.contains("no cgroup to control") && e.contains("[[cgroup]]"),
        "{e}"
    );
    let e = err(&format!(
        "{host}[[workload]]\nname = \"w\"\nmemory_reclaim = {{ amount = \"1MiB\" }}\n"
    ));
    assert!(
        e.contains("no cgroup to write") && e.contains("memory_reclaim"),
        "{e}"
    );
    let e = err(&format!(
        "{host}[[cgroup]]\nname = \"a\"\n\
         [[workload]]\nname = \"w\"\nmemory_reclaim = {{ cgroup = \"b\" }}\n"
    ));
    assert!(
        e.contains("\"b\" is not declared") && e.contains("the declared cgroups are: a"),
        "{e}"
    );
    let e = err(&format!(
        "{host}[[cgroup]]\nname = \"a\"\n\
         [[workload]]\nname = \"w\"\ncgroup = \"a\"\nmemory_reclaim = {{ every = \"1s\" }}\n"
    ));
    assert!(e.contains("need an end") && e.contains("duration"), "{e}");
    let e = err(&format!("{host}[controller]\nmax_probe = 2.0\n[[workload]]\nname = \"w\"\nanon = {{ size = \"1MiB\" }}\n"));
    assert!(e.contains("max_probe"), "{e}");
}
