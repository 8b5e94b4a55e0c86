//! A scenario written back as TOML with every default filled in (`reclaimlab run
//! --show-defaults`).
//!
//! The output uses exactly the layout `parse.rs` reads, one key per line with a comment giving its
//! meaning and unit, tables in a fixed order, so it is deterministic and round-trips:
//! `parse_str(&to_toml(&s), ..) == Ok(s)` for every valid scenario. Options that are unset
//! (`None`) are printed as commented-out lines so the reader still sees that they exist.

use std::fmt::Write as _;

use super::parse::COST_FIELDS;
use super::units::{format_bandwidth, format_duration, format_size};
use super::{AccessPattern, FileOp, Scenario, TraceFormat, TraceSpec, TraceTime, Workload};

/// Render `s` as TOML. See the module documentation.
pub fn to_toml(s: &Scenario) -> String {
    let mut w = Writer::default();
    w.comment("reclaimlab scenario, every setting shown (unset options are commented out).");
    w.comment("Sizes: B, KiB, MiB, GiB, TiB (K, M, G, T are binary too; KB, MB, GB, TB are powers of 1000),");
    w.comment("or an integer number of bytes. Durations: ns, us, ms, s, min, h. Bandwidths: a size per second.");
    w.blank();
    w.kv(
        "name",
        string(&s.name),
        "free-form name (defaults to the scenario file's stem)",
    );

    w.table("sim");
    w.kv(
        "seed",
        uint(s.sim.seed),
        "seed of every random stream (--seed overrides it)",
    );
    match s.sim.duration_ns {
        Some(d) => w.kv("duration", dur(d), "stop at this simulated time"),
        None => w.unset(
            "duration",
            "stop at this simulated time; unset: when every workload has exited",
        ),
    }
    w.kv(
        "sample_interval",
        dur(s.sim.sample_interval_ns),
        "simulated time between time-series samples",
    );
    w.kv(
        "max_duration",
        dur(s.sim.max_duration_ns),
        "cap on simulated time when duration is unset",
    );

    let h = &s.host;
    w.table("host");
    match h.zoneinfo {
        Some(_) => w.unset("ram", "RAM; taken from the zoneinfo file"),
        None => w.kv(
            "ram",
            size(h.ram_bytes),
            "RAM of the machine (64MiB..16TiB)",
        ),
    }
    w.kv("cpus", h.cpus.to_string(), "CPUs (1..1024)");
    w.kv(
        "thp",
        h.thp.to_string(),
        "transparent huge pages enabled (raises the default min_free_kbytes)",
    );
    w.kv(
        "machine",
        string(h.machine.name()),
        "QEMU machine type, decides the RAM below 4GiB: \"q35\" or \"i440fx\"",
    );
    match h.lowmem_bytes {
        Some(v) => w.kv(
            "lowmem",
            size(v),
            "RAM below 4GiB (DMA + DMA32), overriding the machine type",
        ),
        None => w.unset(
            "lowmem",
            "RAM below 4GiB; unset: decided by the machine type",
        ),
    }
    match &h.zoneinfo {
        Some(p) => w.kv(
            "zoneinfo",
            string(p),
            "captured /proc/zoneinfo giving the zones and their sizes",
        ),
        None => w.unset(
            "zoneinfo",
            "path to a captured /proc/zoneinfo; unset: zones built from ram",
        ),
    }
    match h.fragmented_zone {
        Some(z) => w.kv(
            "fragmented_zone",
            string(crate::machine::ZONE_NAMES[z]),
            "aged zone: one unmovable page pinned in every fragment_stride pages",
        ),
        None => w.unset(
            "fragmented_zone",
            "aged zone (DMA, DMA32 or Normal); unset: none",
        ),
    }
    w.kv(
        "fragment_stride",
        uint(h.fragment_stride as u64),
        "pages per pinned page in fragmented_zone (power of two, 2..1024)",
    );

    let c = &s.sysctl;
    w.table("sysctl");
    match c.min_free_kbytes {
        Some(v) => w.kv(
            "min_free_kbytes",
            uint(v),
            "vm.min_free_kbytes, KiB (128..262144)",
        ),
        None => w.unset(
            "min_free_kbytes",
            "vm.min_free_kbytes, KiB; unset: computed from RAM as the kernel does",
        ),
    }
    w.kv(
        "watermark_scale_factor",
        uint(c.watermark_scale_factor),
        "vm.watermark_scale_factor, 1/10000 of a zone (1..3000)",
    );
    let ratios: Vec<String> = c.lowmem_reserve_ratio.iter().map(|r| uint(*r)).collect();
    w.kv(
        "lowmem_reserve_ratio",
        format!("[{}]", ratios.join(", ")),
        "vm.lowmem_reserve_ratio for DMA, DMA32, Normal, Movable",
    );
    w.kv("swappiness", uint(c.swappiness), "vm.swappiness (0..200)");

    let sw = &s.swap;
    w.table("swap");
    w.kv(
        "size",
        size(sw.size_bytes),
        "swap device size; 0 means no swap",
    );
    w.kv(
        "read_latency",
        dur(sw.read_latency_ns),
        "latency of one swap-in request",
    );
    w.kv(
        "write_latency",
        dur(sw.write_latency_ns),
        "latency of one swap-out request",
    );
    w.kv(
        "bandwidth",
        format!("\"{}\"", format_bandwidth(sw.bandwidth_bytes_per_sec)),
        "bytes per second, shared by reads and writes",
    );
    w.kv(
        "latency_jitter",
        float(sw.latency_jitter),
        "per-request latency spread: latency * (1 + jitter * u), u in [-1, 1)",
    );

    let d = &s.disk;
    w.table("disk");
    w.kv(
        "read_latency",
        dur(d.read_latency_ns),
        "latency of one read request (page cache miss)",
    );
    w.kv(
        "write_latency",
        dur(d.write_latency_ns),
        "latency of one writeback request",
    );
    w.kv(
        "bandwidth",
        format!("\"{}\"", format_bandwidth(d.bandwidth_bytes_per_sec)),
        "bytes per second, shared by reads and writes",
    );
    w.kv(
        "latency_jitter",
        float(d.latency_jitter),
        "per-request latency spread, as for swap",
    );
    w.kv(
        "readahead_pages",
        uint(d.readahead_pages),
        "pages per sequential read-ahead request (1 disables it)",
    );

    w.table("writeback");
    w.kv(
        "dirty_background_ratio",
        uint(s.writeback.dirty_background_ratio),
        "vm.dirty_background_ratio, % of available memory",
    );
    w.kv(
        "dirty_ratio",
        uint(s.writeback.dirty_ratio),
        "vm.dirty_ratio, % of available memory",
    );

    w.table("cost");
    let mut cost = s.cost.clone();
    for (key, field, what) in COST_FIELDS {
        w.kv(key, dur(*field(&mut cost)), what);
    }

    w.table("oom");
    w.kv(
        "allowed",
        s.oom.allowed.to_string(),
        "may the OOM killer kill a workload (false: workloads must fit in RAM + swap)",
    );
    w.kv(
        "reaper_delay",
        dur(s.oom.reaper_delay_ns),
        "delay between a kill and the oom_reaper freeing the memory",
    );

    w.table("policy");
    for (sw, (name, variant, _)) in crate::policy::switches()
        .into_iter()
        .zip(&s.policy.choices.entries)
    {
        // The same comment whether the value was given or preset, so the output round-trips.
        let doc = match sw.preset() {
            Some(p) => format!("{}; default follows {}", sw.summary(), p.follows),
            None => sw.summary().to_string(),
        };
        w.kv(name, string(variant), &doc);
    }

    for wl in &s.workloads {
        workload(&mut w, wl);
    }
    w.finish()
}

