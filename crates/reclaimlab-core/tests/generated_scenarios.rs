//! Generated scenarios (issue 15, aimed at pressure by issue 36): random valid hosts whose
//! workloads are sized against their RAM (`generated/mod.rs`), each run with the invariant
//! checker after every event and the counter cross-checks (`observe::counter_checks`) at its
//! end. No scenario may fail to parse, panic, break an invariant or a cross-check; over the
//! cases, the share that reaches each hard path (reclaim, swap, compaction, OOM, shrinkers,
//! guest reports, blkback squeezes) must stay above its floor (`generated/coverage.rs`).
//!
//! Each case is a scenario *file*: proptest shrinks a failing case to a minimal one, and the
//! test writes it to `target/tmp/generated-scenarios/failure.toml` (and prints it), ready for
//! `reclaimlab run --check-invariants every`.
//!
//! `RECLAIMLAB_GENERATED_CASES` sets the number of cases (default 300, what CI runs; the long
//! run in BENCHMARKS.md: 4 x 2,500), `RECLAIMLAB_GENERATED_PROGRESS=N` prints the coverage
//! table every N cases, and `replay_one_case` (ignored) runs one dumped or failed case.
//!
//! Former failures: the minimal scenarios of violations the generator found are kept in
//! `tests/generated-failures/`, and `former_failures_keep_every_invariant` runs each of them
//! as a regression test, with the cross-checks.

mod generated;

use std::path::PathBuf;
use std::sync::Mutex;

use proptest::test_runner::{Config, TestCaseError, TestRunner};

use generated::coverage::{self, Coverage};
use reclaimlab_core::observe::counter_checks::{Counters, GuestCounts};
use reclaimlab_core::scenario::parse_str;
use reclaimlab_core::{InvariantMode, Run, RunOptions};

fn failure_file() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("generated-scenarios");
    std::fs::create_dir_all(&d).unwrap();
    d.join("failure.toml")
}

/// Scenarios run (shrinking steps included), for the long run's figures.
static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// When the generated run started (for the progress lines).
static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Coverage of the passing cases (shrinking steps not counted).
static COVERAGE: Mutex<Option<Coverage>> = Mutex::new(None);

/// Invariant checks a generated case gets, spread evenly over its events (a case of fewer
/// events is checked after every one). The checker walks every frame and page-table entry,
/// about a millisecond on these hosts: after every event of a case under pressure (thousands
/// to tens of thousands of events) the suite would take an hour.
const CHECKS_PER_CASE: u64 = 128;

/// Parse and run a scenario text with the invariant checker (`mode`; `None`: every event for
/// a case of at most `CHECKS_PER_CASE` events, else that many times evenly spaced, learnt from
/// a first run without checks), then cross-check every machine's counters (against themselves
/// and what they read at the start) and each guest's host RSS. Returns the paths the case
/// reached (`coverage::PATHS` bits).
fn run_checked(text: &str, mode: Option<InvariantMode>) -> Result<u16, String> {
    let scn = parse_str(text, "generated.toml").map_err(|e| format!("does not parse: {e}"))?;
    let failed = |e| format!("run failed: {e}");
    let invariants = match mode {
        Some(m) => m,
        None => {
            let dry = reclaimlab_core::run(&scn, &RunOptions::default(), &mut |_, _| true)
                .map_err(failed)?;
            match dry.events / CHECKS_PER_CASE {
                0 | 1 => InvariantMode::EveryEvent,
                // Odd, so the checks do not keep landing on the same phase of a periodic
                // pattern of events.
                n => InvariantMode::Periodic(n | 1),
            }
        }
    };
    let opts = RunOptions {
        invariants,
        ..RunOptions::default()
    };
    let mut run = Run::new(&scn, &opts).map_err(failed)?;
    let start: Vec<Counters> = run.world().machines.iter().map(Counters::read).collect();
    run.go(&mut |_, _| true).map_err(failed)?;
    let world = run.world();
    for (m, (node, before)) in world.machines.iter().zip(&start).enumerate() {
        Counters::read(node).check(before).map_err(|e| {
            let which = if m == 0 { "host" } else { "guest" };
            format!("counter cross-check failed on the {which} (machine {m}): {e}")
        })?;
    }
    for (_, h, slot) in world.guest_memories() {
        GuestCounts::read(slot, &world.machines[h])
            .check()
            .map_err(|e| format!("counter cross-check failed for the guest: {e}"))?;
    }
    let reached = coverage::reached(world);
    // The outputs too: rendering must not panic on any state a run can end in.
    let out = run.output();
    if std::env::var_os("RECLAIMLAB_GENERATED_VERBOSE").is_some() {
        eprintln!(
            "case: {} events, checks {invariants:?}, {:.0} ms wall, paths {reached:#012b}",
            out.events,
            out.wall_ns as f64 / 1e6
        );
        // A guest's fate (killed, finished, what it reported), for tuning the generator.
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&out.summary_json) {
            if let Some(g) = v.get("guests") {
                eprintln!("  guests: {g}");
            }
        }
        for (name, text) in &out.extra_files {
            if name.starts_with("guests/") && name.ends_with("/vmstat") {
                let keep = [
                    "pgfree ",
                    "pgalloc_dma ",
                    "pgalloc_dma32 ",
                    "oom_kill ",
                    "pgfault ",
                ];
                let lines: Vec<&str> = text
                    .lines()
                    .filter(|l| keep.iter().any(|k| l.starts_with(k)))
                    .collect();
                eprintln!("  {name}: {}", lines.join(", "));
            }
            if std::env::var_os("RECLAIMLAB_GENERATED_REPLAY").is_some()
                && name.starts_with("guests/")
            {
                eprintln!("--- {name}\n{text}");
            }
        }
    }
    Ok(reached)
}

