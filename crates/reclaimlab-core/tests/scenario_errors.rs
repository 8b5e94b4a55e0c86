//! Scenario parser: a corpus of malformed scenarios, each naming where its error must be
//! reported, plus valid scenarios that must parse to known values.
//!
//! Every `tests/bad_scenarios/*.toml` starts with `# expect: LINE FIELD`: the error's 1-based
//! line and its field path. The test also checks the rendered message carries `FILE:LINE:COL`,
//! the field and a `help:` line with the fix, since that is what users see.

use std::path::{Path, PathBuf};

use reclaimlab_core::scenario::units::{format_size, parse_size};
use reclaimlab_core::scenario::{
    parse_file, parse_str, to_toml, AccessPattern, AnonSpec, Compression, FileOp, FileSpec,
    ObjectSize, Scenario, TraceFormat, TraceKind, TraceSpec, TraceTime, Workload, GIB, KIB, MIB,
    NS_PER_MS, NS_PER_SEC, NS_PER_US,
};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_scenarios")
}

/// Parse the `# expect: LINE FIELD` header.
fn expectation(path: &Path, text: &str) -> (usize, String) {
    let first = text.lines().next().unwrap_or_default();
    let rest = first.strip_prefix("# expect:").unwrap_or_else(|| {
        panic!(
            "{}: first line must be `# expect: LINE FIELD`",
            path.display()
        )
    });
    let mut parts = rest.split_whitespace();
    let line = parts.next().and_then(|l| l.parse().ok());
    let field = parts.next();
    match (line, field, parts.next()) {
        (Some(line), Some(field), None) => (line, field.to_string()),
        _ => panic!("{}: malformed expect line {first:?}", path.display()),
    }
}

