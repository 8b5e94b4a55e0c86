//! A write to `/sys/kernel/debug/lru_gen` as the machine runs it (6.1's `lru_gen_seq_write`,
//! `run_aging`, `run_eviction`; the reading and the checks are `lru_gen/debugfs_cmd.rs`):
//! each command in turn on its memcg's lruvec, the first error ending the write.
//!
//! The writer's reclaim is global reclaim by a task that is not kswapd: its pages count in
//! `pgscan_direct`/`pgsteal_direct` and in the memcg's own counts, its time in the writer's
//! CPU time; it is no memory stall. Its scan control is the kernel's: may write, unmap and
//! swap, every zone, priority 0. Abstracted: the writer never has a signal pending (so no
//! `EINTR`), and the node is the machine's only one.

use super::*;
use crate::machine::gfp::GFP_KERNEL;
use crate::machine::lru_gen::debugfs_cmd::{parse_cmd, split_cmds, CmdError, Run};
use crate::machine::page_counter::{CounterId, ROOT_COUNTER};
use crate::machine::TaskCtx;

impl Machine {
    /// Write `text` to `lru_gen` as task `t` (its CPU time grows by the work). Returns the
    /// write's error, as the kernel's return value would be; the machine counts the write in
    /// `lru_gen.debugfs`.
    pub fn lru_gen_write(&mut self, text: &str, t: &mut TaskCtx) -> Result<(), CmdError> {
        if self.lru_gen.is_none() {
            // No generations to work on (the scenario's checks keep writers away).
            return Err(CmdError::Inval);
        }
        let mut sc = ScanControl::new(GFP_KERNEL, 0, MAX_NR_ZONES - 1, 0, false);
        sc.priority = 0;
        sc.cost_ns = t.cost_ns;
        sc.quantum_end = u64::MAX;
        // The writer holds walk state for the whole write (set_mm_walk .. clear_mm_walk).
        self.lru_gen.as_deref_mut().expect("lru_gen is on").mm_walk = true;
        let end = self.lru_gen_run_cmds(text, &mut sc);
        t.cost_ns = sc.cost_ns;
        t.sleep_ns += sc.sleep_ns;
        let node = self.lru_gen.as_deref_mut().expect("lru_gen is on");
        node.mm_walk = false;
        node.debugfs.count(end);
        end
    }

    fn lru_gen_run_cmds(&mut self, text: &str, sc: &mut ScanControl) -> Result<(), CmdError> {
        let nr_memcgs = self.memcg.as_ref().map_or(1, |mc| mc.len());
        for cur in split_cmds(text) {
            let c = parse_cmd(cur)?;
            let (id, run) =
                c.resolve(&[self.nid as u32], nr_memcgs, |_| self.lru_gen_swappiness())?;
            // A memcg's lruvec is made on its first use.
            let now = jiffies(self.now);
            self.lru_gen
                .as_deref_mut()
                .expect("lru_gen is on")
                .lruvec(id, now);
            match run {
                Run::Aging {
                    can_swap,
                    force_scan,
                } => self.lru_gen_run_aging(id, c.seq, can_swap, force_scan, sc)?,
                Run::Eviction {
                    swappiness,
                    nr_to_reclaim,
                } => self.lru_gen_run_eviction(id, c.seq, swappiness, nr_to_reclaim, sc)?,
            }
            let node = self.lru_gen.as_deref_mut().expect("lru_gen is on");
            node.debugfs.commands += 1;
        }
        Ok(())
    }

    /// `run_aging`: one aging step of memcg `id`'s lruvec when `seq` is its `max_seq`.
    fn lru_gen_run_aging(
        &mut self,
        id: usize,
        seq: u64,
        can_swap: bool,
        force_scan: bool,
        sc: &mut ScanControl,
    ) -> Result<(), CmdError> {
        let mut cost = sc.cost_ns;
        let aged = self.with_lruvec(id, |m, gen, lists| {
            if !gen.run_aging_check(seq, can_swap, force_scan)? {
                return Ok(false);
            }
            let max_seq = gen.max_seq;
            m.lru_gen_try_to_inc_max_seq(id, gen, lists, max_seq, can_swap, force_scan, &mut cost);
            Ok(gen.max_seq > max_seq)
        })?;
        sc.cost_ns = cost;
        let node = self.lru_gen.as_deref_mut().expect("lru_gen is on");
        node.debugfs.aged += aged as u64;
        Ok(())
    }

