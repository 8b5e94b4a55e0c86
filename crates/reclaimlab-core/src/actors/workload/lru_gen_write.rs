//! `echo CMDS > /sys/kernel/debug/lru_gen` (`[workload.lru_gen]`): a userspace writer of the
//! multi-generational LRU's commands, once or at an interval (6.1's debugfs interface; the
//! machine's `lru_gen_write`, the reading of the commands `machine/lru_gen/debugfs_cmd.rs`).
//!
//! Like a script that reads the `lru_gen` file and then writes it, the writer may give a
//! command's `seq` as `max_seq` or `max_seq-N`: each is replaced by the number the file shows
//! for that command's memcg at the moment of the write, all of a write's at once, before any of
//! its commands runs (so `+ 1 0 max_seq; - 1 0 max_seq-2` evicts down to the generation that
//! was third youngest before the aging). The write's work is the writer's CPU time; an error
//! (`EINVAL`, `ERANGE`) ends that write as the kernel's return does, is counted in
//! summary.json's `lru_gen_writes`, and the next write runs as if nothing happened.

use super::spec::LruGenSpec;
use super::task::{Origin, Task, Work};
use crate::machine::lru_gen::debugfs_cmd::{parse_cmd, split_cmds};
use crate::machine::lru_gen::mmzone::LruGen;
use crate::machine::Machine;
use crate::world::{StepCx, Wake};

pub type LruGenWriter = Task<LruGenWork>;

#[derive(Debug)]
pub struct LruGenWork {
    commands: String,
    every_ns: Option<u64>,
    /// When the next write is due.
    pub at_ns: u64,
    /// Writes made, and those that returned an error.
    pub writes: u64,
    pub errors: u64,
}

/// The name a command's `seq` takes for the lruvec's youngest sequence number.
const MAX_SEQ: &str = "max_seq";

/// `text` with each `max_seq` or `max_seq-N` replaced by `max_seq_of(memcg_id)` (minus N, not
/// below 0) for the memcg id of the command it is in; a command that does not read, or names a
/// memcg `max_seq_of` does not know, keeps its text (the write then fails as the kernel's
/// would). Commands come out one per line.
pub fn fill_max_seq(text: &str, mut max_seq_of: impl FnMut(u32) -> Option<u64>) -> String {
    let mut out = String::new();
    for cur in split_cmds(text) {
        let filled = fill_one(cur, &mut max_seq_of);
        out.push_str(filled.as_deref().unwrap_or(cur));
        out.push('\n');
    }
    out
}

/// One command's `max_seq` filled in, or `None` when it has none or cannot be filled.
fn fill_one(cur: &str, max_seq_of: &mut impl FnMut(u32) -> Option<u64>) -> Option<String> {
    let at = cur.find(MAX_SEQ)?;
    let rest = &cur[at + MAX_SEQ.len()..];
    let digits = |s: &str| s.chars().take_while(char::is_ascii_digit).count();
    let (minus, tail) = match rest.strip_prefix('-') {
        Some(r) if digits(r) > 0 => {
            let n = digits(r);
            (r[..n].parse::<u64>().ok()?, &r[n..])
        }
        _ => (0, rest),
    };
    // The memcg id is read with the placeholder standing for a number.
    let probe = format!("{}0{tail}", &cur[..at]);
    let id = parse_cmd(&probe).ok()?.memcg_id;
    let seq = max_seq_of(id)?.saturating_sub(minus);
    Some(format!("{}{seq}{tail}", &cur[..at]))
}

/// The check a scenario makes of a writer's `commands`, for a machine with `nr_memcgs`
/// memcgs (the root included) and the one node 0: each command must read, be `+` or `-`,
/// name that node and a memcg id the `lru_gen` file shows, and have a swappiness of at most
/// 200. (Whether its `seq` is in range depends on the moment: the run counts that.) Returns
/// the message and its fix.
pub fn check_commands(text: &str, nr_memcgs: usize) -> Result<(), (String, String)> {
    let mut n = 0;
    for cur in split_cmds(text) {
        n += 1;
        let filled = fill_one(cur, &mut |_| Some(1 << 20));
        let c = parse_cmd(filled.as_deref().unwrap_or(cur)).map_err(|_| {
            (
                format!("lru_gen command {n} (\"{}\") does not read", cur.trim_end()),
                "write `+ memcg_id node_id seq [can_swap [force_scan]]` or `- memcg_id \
                 node_id seq [swappiness [nr_to_reclaim]]` with numbers (seq may be max_seq \
                 or max_seq-N), commands separated by `;`"
                    .to_string(),
            )
        })?;
        let bad = |what: String, fix: String| Err((format!("lru_gen command {n}: {what}"), fix));
        if c.cmd != b'+' && c.cmd != b'-' {
            return bad(
                format!("'{}' is not a command", c.cmd as char),
                "start it with + (aging) or - (eviction)".into(),
            );
        }
        if c.nid != 0 {
            return bad(
                format!("node {} has no memory", c.nid),
                "the machine is one node: write node_id 0".into(),
            );
        }
        if c.memcg_id == 0 || c.memcg_id as usize > nr_memcgs {
            return bad(
                format!("memcg id {} is not in lru_gen", c.memcg_id),
                format!(
                    "the root is 1 and each [[cgroup]] the next id, parents first: 1..={nr_memcgs} here"
                ),
            );
        }
        // The fifth field is read as swappiness for both commands (`+` takes it as can_swap).
        if (c.swappiness as i32) > 200 {
            return bad(
                format!("swappiness (can_swap) {} is above 200", c.swappiness),
                "give 0..=200 (for +: 0 or 1), or leave it out for vm.swappiness".into(),
            );
        }
    }
    if n == 0 {
        return Err((
            "lru_gen commands: there is no command".into(),
            "write at least one, e.g. commands = \"- 1 0 max_seq-2\"".into(),
        ));
    }
    Ok(())
}