#[test]
fn bad_scenarios_report_line_and_field() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus directory")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 25, "corpus too small: {} files", files.len());

    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let (line, field) = expectation(path, &text);
        let err = match parse_file(path) {
            Ok(_) => {
                failures.push(format!("{}: parsed without error", path.display()));
                continue;
            }
            Err(e) => e,
        };
        let shown = err.to_string();
        let location = format!("{}:{}:{}", path.display(), line, err.col);
        let ok = err.line == line
            && err.field == field
            && err.col >= 1
            && shown.starts_with(&location)
            && shown.contains(&format!("in field `{field}`"))
            && !err.message.is_empty()
            // Every error says how to fix it.
            && err.help.as_deref().is_some_and(|h| !h.is_empty())
            && shown.contains("\n  help: ");
        if !ok {
            failures.push(format!(
                "{}: expected line {line} field `{field}`, got line {} field `{}`:\n{shown}",
                path.display(),
                err.line,
                err.field
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// A few messages checked word for word where the wording is the point of the error.
#[test]
fn messages_say_what_was_expected() {
    let msg = |name: &str| {
        let e = parse_file(&corpus_dir().join(format!("{name}.toml"))).unwrap_err();
        format!("{}\n{}", e.message, e.help.unwrap_or_default())
    };
    assert!(msg("negative_size").contains("sizes cannot be negative"));
    assert!(msg("ram_wrong_type").contains("expected a size like \"4GiB\""));
    assert!(msg("bad_unit").contains("unknown size unit \"XB\""));
    assert!(msg("duration_without_unit").contains("has no unit"));
    assert!(msg("unknown_policy").contains("\"v6.1\""));
    assert!(msg("unknown_pattern").contains("\"sequential\", \"random\", \"zipf\""));
    assert!(msg("unknown_machine").contains("\"q35\", \"i440fx\""));
    assert!(msg("unknown_host_key").contains("allowed keys in [host]: ram, cpus"));
    assert!(msg("min_free_kbytes_5").contains("clamps"));
    assert!(msg("exceeds_ram_and_swap").contains("(6GiB) exceed RAM + swap (5GiB"));
    assert!(msg("missing_zoneinfo").contains("does not exist"));
    assert!(msg("zoneinfo_with_ram").contains("cannot be given together with `zoneinfo`"));
    assert!(msg("toml_syntax_error").contains("write ram = \"4GiB\""));
    assert!(msg("workload_single_brackets").contains("[[workload]]"));
    let m = msg("trace_missing_file");
    assert!(
        m.contains("no-such-trace.oracleGeneral.zst\" does not exist"),
        "{m}"
    );
    assert!(
        m.contains("resolved against the scenario file's directory"),
        "{m}"
    );
    assert!(msg("trace_without_path").contains("missing required key `path`"));
    let m = msg("trace_format_unknown_from_name");
    assert!(
        m.contains("cannot tell the trace format") && m.contains("format = \"csv\""),
        "{m}"
    );
    assert!(msg("trace_kind_with_csv").contains("only applies to format = \"oracle\""));
    assert!(msg("trace_time_unit_without_trace_time").contains("only applies to time = \"trace\""));
    assert!(msg("trace_bad_format").contains("\"oracle\", \"csv\""));
    assert!(msg("trace_unknown_key").contains("did you mean `passes`?"));
    assert!(msg("trace_path_is_directory").contains("is a directory"));
    // Range and type errors come from each key's declaration: the range, then an example
    // (the default when there is one) as the fix.
    let m = msg("cpus_0");
    assert!(
        m.contains("must be between 1 and 1024, found 0") && m.contains("cpus = 2 (the default)"),
        "{m}"
    );
    let m = msg("latency_jitter_1");
    assert!(
        m.contains("must be at least 0 and below 1, found 1")
            && m.contains("latency_jitter = 0.1 (the default)"),
        "{m}"
    );
    let m = msg("dirty_ratio_string");
    assert!(
        m.contains("expected a non-negative integer, found string \"20%\"")
            && m.contains("dirty_ratio = 20"),
        "{m}"
    );
    assert!(msg("highorder_order_11").contains("must be between 0 and 10"));
    assert!(msg("readahead_pages_0").contains("(1 disables read-ahead)"));
    assert!(msg("oom_score_adj_float").contains("expected an integer, found float 1.5"));
    assert!(msg("swap_size_below_page").contains("0 (no swap) or at least 4KiB"));
    assert!(msg("trace_time_unit_zero").contains("must be greater than zero"));
    assert!(msg("lowmem_above_4gib").contains("between 64MiB and 4GiB, found 5GiB"));
    assert!(msg("highorder_without_end").contains("count = N"));
}

fn one_workload(name: &str, anon: Option<AnonSpec>, file: Option<FileSpec>) -> Workload {
    Workload {
        name: name.into(),
        start_ns: 0,
        duration_ns: None,
        oom_score_adj: 0,
        cgroup: None,
        anon,
        file,
        trace: None,
        highorder: None,
        fsmark: None,
        simoops: None,
        drop_caches: None,
        memory_reclaim: None,
        lru_gen: None,
        stat: None,
        blkio: None,
    }
}

#[test]
fn valid_scenarios_parse_to_expected_values() {
    // Units and defaults: everything not written takes Scenario::default().
    let s = parse_str(
        "[host]\nram = \"1.5GiB\"\n[swap]\nsize = 1073741824\nbandwidth = \"250MB/s\"\n\
         [[workload]]\nname = \"hog\"\nstart = \"2.5s\"\n[workload.anon]\nsize = \"512M\"\nhold = \"10us\"\n",
        "examples/units.toml",
    )
    .unwrap();
    let mut want = Scenario {
        name: "units".into(),
        ..Scenario::default()
    };
    want.host.ram_bytes = 1536 * MIB;
    want.swap.size_bytes = GIB;
    want.swap.bandwidth_bytes_per_sec = 250_000_000;
    want.workloads.push(Workload {
        start_ns: 2_500 * NS_PER_MS,
        ..one_workload(
            "hog",
            Some(AnonSpec {
                size_bytes: 512 * MIB,
                hold_ns: 10 * NS_PER_US,
                ..AnonSpec::default()
            }),
            None,
        )
    });
    assert_eq!(s, want);

    // A "mix" workload with both tables, inline and dotted forms.
    let s = parse_str(
        "name = \"mix\"\nsim.duration = \"1min\"\n[[workload]]\nname = \"m\"\n\
         anon = { size = \"64KiB\", pattern = \"random\", passes = 2 }\nfile.size = \"4GB\"\nfile.op = \"write\"\n",
        "ignored.toml",
    )
    .unwrap();
    assert_eq!(s.name, "mix");
    assert_eq!(s.sim.duration_ns, Some(60 * NS_PER_SEC));
    assert_eq!(
        s.workloads,
        vec![one_workload(
            "m",
            Some(AnonSpec {
                size_bytes: 64 * KIB,
                pattern: AccessPattern::Random,
                passes: 2,
                ..AnonSpec::default()
            }),
            Some(FileSpec {
                size_bytes: 4_000_000_000,
                op: FileOp::Write,
                ..FileSpec::default()
            }),
        )]
    );

    // oom.allowed = false is fine when the working sets fit (exactly) in RAM + swap.
    let s = parse_str(
        "[oom]\nallowed = false\n[host]\nram = \"2GiB\"\n[swap]\nsize = \"1GiB\"\n\
         [[workload]]\nname = \"a\"\nanon.size = \"3GiB\"\n",
        "fits.toml",
    )
    .unwrap();
    assert!(!s.oom.allowed);
    assert_eq!(
        format_size(s.workloads[0].anon.as_ref().unwrap().size_bytes),
        "3GiB"
    );
    assert_eq!(parse_size("3GiB"), Ok(3 * GIB));
}

#[test]
fn zoneinfo_is_resolved_against_the_scenario_directory() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/zoneinfo-host-6.18.txt");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scenario_zoneinfo");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&fixture, dir.join("zi.txt")).unwrap();
    let scen = dir.join("host.toml");
    std::fs::write(
        &scen,
        "[host]\nzoneinfo = \"zi.txt\"\n[[workload]]\nname = \"a\"\nanon.size = \"1GiB\"\n",
    )
    .unwrap();
    let s = parse_file(&scen).unwrap();
    assert_eq!(s.name, "host");
    assert_eq!(
        s.host.zoneinfo,
        Some(dir.join("zi.txt").to_string_lossy().into_owned())
    );
    // The resolved path is stored, so the shown scenario parses anywhere.
    assert_eq!(
        parse_str(&to_toml(&s), "elsewhere.toml").map(|b| b.host),
        Ok(s.host.clone())
    );
}

