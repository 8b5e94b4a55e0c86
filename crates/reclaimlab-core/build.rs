//! The engine's version names the source it was built from: `ENGINE_VERSION` is the package
//! version and a digest of every file under `src/`. A stored result is reused only when its
//! summary records the same version (python/reclaimlab/results/freshness.py), so any change to
//! the engine, however small, makes earlier results stale instead of silently reused.

use std::fs;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let src = Path::new("src");
    let mut all = Vec::new();
    files(src, &mut all);
    // FNV-1a over each file's path and bytes, in path order: stable across machines and
    // checkouts (no timestamps), and needs no dependency.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in &all {
        let rel = p.to_string_lossy().replace('\\', "/");
        for b in rel
            .bytes()
            .chain([0])
            .chain(fs::read(p).expect("a source file"))
        {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=RECLAIMLAB_SOURCE_DIGEST={:012x}", h >> 16);
    println!("cargo:rerun-if-changed=src");
}
