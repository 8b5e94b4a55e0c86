//! The text of `/sys/kernel/debug/lru_gen` (`mm/vmscan.c`'s debugfs interface, 6.1;
//! docs/design/mglru.md §6.4): per memcg and node, one line per generation from the oldest
//! anon generation to the youngest, with its sequence number, its age in milliseconds and its
//! pages per type.
//!
//! Only the short file; `lru_gen_full` (with the tier and walk statistics) and the command
//! interface that writing to the file runs are left for later.

use super::mm_inline::lru_gen_from_seq;
use super::mmzone::{LruGen, ANON_AND_FILE};
use super::sysfs::jiffies_to_msecs;
use std::fmt::Write;

/// The `memcg` line that heads a memcg's nodes (id, then its cgroup path; the root is id 1
/// and `/` with the memory controller on).
pub fn memcg_line(out: &mut String, id: u16, path: &str) {
    let _ = writeln!(out, "memcg {id:5} {path}");
}

/// One node's block of `lru_gen` for lruvec `l` at jiffy `now`.
pub fn node_block(out: &mut String, l: &LruGen, nid: usize, now: u64) {
    let _ = writeln!(out, " node {nid:5}");
    for seq in l.min_seq[0]..=l.max_seq {
        let birth = l.timestamps[lru_gen_from_seq(seq)];
        // An unsigned int of milliseconds, as the kernel prints it.
        let age = jiffies_to_msecs(now.wrapping_sub(birth)) as u32;
        let _ = write!(out, " {seq:10} {age:10}");
        for type_ in 0..ANON_AND_FILE {
            let _ = write!(out, " {:10} ", l.gen_size(seq, type_));
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::lru::{ANON, FILE};
    use crate::machine::ZONE_NORMAL;

    /// D1: the root memcg, node 0, byte for byte.
    #[test]
    fn lru_gen_text_d1() {
        let mut l = LruGen::new(0);
        l.max_seq = 7;
        l.min_seq = [5, 5];
        let now = 10_000;
        for (seq, age_ms, anon, file) in [
            (5, 12_348, 1000, 3000),
            (6, 2004, 500, 500),
            (7, 96, 200, 300),
        ] {
            let g = lru_gen_from_seq(seq);
            l.timestamps[g] = now - age_ms / 4;
            l.nr_pages[g][ANON][ZONE_NORMAL] = anon;
            l.nr_pages[g][FILE][ZONE_NORMAL] = file;
        }
        // A stale count in an unused generation, and a negative one, are not printed.
        l.nr_pages[lru_gen_from_seq(4)][FILE][0] = 77;
        l.nr_pages[lru_gen_from_seq(6)][FILE][0] = -5;
        let mut out = String::new();
        memcg_line(&mut out, 1, "/");
        node_block(&mut out, &l, 0, now);
        let want = [
            "memcg     1 /",
            " node     0",
            "          5      12348       1000        3000 ",
            "          6       2004        500         500 ",
            "          7         96        200         300 ",
        ];
        assert_eq!(out, want.map(|s| format!("{s}\n")).concat());
    }
}
