//! The interface-file writes that reclaim (`mm/memcontrol.c`, docs/design/memcg-psi.md §2.2,
//! §2.4): `memory.reclaim` (`memory_reclaim`: proactive reclaim of a byte count from the
//! cgroup's subtree) and `memory.high` (`memory_high_write`: the new limit at once, then
//! reclaim down to it). Both are what a userspace agent (senpai, TMO: `policy::
//! memcg_controller`) or a `[workload.memory_reclaim]` writer does.
//!
//! Neither write is a memory stall of the writer in 6.1 (no `psi_memstall_enter` around
//! them), neither counts a `memory.events` entry, and the reclaimed pages count as the
//! writer's direct reclaim in `pgscan_direct`/`pgsteal_direct`. Abstracted: the writer never
//! has a signal pending; the per-CPU LRU batches `lru_add_drain_all` and the charge stock
//! `drain_all_stock` flush do not exist in the model (every page is on its list and every
//! charge exact), so those steps are the extra pass they make and nothing else. 6.1's check
//! that stops `memory.high`'s loop when another write changed the limit meanwhile cannot fire:
//! the write runs to its end inside one step.

use crate::machine::page_counter::CounterId;
use crate::machine::{Machine, TaskCtx, PAGE_SIZE};

use super::MAX_RECLAIM_RETRIES;

/// How a write of `memory.reclaim` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReclaimWrite {
    /// The request was met; `reclaimed` may be more than asked: each pass asks for at least
    /// `SWAP_CLUSTER_MAX` pages, and in 6.1 the last priority of a pass compares only its own
    /// reclaim with the whole request, so a large request can end up to twice met.
    Done { reclaimed: u64 },
    /// `EAGAIN`: sixteen passes in a row reclaimed nothing before the request was met.
    Again { reclaimed: u64 },
}

impl ReclaimWrite {
    /// Pages reclaimed by the write, however it ended.
    pub fn reclaimed(self) -> u64 {
        match self {
            ReclaimWrite::Done { reclaimed } | ReclaimWrite::Again { reclaimed } => reclaimed,
        }
    }
}

/// The retry rule both writes share: a pass that reclaims nothing uses up one retry, and with
/// none left the loop ends (`if (!reclaimed && !nr_retries--)`: the test comes before the
/// decrement, so the seventeenth empty pass is the one that ends it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retries(u32);

impl Retries {
    pub fn new() -> Retries {
        Retries(MAX_RECLAIM_RETRIES)
    }

    /// After a pass that reclaimed `got` pages: whether to go on.
    pub fn after_pass(&mut self, got: u64) -> bool {
        if got > 0 {
            return true;
        }
        if self.0 == 0 {
            return false;
        }
        self.0 -= 1;
        true
    }
}

impl Default for Retries {
    fn default() -> Self {
        Retries::new()
    }
}

impl Machine {
    /// A write of `bytes` to memcg `id`'s `memory.reclaim` by the task `t` (§2.4): limit
    /// reclaim of the pages still wanted, pass after pass, until they are reclaimed or the
    /// retries run out. A request below one page is met at once, as the kernel's is.
    pub fn memory_reclaim(&mut self, id: CounterId, bytes: u64, t: &mut TaskCtx) -> ReclaimWrite {
        let want = bytes / PAGE_SIZE;
        let mut got = 0;
        let mut retries = Retries::new();
        let end = loop {
            if got >= want {
                break ReclaimWrite::Done { reclaimed: got };
            }
            let r = self.try_to_free_mem_cgroup_pages(id, want - got, t);
            got += r;
            if !retries.after_pass(r) {
                break ReclaimWrite::Again { reclaimed: got };
            }
        };
        if let Some(mc) = self.memcg.as_mut() {
            let s = &mut mc.proactive[id as usize];
            s.reclaim_writes += 1;
            s.reclaim_eagain += matches!(end, ReclaimWrite::Again { .. }) as u64;
            s.reclaim_requested += want;
            s.reclaim_reclaimed += end.reclaimed();
        }
        end
    }

    /// A write of `pages` to memcg `id`'s `memory.high` by the task `t` (§2.2): the limit
    /// holds at once; then, while the cgroup is above it, limit reclaim of the excess until
    /// the retries run out. Returns the pages reclaimed.
    pub fn memory_high_write(&mut self, id: CounterId, pages: u64, t: &mut TaskCtx) -> u64 {
        let Some(mc) = self.memcg.as_mut() else {
            return 0;
        };
        mc.memory.set_high(id, pages);
        let mut got = 0;
        let mut retries = Retries::new();
        loop {
            let usage = self.memcg.as_ref().map_or(0, |mc| mc.memory.get(id).usage);
            if usage <= pages {
                break;
            }
            let r = self.try_to_free_mem_cgroup_pages(id, usage - pages, t);
            got += r;
            if !retries.after_pass(r) {
                break;
            }
        }
        if let Some(mc) = self.memcg.as_mut() {
            let s = &mut mc.proactive[id as usize];
            s.high_writes += 1;
            s.high_reclaimed += got;
        }
        got
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `if (!reclaimed && !nr_retries--)`: sixteen empty passes are forgiven, the seventeenth
    /// ends the loop; a pass that reclaims something uses up none.
    #[test]
    fn seventeen_empty_passes_end_a_write() {
        let mut r = Retries::new();
        for _ in 0..16 {
            assert!(r.after_pass(0));
        }
        assert!(r.after_pass(5));
        assert!(!r.after_pass(0));
    }
}
