//! The fuzz targets' bodies, shared by the cargo-fuzz binaries (`fuzz_targets/`) and by the
//! core's `fuzz_corpus` test, which replays the checked-in corpus with stable cargo.
//!
//! What every target asserts: no input makes the engine panic (a bad input is an `Err` whose
//! message can be printed), and reading stays bounded. The scenario targets also check that a
//! scenario that parses prints (`--show-defaults`) to text that parses back to the same
//! scenario (once a computed `min_free_kbytes` is resolved) and prints the same text again: that
//! printed text is what `summary.json` records and what a re-run reads.

#![allow(dead_code)]

use std::io::Cursor;

use reclaimlab_core::scenario::{self, parse_str, show};
use reclaimlab_core::trace::{Compression, TraceFormat, TraceReader};

/// Records read at most per input (a zstd bomb expands a few bytes into many).
const MAX_RECORDS: u64 = 1 << 20;

/// A scenario file's text (any bytes; only UTF-8 can be TOML).
pub fn scenario_toml(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        scenario_text(text);
    }
}

fn scenario_text(text: &str) {
    match parse_str(text, "fuzz.toml") {
        Ok(s) => {
            let shown = scenario::to_toml(&s);
            let again = parse_str(&shown, "fuzz.toml").unwrap_or_else(|e| {
                panic!("the printed scenario does not parse: {e}\n--- input\n{text}\n--- printed\n{shown}")
            });
            // A computed min_free_kbytes comes back as its value: equal once resolved.
            assert!(
                show::resolve_computed(&again) == show::resolve_computed(&s),
                "printing and parsing back changed the scenario\n--- input\n{text}\n--- printed\n{shown}"
            );
            // And the printed text is a fixed point.
            assert!(
                scenario::to_toml(&again) == shown,
                "printing what was read back gives other text\n--- input\n{text}\n--- printed\n{shown}"
            );
        }
        Err(e) => {
            let shown = e.to_string();
            assert!(shown.starts_with("fuzz.toml:"), "{shown}");
        }
    }
}