fn workload(w: &mut Writer, wl: &Workload) {
    w.array_table("workload");
    w.kv(
        "name",
        string(&wl.name),
        "unique name; labels counters and OOM kills",
    );
    w.kv(
        "start",
        dur(wl.start_ns),
        "simulated time at which it starts",
    );
    match wl.duration_ns {
        Some(d) => w.kv(
            "duration",
            dur(d),
            "exits this long after its start even if not done",
        ),
        None => w.unset(
            "duration",
            "exit after this long; unset: when its passes and hold are done",
        ),
    }
    w.kv(
        "oom_score_adj",
        wl.oom_score_adj.to_string(),
        "-1000..1000; -1000 is never OOM-killed",
    );

    if let Some(a) = &wl.anon {
        w.table("workload.anon");
        w.kv(
            "size",
            size(a.size_bytes),
            "anonymous memory region touched by the workload",
        );
        let (name, alpha) = match a.pattern {
            AccessPattern::Sequential => ("sequential", None),
            AccessPattern::Random => ("random", None),
            AccessPattern::Zipf { alpha } => ("zipf", Some(alpha)),
        };
        w.kv(
            "pattern",
            string(name),
            "\"sequential\", \"random\" or \"zipf\" (page 0 hottest)",
        );
        if let Some(alpha) = alpha {
            w.kv("zipf_alpha", float(alpha), "Zipf exponent (> 0)");
        }
        w.kv(
            "passes",
            uint(a.passes),
            "times the whole region is touched, one access per page",
        );
        w.kv(
            "write_fraction",
            float(a.write_fraction),
            "fraction of accesses that write (0..1)",
        );
        w.kv(
            "think",
            dur(a.think_ns),
            "application CPU time between two accesses",
        );
        w.kv(
            "hold",
            dur(a.hold_ns),
            "sleep holding the memory after the passes, before exiting",
        );
    }
    if let Some(f) = &wl.file {
        w.table("workload.file");
        w.kv(
            "size",
            size(f.size_bytes),
            "file size, read or written sequentially through the page cache",
        );
        let op = match f.op {
            FileOp::Read => "read",
            FileOp::Write => "write",
        };
        w.kv("op", string(op), "\"read\" or \"write\"");
        w.kv("passes", uint(f.passes), "sequential passes over the file");
        w.kv(
            "hold",
            dur(f.hold_ns),
            "sleep after the passes, before exiting",
        );
    }
    if let Some(t) = &wl.trace {
        trace(w, t);
    }
    if let Some(h) = &wl.highorder {
        w.table("workload.highorder");
        w.kv(
            "order",
            uint(h.order as u64),
            "allocation order (2^order pages each)",
        );
        w.kv(
            "rate",
            uint(h.rate_per_sec),
            "allocations per simulated second",
        );
        w.kv(
            "lifetime",
            dur(h.lifetime_ns),
            "each block is freed this long after it was allocated (the mean, if exponential)",
        );
        w.kv(
            "lifetimes",
            string(h.lifetimes.name()),
            "\"fixed\" (freed in allocation order) or \"exponential\" (random order: fragments, like slab)",
        );
        w.kv(
            "gfp",
            string(h.gfp.name()),
            "\"atomic\" (wakes kswapd, fails), \"kernel\" (reclaims, compacts, retries), \"transhuge\"",
        );
        match h.count {
            Some(c) => w.kv(
                "count",
                uint(c),
                "allocation attempts before the thread exits",
            ),
            None => w.unset(
                "count",
                "allocation attempts before the thread exits (unset: until duration)",
            ),
        }
    }
}

