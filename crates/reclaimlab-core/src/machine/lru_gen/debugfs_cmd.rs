//! Writing `/sys/kernel/debug/lru_gen` (`mm/vmscan.c`, 6.1: `lru_gen_seq_write`, `run_cmd`,
//! `run_aging`, `run_eviction`; docs/design/mglru.md §6.4): the text written is a list of
//! commands separated by newlines, `,` or `;`, each
//!
//! * `+ memcg_id node_id seq [can_swap [force_scan]]`: age the lruvec to a new generation,
//!   if `seq` is its `max_seq` (a smaller `seq` is done already, a larger one is `EINVAL`;
//!   `ERANGE` when the reference type already has four generations and `force_scan` is 0);
//! * `- memcg_id node_id seq [swappiness [nr_to_reclaim]]`: evict, batch after batch, until
//!   the oldest generation of the type eviction must keep is past `seq` or `nr_to_reclaim`
//!   pages are reclaimed (`seq` must leave the two youngest generations: `EINVAL` else).
//!
//! The commands run in order; the first that fails ends the write with its error, those
//! before it stay done. Here: how a command is read (the kernel's `sscanf` of
//! `"%c %u %u %lu %n %u %n %lu %n"`), and each decision over plain numbers; the machine runs
//! them (`vmscan/lru_gen/debugfs_write.rs`).

use super::mmzone::{LruGen, MAX_NR_GENS, MIN_NR_GENS};
use crate::machine::lru::{ANON, FILE};

/// A write's error, as the kernel returns it (the negative errno).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmdError {
    /// `-EINVAL`: a command that does not parse, names no memcg or node with memory, has a
    /// swappiness above 200 or a `seq` out of range, or is neither `+` nor `-`.
    Inval,
    /// `-ERANGE`: aging without `force_scan` when the reference type has four generations.
    Range,
}

impl CmdError {
    pub fn errno(self) -> i32 {
        match self {
            CmdError::Inval => -22,
            CmdError::Range => -34,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CmdError::Inval => "EINVAL",
            CmdError::Range => "ERANGE",
        }
    }
}

/// One command as the kernel reads it. The optional fields keep their unset values, all
/// bits set (`-1` in the kernel's variables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LruGenCmd {
    pub cmd: u8,
    pub memcg_id: u32,
    pub nid: u32,
    pub seq: u64,
    /// `+`: `can_swap`; `-`: `swappiness`. Read as an `int`: negative (unset) means the
    /// lruvec's own swappiness.
    pub swappiness: u32,
    /// `+`: `force_scan` (unset: on); `-`: `nr_to_reclaim` (unset: no bound).
    pub opt: u64,
}

/// What a command runs once its lruvec and swappiness are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    Aging { can_swap: bool, force_scan: bool },
    Eviction { swappiness: u64, nr_to_reclaim: u64 },
}

/// The commands of a write: pieces between newlines, `,` and `;`, leading white space
/// dropped, empty ones skipped.
pub fn split_cmds(text: &str) -> impl Iterator<Item = &str> {
    text.split([',', ';', '\n'])
        .map(|s| s.trim_start_matches(is_space))
        .filter(|s| !s.is_empty())
}

/// The kernel's `isspace` over ASCII (space, \t, \n, \v, \f, \r).
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// A reader over one command, as `vsscanf` walks it.
struct Scan<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Scan<'_> {
    /// A blank in the format: any white space of the input, possibly none.
    fn blanks(&mut self) {
        while self.pos < self.s.len() && is_space(self.s[self.pos] as char) {
            self.pos += 1;
        }
    }

    /// `%u`/`%lu` in base 10: white space, then at least one digit. An overlong number keeps
    /// its low bits, as `simple_strntoull` leaves it.
    fn number(&mut self) -> Option<u64> {
        self.blanks();
        let start = self.pos;
        let mut v = 0u64;
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
            v = v
                .wrapping_mul(10)
                .wrapping_add(u64::from(self.s[self.pos] - b'0'));
            self.pos += 1;
        }
        (self.pos > start).then_some(v)
    }
}

