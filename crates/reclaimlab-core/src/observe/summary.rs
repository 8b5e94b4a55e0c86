//! `summary.json`: the scenario with every default filled in, the seed, the engine version, the
//! headline figures and the OOM kills. Only simulated quantities: it is byte-identical for the
//! same scenario and seed (wall-clock figures are reported separately).

use serde_json::{json, Value};

use crate::actors::kswapd::Kswapd;
use crate::actors::workload::Thread;
use crate::engine::cpu::Cpus;
use crate::machine::psi::{PsiReading, PSI_SYSTEM};
use crate::machine::vmstat::VmEvent;
use crate::machine::Machine;
use crate::machine::{MAX_NR_ZONES, ZONE_NAMES};

const NS_PER_MS: u64 = 1_000_000;

pub struct SummaryInput<'a> {
    /// The scenario's name, and its text with every default written out.
    pub name: &'a str,
    pub scenario_toml: &'a str,
    pub seed: u64,
    /// The engine version the run was made with (`reclaimlab_core::ENGINE_VERSION`, handed
    /// down by the run: the summary does not reach up to the crate root for it).
    pub engine_version: &'a str,
    pub node: &'a Machine,
    pub kswapd: &'a Kswapd,
    pub threads: &'a [&'a Thread],
    pub cpus: &'a Cpus,
    pub end_ns: u64,
    pub events: u64,
    pub stop_reason: &'a str,
    /// More top-level objects (the shrinkers, slab caches, filesystem and its workloads'
    /// latencies), placed before `scenario`; `None` leaves the summary as it was.
    pub extra: Option<Value>,
    /// Direct-reclaim stall of threads that are not in `threads` (filesystem workloads).
    pub extra_stall_ns: u64,
}

fn ms(ns: u64) -> f64 {
    // Rounded to the microsecond so the JSON text is stable and readable.
    (ns as f64 / NS_PER_MS as f64 * 1000.0).round() / 1000.0
}

/// The headline figures, in display order.
pub fn headline(inp: &SummaryInput) -> Value {
    let vm = &inp.node.vm;
    let allocstall: u64 = (0..MAX_NR_ZONES)
        .map(|z| vm.get(VmEvent::allocstall(z)))
        .sum();
    let stall: u64 = inp.threads.iter().map(|t| t.stall_ns).sum::<u64>() + inp.extra_stall_ns;
    json!({
        "pgscan_kswapd": vm.get(VmEvent::PgscanKswapd),
        "pgscan_direct": vm.get(VmEvent::PgscanDirect),
        "pgsteal_kswapd": vm.get(VmEvent::PgstealKswapd),
        "pgsteal_direct": vm.get(VmEvent::PgstealDirect),
        "pswpin": vm.get(VmEvent::Pswpin),
        "pswpout": vm.get(VmEvent::Pswpout),
        "pgmajfault": vm.get(VmEvent::Pgmajfault),
        "allocstall": allocstall,
        "workingset_refault": inp.node.stat.workingset_refault.iter().sum::<u64>(),
        "oom_kill": vm.get(VmEvent::OomKill),
        "kswapd_wakeups": inp.kswapd.wakeups,
        "kswapd_rewakeups": inp.kswapd.wake_events - inp.kswapd.wakeups,
        "kswapd_awake_ms": ms(inp.kswapd.awake_ns_at(inp.end_ns)),
        "direct_stall_ms": ms(stall),
    })
}

/// `/proc/pressure/memory` at the end of the run as JSON: per line the three averages (in
/// percent, the digits the file prints) and the total in microseconds.
fn pressure(r: &PsiReading) -> Value {
    json!({ "memory": pressure_lines(r) })
}