fn check(g: &generated::Gen) -> Result<(), TestCaseError> {
    RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let text = g.toml();
    if let Some(dir) = std::env::var_os("RECLAIMLAB_GENERATED_DUMP") {
        let _ = std::fs::write(PathBuf::from(dir).join("current.toml"), &text);
    }
    let outcome = std::panic::catch_unwind(|| run_checked(&text, None));
    let why = match outcome {
        Ok(Ok(bits)) => {
            let bits = coverage::with_hinting(bits, g.kvm_hinting());
            // Each case's scenario, named after the paths it reached (for tuning the generator).
            if let Some(dir) = std::env::var_os("RECLAIMLAB_GENERATED_DUMP") {
                let n = RUN.load(std::sync::atomic::Ordering::Relaxed);
                let f = PathBuf::from(dir).join(format!("case-{n:05}-{bits:011b}.toml"));
                let _ = std::fs::write(f, &text);
            }
            let mut cov = COVERAGE.lock().unwrap();
            let cov = cov.get_or_insert_with(Coverage::default);
            cov.add(bits);
            // A long run's figures so far, every N cases: what it covered if it must be cut.
            let every: u64 = std::env::var("RECLAIMLAB_GENERATED_PROGRESS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if every > 0 && cov.cases.is_multiple_of(every) {
                eprintln!(
                    "progress: {} cases passed, {} scenarios run, {:.1} s\n{}",
                    cov.cases,
                    RUN.load(std::sync::atomic::Ordering::Relaxed),
                    STARTED.get().map_or(0.0, |t| t.elapsed().as_secs_f64()),
                    cov.table()
                );
            }
            return Ok(());
        }
        Ok(Err(why)) => why,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            format!("panicked: {msg}")
        }
    };
    // Each shrinking step that still fails overwrites it: the last one is the minimal case.
    let path = failure_file();
    let _ = std::fs::write(&path, format!("# {why}\n{text}"));
    Err(TestCaseError::fail(format!(
        "{why}\n(scenario in {})\n{text}",
        path.display()
    )))
}

#[test]
fn generated_scenarios_keep_every_invariant() {
    let cases: u32 = std::env::var("RECLAIMLAB_GENERATED_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let config = Config {
        cases,
        // Reproducible in CI: the same scenarios every run (set PROPTEST_RNG_SEED to vary).
        rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
        failure_persistence: None,
        ..Config::default()
    };
    let seed: u64 = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(36);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = proptest::test_runner::TestRng::from_seed(
        proptest::test_runner::RngAlgorithm::ChaCha,
        &seed_bytes,
    );
    let mut runner = TestRunner::new_with_rng(config, rng);
    let started = *STARTED.get_or_init(std::time::Instant::now);
    let result = runner.run(&generated::scenario(), |g| check(&g));
    let cov = COVERAGE.lock().unwrap().clone().unwrap_or_default();
    eprintln!(
        "generated scenarios: {} scenarios run of {cases} asked, in {:.1} s (seed {seed}); {}\n{}",
        RUN.load(std::sync::atomic::Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        if result.is_ok() {
            "no failure"
        } else {
            "FAILED"
        },
        cov.table()
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    let below = cov.below_floors();
    assert!(
        below.is_empty(),
        "coverage below its floors over {} cases:\n{}",
        cov.cases,
        below.join("\n")
    );
}

/// `RECLAIMLAB_GENERATED_REPLAY=FILE cargo test ... -- --ignored replay_one_case`: run one
/// scenario file (a dumped or failed case) as a generated case is run, checks included, and
/// print what `RECLAIMLAB_GENERATED_VERBOSE` prints of it and the guests' own files.
#[test]
#[ignore = "a tool: needs RECLAIMLAB_GENERATED_REPLAY=FILE"]
fn replay_one_case() {
    let path = std::env::var_os("RECLAIMLAB_GENERATED_REPLAY")
        .expect("set RECLAIMLAB_GENERATED_REPLAY to the scenario file to replay");
    std::env::set_var("RECLAIMLAB_GENERATED_VERBOSE", "1");
    let text = std::fs::read_to_string(&path).unwrap();
    let bits = run_checked(&text, None).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("paths reached: {bits:#012b}");
}

/// The minimal scenarios of the violations the generator found (`tests/generated-failures/`;
/// each failed with an invariant violation before its fix) now keep every invariant.
#[test]
fn former_failures_keep_every_invariant() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/generated-failures");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 3,
        "{} holds {} scenarios",
        dir.display(),
        files.len()
    );
    let failed: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            run_checked(&text, Some(InvariantMode::EveryEvent))
                .err()
                .map(|why| format!("{}: {why}", f.display()))
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