/// Read one command (`cur` starts at a non-blank, as `split_cmds` leaves it): the command
/// character, three numbers, then up to two more; anything left over, or fewer than four
/// fields, is `EINVAL`. The character is not checked here (`run_cmd` does).
pub fn parse_cmd(cur: &str) -> Result<LruGenCmd, CmdError> {
    let bytes = cur.as_bytes();
    let Some(&cmd) = bytes.first() else {
        return Err(CmdError::Inval);
    };
    let mut sc = Scan { s: bytes, pos: 1 };
    let mut c = LruGenCmd {
        cmd,
        memcg_id: 0,
        nid: 0,
        seq: 0,
        swappiness: u32::MAX,
        opt: u64::MAX,
    };
    sc.blanks();
    // `%u` stores the low 32 bits of what it read.
    c.memcg_id = sc.number().ok_or(CmdError::Inval)? as u32;
    sc.blanks();
    c.nid = sc.number().ok_or(CmdError::Inval)? as u32;
    sc.blanks();
    c.seq = sc.number().ok_or(CmdError::Inval)?;
    sc.blanks();
    let mut end = sc.pos;
    if let Some(sw) = sc.number() {
        c.swappiness = sw as u32;
        sc.blanks();
        end = sc.pos;
        if let Some(opt) = sc.number() {
            c.opt = opt;
            sc.blanks();
            end = sc.pos;
        }
    }
    if end != bytes.len() {
        return Err(CmdError::Inval);
    }
    Ok(c)
}

impl LruGenCmd {
    /// `run_cmd`'s checks before the command runs: the node (`nodes` holds the ids of the
    /// nodes with memory), the memcg (ids `1..=nr_memcgs`, the root 1, as `lru_gen` prints
    /// them), the swappiness (`own`: the lruvec's, for an unset or negative one; above 200 is
    /// `EINVAL`), the command character. Returns the memcg's index (id − 1) and what to run.
    pub fn resolve(
        &self,
        nodes: &[u32],
        nr_memcgs: usize,
        own: impl FnOnce(usize) -> u64,
    ) -> Result<(usize, Run), CmdError> {
        if !nodes.contains(&self.nid) {
            return Err(CmdError::Inval);
        }
        if self.memcg_id == 0 || self.memcg_id as usize > nr_memcgs {
            return Err(CmdError::Inval);
        }
        let memcg = self.memcg_id as usize - 1;
        // The kernel's variable is an int.
        let swappiness = match self.swappiness as i32 {
            s if s < 0 => own(memcg),
            s if s > 200 => return Err(CmdError::Inval),
            s => s as u64,
        };
        let run = match self.cmd {
            b'+' => Run::Aging {
                can_swap: swappiness != 0,
                force_scan: self.opt != 0,
            },
            b'-' => Run::Eviction {
                swappiness,
                nr_to_reclaim: self.opt,
            },
            _ => return Err(CmdError::Inval),
        };
        Ok((memcg, run))
    }
}

impl LruGen {
    /// `run_aging`'s test for aging to `seq`: `Ok(true)` to run `try_to_inc_max_seq` on this
    /// `max_seq`, `Ok(false)` when `seq` is already past (nothing to do). The reference type
    /// (anon when it can be swapped) with four generations refuses a new one unless forced.
    pub fn run_aging_check(
        &self,
        seq: u64,
        can_swap: bool,
        force_scan: bool,
    ) -> Result<bool, CmdError> {
        if seq < self.max_seq {
            return Ok(false);
        }
        if seq > self.max_seq {
            return Err(CmdError::Inval);
        }
        let reference = if can_swap { ANON } else { FILE };
        if !force_scan && self.min_seq[reference] + MAX_NR_GENS - 1 <= self.max_seq {
            return Err(CmdError::Range);
        }
        Ok(true)
    }

