//! Generated scenarios: random valid hosts (RAM, zones through the machine type and `lowmem`,
//! CPUs, THP, swap, sysctls, CPU contention, OOM), random policy variants and random workloads
//! (anonymous, file, high-order), each run with the invariant checker after every event. No
//! scenario may fail to parse, panic, or break an invariant.
//!
//! Each case is a scenario *file*: proptest shrinks a failing case to a minimal one, and the
//! test writes it to `target/generated-scenarios/failure.toml` (and prints it), ready for
//! `reclaimlab run --check-invariants every`.
//!
//! `RECLAIMLAB_GENERATED_CASES` sets the number of cases (default 500, what CI runs; the long
//! run in BENCHMARKS.md used 10,000). Half the cases add a guest with its own hinting variant.
//!
//! Former failures: the minimal scenarios of invariant violations the generator found are
//! kept in `tests/generated-failures/`, and `former_failures_keep_every_invariant` runs each
//! of them as a regression test.

use std::fmt::Write as _;
use std::path::PathBuf;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use reclaimlab_core::policy;
use reclaimlab_core::scenario::parse_str;
use reclaimlab_core::{run, InvariantMode, RunOptions};

#[derive(Debug, Clone)]
enum Work {
    Anon {
        mib: u64,
        pattern: &'static str,
        passes: u64,
        write_pct: u64,
    },
    File {
        mib: u64,
        write: bool,
        passes: u64,
    },
    HighOrder {
        order: u64,
        rate: u64,
        count: u64,
        gfp: &'static str,
        exponential: bool,
    },
}

#[derive(Debug, Clone)]
struct Gen {
    seed: u64,
    ram_mib: u64,
    /// RAM below 4 GiB, as a part of RAM in 1/8ths (8 = all of it: no Normal zone).
    lowmem_eighths: Option<u64>,
    machine: &'static str,
    cpus: u64,
    thp: bool,
    contention: bool,
    pcp: bool,
    swap_mib: u64,
    swappiness: u64,
    wsf: u64,
    boost: u64,
    oom_allowed: bool,
    policies: Vec<(&'static str, &'static str)>,
    duration_ms: u64,
    works: Vec<Work>,
    guest: Option<GenGuest>,
    /// A Xen host: the guest (if any) is a domU with block devices and I/O jobs.
    xen: Option<GenXen>,
}

/// A Xen host's blkback and its guest's block I/O.
#[derive(Debug, Clone)]
struct GenXen {
    vbds: u64,
    backend: &'static str,
    persistent: bool,
    pattern: &'static str,
    iodepth: u64,
    ios: u64,
    max_buffer_pages: u64,
    squeeze_ms: u64,
    indirect: u64,
}

fn xen() -> impl Strategy<Value = Option<GenXen>> {
    prop::option::weighted(
        0.3,
        // Few I/Os: every one is several events, each checked.
        (
            1u64..=2,
            prop::sample::select(vec!["ramdisk", "network", "ssd"]),
            any::<bool>(),
            prop::sample::select(vec!["sequential", "random", "fresh_grefs"]),
            1u64..=8,
            1u64..=200,
            prop::sample::select(vec![0u64, 16, 1024]),
            prop::sample::select(vec![0u64, 1, 10, 100]),
            prop::sample::select(vec![0u64, 32, 256]),
        )
            .prop_map(
                |(vbds, backend, persistent, pattern, iodepth, ios, mbp, squeeze_ms, indirect)| {
                    GenXen {
                        vbds,
                        backend,
                        persistent,
                        pattern,
                        iodepth,
                        ios,
                        max_buffer_pages: mbp,
                        squeeze_ms,
                        indirect,
                    }
                },
            ),
    )
}

/// A guest on the generated host: its RAM, boot set, hinting variant, aged or not, and one
/// program that writes its memory and exits.
#[derive(Debug, Clone)]
struct GenGuest {
    ram_mib: u64,
    boot_mib: u64,
    hinting: &'static str,
    stride: Option<u64>,
    program_mib: u64,
    start_ms: u64,
}

fn guest() -> impl Strategy<Value = Option<GenGuest>> {
    let hinting: Vec<&'static str> = policy::hinting::SWITCH
        .variants
        .iter()
        .map(|v| v.name)
        .collect();
    prop::option::weighted(
        0.5,
        (
            prop::sample::select(vec![64u64, 96]),
            0u64..=16,
            prop::sample::select(hinting),
            prop::option::of(prop::sample::select(vec![512u64, 1024])),
            1u64..=48,
            0u64..=10,
        )
            .prop_map(
                |(ram_mib, boot_mib, hinting, stride, program_mib, start_ms)| GenGuest {
                    ram_mib,
                    boot_mib,
                    hinting,
                    stride,
                    program_mib,
                    start_ms,
                },
            ),
    )
}

