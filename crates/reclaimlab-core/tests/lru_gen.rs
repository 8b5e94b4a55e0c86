//! The multi-generational LRU wired in as `[policy] lru = "mglru"` (issue 35): a scenario runs
//! under both algorithms, deterministically and with every invariant (the generation lists,
//! counts and gauges included); the generations' text in `/sys/kernel/debug/lru_gen` form;
//! the refault accounting differs from the two-list LRU's in the direction the algorithm
//! implies; `min_ttl_ms` OOM-kills a thrashing machine.

use reclaimlab_core::scenario::{parse_str, Scenario};
use reclaimlab_core::{run, InvariantMode, RunOptions, RunOutput};

fn go(text: &str, inv: InvariantMode) -> RunOutput {
    let scn: Scenario = parse_str(text, "lru_gen.toml").unwrap_or_else(|e| panic!("{e}"));
    let opts = RunOptions {
        seed: None,
        invariants: inv,
        trace: None,
    };
    run(&scn, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"))
}

/// A line of the run's /proc/vmstat.
fn counter(out: &RunOutput, name: &str) -> u64 {
    out.vmstat
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in vmstat"))
        .trim()
        .parse()
        .unwrap()
}

fn file<'a>(out: &'a RunOutput, name: &str) -> Option<&'a str> {
    out.extra_files
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, t)| t.as_str())
}

/// A 256 MiB host with swap; one process touches 384 MiB of anon three times.
fn anon_overcommit(lru: &str, sysctl: &str) -> String {
    format!(
        "[host]\nram = \"256MiB\"\ncpus = 2\n[swap]\nsize = \"512MiB\"\n\
         [sysctl]\n{sysctl}\n[policy]\nlru = \"{lru}\"\n\
         [[workload]]\nname = \"hog\"\n\
         anon = {{ size = \"384MiB\", pattern = \"sequential\", passes = 3 }}\n"
    )
}

#[test]
fn an_overcommitted_machine_runs_under_both_algorithms_deterministically() {
    let classic = go(
        &anon_overcommit("classic", ""),
        InvariantMode::Periodic(2000),
    );
    let mglru = go(&anon_overcommit("mglru", ""), InvariantMode::Periodic(2000));
    let again = go(&anon_overcommit("mglru", ""), InvariantMode::Off);
    assert_eq!(mglru.vmstat, again.vmstat, "the same scenario and seed");
    assert_eq!(file(&mglru, "lru_gen"), file(&again, "lru_gen"));
    for out in [&classic, &mglru] {
        assert!(counter(out, "pswpout") > 50_000, "it swaps");
        assert!(counter(out, "pgsteal_kswapd") + counter(out, "pgsteal_direct") > 50_000);
    }
    assert_ne!(
        classic.vmstat, mglru.vmstat,
        "the switch changes the algorithm"
    );
    assert!(
        file(&classic, "lru_gen").is_none(),
        "no debugfs file without it"
    );
    // The two-list LRU's deactivation does not run under the generations: pgdeactivate
    // stays 0, while sorting counts in pgrefill.
    assert_eq!(counter(&mglru, "pgdeactivate"), 0);

    for k in [
        "pgscan_kswapd",
        "pgscan_direct",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "pswpout",
        "pswpin",
        "pgmajfault",
        "workingset_refault_anon",
        "workingset_activate_anon",
        "workingset_restore_anon",
        "pgrefill",
        "pgactivate",
        "allocstall_normal",
        "allocstall_dma32",
    ] {
        eprintln!(
            "{k}: classic {} mglru {}",
            counter(&classic, k),
            counter(&mglru, k)
        );
    }
    // lru_gen_enabled without the core bit is the two-list LRU of the same kernel.
    let off = go(
        &anon_overcommit("mglru", "lru_gen_enabled = 0x0006"),
        InvariantMode::Off,
    );
    assert_eq!(off.vmstat, classic.vmstat);
}