    /// `run_eviction`'s test of `seq` at entry: eviction never reaches the two youngest
    /// generations.
    pub fn run_eviction_check(&self, seq: u64) -> Result<(), CmdError> {
        if seq + MIN_NR_GENS > self.max_seq {
            return Err(CmdError::Inval);
        }
        Ok(())
    }

    /// `run_eviction`'s end test before each batch: the oldest generation of the type
    /// eviction keeps (anon at a non-zero swappiness, file at 0) is past `seq`, or the pages
    /// asked for are reclaimed.
    pub fn run_eviction_done(
        &self,
        seq: u64,
        swappiness: u64,
        reclaimed: u64,
        nr_to_reclaim: u64,
    ) -> bool {
        let keep = if swappiness != 0 { ANON } else { FILE };
        seq < self.min_seq[keep] || reclaimed >= nr_to_reclaim
    }
}

/// What the writes to `lru_gen` did over a run (the machine counts them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DebugfsWrites {
    /// Writes, and commands that ran to their end.
    pub writes: u64,
    pub commands: u64,
    /// Writes that returned `EINVAL` or `ERANGE`.
    pub einval: u64,
    pub erange: u64,
    /// Generations the `+` commands made, and pages the `-` commands reclaimed.
    pub aged: u64,
    pub reclaimed: u64,
}