fn work() -> impl Strategy<Value = Work> {
    prop_oneof![
        (
            1u64..=96,
            prop::sample::select(vec!["sequential", "random", "zipf"]),
            1u64..=3,
            0u64..=100
        )
            .prop_map(|(mib, pattern, passes, write_pct)| Work::Anon {
                mib,
                pattern,
                passes,
                write_pct
            }),
        (1u64..=96, any::<bool>(), 1u64..=2).prop_map(|(mib, write, passes)| Work::File {
            mib,
            write,
            passes
        }),
        (
            0u64..=6,
            1u64..=20_000,
            1u64..=100,
            prop::sample::select(vec!["atomic", "kernel", "transhuge"]),
            any::<bool>()
        )
            .prop_map(|(order, rate, count, gfp, exponential)| Work::HighOrder {
                order,
                rate,
                count,
                gfp,
                exponential
            }),
    ]
}

/// One variant of each switch, or the default (None).
fn policies() -> impl Strategy<Value = Vec<(&'static str, &'static str)>> {
    let per_switch: Vec<_> = policy::switches()
        .into_iter()
        // Hinting is a guest's switch (`guest()`), not the host's.
        .filter(|s| s.name() != "hinting")
        .map(|s| {
            let names: Vec<&'static str> = s.variants().iter().map(|v| v.name).collect();
            let name = s.name();
            prop::option::weighted(0.4, prop::sample::select(names))
                .prop_map(move |v| v.map(|v| (name, v)))
        })
        .collect();
    per_switch.prop_map(|v| v.into_iter().flatten().collect())
}

fn scenario() -> impl Strategy<Value = Gen> {
    let host = (
        any::<u64>(),
        prop::sample::select(vec![64u64, 96, 128]),
        prop::option::of(2u64..=8),
        prop::sample::select(vec!["q35", "i440fx"]),
        1u64..=4,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    );
    let vm = (
        prop::sample::select(vec![0u64, 16, 64, 128]),
        0u64..=200,
        1u64..=1000,
        prop::sample::select(vec![0u64, 15000]),
        any::<bool>(),
    );
    (
        host,
        vm,
        policies(),
        5u64..=60,
        prop::collection::vec(work(), 1..=3),
        guest(),
        xen(),
    )
        .prop_map(
            |(
                (seed, ram_mib, lowmem_eighths, machine, cpus, thp, contention, pcp),
                (swap_mib, swappiness, wsf, boost, oom_allowed),
                policies,
                duration_ms,
                works,
                guest,
                xen,
            )| Gen {
                seed,
                ram_mib,
                lowmem_eighths,
                machine,
                cpus,
                thp,
                contention,
                pcp,
                swap_mib,
                swappiness,
                wsf,
                boost,
                oom_allowed,
                policies,
                duration_ms,
                works,
                // Block devices belong to a domU: a Xen host needs the guest.
                xen: xen.filter(|_| guest.is_some()),
                guest,
            },
        )
}