/// `/sys/kernel/debug/lru_gen`: the root memcg's line, the node's, then one line per
/// generation from the oldest anon one to `max_seq`: consecutive sequence numbers, ages that
/// fall with them, pages that add up to the machine's LRU.
#[test]
fn the_debugfs_text_has_the_kernel_format() {
    let out = go(&anon_overcommit("mglru", ""), InvariantMode::Off);
    let text = file(&out, "lru_gen").expect("the lru_gen file");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "memcg     1 /");
    assert_eq!(lines[1], " node     0");
    let gens: Vec<Vec<u64>> = lines[2..]
        .iter()
        .map(|l| {
            // "%10lu %10u %10lu %10lu " per generation: seq, age in ms, anon, file.
            assert_eq!(l.len(), 1 + 10 + 1 + 10 + 2 * 12, "{l:?}");
            l.split_whitespace().map(|v| v.parse().unwrap()).collect()
        })
        .collect();
    assert!((2..=4).contains(&gens.len()), "{text}");
    for w in gens.windows(2) {
        assert_eq!(w[1][0], w[0][0] + 1, "consecutive sequence numbers");
        assert!(
            w[1][1] <= w[0][1],
            "younger generations are younger: {text}"
        );
    }
    assert!(
        gens.last().unwrap()[0] > 3,
        "it aged past the initial generations"
    );
    let pages: u64 = gens.iter().map(|g| g[2] + g[3]).sum();
    let lru: u64 = [
        "nr_inactive_anon",
        "nr_active_anon",
        "nr_inactive_file",
        "nr_active_file",
    ]
    .iter()
    .map(|k| counter(&out, k))
    .sum();
    assert_eq!(pages, lru, "{text}");
}

/// The same overcommit, its working set touched at random: every generation is younger than
/// a `min_ttl_ms` of 2 s, so kswapd's `lru_gen_age_node` calls the OOM killer; without the
/// knob the machine swaps on and nobody is killed.
#[test]
fn min_ttl_ms_oom_kills_a_thrashing_machine() {
    let text = |ttl: u64| {
        format!(
            "[host]\nram = \"256MiB\"\ncpus = 2\n[swap]\nsize = \"512MiB\"\n\
             [sysctl]\nlru_gen_min_ttl_ms = {ttl}\n[policy]\nlru = \"mglru\"\n\
             [sim]\nduration = \"20s\"\n\
             [[workload]]\nname = \"hog\"\n\
             anon = {{ size = \"384MiB\", pattern = \"random\", passes = 40 }}\n"
        )
    };
    let off = go(&text(0), InvariantMode::Off);
    let on = go(&text(2000), InvariantMode::Periodic(5000));
    assert_eq!(counter(&off, "oom_kill"), 0);
    assert!(counter(&off, "pswpin") > 10_000, "it thrashes");
    assert!(counter(&on, "oom_kill") >= 1, "min_ttl_ms kills");
    assert!(
        counter(&on, "pswpin") < counter(&off, "pswpin"),
        "the kill ends the thrashing"
    );
}

/// Memory cgroups under the generations: each memcg's lruvec has its own generations (the
/// invariant check recounts them), limit reclaim stays inside the cgroup, and the debugfs file
/// has one block per memcg.
#[test]
fn a_cgroup_reclaims_its_own_generations() {
    let text = "[host]\nram = \"1GiB\"\ncpus = 2\n[swap]\nsize = \"1GiB\"\n\
                [policy]\nlru = \"mglru\"\n\
                [[cgroup]]\nname = \"box\"\nmemory.max = \"64M\"\n\
                [[workload]]\nname = \"hog\"\ncgroup = \"box\"\n\
                anon = { size = \"96MiB\", passes = 2 }\n";
    let out = go(text, InvariantMode::Periodic(500));
    assert!(counter(&out, "pswpout") > 5_000, "the cgroup swaps");
    let dbg = file(&out, "lru_gen").expect("the lru_gen file");
    let memcgs: Vec<&str> = dbg.lines().filter(|l| l.starts_with("memcg")).collect();
    assert_eq!(memcgs, ["memcg     1 /", "memcg     2 /box"], "{dbg}");
}