    /// `run_eviction`: `evict_folios` on memcg `id`'s lruvec until the type eviction keeps
    /// has its oldest generation past `seq`, `nr_to_reclaim` pages are reclaimed, or a batch
    /// scans nothing.
    fn lru_gen_run_eviction(
        &mut self,
        id: usize,
        seq: u64,
        swappiness: u64,
        nr_to_reclaim: u64,
        sc: &mut ScanControl,
    ) -> Result<(), CmdError> {
        self.lru_gen_state(id).run_eviction_check(seq)?;
        sc.nr_reclaimed = 0;
        // The memcg's lruvec is the one reclaim works on (and counts in) meanwhile.
        self.memcg_switch(id as CounterId);
        let mut need_swapping = false;
        while !self.lru_gen_state(id).run_eviction_done(
            seq,
            swappiness,
            sc.nr_reclaimed,
            nr_to_reclaim,
        ) {
            if self.evict_folios(id, sc, swappiness, &mut need_swapping) == 0 {
                break;
            }
        }
        self.memcg_switch(ROOT_COUNTER);
        let node = self.lru_gen.as_deref_mut().expect("lru_gen is on");
        node.debugfs.reclaimed += sc.nr_reclaimed;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{fault, untouched};
    use super::*;
    use crate::machine::pte::PTE_YOUNG;
    use crate::machine::TaskCtx;

    /// A 64 MiB machine under the multi-generational LRU with swap, `caps` its
    /// `lru_gen_enabled`, and `cgroups` extra memcgs.
    fn machine(caps: &str, cgroups: usize) -> Machine {
        let mut text = format!(
            "name = \"t\"\n[host]\nram = \"64MiB\"\n[swap]\nsize = \"1GiB\"\n\
             latency_jitter = 0.0\n[sysctl]\nlru_gen_enabled = {caps}\n\
             [policy]\nlru = \"mglru\"\n\
             [[workload]]\nname = \"w\"\nanon = {{ size = \"1MiB\" }}\n"
        );
        for k in 0..cgroups {
            text += &format!("[[cgroup]]\nname = \"c{k}\"\n");
        }
        let scn = crate::scenario::parse_str(&text, "t.toml").unwrap();
        let mut m = crate::run::host_machine(&scn, 1, false).unwrap();
        if cgroups > 0 {
            m.setup_memcg(&scn.cgroups).unwrap();
        }
        assert!(m.lru_gen.is_some());
        m
    }

    fn seqs(m: &Machine, id: usize) -> (u64, [u64; 2]) {
        let st = m.lru_gen_state(id);
        (st.max_seq, st.min_seq)
    }

    /// `+` ages by one generation on max_seq only: a fresh lruvec (max_seq 3, min_seq 0:
    /// four generations) refuses it without force_scan (ERANGE), a seq beyond max_seq is
    /// EINVAL, a smaller one is done already; once eviction retired the empty generations
    /// it ages unforced. Forced, the walk runs with the walk capability off, and its
    /// statistics count.
    #[test]
    fn aging_commands_move_max_seq_as_run_aging_does() {
        let mut m = machine("0x0001", 0);
        let task = m.add_task("w", 0);
        let pages = fault(&mut m, task, 256);
        let mut t = TaskCtx::default();
        assert_eq!(seqs(&m, 0), (3, [0, 0]));
        let w = |m: &mut Machine, s: &str, t: &mut TaskCtx| m.lru_gen_write(s, t);
        assert_eq!(w(&mut m, "+ 1 0 3 1 0", &mut t), Err(CmdError::Range));
        assert_eq!(w(&mut m, "+ 1 0 3 0 0", &mut t), Err(CmdError::Range));
        assert_eq!(seqs(&m, 0), (3, [0, 0]), "refused");
        assert_eq!(w(&mut m, "+ 1 0 2", &mut t), Ok(()), "2 is done");
        assert_eq!(w(&mut m, "+ 1 0 4", &mut t), Err(CmdError::Inval));
        assert_eq!(w(&mut m, "+ 1 0 3 1 1", &mut t), Ok(()));
        assert_eq!(seqs(&m, 0), (4, [1, 1]), "forced: the oldest merged");
        // Eviction down to 1 finds nothing there and retires the empty generations 1, 2.
        assert_eq!(w(&mut m, "- 1 0 1", &mut t), Ok(()));
        assert_eq!(seqs(&m, 0), (4, [3, 3]));
        let cost0 = t.cost_ns;
        assert_eq!(
            w(&mut m, "+ 1 0 4 1 0", &mut t),
            Ok(()),
            "two generations: unforced"
        );
        assert_eq!(seqs(&m, 0).0, 5);
        assert_eq!(
            t.cost_ns, cost0,
            "no walk without the capability or force_scan"
        );
        // Only the forced step walked: its one page table (N) entered whatever the filter
        // says (F), its 256 entries tested (L), every one old (O), so not dense (no A).
        assert_eq!(m.lru_gen_state(0).mm_stats, [256, 256, 0, 1, 1, 0]);
        // Forced (force_scan unset means on): the walk tests every page again and promotes
        // the one made young.
        m.pte[pages.start as usize] |= PTE_YOUNG;
        assert_eq!(w(&mut m, "+ 1 0 5", &mut t), Ok(()));
        assert_eq!(seqs(&m, 0).0, 6);
        assert!(t.cost_ns > cost0, "the walk's time is the writer's");
        let st = m.lru_gen_state(0);
        assert_eq!(st.mm_stats[0], 512, "L: every entry tested, twice in all");
        assert_eq!(st.mm_stats[2], 1, "Y: the one young");
        assert_eq!(st.mm_stats[1], 511, "O: the rest");
        assert_eq!(
            st.mm_stats[3..],
            [2, 2, 0],
            "N F A: the table twice, never dense"
        );
        assert_eq!(st.gen_size(5, ANON), 1, "promoted to the then youngest");
        assert_eq!(st.gen_size(3, ANON), 255);
        let d = m.lru_gen.as_deref().unwrap().debugfs;
        assert_eq!(
            (d.writes, d.commands, d.einval, d.erange, d.aged),
            (8, 5, 1, 2, 3)
        );
        m.lru_gen_check().unwrap();
    }

    /// `-` evicts the oldest generations down to seq: every page of generations <= seq
    /// goes, none of the younger; nr_to_reclaim stops it early; a seq within the two
    /// youngest is EINVAL.
    #[test]
    fn eviction_commands_evict_down_to_seq() {
        let mut m = machine("0x0007", 0);
        let task = m.add_task("w", 0);
        let mut t = TaskCtx::default();
        let a = fault(&mut m, task, 300); // generation 3
        assert_eq!(m.lru_gen_write("+ 1 0 3", &mut t), Ok(()));
        let b = fault(&mut m, task, 200); // generation 4
        assert_eq!(m.lru_gen_write("+ 1 0 4; + 1 0 5", &mut t), Ok(()));
        let st = m.lru_gen_state(0).clone();
        assert_eq!(st.max_seq, 6);
        assert_eq!((st.gen_size(3, ANON), st.gen_size(4, ANON)), (300, 200));
        assert_eq!(
            m.lru_gen_write("- 1 0 5", &mut t),
            Err(CmdError::Inval),
            "5 is one of the two youngest"
        );
        // At most 100 pages: one batch of up to 64 isolated, then another.
        let r0 = m.vm.get(VmEvent::PgstealDirect);
        assert_eq!(m.lru_gen_write("- 1 0 3 200 100", &mut t), Ok(()));
        let got = m.vm.get(VmEvent::PgstealDirect) - r0;
        assert!((100..164).contains(&got), "stopped near 100: {got}");
        assert_eq!(m.lru_gen_state(0).gen_size(4, ANON), 200, "4 untouched");
        // Down to seq 3: generation 3 is emptied and retired. Its folios are reclaimed, or
        // moved up: still waiting for their swap writeback (sort_folio, to the next
        // generation) or rejected by shrink_folio_list (to the youngest); none of generation
        // 4's is touched.
        assert_eq!(m.lru_gen_write("- 1 0 3", &mut t), Ok(()));
        let st = m.lru_gen_state(0).clone();
        assert_eq!(st.min_seq[ANON], 4, "generation 3 retired");
        let reclaimed = m.vm.get(VmEvent::PgstealDirect) - r0;
        let kept: u64 = (4..=6).map(|seq| st.gen_size(seq, ANON)).sum();
        assert!(reclaimed >= 200, "{reclaimed}");
        assert_eq!(reclaimed + kept, 500);
        assert!(b.clone().all(|vp| untouched(&m, vp)), "generation 4 kept");
        assert!(a.clone().all(|vp| !untouched(&m, vp)));
        assert_eq!(m.vm.get(VmEvent::PgstealKswapd), 0);
        let w = m.lru_gen.as_deref().unwrap().debugfs;
        assert_eq!((w.writes, w.einval, w.reclaimed), (5, 1, reclaimed));
        m.lru_gen_check().unwrap();
    }

    /// A memcg's command works on its own lruvec; ids follow the lru_gen file (root 1).
    #[test]
    fn commands_name_memcgs_by_their_debugfs_id() {
        let mut m = machine("0x0007", 2);
        let mut t = TaskCtx::default();
        assert_eq!(m.lru_gen_write("+ 3 0 3", &mut t), Ok(()));
        assert_eq!(seqs(&m, 2).0, 4);
        assert_eq!(seqs(&m, 0).0, 3, "the root's untouched");
        assert_eq!(m.lru_gen_write("+ 4 0 3", &mut t), Err(CmdError::Inval));
        // The first error ends the write: the command after it does not run.
        assert_eq!(
            m.lru_gen_write("+ 1 0 3, * 1 0 3, + 1 0 4", &mut t),
            Err(CmdError::Inval)
        );
        assert_eq!(seqs(&m, 0).0, 4, "only the first ran");
    }

    /// Under the two-list LRU there is nothing to age or evict: the write is refused.
    #[test]
    fn a_machine_without_generations_refuses_the_write() {
        let text = "name = \"t\"\n[host]\nram = \"64MiB\"\n\
                    [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
        let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
        let mut m = crate::run::host_machine(&scn, 1, false).unwrap();
        assert!(m.lru_gen.is_none());
        let mut t = TaskCtx::default();
        assert_eq!(m.lru_gen_write("+ 1 0 3", &mut t), Err(CmdError::Inval));
        assert_eq!(t.cost_ns, 0);
    }
}