impl Gen {
    fn toml(&self) -> String {
        let mut s = String::new();
        let w = &mut s;
        let _ = writeln!(w, "name = \"generated\"\n\n[sim]");
        // Seeds above 2^63-1 are written as decimal strings (TOML integers stop there).
        if self.seed > i64::MAX as u64 {
            let _ = writeln!(w, "seed = \"{}\"", self.seed);
        } else {
            let _ = writeln!(w, "seed = {}", self.seed);
        }
        let _ = writeln!(
            w,
            "duration = \"{}ms\"\nsample_interval = \"5ms\"\n",
            self.duration_ms
        );
        let _ = writeln!(
            w,
            "[host]\nram = \"{}MiB\"\nmachine = \"{}\"",
            self.ram_mib, self.machine
        );
        if let Some(e) = self.lowmem_eighths {
            // The parser wants at least 64 MiB below 4 GiB.
            let _ = writeln!(w, "lowmem = \"{}MiB\"", (self.ram_mib * e / 8).max(64));
        }
        let _ = writeln!(
            w,
            "cpus = {}\nthp = {}\ncpu_contention = {}\npcp_lists = {}\n",
            self.cpus, self.thp, self.contention, self.pcp
        );
        let _ = writeln!(
            w,
            "[sysctl]\nswappiness = {}\nwatermark_scale_factor = {}\nwatermark_boost_factor = {}\n",
            self.swappiness, self.wsf, self.boost
        );
        let _ = writeln!(w, "[swap]\nsize = \"{}MiB\"\n", self.swap_mib);
        let _ = writeln!(w, "[oom]\nallowed = {}\n", self.oom_allowed());
        if !self.policies.is_empty() {
            let _ = writeln!(w, "[policy]");
            for (k, v) in &self.policies {
                let _ = writeln!(w, "{k} = \"{v}\"");
            }
            let _ = writeln!(w);
        }
        if let (Some(x), Some(g)) = (&self.xen, &self.guest) {
            let _ = writeln!(
                w,
                "[xen]\nram = \"{}MiB\"\n[xen.blkback]\nmax_buffer_pages = {}\n\
                 buffer_squeeze_duration_ms = {}\nlog_stats = true\n",
                self.ram_mib + g.ram_mib,
                x.max_buffer_pages,
                x.squeeze_ms
            );
        }
        if let Some(g) = &self.guest {
            let _ = writeln!(
                w,
                "[[guest]]\nname = \"vm\"\nram = \"{}MiB\"\nboot_resident = \"{}MiB\"\n\
                 start = \"{}ms\"\npolicy.hinting = \"{}\"",
                g.ram_mib, g.boot_mib, g.start_ms, g.hinting
            );
            if let Some(st) = g.stride {
                let _ = writeln!(w, "fragment_stride = {st}");
            }
            let _ = writeln!(
                w,
                "[[guest.workload]]\nname = \"program\"\n[guest.workload.anon]\nsize = \"{}MiB\"\n",
                g.program_mib
            );
            if let Some(x) = &self.xen {
                for v in 0..x.vbds {
                    let _ = writeln!(
                        w,
                        "[[guest.vbd]]\nname = \"xvd{v}\"\nbackend = \"{}\"\npersistent = {}\n\
                         max_indirect_segments = {}\n",
                        x.backend,
                        x.persistent,
                        // B0 takes direct requests only (a parse error otherwise).
                        if self.policies.contains(&("blkback_pool", "B0")) {
                            0
                        } else {
                            x.indirect
                        }
                    );
                    let _ = writeln!(
                        w,
                        "[[guest.workload]]\nname = \"io{v}\"\n[guest.workload.blkio]\nvbd = \"xvd{v}\"\n\
                         pattern = \"{}\"\niodepth = {}\ncount = {}\nrepeat = 2\n",
                        x.pattern, x.iodepth, x.ios
                    );
                }
            }
        }
        for (i, work) in self.works.iter().enumerate() {
            let _ = writeln!(w, "[[workload]]\nname = \"w{i}\"");
            match work {
                Work::Anon {
                    mib,
                    pattern,
                    passes,
                    write_pct,
                } => {
                    let _ = writeln!(
                        w,
                        "[workload.anon]\nsize = \"{mib}MiB\"\npattern = \"{pattern}\"\npasses = {passes}\nwrite_fraction = {:.2}",
                        *write_pct as f64 / 100.0
                    );
                }
                Work::File { mib, write, passes } => {
                    let op = if *write { "write" } else { "read" };
                    let _ = writeln!(
                        w,
                        "[workload.file]\nsize = \"{mib}MiB\"\nop = \"{op}\"\npasses = {passes}"
                    );
                }
                Work::HighOrder {
                    order,
                    rate,
                    count,
                    gfp,
                    exponential,
                } => {
                    let lifetimes = if *exponential { "exponential" } else { "fixed" };
                    let _ = writeln!(
                        w,
                        "[workload.highorder]\norder = {order}\nrate = {rate}\ncount = {count}\ngfp = \"{gfp}\"\nlifetimes = \"{lifetimes}\""
                    );
                }
            }
            let _ = writeln!(w);
        }
        s
    }

    /// Anonymous memory beyond RAM + swap needs the OOM killer (the parser refuses it
    /// otherwise): allowed then, whatever was drawn.
    fn oom_allowed(&self) -> bool {
        let anon: u64 = self
            .works
            .iter()
            .map(|w| match w {
                Work::Anon { mib, .. } => *mib,
                _ => 0,
            })
            .sum();
        self.oom_allowed || anon >= self.ram_mib / 2 + self.swap_mib
    }
}

fn failure_file() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("generated-scenarios");
    std::fs::create_dir_all(&d).unwrap();
    d.join("failure.toml")
}

/// Scenarios run (shrinking steps included), for the long run's figures.
static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Parse and run a scenario text with invariants after every event.
fn run_checked(text: &str) -> Result<(), String> {
    let scn = parse_str(text, "generated.toml").map_err(|e| format!("does not parse: {e}"))?;
    let opts = RunOptions {
        invariants: InvariantMode::EveryEvent,
        ..RunOptions::default()
    };
    run(&scn, &opts, &mut |_, _| true).map_err(|e| format!("run failed: {e}"))?;
    Ok(())
}

fn check(g: &Gen) -> Result<(), TestCaseError> {
    RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let text = g.toml();
    let outcome = std::panic::catch_unwind(|| run_checked(&text));
    let why = match outcome {
        Ok(Ok(())) => return Ok(()),
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
        .unwrap_or(500);
    let config = Config {
        cases,
        // Reproducible in CI: the same 500 scenarios every run (set PROPTEST_RNG_SEED to vary).
        rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
        failure_persistence: None,
        ..Config::default()
    };
    let seed: u64 = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = proptest::test_runner::TestRng::from_seed(
        proptest::test_runner::RngAlgorithm::ChaCha,
        &seed_bytes,
    );
    let mut runner = TestRunner::new_with_rng(config, rng);
    let started = std::time::Instant::now();
    let result = runner.run(&scenario(), |g| check(&g));
    eprintln!(
        "generated scenarios: {} scenarios run of {cases} asked, in {:.1} s (seed {seed}); {}",
        RUN.load(std::sync::atomic::Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        if result.is_ok() {
            "no failure"
        } else {
            "FAILED"
        }
    );
    if let Err(e) = result {
        panic!("{e}");
    }
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
            run_checked(&text)
                .err()
                .map(|why| format!("{}: {why}", f.display()))
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
