//! `reclaimlab-bench`: runs scenarios in this process and reports simulator speed.
//!
//! Usage: reclaimlab-bench [--seed N] [--repeat N] [--verbose] [--trace-cost] [--memory] SCENARIO.toml...
//! For each scenario: simulated page operations per second (page accesses by workloads plus
//! pages scanned, freed and allocated by the kernel side), simulated-time/wall-time ratio,
//! heap allocations per simulated event (the hot path should make none), and the process's
//! peak resident memory. Also prints the bytes of frame state per simulated page frame.
//!
//! `--memory` adds a line per scenario: the process's peak RSS divided by the host's managed
//! page frames and by its workloads' virtual pages (the simulator's whole memory, page tables
//! included, per simulated 4 KiB frame). Give one scenario per process for a per-scenario
//! peak; `benches/memory-64g.toml` and `benches/memory-1t.toml` are made for it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};

use reclaimlab_core::machine::frames::Frames;
use reclaimlab_core::machine::PAGE_SHIFT;
use reclaimlab_core::observe::ftrace::TraceFormat;

/// Counts heap allocations so the benchmark can report allocations per event.
struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

use reclaimlab_core::scenario::parse_file;
use reclaimlab_core::{run, RunOptions};

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|v| v.parse().unwrap_or(0)))
        })
        .unwrap_or(0)
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut seed = None;
    let verbose = args.iter().any(|a| a == "--verbose");
    let trace_cost = args.iter().any(|a| a == "--trace-cost");
    let memory = args.iter().any(|a| a == "--memory");
    // Runs per scenario; the fastest is reported (the machines are shared and noisy).
    let mut repeat = 1u32;
    if let Some(i) = args.iter().position(|a| a == "--repeat") {
        repeat = args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or(1)
            .max(1);
        args.drain(i..(i + 2).min(args.len()));
    }
    args.retain(|a| a != "--verbose" && a != "--trace-cost" && a != "--memory");
    if let Some(i) = args.iter().position(|a| a == "--seed") {
        if i + 1 >= args.len() {
            eprintln!("error: --seed needs a value");
            return ExitCode::from(2);
        }
        seed = args[i + 1].parse().ok();
        args.drain(i..=i + 1);
    }
    if args.is_empty() {
        eprintln!("usage: reclaimlab-bench [--seed N] SCENARIO.toml...");
        return ExitCode::from(2);
    }
    println!(
        "frame state: {} bytes per frame, {:.1} MiB per 2^20 frames (4 GiB)",
        Frames::BYTES_PER_FRAME,
        (Frames::BYTES_PER_FRAME << 20) as f64 / (1 << 20) as f64
    );
    println!(
        "{:<28} {:>10} {:>10} {:>14} {:>10} {:>10} {:>12} {:>10}",
        "scenario", "sim_s", "wall_s", "page_ops", "Mops/s", "sim/wall", "allocs/event", "peak_MiB"
    );
    for a in &args {
        let scn = match parse_file(Path::new(a)) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        };
        let opts = RunOptions {
            seed,
            ..Default::default()
        };
        let allocs0 = ALLOCS.load(Ordering::Relaxed);
        let mut out = match run(&scn, &opts, &mut |_, _| true) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("{a}: {e}");
                return ExitCode::from(1);
            }
        };
        let allocs_one_run = ALLOCS.load(Ordering::Relaxed) - allocs0;
        for _ in 1..repeat {
            if let Ok(o) = run(&scn, &opts, &mut |_, _| true) {
                if o.wall_ns < out.wall_ns {
                    out = o;
                }
            }
        }
        let c = |n: &str| {
            out.counters
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| *v)
                .unwrap_or(0)
        };
        let summary: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
        let accesses: u64 = summary["threads"]
            .as_array()
            .map(|t| t.iter().map(|x| x["accesses"].as_u64().unwrap_or(0)).sum())
            .unwrap_or(0);
        let allocs: u64 = [
            "pgalloc_dma",
            "pgalloc_dma32",
            "pgalloc_normal",
            "pgalloc_movable",
        ]
        .iter()
        .map(|n| c(n))
        .sum();
        let ops = accesses
            + allocs
            + c("pgfree")
            + c("pgscan_kswapd")
            + c("pgscan_direct")
            + c("pgrefill");
        // Allocations of the whole run (setup and output included) per event processed.
        let allocs = allocs_one_run;
        let sim_s = summary["sim_time_ns"].as_u64().unwrap_or(0) as f64 / 1e9;
        let wall_s = out.wall_ns as f64 / 1e9;
        println!(
            "{:<28} {:>10.3} {:>10.3} {:>14} {:>10.1} {:>10.1} {:>12.4} {:>10.1}",
            scn.name,
            sim_s,
            wall_s,
            ops,
            ops as f64 / wall_s / 1e6,
            sim_s / wall_s,
            allocs as f64 / out.events.max(1) as f64,
            peak_rss_kib() as f64 / 1024.0
        );
        if memory {
            // Frames the simulated host manages, and the vpages its workloads reserve.
            let frames: u64 = reclaimlab_core::run::host_layout(&scn)
                .map(|l| l.managed().iter().sum())
                .unwrap_or(0);
            let vpages: u64 = scn
                .workloads
                .iter()
                .map(|w| {
                    let anon = w.anon.as_ref().map_or(0, |a| a.size_bytes);
                    let file = w.file.as_ref().map_or(0, |f| f.size_bytes);
                    (anon + file) >> PAGE_SHIFT
                })
                .sum();
            let rss = peak_rss_kib() * 1024;
            println!(
                "  memory: peak RSS {} KiB / {} frames = {:.2} B/frame; {} vpages ({:.3} per frame); model state {} B/frame + 4 B/vpage",
                rss / 1024,
                frames,
                rss as f64 / frames.max(1) as f64,
                vpages,
                vpages as f64 / frames.max(1) as f64,
                Frames::BYTES_PER_FRAME
            );
        }
        if trace_cost {
            // Tracing off vs on (kernel format), alternated three times in this process.
            let (mut off, mut on) = (u64::MAX, u64::MAX);
            let mut lines = 0;
            for _ in 0..3 {
                for tr in [None, Some(TraceFormat::Kernel)] {
                    let o = RunOptions {
                        seed,
                        trace: tr,
                        ..Default::default()
                    };
                    let r = run(&scn, &o, &mut |_, _| true).expect("run");
                    if tr.is_none() {
                        off = off.min(r.wall_ns);
                    } else {
                        on = on.min(r.wall_ns);
                        lines = r.trace.map_or(0, |t| t.lines().count());
                    }
                }
            }
            println!(
                "  tracing: off {:.3} s, on {:.3} s (best of 3), on/off {:.3}, {} trace lines",
                off as f64 / 1e9,
                on as f64 / 1e9,
                on as f64 / off as f64,
                lines
            );
        }
        if verbose {
            println!(
                "  stop: {}  headline: {}",
                summary["stop_reason"], summary["headline"]
            );
            println!("  threads: {}", summary["threads"]);
        }
    }
    ExitCode::SUCCESS
}