#[test]
fn trace_tables_parse_and_resolve_against_the_scenario_directory() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scenario_trace");
    std::fs::create_dir_all(dir.join("traces")).unwrap();
    for name in ["trace-small.oracleGeneral.zst", "trace-small.csv"] {
        std::fs::copy(fixtures.join(name), dir.join("traces").join(name)).unwrap();
    }
    let scen = dir.join("replay.toml");
    std::fs::write(
        &scen,
        "[[workload]]\nname = \"a\"\nanon.size = \"1MiB\"\n\
         [workload.trace]\npath = \"traces/trace-small.oracleGeneral.zst\"\n\
         [[workload]]\nname = \"b\"\n\
         [workload.trace]\npath = \"traces/trace-small.csv\"\ntime = \"trace\"\npasses = 2\n",
    )
    .unwrap();
    let s = parse_file(&scen).unwrap();
    // Format and compression come from the names; every other setting is the default.
    assert_eq!(
        s.workloads[0].trace,
        Some(TraceSpec {
            path: dir
                .join("traces/trace-small.oracleGeneral.zst")
                .to_string_lossy()
                .into_owned(),
            format: TraceFormat::Oracle,
            compression: Compression::Zstd,
            kind: TraceKind::Anon,
            object_size: ObjectSize::Pages,
            write_fraction: 0.0,
            passes: 1,
            time: TraceTime::Ignore,
            think_ns: 0,
            hold_ns: 0,
            max_records: None,
        })
    );
    assert!(s.workloads[0].anon.is_some());
    let b = s.workloads[1].trace.as_ref().unwrap();
    assert_eq!(
        (b.format, b.compression),
        (TraceFormat::Csv, Compression::None)
    );
    // CSV timestamps are nanoseconds.
    assert_eq!(b.time, TraceTime::Trace { unit_ns: 1 });
    assert_eq!(b.passes, 2);
    // The resolved paths are stored, so the shown scenario parses anywhere.
    assert_eq!(
        parse_str(&to_toml(&s), "elsewhere.toml").map(|b| b.workloads),
        Ok(s.workloads.clone())
    );
}
