//! The text of `/sys/kernel/debug/lru_gen` and `/sys/kernel/debug/lru_gen_full`
//! (`mm/vmscan.c`'s debugfs interface, 6.1; docs/design/mglru.md §6.4): per memcg and node,
//! one line per generation with its sequence number, its age in milliseconds and its pages
//! per type. The short file runs from the oldest anon generation to the youngest; the full
//! one shows the last four sequence numbers (marking with `x` a type's generations already
//! retired), and under each generation its four tiers' refault statistics and a line of the
//! page-table walk's statistics.
//!
//! What a write to `lru_gen` runs is `debugfs_cmd.rs`.

use super::mm_inline::lru_gen_from_seq;
use super::mmzone::{LruGen, ANON_AND_FILE, MAX_NR_GENS, MAX_NR_TIERS, NR_MM_STATS};
use super::sysfs::jiffies_to_msecs;
use std::fmt::Write;

/// The `memcg` line that heads a memcg's nodes (id, then its cgroup path; the root is id 1
/// and `/` with the memory controller on).
pub fn memcg_line(out: &mut String, id: u16, path: &str) {
    let _ = writeln!(out, "memcg {id:5} {path}");
}

/// One node's block of `lru_gen` (`full`: of `lru_gen_full`) for lruvec `l` at jiffy `now`.
pub fn node_block(out: &mut String, l: &LruGen, nid: usize, now: u64, full: bool) {
    let _ = writeln!(out, " node {nid:5}");
    let first = if !full {
        l.min_seq[0]
    } else {
        (l.max_seq + 1).saturating_sub(MAX_NR_GENS)
    };
    for seq in first..=l.max_seq {
        let birth = l.timestamps[lru_gen_from_seq(seq)];
        // An unsigned int of milliseconds, as the kernel prints it.
        let age = jiffies_to_msecs(now.wrapping_sub(birth)) as u32;
        let _ = write!(out, " {seq:10} {age:10}");
        for type_ in 0..ANON_AND_FILE {
            let mark = if full && seq < l.min_seq[type_] {
                'x'
            } else {
                ' '
            };
            let _ = write!(out, " {:10}{mark}", l.gen_size(seq, type_));
        }
        out.push('\n');
        if full {
            full_lines(out, l, seq);
        }
    }
}

