//! Replays the fuzzers' checked-in inputs as ordinary tests, with stable cargo and no fuzzing:
//! every file of `fuzz/corpus/TARGET/` (the minimized corpus) and `fuzz/artifacts/TARGET/`
//! (crash reproducers, kept once fixed) goes through the same target body the fuzzer runs
//! (`fuzz/targets.rs`). A panic here is a regression of a bug a fuzzer once found.

use std::path::{Path, PathBuf};

#[path = "../../../fuzz/targets.rs"]
mod targets;

/// A target: its name (the corpus folder) and its body.
type Target = (&'static str, fn(&[u8]));

const TARGETS: &[Target] = &[
    ("scenario_toml", targets::scenario_toml),
    ("scenario_dict", targets::scenario_dict),
    ("trace_oracle", targets::trace_oracle),
    ("trace_csv", targets::trace_csv),
    ("trace_zstd", targets::trace_zstd),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn inputs(target: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for kind in ["corpus", "artifacts"] {
        let dir = fuzz_dir().join(kind).join(target);
        if let Ok(entries) = std::fs::read_dir(&dir) {
            files.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_file()));
        }
    }
    files.sort();
    files
}

#[test]
fn every_target_has_a_corpus() {
    for (target, _) in TARGETS {
        let n = inputs(target).len();
        assert!(
            n >= 5,
            "fuzz/corpus/{target}: {n} inputs; run the fuzzer and check in its minimized corpus"
        );
    }
}

#[test]
fn corpus_and_reproducers_replay_cleanly() {
    let mut total = 0;
    for (target, body) in TARGETS {
        for path in inputs(target) {
            let data = std::fs::read(&path).unwrap();
            let r = std::panic::catch_unwind(|| body(&data));
            assert!(r.is_ok(), "{target}: {} panicked", path.display());
            total += 1;
        }
    }
    assert!(total > 0);
}