/// A pressure file's two lines as summary.json gives them (the system's under
/// `pressure.memory`, a cgroup's under its `memory.pressure`): `some` and `full`, each with
/// the three averages as the file prints them and the total in microseconds.
pub fn pressure_lines(r: &PsiReading) -> Value {
    let line = |full: bool| {
        let pct = |w: usize| {
            let x = r.avg_x100(full, w);
            // Through the decimal text, so the JSON prints the file's digits.
            format!("{}.{:02}", x / 100, x % 100)
                .parse::<f64>()
                .expect("a decimal")
        };
        json!({
            "avg10": pct(0),
            "avg60": pct(1),
            "avg300": pct(2),
            "total_us": r.total_ns[full as usize] / 1000,
        })
    };
    json!({ "some": line(false), "full": line(true) })
}

pub fn build(inp: &SummaryInput) -> String {
    let node = inp.node;
    let zones: Vec<Value> = (0..MAX_NR_ZONES)
        .filter(|&z| node.zones[z].is_managed())
        .map(|z| {
            let zone = &node.zones[z];
            let mut v = json!({
                "zone": ZONE_NAMES[z],
                "managed": zone.managed(),
                "min": zone.min_wmark_pages(),
                "low": zone.low_wmark_pages(),
                "high": zone.high_wmark_pages(),
                "protection": zone.lowmem_reserve.to_vec(),
                "free_at_end": zone.free_pages(),
            });
            if node.cfg.host.pcp_lists {
                // Free pages cached on the per-CPU lists: not in `free_at_end` (NR_FREE_PAGES).
                v["pcp_at_end"] = node.pcp_pages(z).into();
            }
            v
        })
        .collect();
    let workloads: Vec<Value> = inp
        .threads
        .iter()
        .map(|t| {
            let mut v = json!({
                "thread": t.name,
                "accesses": t.accesses,
                "direct_stall_ms": ms(t.stall_ns),
                "wait_ms": ms(t.wait_ns),
                "finished_ns": t.finished_ns,
                "oom_killed": t.killed,
            });
            if t.is_trace() {
                // Page accesses above; trace records (requests) here.
                v["records_replayed"] = json!(t.records_replayed());
            }
            if let Some(h) = t.highorder_stats() {
                v["highorder"] = json!({
                    "attempts": h.attempts,
                    "succeeded": h.succeeded,
                    "failed": h.failed,
                });
            }
            v
        })
        .collect();
    let kills: Vec<Value> = node
        .oom_kills
        .iter()
        .map(|k| {
            json!({
                "time_ns": k.time_ns,
                "victim": k.victim,
                "triggered_by": node.tasks[k.trigger_task].name,
                "rss_pages": k.rss_pages,
                "swapents": k.swapents,
                "badness": k.badness,
            })
        })
        .collect();
    let mut v = json!({
        "name": inp.name,
        "seed": inp.seed,
        "engine_version": inp.engine_version,
        "stop_reason": inp.stop_reason,
        "sim_time_ns": inp.end_ns,
        "events": inp.events,
        "headline": headline(inp),
        "min_free_kbytes": node.min_free_kbytes,
        "swap_pages": node.swap.total,
        "zones": zones,
        "threads": workloads,
        "oom_kills": kills,
        "cpus": inp.cpus.cpu.iter().map(|c| {
            let mut o = json!({
                "busy_ms": ms(c.busy_ns),
                "runq_wait_ms": ms(c.runq_wait_ns),
            });
            if inp.cpus.shared {
                o["wakeup_preemptions"] = json!(c.rq.wakeup_preemptions);
                o["tick_preemptions"] = json!(c.rq.tick_preemptions);
                o["migrations_in"] = json!(c.rq.migrations);
            }
            o
        }).collect::<Vec<_>>(),
        "cpu_contention": inp.cpus.shared,
        "cpu_migration": inp.cpus.shared && inp.cpus.migrate,
        "pressure": pressure(&node.psi.read(PSI_SYSTEM, inp.end_ns)),
    });
    if let Some(Value::Object(extra)) = &inp.extra {
        for (k, x) in extra {
            v[k.as_str()] = x.clone();
        }
    }
    v["scenario"] = Value::String(inp.scenario_toml.to_string());
    let mut s = serde_json::to_string_pretty(&v).expect("summary serializes");
    s.push('\n');
    s
}