impl LruGenWriter {
    pub fn new(o: &Origin, spec: &LruGenSpec) -> LruGenWriter {
        let work = LruGenWork {
            commands: spec.commands.clone(),
            every_ns: spec.every_ns,
            at_ns: o.start_ns + spec.after_ns,
            writes: 0,
            errors: 0,
        };
        Task::from_origin(o, format!("{}/lru_gen", o.workload), work)
    }

    /// One write at `now`: the commands with their `max_seq` filled in, run by the machine
    /// in the thread's CPU time; then the next write's time (no sooner than this one's end),
    /// or the end.
    fn write(t: &mut LruGenWriter, m: &mut Machine, now: u64) -> Wake {
        let w = &mut t.work;
        let nr_memcgs = m.memcg.as_ref().map_or(1, |mc| mc.len());
        let text = match m.lru_gen.as_deref() {
            Some(node) => fill_max_seq(&w.commands, |id| {
                // A memcg's lruvec not made yet is a fresh one.
                let fresh = LruGen::new(0).max_seq;
                (id >= 1 && id as usize <= nr_memcgs).then(|| {
                    node.lruvecs
                        .get(id as usize - 1)
                        .map_or(fresh, |l| l.gen.max_seq)
                })
            }),
            // Without generations the machine refuses the write (the scenario allows no
            // writer there).
            None => w.commands.clone(),
        };
        let end = m.lru_gen_write(&text, &mut t.ctx);
        w.writes += 1;
        w.errors += end.is_err() as u64;
        let (every, mut at) = (w.every_ns, w.at_ns);
        let done = now + t.ctx.cost_ns;
        let wake = t.next_write(m, &mut at, every, done);
        t.work.at_ns = at;
        wake
    }
}

impl Work for LruGenWork {
    /// A write to a debugfs file runs to its end.
    const OOM_KILLABLE: bool = false;

    fn step(t: &mut LruGenWriter, cx: &mut StepCx) -> Wake {
        let now = cx.now();
        if now < t.work.at_ns && t.finished_ns.is_none() {
            return Wake::At(t.work.at_ns);
        }
        t.chunk(cx, LruGenWriter::write)
    }

    /// It never took a reference on an address space.
    fn exit(_: &mut LruGenWriter, _: &mut Machine) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_seq_is_read_for_each_commands_memcg() {
        let of = |id: u32| match id {
            1 => Some(7),
            3 => Some(12),
            _ => None,
        };
        assert_eq!(
            fill_max_seq("+ 1 0 max_seq; - 3 0 max_seq-2 0 100,- 1 0 4", of),
            "+ 1 0 7\n- 3 0 10 0 100\n- 1 0 4\n"
        );
        assert_eq!(
            fill_max_seq("- 1 0 max_seq-9", of),
            "- 1 0 0\n",
            "not below 0"
        );
        // An unknown memcg, or a command that does not read, keeps its text.
        assert_eq!(fill_max_seq("- 2 0 max_seq", of), "- 2 0 max_seq\n");
        assert_eq!(fill_max_seq("- 1 max_seq", of), "- 1 max_seq\n");
    }

    #[test]
    fn scenario_commands_are_checked_before_the_run() {
        assert_eq!(check_commands("+ 1 0 max_seq; - 2 0 5 200 64", 2), Ok(()));
        for (text, says) in [
            ("", "no command"),
            ("- 1 0", "does not read"),
            ("- 1 0 max_seq+1", "does not read"),
            ("* 1 0 5", "not a command"),
            ("- 1 1 5", "node 1"),
            ("- 0 0 5", "memcg id 0"),
            ("- 3 0 5", "memcg id 3"),
            ("- 1 0 5 201", "above 200"),
            ("+ 1 0 5 300", "above 200"),
        ] {
            let err = check_commands(text, 2).unwrap_err();
            assert!(err.0.contains(says), "{text:?}: {err:?}");
        }
    }
}