fn read_all(data: &[u8], format: TraceFormat, compression: Compression) {
    let src = Box::new(Cursor::new(data.to_vec()));
    let mut r = match TraceReader::from_read("fuzz.trace", src, format, compression) {
        Ok(r) => r,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    loop {
        match r.next_record() {
            Ok(Some(_)) if r.records() < MAX_RECORDS => {}
            Ok(_) => return,
            Err(e) => {
                let shown = e.to_string();
                assert!(shown.starts_with("fuzz.trace: "), "{shown}");
                // Messages are sentences, not the decoder's debug output (`Custom { kind: ..`),
                // outside the excerpts of the input they quote.
                assert!(!unquoted(&shown).contains(" kind: "), "{shown}");
                // One printable line, whatever bytes the input holds.
                assert!(!shown.chars().any(char::is_control), "{shown:?}");
                return;
            }
        }
    }
}

/// A message without the excerpts of the input it quotes (`"..."`, in which the reader escapes
/// quotes and backslashes).
fn unquoted(msg: &str) -> String {
    let (mut out, mut quoted, mut escaped) = (String::new(), false, false);
    for c in msg.chars() {
        if !quoted {
            if c == '"' {
                quoted = true;
            } else {
                out.push(c);
            }
        } else if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '"' {
            quoted = false;
        }
    }
    out
}

/// libCacheSim oracleGeneral records, uncompressed.
pub fn trace_oracle(data: &[u8]) {
    read_all(data, TraceFormat::Oracle, Compression::None);
}

/// `time_ns,object,offset,kind` text, uncompressed.
pub fn trace_csv(data: &[u8]) {
    read_all(data, TraceFormat::Csv, Compression::None);
}

/// zstd framing: the first byte picks the format inside, the rest is the compressed stream.
pub fn trace_zstd(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let format = if first & 1 == 0 {
        TraceFormat::Oracle
    } else {
        TraceFormat::Csv
    };
    read_all(rest, format, Compression::Zstd);
}

// ---- the Python-dict path ---------------------------------------------------------------------
//
// `reclaimlab.run({...})` turns a dict into TOML text (tomli_w) and hands it to the parser under
// the name `<dict>`. Random bytes would almost never be a valid nested table, so this target
// builds one from the bytes: tables and keys mostly from the schema's own names, values of every
// TOML type with edge cases, written the way tomli_w writes them.

const SECTIONS: &[(&str, &[&str])] = &[
    (
        "sim",
        &["seed", "duration", "sample_interval", "max_duration"],
    ),
    (
        "host",
        &[
            "ram",
            "cpus",
            "thp",
            "machine",
            "lowmem",
            "zoneinfo",
            "fragmented_zone",
            "fragment_stride",
            "kernel_used",
            "pcp_lists",
            "cpu_contention",
        ],
    ),
    (
        "sysctl",
        &[
            "min_free_kbytes",
            "watermark_scale_factor",
            "watermark_boost_factor",
            "lowmem_reserve_ratio",
            "page_cluster",
            "vfs_cache_pressure",
            "swappiness",
        ],
    ),
    (
        "swap",
        &[
            "size",
            "read_latency",
            "write_latency",
            "bandwidth",
            "latency_jitter",
            "nr_requests",
            "rotational",
        ],
    ),
    (
        "disk",
        &[
            "read_latency",
            "write_latency",
            "bandwidth",
            "latency_jitter",
            "nr_requests",
            "readahead_pages",
        ],
    ),
    ("writeback", &["dirty_background_ratio", "dirty_ratio"]),
    (
        "cost",
        &[
            "anon_touch",
            "anon_fault",
            "swapcache_fault",
            "major_fault",
            "file_hit",
            "file_miss",
            "scan_unmapped",
            "scan_mapped",
            "swapout_submit",
            "free_page",
            "slowpath",
            "compact_scan",
            "migrate_page",
            "balance_iteration",
            "wakeup_latency",
        ],
    ),
    ("oom", &["allowed", "reaper_delay"]),
    (
        "policy",
        &[
            "kswapd_balance",
            "watermark_check",
            "watermark_boost",
            "shrinker",
            "xfs_reclaim",
            "watermarks",
            "kswapd_loop",
            "kcompactd",
        ],
    ),
    (
        "fs",
        &[
            "ags",
            "inode_size",
            "dentry_size",
            "cluster_inodes",
            "io_latency",
            "io_queue_depth",
            "logforce_latency",
            "aild_period",
            "flush_cluster_cost",
            "shrinker_batch",
            "shrinker_seeks",
            "log_inodes",
            "xfssyncd_centisecs",
        ],
    ),
];

const WORKLOAD_KEYS: &[&str] = &["name", "start", "duration", "oom_score_adj"];

const WORKLOAD_TABLES: &[(&str, &[&str])] = &[
    (
        "anon",
        &[
            "size",
            "pattern",
            "zipf_alpha",
            "write_fraction",
            "passes",
            "think",
            "hold",
        ],
    ),
    ("file", &["size", "op", "passes", "hold", "think"]),
    (
        "trace",
        &[
            "path",
            "format",
            "compression",
            "kind",
            "object_size",
            "write_fraction",
            "time",
            "time_unit",
            "think",
            "hold",
            "passes",
            "max_records",
        ],
    ),
    (
        "highorder",
        &["order", "rate", "count", "gfp", "lifetime", "lifetimes"],
    ),
    (
        "fsmark",
        &[
            "threads",
            "files",
            "files_per_dir",
            "file_size",
            "nofs_fraction",
            "think",
        ],
    ),
    (
        "simoops",
        &[
            "rss",
            "threads",
            "files",
            "file_size",
            "reads_per_unit",
            "alloc",
            "keep_units",
            "think",
        ],
    ),
    ("drop_caches", &["value", "after"]),
];

const STRINGS: &[&str] = &[
    "4GiB",
    "64MiB",
    "256MiB",
    "1TiB",
    "1.5GiB",
    "0",
    "5",
    "100ms",
    "1s",
    "0s",
    "10us",
    "1GiB/s",
    "zipf",
    "random",
    "sequential",
    "read",
    "write",
    "anon",
    "file",
    "oracle",
    "csv",
    "zstd",
    "none",
    "trace",
    "q35",
    "pc",
    "Normal",
    "DMA32",
    "GFP_KERNEL",
    "pages",
    "ignore",
    "",
    "x",
    "-1",
    "1e3",
    "nan",
    "18446744073709551615",
    "99999999999999999999TiB",
    "default",
    "v6.1",
    "\u{fc}ber",
    "a\"b",
    "C:\\x",
    "\n",
];

struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn u64(&mut self) -> u64 {
        (0..8).fold(0u64, |v, _| (v << 8) | self.byte() as u64)
    }
    fn pick<'s, T>(&mut self, xs: &'s [T]) -> &'s T {
        &xs[self.byte() as usize % xs.len()]
    }
    fn pick_str(&mut self, xs: &[&'static str]) -> &'static str {
        xs[self.byte() as usize % xs.len()]
    }
    fn done(&self) -> bool {
        self.at >= self.data.len()
    }
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn value(b: &mut Bytes, depth: u32) -> String {
    match b.byte() % 13 {
        0 => (b.byte() as i64).to_string(),
        1 => (b.u64() >> (b.byte() % 64))
            .min(i64::MAX as u64)
            .to_string(),
        2 => (-(b.byte() as i64) - 1).to_string(),
        3 => i64::MAX.to_string(),
        4 => {
            let f = f64::from_bits(b.u64());
            if f.is_nan() {
                "nan".into()
            } else if f.is_infinite() {
                if f > 0.0 {
                    "inf".into()
                } else {
                    "-inf".into()
                }
            } else {
                format!("{f:?}")
            }
        }
        5 => format!("{:?}", b.byte() as f64 / 255.0),
        6 => (b.byte() & 1 == 0).to_string(),
        7 | 8 => quote(b.pick_str(STRINGS)),
        9 => {
            let units = [
                "B", "KiB", "MiB", "GiB", "ns", "us", "ms", "s", "min", "h", "GiB/s", "",
            ];
            let n = b.u64() >> (b.byte() % 64);
            quote(&format!("{n}{}", b.pick(&units)))
        }
        10 if depth < 2 => {
            let n = b.byte() % 5;
            let items: Vec<String> = (0..n).map(|_| value(b, depth + 1)).collect();
            format!("[{}]", items.join(", "))
        }
        11 if depth < 2 => {
            let n = b.byte() % 3;
            let items: Vec<String> = (0..n)
                .map(|_| {
                    format!(
                        "{} = {}",
                        b.pick(&["size", "passes", "x"]),
                        value(b, depth + 1)
                    )
                })
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        _ => quote(&String::from_utf8_lossy(&[b.byte(), b.byte()])),
    }
}

fn key<'s>(b: &mut Bytes, known: &'s [&'s str]) -> String {
    // Mostly the schema's names; now and then one it does not know.
    if b.byte().is_multiple_of(16) {
        quote(b.pick_str(&["bogus", "Ram", "ram ", "", "size.x"]))
    } else {
        b.pick(known).to_string()
    }
}

/// A scenario as the Python dict path writes it, built from the bytes.
pub fn scenario_document(data: &[u8]) -> String {
    let mut b = Bytes { data, at: 0 };
    let mut out = String::new();
    if !b.byte().is_multiple_of(4) {
        out.push_str(&format!(
            "name = {}\n",
            quote(b.pick_str(&["t", "über", "", "a/b", "x y"]))
        ));
    }
    for _ in 0..b.byte() % 6 {
        let (sec, keys) = b.pick(SECTIONS);
        out.push_str(&format!("\n[{sec}]\n"));
        for _ in 0..b.byte() % 5 {
            out.push_str(&format!("{} = {}\n", key(&mut b, keys), value(&mut b, 0)));
        }
    }
    for i in 0..b.byte() % 3 {
        out.push_str("\n[[workload]]\n");
        if !b.byte().is_multiple_of(8) {
            out.push_str(&format!("name = \"w{i}\"\n"));
        }
        for _ in 0..b.byte() % 3 {
            out.push_str(&format!(
                "{} = {}\n",
                key(&mut b, WORKLOAD_KEYS),
                value(&mut b, 0)
            ));
        }
        for _ in 0..b.byte() % 3 {
            let (t, keys) = b.pick(WORKLOAD_TABLES);
            out.push_str(&format!("[workload.{t}]\n"));
            for _ in 0..b.byte() % 5 {
                out.push_str(&format!("{} = {}\n", key(&mut b, keys), value(&mut b, 0)));
            }
        }
        if b.done() {
            break;
        }
    }
    out
}

/// The Python-dict scenario path: a structured document from the bytes, then the parser.
pub fn scenario_dict(data: &[u8]) {
    let text = scenario_document(data);
    // Not every generated document is TOML (a key repeated, a table twice): that is the
    // parser's syntax error, which must be as clean as any other.
    scenario_text(&text);
}