fn trace(w: &mut Writer, t: &TraceSpec) {
    w.table("workload.trace");
    w.kv(
        "path",
        string(&t.path),
        "trace file (a relative path is resolved against the scenario file's directory)",
    );
    w.kv(
        "format",
        string(t.format.name()),
        "\"oracle\" (libCacheSim oracleGeneral, 24-byte records) or \"csv\" (time_ns,object,offset,kind)",
    );
    w.kv(
        "compression",
        string(t.compression.name()),
        "\"none\" or \"zstd\" (default: zstd when the file name ends in .zst)",
    );
    if t.format == TraceFormat::Oracle {
        w.kv(
            "kind",
            string(t.kind.name()),
            "what the objects are: \"anon\" (anonymous memory) or \"file\" (one file each)",
        );
        w.kv(
            "object_size",
            string(t.object_size.name()),
            "\"pages\": an object spans ceil(size/4KiB) pages, all touched per request; \"ignore\": one page",
        );
        w.kv(
            "write_fraction",
            float(t.write_fraction),
            "fraction of requests that write (0..1; the format does not say)",
        );
    }
    w.kv(
        "passes",
        uint(t.passes),
        "times the whole trace is replayed",
    );
    match t.time {
        TraceTime::Ignore => w.kv(
            "time",
            string("ignore"),
            "\"ignore\": replay as fast as possible; \"trace\": at the recorded timestamps",
        ),
        TraceTime::Trace { unit_ns } => {
            w.kv(
                "time",
                string("trace"),
                "\"trace\": records arrive at their timestamps; \"ignore\": as fast as possible",
            );
            w.kv(
                "time_unit",
                dur(unit_ns),
                "simulated length of one trace time unit (oracle default 1s, csv 1ns)",
            );
        }
    }
    w.kv(
        "think",
        dur(t.think_ns),
        "application CPU time between two page accesses",
    );
    w.kv(
        "hold",
        dur(t.hold_ns),
        "sleep holding the memory after the passes, before exiting",
    );
    match t.max_records {
        Some(n) => w.kv(
            "max_records",
            uint(n),
            "replay only the first N records of each pass",
        ),
        None => w.unset(
            "max_records",
            "replay only the first N records of each pass; unset: all",
        ),
    }
}