impl DebugfsWrites {
    /// Count a write's end.
    pub fn count(&mut self, end: Result<(), CmdError>) {
        self.writes += 1;
        match end {
            Ok(()) => {}
            Err(CmdError::Inval) => self.einval += 1,
            Err(CmdError::Range) => self.erange += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(cmd: u8, memcg_id: u32, nid: u32, seq: u64, swappiness: u32, opt: u64) -> LruGenCmd {
        LruGenCmd {
            cmd,
            memcg_id,
            nid,
            seq,
            swappiness,
            opt,
        }
    }

    #[test]
    fn commands_split_on_newline_comma_and_semicolon() {
        let v: Vec<&str> = split_cmds("+ 1 0 7\n  - 1 0 5 ;; ,\t- 1 0 4 0 100\n").collect();
        assert_eq!(v, ["+ 1 0 7", "- 1 0 5 ", "- 1 0 4 0 100"]);
        assert_eq!(split_cmds(" \n ; ").count(), 0);
    }

    #[test]
    fn a_command_reads_as_sscanf_reads_it() {
        let unset = u32::MAX;
        assert_eq!(
            parse_cmd("+ 1 0 7"),
            Ok(cmd(b'+', 1, 0, 7, unset, u64::MAX))
        );
        assert_eq!(
            parse_cmd("- 2 0 5 200 1000  "),
            Ok(cmd(b'-', 2, 0, 5, 200, 1000))
        );
        assert_eq!(parse_cmd("- 1 0 5 0"), Ok(cmd(b'-', 1, 0, 5, 0, u64::MAX)));
        // The blank after %c matches none: "+1" is '+' then 1.
        assert_eq!(
            parse_cmd("+1\t0 9"),
            Ok(cmd(b'+', 1, 0, 9, unset, u64::MAX))
        );
        // Any character is read; run_cmd rejects it.
        assert_eq!(parse_cmd("x 1 0 3").map(|c| c.cmd), Ok(b'x'));
        // %u keeps the low 32 bits.
        assert_eq!(parse_cmd("+ 4294967297 0 3").map(|c| c.memcg_id), Ok(1));
        for bad in [
            "+ 1 0",
            "-",
            "- 1 0 x",
            "- 1 0 5 x",
            "- 1 0 5 100 7 9",
            "- 1 0 5 100 7x",
            "- -1 0 5",
            "- 1 0 +5",
        ] {
            assert_eq!(parse_cmd(bad), Err(CmdError::Inval), "{bad:?}");
        }
    }

    #[test]
    fn run_cmd_checks_the_node_the_memcg_the_swappiness_and_the_command() {
        let own = |_| 60;
        let c = parse_cmd("- 1 0 5").unwrap();
        assert_eq!(
            c.resolve(&[0], 1, own),
            Ok((
                0,
                Run::Eviction {
                    swappiness: 60,
                    nr_to_reclaim: u64::MAX
                }
            ))
        );
        let c = parse_cmd("+ 3 0 5 0 0").unwrap();
        assert_eq!(
            c.resolve(&[0], 3, own),
            Ok((
                2,
                Run::Aging {
                    can_swap: false,
                    force_scan: false
                }
            ))
        );
        // Unset options: swappiness the lruvec's, force_scan on.
        let c = parse_cmd("+ 1 0 5").unwrap();
        assert_eq!(
            c.resolve(&[0], 1, |_| 0),
            Ok((
                0,
                Run::Aging {
                    can_swap: false,
                    force_scan: true
                }
            ))
        );
        // A swappiness read as a negative int is the lruvec's own.
        let c = parse_cmd("- 1 0 5 4294967295 64").unwrap();
        assert_eq!(
            c.resolve(&[0], 1, own),
            Ok((
                0,
                Run::Eviction {
                    swappiness: 60,
                    nr_to_reclaim: 64
                }
            ))
        );
        for (bad, why) in [
            ("- 1 1 5", "no node 1"),
            ("- 0 0 5", "memcg ids start at 1"),
            ("- 4 0 5", "three memcgs"),
            ("- 1 0 5 201", "swappiness above 200"),
            ("* 1 0 5", "neither + nor -"),
        ] {
            let c = parse_cmd(bad).unwrap();
            assert_eq!(c.resolve(&[0], 3, own), Err(CmdError::Inval), "{why}");
        }
    }

    /// A lruvec at max_seq 7 with anon at 4..=7 (four generations) and file at 6..=7.
    fn full_anon() -> LruGen {
        let mut l = LruGen::new(0);
        l.max_seq = 7;
        l.min_seq = [4, 6];
        assert!(l.seq_is_valid());
        l
    }

    #[test]
    fn aging_runs_only_on_max_seq_and_respects_four_generations() {
        let l = full_anon();
        assert_eq!(l.run_aging_check(6, true, false), Ok(false), "done already");
        assert_eq!(l.run_aging_check(8, true, true), Err(CmdError::Inval));
        // Anon is the reference type and has four generations: ERANGE unless forced.
        assert_eq!(l.run_aging_check(7, true, false), Err(CmdError::Range));
        assert_eq!(l.run_aging_check(7, true, true), Ok(true));
        // Without swap, file is the reference and has two.
        assert_eq!(l.run_aging_check(7, false, false), Ok(true));
        let mut three = l.clone();
        three.min_seq = [5, 6];
        assert_eq!(three.run_aging_check(7, true, false), Ok(true));
    }

    #[test]
    fn eviction_stops_at_seq_or_at_its_page_count() {
        let l = full_anon();
        assert_eq!(l.run_eviction_check(5), Ok(()));
        assert_eq!(
            l.run_eviction_check(6),
            Err(CmdError::Inval),
            "the two youngest"
        );
        // Down to seq 5 with swap: anon's oldest (4) is not past it yet; file's (6) is.
        assert!(!l.run_eviction_done(5, 60, 0, u64::MAX));
        assert!(l.run_eviction_done(5, 0, 0, u64::MAX));
        assert!(l.run_eviction_done(3, 60, 0, u64::MAX));
        assert!(l.run_eviction_done(5, 60, 1000, 1000));
        assert!(!l.run_eviction_done(5, 60, 999, 1000));
    }

    #[test]
    fn writes_count_their_errors() {
        let mut w = DebugfsWrites::default();
        w.count(Ok(()));
        w.count(Err(CmdError::Inval));
        w.count(Err(CmdError::Range));
        w.count(Err(CmdError::Range));
        assert_eq!((w.writes, w.einval, w.erange), (4, 1, 2));
        assert_eq!(
            (CmdError::Inval.errno(), CmdError::Range.errno()),
            (-22, -34)
        );
    }
}