/// `lru_gen_full`'s lines under generation `seq`: per tier, for each type, the moving averages
/// of refaults and of evicted-plus-protected pages (`R`, `T`) on the youngest generation, the
/// counts since the type's oldest generation began (`r` refaulted, `e` evicted, `p` protected:
/// none for tier 0) on that one, zeros elsewhere (one history generation: the counts belong to
/// the oldest); then the walk's six statistics on the youngest generation (`L O Y N F A`).
fn full_lines(out: &mut String, l: &LruGen, seq: u64) {
    for tier in 0..MAX_NR_TIERS {
        let _ = write!(out, "            {tier:10}");
        for type_ in 0..ANON_AND_FILE {
            let (n, marks) = if seq == l.max_seq {
                (
                    [l.avg_refaulted[type_][tier], l.avg_total[type_][tier], 0],
                    *b"RT ",
                )
            } else if seq == l.min_seq[type_] {
                let p = if tier > 0 {
                    l.protected[0][type_][tier - 1]
                } else {
                    0
                };
                (
                    [l.refaulted[0][type_][tier], l.evicted[0][type_][tier], p],
                    *b"rep",
                )
            } else {
                ([0; 3], *b"   ")
            };
            for (v, m) in n.iter().zip(marks) {
                let _ = write!(out, " {v:10}{}", m as char);
            }
        }
        out.push('\n');
    }
    out.push_str("                      ");
    for (i, code) in b"LOYNFA".iter().enumerate().take(NR_MM_STATS) {
        let (v, m) = if seq == l.max_seq {
            (l.mm_stats[i], *code as char)
        } else {
            (0, ' ')
        };
        let _ = write!(out, " {v:10}{m}");
    }
    out.push('\n');
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
        node_block(&mut out, &l, 0, now, false);
        let want = [
            "memcg     1 /",
            " node     0",
            "          5      12348       1000        3000 ",
            "          6       2004        500         500 ",
            "          7         96        200         300 ",
        ];
        assert_eq!(out, want.map(|s| format!("{s}\n")).concat());
    }

    /// D2: `lru_gen_full` of a lruvec whose anon has three generations (5..=7) and file two
    /// (6..=7), worked from 6.1's format strings: sequence numbers 4..=7, seq 4 retired for
    /// both types and 5 for file (`x`); the refault counts on each type's oldest generation,
    /// the averages and the walk's statistics on the youngest, blanks and zeros elsewhere.
    #[test]
    fn lru_gen_full_text_d2() {
        let mut l = LruGen::new(0);
        l.max_seq = 7;
        l.min_seq = [5, 6];
        let now = 10_000;
        for (seq, age_ms, anon, file) in [
            (4, 20_000, 0, 0),
            (5, 12_348, 1000, 0),
            (6, 2004, 500, 2500),
            (7, 96, 200, 300),
        ] {
            let g = lru_gen_from_seq(seq);
            l.timestamps[g] = now - age_ms / 4;
            l.nr_pages[g][ANON][ZONE_NORMAL] = anon;
            l.nr_pages[g][FILE][ZONE_NORMAL] = file;
        }
        l.refaulted[0] = [[10, 5, 0, 1], [20, 0, 0, 0]];
        l.evicted[0] = [[300, 40, 2, 0], [1000, 0, 0, 0]];
        l.protected[0] = [[7, 3, 1], [0, 0, 4]];
        l.avg_refaulted = [[11, 2, 0, 0], [30, 0, 0, 0]];
        l.avg_total = [[400, 50, 3, 1], [2000, 6, 0, 0]];
        l.mm_stats = [5000, 4200, 800, 0, 0, 0];
        assert!(l.seq_is_valid());
        let mut out = String::new();
        memcg_line(&mut out, 1, "/");
        node_block(&mut out, &l, 0, now, true);
        let want = [
            "memcg     1 /",
            " node     0",
            "          4      20000          0x          0x",
            "                     0          0           0           0           0           0           0 ",
            "                     1          0           0           0           0           0           0 ",
            "                     2          0           0           0           0           0           0 ",
            "                     3          0           0           0           0           0           0 ",
            "                                0           0           0           0           0           0 ",
            "          5      12348       1000           0x",
            "                     0         10r        300e          0p          0           0           0 ",
            "                     1          5r         40e          7p          0           0           0 ",
            "                     2          0r          2e          3p          0           0           0 ",
            "                     3          1r          0e          1p          0           0           0 ",
            "                                0           0           0           0           0           0 ",
            "          6       2004        500        2500 ",
            "                     0          0           0           0          20r       1000e          0p",
            "                     1          0           0           0           0r          0e          0p",
            "                     2          0           0           0           0r          0e          0p",
            "                     3          0           0           0           0r          0e          4p",
            "                                0           0           0           0           0           0 ",
            "          7         96        200         300 ",
            "                     0         11R        400T          0          30R       2000T          0 ",
            "                     1          2R         50T          0           0R          6T          0 ",
            "                     2          0R          3T          0           0R          0T          0 ",
            "                     3          0R          1T          0           0R          0T          0 ",
            "                             5000L       4200O        800Y          0N          0F          0A",
        ];
        assert_eq!(out, want.map(|s| format!("{s}\n")).concat());
    }

    /// Before the fourth generation exists the full file starts at sequence number 0.
    #[test]
    fn lru_gen_full_starts_at_zero_while_young() {
        let l = LruGen::new(0);
        let mut out = String::new();
        node_block(&mut out, &l, 0, 0, true);
        let seqs: Vec<&str> = out
            .lines()
            .filter(|s| s.len() == 46)
            .map(|s| s[..11].trim())
            .collect();
        assert_eq!(seqs, ["0", "1", "2", "3"]);
        // 1 node line + 4 generations of 6 lines.
        assert_eq!(out.lines().count(), 1 + 4 * 6);
    }
}