/// Collects `key = value  # comment` rows and aligns the comments within each table.
#[derive(Default)]
struct Writer {
    out: String,
    /// Rows of the current table: (code, comment). An empty comment means a comment-only line.
    rows: Vec<(String, String)>,
}

impl Writer {
    fn kv(&mut self, key: &str, value: String, comment: &str) {
        self.rows
            .push((format!("{key} = {value}"), comment.to_string()));
    }

    /// An option that is `None`: shown, commented out, so it can be discovered.
    fn unset(&mut self, key: &str, comment: &str) {
        self.rows
            .push((format!("# {key} = <unset>"), comment.to_string()));
    }

    fn comment(&mut self, text: &str) {
        self.rows.push((format!("# {text}"), String::new()));
    }

    fn blank(&mut self) {
        self.rows.push((String::new(), String::new()));
    }

    fn table(&mut self, name: &str) {
        self.flush();
        let _ = writeln!(self.out, "\n[{name}]");
    }

    fn array_table(&mut self, name: &str) {
        self.flush();
        let _ = writeln!(self.out, "\n[[{name}]]");
    }

    fn flush(&mut self) {
        // Align comments of key rows only; long lines do not push the column out for the rest.
        let width = self
            .rows
            .iter()
            .filter(|(_, c)| !c.is_empty())
            .map(|(code, _)| code.chars().count())
            .filter(|n| *n <= 40)
            .max()
            .unwrap_or(0);
        for (code, comment) in self.rows.drain(..) {
            if comment.is_empty() {
                let _ = writeln!(self.out, "{code}");
            } else {
                let _ = writeln!(self.out, "{code:<width$}  # {comment}");
            }
        }
    }

    fn finish(mut self) -> String {
        self.flush();
        self.out
    }
}

fn size(v: u64) -> String {
    format!("\"{}\"", format_size(v))
}

fn dur(v: u64) -> String {
    format!("\"{}\"", format_duration(v))
}

/// TOML integers are i64; larger values are written as decimal strings, which the parser takes.
fn uint(v: u64) -> String {
    if i64::try_from(v).is_ok() {
        v.to_string()
    } else {
        format!("\"{v}\"")
    }
}

/// Shortest text that reads back as the same f64 (Rust's `Debug` guarantees that), always with
/// a `.` or exponent so TOML sees a float.
fn float(v: f64) -> String {
    if v.is_nan() {
        "nan".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{v:?}")
    }
}