/// The time series has each type's pages by generation under the generations, and no such
/// columns under the two-list LRU; at every sample they add up to the LRU gauges.
#[test]
fn the_time_series_has_the_generation_sizes() {
    let classic = go(&anon_overcommit("classic", ""), InvariantMode::Off);
    assert!(classic.timeseries.column("lru_gen_max_seq").is_none());
    let out = go(&anon_overcommit("mglru", ""), InvariantMode::Off);
    let col = |n: &str| out.timeseries.column(n).unwrap_or_else(|| panic!("no {n}"));
    let seq = col("lru_gen_max_seq");
    assert!(seq.windows(2).all(|w| w[1] >= w[0]), "max_seq never falls");
    assert!(seq.last().unwrap() > &seq[0], "it aged");
    let lru: Vec<i64> = [
        "nr_inactive_anon",
        "nr_active_anon",
        "nr_inactive_file",
        "nr_active_file",
    ]
    .iter()
    .map(|n| col(n))
    .fold(vec![0; seq.len()], |acc, c| {
        acc.iter().zip(c).map(|(a, b)| a + b).collect()
    });
    let gens: Vec<i64> = ["anon", "file"]
        .iter()
        .flat_map(|t| (0..4).map(move |k| format!("lru_gen_{t}_young{k}")))
        .map(|n| col(&n))
        .fold(vec![0; seq.len()], |acc, c| {
            acc.iter().zip(c).map(|(a, b)| a + b).collect()
        });
    assert_eq!(gens, lru);
    // The two youngest generations are the active gauge.
    let active: Vec<i64> = col("nr_active_anon");
    let young: Vec<i64> = col("lru_gen_anon_young0")
        .iter()
        .zip(col("lru_gen_anon_young1"))
        .map(|(a, b)| a + b)
        .collect();
    assert_eq!(young, active);
}

/// A machine with room to spare: a cold 64 MiB touched once, a hot 32 MiB touched over and
/// over, and (with `agent`) a writer of `/sys/kernel/debug/lru_gen` once a second. Nothing
/// forces reclaim, so every page swapped out is the writer's doing.
fn proactive(agent: Option<&str>) -> String {
    let mut s = "[sim]\nduration = \"9s\"\n[host]\nram = \"512MiB\"\ncpus = 2\n\
                 [swap]\nsize = \"512MiB\"\n[policy]\nlru = \"mglru\"\n\
                 [[workload]]\nname = \"cold\"\nanon = { size = \"64MiB\", hold = \"20s\" }\n\
                 [[workload]]\nname = \"hot\"\nduration = \"20s\"\n\
                 anon = { size = \"32MiB\", pattern = \"random\", passes = 1000, think = \"5us\" }\n"
        .to_string();
    if let Some(cmds) = agent {
        s += &format!(
            "[[workload]]\nname = \"agent\"\nduration = \"20s\"\n\
             lru_gen = {{ commands = \"{cmds}\", every = \"1s\" }}\n"
        );
    }
    s
}

fn lru_gen_writes(out: &RunOutput) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
    v.get("lru_gen_writes").cloned()
}