/// A TOML basic string, always on one line.
fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse::parse_str;
    use crate::scenario::{
        AnonSpec, Compression, FileSpec, HighOrderGfp, HighOrderSpec, Lifetimes, MachineType,
        ObjectSize, TraceKind, GIB, KIB, MIB, NS_PER_MS, NS_PER_SEC,
    };

    fn round_trip(s: &Scenario) {
        let text = to_toml(s);
        let back = parse_str(&text, "shown.toml")
            .unwrap_or_else(|e| panic!("to_toml output does not parse: {e}\n---\n{text}"));
        assert_eq!(&back, s, "round trip changed the scenario:\n{text}");
        // Deterministic: rendering again gives the same text.
        assert_eq!(to_toml(&back), text);
    }

    fn workload(name: &str) -> Workload {
        Workload {
            name: name.into(),
            start_ns: 0,
            duration_ns: None,
            oom_score_adj: 0,
            anon: Some(AnonSpec {
                size_bytes: GIB,
                ..AnonSpec::default()
            }),
            file: None,
            trace: None,
            highorder: None,
        }
    }

    fn fixture(name: &str) -> String {
        format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn defaults_round_trip() {
        let mut s = Scenario::default();
        s.workloads.push(workload("w"));
        round_trip(&s);
    }

    #[test]
    fn parsed_examples_round_trip() {
        let examples = [
            "[[workload]]\nname = \"a\"\nanon.size = \"1GiB\"\n",
            "name = \"x\"\n[sim]\nduration = \"1500ms\"\nseed = 99\n[host]\nram = \"3GiB\"\nlowmem = \"2GiB\"\nmachine = \"i440fx\"\n\
             [sysctl]\nmin_free_kbytes = 128\n[swap]\nsize = \"1.5GiB\"\n\
             [[workload]]\nname = \"z\"\nduration = \"3s\"\noom_score_adj = -1000\n\
             [workload.anon]\nsize = 12345\npattern = \"zipf\"\nzipf_alpha = 0.7\nwrite_fraction = 0.1\n\
             [workload.file]\nsize = \"8GB\"\nop = \"write\"\n",
            "[oom]\nallowed = false\n[swap]\nsize = \"4GiB\"\n[[workload]]\nname = \"q\\\"uote\\\\\"\nfile.size = \"1GiB\"\n",
        ];
        let traces = [
            format!("path = \"{}\"", fixture("trace-small.oracleGeneral.zst")),
            format!(
                "path = \"{}\"\nkind = \"file\"\nobject_size = \"ignore\"\ntime = \"trace\"\nmax_records = 10",
                fixture("trace-small.oracleGeneral")
            ),
            format!(
                "path = \"{}\"\ntime = \"trace\"\ntime_unit = \"1us\"\npasses = 3\nthink = \"1us\"",
                fixture("trace-small.csv")
            ),
        ];
        for t in &traces {
            let text = format!("[[workload]]\nname = \"t\"\n[workload.trace]\n{t}\n");
            round_trip(&parse_str(&text, "ex.toml").unwrap());
        }
        for text in examples {
            round_trip(&parse_str(text, "ex.toml").unwrap());
        }
    }

    #[test]
    fn zoneinfo_round_trips() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/zoneinfo-host-6.18.txt"
        );
        let text = format!(
            "[host]\nzoneinfo = \"{path}\"\n[[workload]]\nname = \"a\"\nanon.size = \"1GiB\"\n"
        );
        let s = parse_str(&text, "z.toml").unwrap();
        assert_eq!(s.host.zoneinfo.as_deref(), Some(path));
        round_trip(&s);
    }

    /// Many scenarios with every field set to something other than its default, drawn from a
    /// fixed pseudo-random stream inside the validator's limits.
    #[test]
    fn generated_scenarios_round_trip() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for case in 0..300 {
            let mut s = Scenario {
                name: format!("gen-{case}\t\u{e9}"),
                ..Scenario::default()
            };
            s.sim.seed = next(u64::MAX);
            s.sim.duration_ns = (next(2) == 0).then(|| 1 + next(1 << 40));
            s.sim.sample_interval_ns = 1 + next(NS_PER_SEC * 10);
            s.sim.max_duration_ns = 1 + next(1 << 50);
            s.host.ram_bytes = 64 * MIB + next(16 * 1024 * GIB - 64 * MIB + 1);
            s.host.cpus = 1 + next(1024) as u32;
            s.host.thp = next(2) == 0;
            s.host.machine = if next(2) == 0 {
                MachineType::Q35
            } else {
                MachineType::I440fx
            };
            s.host.lowmem_bytes = (next(2) == 0).then(|| 1 + next(s.host.ram_bytes.min(4 * GIB)));
            s.host.fragmented_zone = (next(2) == 0).then(|| next(3) as usize);
            s.host.fragment_stride = 2 << next(10);
            s.sysctl.min_free_kbytes = (next(2) == 0).then(|| 128 + next(262_144 - 127));
            s.sysctl.watermark_scale_factor = 1 + next(3000);
            s.sysctl.lowmem_reserve_ratio = [next(1000), next(1000), next(1000), next(10)];
            s.sysctl.swappiness = next(201);
            s.swap.size_bytes = if next(3) == 0 {
                0
            } else {
                4 * KIB + next(1 << 40)
            };
            s.swap.read_latency_ns = next(NS_PER_SEC);
            s.swap.write_latency_ns = next(NS_PER_SEC);
            s.swap.bandwidth_bytes_per_sec = 1 + next(1 << 36);
            s.swap.latency_jitter = next(1000) as f64 / 1000.0;
            s.disk.read_latency_ns = next(NS_PER_SEC);
            s.disk.write_latency_ns = next(NS_PER_SEC);
            s.disk.bandwidth_bytes_per_sec = 1 + next(1 << 36);
            s.disk.latency_jitter = next(1000) as f64 / 1000.0;
            s.disk.readahead_pages = 1 + next(1 << 20);
            s.writeback.dirty_background_ratio = next(101);
            s.writeback.dirty_ratio = next(101);
            let mut cost = s.cost.clone();
            for (_, field, _) in COST_FIELDS {
                *field(&mut cost) = next(10 * NS_PER_MS);
            }
            s.cost = cost;
            s.oom.allowed = true;
            s.oom.reaper_delay_ns = next(NS_PER_SEC);
            s.policy = Default::default();
            for i in 0..1 + next(4) {
                let mut w = workload(&format!("w{i}"));
                w.start_ns = next(1 << 40);
                w.duration_ns = (next(2) == 0).then(|| 1 + next(1 << 40));
                w.oom_score_adj = next(2001) as i32 - 1000;
                // Any non-empty combination of anon, file and trace tables.
                let kind = 1 + next(7);
                w.anon = (kind & 1 != 0).then(|| AnonSpec {
                    size_bytes: 4 * KIB + next(1 << 42),
                    pattern: match next(3) {
                        0 => AccessPattern::Sequential,
                        1 => AccessPattern::Random,
                        _ => AccessPattern::Zipf {
                            alpha: (1 + next(1 << 30)) as f64 / 997.0,
                        },
                    },
                    passes: 1 + next(1000),
                    write_fraction: next(1001) as f64 / 1000.0,
                    think_ns: next(1 << 20),
                    hold_ns: next(1 << 40),
                });
                w.file = (kind & 2 != 0).then(|| FileSpec {
                    size_bytes: 4 * KIB + next(1 << 42),
                    op: if next(2) == 0 {
                        FileOp::Read
                    } else {
                        FileOp::Write
                    },
                    passes: 1 + next(10),
                    hold_ns: next(1 << 40),
                });
                w.trace = (kind & 4 != 0).then(|| {
                    let files = [
                        "trace-small.oracleGeneral",
                        "trace-small.oracleGeneral.zst",
                        "trace-small.csv",
                    ];
                    let format = if next(2) == 0 {
                        TraceFormat::Oracle
                    } else {
                        TraceFormat::Csv
                    };
                    let oracle = format == TraceFormat::Oracle;
                    TraceSpec {
                        path: fixture(files[next(3) as usize]),
                        format,
                        compression: if next(2) == 0 {
                            Compression::None
                        } else {
                            Compression::Zstd
                        },
                        // Oracle-only settings stay at their defaults for CSV (the parser
                        // rejects them there, and the printer leaves them out).
                        kind: if oracle && next(2) == 0 {
                            TraceKind::File
                        } else {
                            TraceKind::Anon
                        },
                        object_size: if oracle && next(2) == 0 {
                            ObjectSize::Ignore
                        } else {
                            ObjectSize::Pages
                        },
                        write_fraction: if oracle {
                            next(1001) as f64 / 1000.0
                        } else {
                            0.0
                        },
                        passes: 1 + next(100),
                        time: if next(2) == 0 {
                            TraceTime::Ignore
                        } else {
                            TraceTime::Trace {
                                unit_ns: 1 + next(NS_PER_SEC * 10),
                            }
                        },
                        think_ns: next(1 << 20),
                        hold_ns: next(1 << 40),
                        max_records: (next(2) == 0).then(|| 1 + next(1 << 40)),
                    }
                });
                w.highorder = (next(3) == 0).then(|| HighOrderSpec {
                    order: next(11) as u32,
                    rate_per_sec: 1 + next(1 << 20),
                    lifetime_ns: 1 + next(1 << 40),
                    lifetimes: [Lifetimes::Fixed, Lifetimes::Exponential][next(2) as usize],
                    gfp: [
                        HighOrderGfp::Atomic,
                        HighOrderGfp::Kernel,
                        HighOrderGfp::Transhuge,
                    ][next(3) as usize],
                    count: Some(1 + next(1 << 30)),
                });
                s.workloads.push(w);
            }
            round_trip(&s);
        }
    }

    #[test]
    fn output_shape() {
        let mut s = Scenario::default();
        s.workloads.push(workload("hog"));
        let text = to_toml(&s);
        assert!(text.contains("\n[sim]\n"));
        assert!(text.contains("\n[[workload]]\nname = \"hog\""));
        assert!(text.contains("\n[workload.anon]\nsize = \"1GiB\""));
        assert!(text.contains("ram = \"4GiB\""));
        assert!(text.contains("# duration = <unset>"));
        assert!(text.contains("anon_touch = \"20ns\""));
        assert!(text.contains("sample_interval = \"100ms\""));
        // Every key line carries a comment.
        for line in text
            .lines()
            .filter(|l| l.contains(" = ") && !l.starts_with('#'))
        {
            assert!(line.contains("  # "), "no comment: {line}");
        }
    }
}