/// Proactive reclaim through the debugfs interface: aging once a second and evicting what is
/// three generations old takes the cold memory and leaves the hot (the walk keeps promoting
/// it); the writes, their generations and their reclaim are counted; lru_gen_full shows the
/// walk's statistics.
#[test]
fn lru_gen_commands_in_a_scenario_reclaim_the_cold_memory() {
    let quiet = go(&proactive(None), InvariantMode::Off);
    assert_eq!(counter(&quiet, "pswpout"), 0, "nothing forces reclaim");
    assert!(lru_gen_writes(&quiet).is_none());

    let text = proactive(Some("+ 1 0 max_seq; - 1 0 max_seq-2"));
    let out = go(&text, InvariantMode::Periodic(5000));
    let again = go(&text, InvariantMode::Off);
    assert_eq!(out.vmstat, again.vmstat, "deterministic");
    assert_eq!(file(&out, "lru_gen_full"), file(&again, "lru_gen_full"));
    let cold = 64 * 256;
    let hot = 32 * 256;
    let out_pages = counter(&out, "pswpout");
    assert!(
        out_pages >= cold * 95 / 100,
        "the cold memory goes: {out_pages}"
    );
    assert!(out_pages < cold + hot / 4, "the hot stays: {out_pages}");
    // The writer's reclaim is direct reclaim, not kswapd's.
    assert_eq!(counter(&out, "pgsteal_kswapd"), 0);
    let w = lru_gen_writes(&out).expect("the writes are counted");
    // One write a second from 0 s to 9 s (the run's end) included.
    assert_eq!(w["writes"], 10);
    assert_eq!(
        (w["einval"].as_u64(), w["erange"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(w["commands"], 20);
    assert_eq!(w["aged"], 10, "each + made a generation");
    assert_eq!(
        w["reclaimed"].as_u64(),
        Some(counter(&out, "pgsteal_direct"))
    );
    // The full file: the last four generations with their tier and walk lines; the walk's
    // leaf count on the youngest generation's line.
    let full = file(&out, "lru_gen_full").unwrap();
    let lines: Vec<&str> = full.lines().collect();
    assert_eq!(&lines[..2], ["memcg     1 /", " node     0"]);
    assert_eq!(lines.len(), 2 + 4 * 6);
    let mm = lines.last().unwrap();
    let leaf: u64 = mm
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches('L')
        .parse()
        .unwrap();
    assert!(leaf >= cold, "the walk tested the cold pages: {mm}");
    // The short file's youngest line is the full file's (same seq, age and sizes).
    let short = file(&out, "lru_gen").unwrap();
    let youngest = short.lines().last().unwrap();
    assert_eq!(lines[2 + 3 * 6], youngest);
}

/// Commands the kernel refuses at run time are counted as its error returns, not fatal: an
/// eviction into the two youngest generations is EINVAL every time; unforced aging of a
/// fresh lruvec (four generations) is ERANGE, and stays so with nothing evicting.
#[test]
fn refused_lru_gen_commands_are_counted_not_fatal() {
    for (cmds, errno) in [("- 1 0 max_seq", "einval"), ("+ 1 0 max_seq 1 0", "erange")] {
        let out = go(&proactive(Some(cmds)), InvariantMode::Off);
        let w = lru_gen_writes(&out).unwrap();
        assert_eq!(w["writes"], 10, "{cmds}");
        assert_eq!(w[errno], 10, "{cmds}");
        assert_eq!(
            (w["commands"].as_u64(), w["reclaimed"].as_u64()),
            (Some(0), Some(0))
        );
        assert_eq!(counter(&out, "pswpout"), 0, "{cmds}");
    }
}

/// A scenario's bad commands are errors that name the table and the fix.
#[test]
fn bad_lru_gen_commands_are_scenario_errors() {
    let err = |text: &str| parse_str(text, "t.toml").unwrap_err().to_string();
    let e = err(&proactive(Some("- 1 0")));
    assert!(
        e.contains("lru_gen command 1") && e.contains("does not read"),
        "{e}"
    );
    let e = err(&proactive(Some("- 2 0 5")));
    assert!(e.contains("memcg id 2") && e.contains("1..=1"), "{e}");
    let e = err(&proactive(Some("+ 1 0 5; - 1 3 5")));
    assert!(e.contains("command 2") && e.contains("node 3"), "{e}");
    let e = err(&proactive(Some("- 1 0 5 250")));
    assert!(e.contains("above 200"), "{e}");
    let e = err(&proactive(Some("- 1 0 5")).replace("lru = \"mglru\"", "lru = \"classic\""));
    assert!(e.contains("lru = \"mglru\""), "{e}");
    let e =
        err(&proactive(Some("- 1 0 5"))
            .replace("[policy]", "[sysctl]\nlru_gen_enabled = 0\n[policy]"));
    assert!(e.contains("lru_gen_enabled"), "{e}");
}
