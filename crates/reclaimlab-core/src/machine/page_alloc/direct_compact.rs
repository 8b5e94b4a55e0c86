//! Direct compaction from the allocator's slow path (`mm/page_alloc.c`:
//! `__alloc_pages_direct_compact`, `should_compact_retry`, core-mm §3.3) and the priorities it
//! runs at (`enum compact_priority`).

use super::super::compaction::{CompactResult, CompactStats};
use super::super::vmstat::VmEvent;
use super::super::{Machine, TaskCtx, MAX_NR_ZONES, PAGE_ALLOC_COSTLY_ORDER};
use crate::machine::watermark::alloc_flags::ALLOC_WMARK_MASK;

/// `enum compact_priority`: how hard a direct compaction tries; lower is harder. The slow
/// path starts its retry loop at `SyncLight` and `should_compact_retry` lowers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum CompactPriority {
    /// `COMPACT_PRIO_SYNC_FULL` (`MIN_COMPACT_PRIORITY`): deferral is not checked and the free
    /// scanner takes targets from any pageblock (`ignore_block_suitable`).
    SyncFull,
    /// `COMPACT_PRIO_SYNC_LIGHT` (`DEF_COMPACT_PRIORITY`, `MIN_COMPACT_COSTLY_PRIORITY`).
    #[default]
    SyncLight,
    /// `COMPACT_PRIO_ASYNC` (`INIT_COMPACT_PRIORITY`): the attempt before reclaim.
    Async,
}

/// `MAX_COMPACT_RETRIES`: retries after compactions that made progress.
pub const MAX_COMPACT_RETRIES: u32 = 16;

impl Machine {
    /// `__alloc_pages_direct_compact` at priority `prio`: compact the zonelist, then try the
    /// freelist. The result is what `should_compact_retry` judges: `Skipped` or `Deferred`
    /// when no zone was worth compacting (no stall is counted), `Success` when a zone made a
    /// block, `Complete` when the attempt ran and made none.
    pub(super) fn direct_compact(
        &mut self,
        order: u32,
        alloc_flags: u32,
        hz: usize,
        mt: usize,
        t: &mut TaskCtx,
        prio: CompactPriority,
    ) -> (Option<u32>, CompactResult) {
        let last_priority = prio == CompactPriority::SyncFull;
        let mut st = CompactStats::default();
        let mut ran = false;
        let mut deferred = false;
        let mut made_block = false;
        for z in (0..=hz.min(MAX_NR_ZONES - 1)).rev() {
            if !self.zones[z].is_managed() {
                continue;
            }
            // The last priority ignores deferral.
            if !last_priority && self.compaction_deferred(z, order) {
                deferred = true;
                continue;
            }
            let mark = self.zones[z].wmark_pages(alloc_flags & ALLOC_WMARK_MASK);
            if self.compaction_suitable(z, order, mark, hz, alloc_flags) != CompactResult::Continue
            {
                continue;
            }
            ran = true;
            if self.compact_zone(z, order, &mut st, last_priority) {
                self.compaction_defer_reset(z, order);
                made_block = true;
                break;
            }
            self.defer_compaction(z, order);
        }
        if !ran {
            let result = if deferred {
                CompactResult::Deferred
            } else {
                CompactResult::Skipped
            };
            return (None, result);
        }
        self.vm.add(VmEvent::CompactStall, 1);
        self.account_compaction(&st, false);
        // A memory stall for the time the attempt took (one that ran nowhere took none).
        self.psi.memstall_enter(&mut t.psi, self.now + t.cost_ns);
        t.cost_ns += self.compaction_cost(&st);
        self.psi.memstall_leave(&mut t.psi, self.now + t.cost_ns);
        let page = self.get_page_from_freelist(order, alloc_flags, hz, mt);
        self.vm.add(
            if page.is_some() {
                VmEvent::CompactSuccess
            } else {
                VmEvent::CompactFail
            },
            1,
        );
        let result = if made_block {
            CompactResult::Success
        } else {
            CompactResult::Complete
        };
        (page, result)
    }

    /// `should_compact_retry` (core-mm §3.3): after a compaction that failed or withdrew, try
    /// again one priority harder, down to the floor (`SyncFull` for non-costly orders,
    /// `SyncLight` for costly ones); after one that made a block, retry up to
    /// `MAX_COMPACT_RETRIES` times (a quarter of that for costly orders); after one skipped
    /// for want of free pages, retry if reclaim could give compaction enough.
    pub(super) fn should_compact_retry(
        &mut self,
        order: u32,
        hz: usize,
        result: CompactResult,
        t: &mut TaskCtx,
    ) -> bool {
        if order == 0 {
            return false;
        }
        if result == CompactResult::Success {
            t.compaction_retries += 1;
        }
        match result {
            CompactResult::Skipped => return self.compaction_zonelist_suitable(order, hz),
            // A failed or withdrawn attempt goes straight to a harder priority.
            CompactResult::Complete | CompactResult::Deferred => {}
            _ => {
                let max = if order > PAGE_ALLOC_COSTLY_ORDER {
                    MAX_COMPACT_RETRIES / 4
                } else {
                    MAX_COMPACT_RETRIES
                };
                if t.compaction_retries <= max {
                    return true;
                }
            }
        }
        let floor = if order > PAGE_ALLOC_COSTLY_ORDER {
            CompactPriority::SyncLight
        } else {
            CompactPriority::SyncFull
        };
        if t.compact_priority > floor {
            t.compact_priority = match t.compact_priority {
                CompactPriority::Async => CompactPriority::SyncLight,
                _ => CompactPriority::SyncFull,
            };
            t.compaction_retries = 0;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::{CompactPriority as P, CompactResult as R, TaskCtx, MAX_COMPACT_RETRIES};

    fn machine() -> crate::machine::Machine {
        let text = "name = \"t\"\n[host]\nram = \"256MiB\"\n[[workload]]\nname = \"w\"\n\
                    anon = { size = \"1MiB\" }\n";
        let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
        crate::run::host_machine(&scn, 1, false).unwrap()
    }

    /// core-mm §3.3 `should_compact_retry`: a failed compaction escalates one priority, to
    /// SYNC_FULL for non-costly orders and no further than SYNC_LIGHT for costly ones; one that
    /// made a block is retried MAX_COMPACT_RETRIES times (a quarter for costly orders) before
    /// the priority goes up; a request's success starts the next one afresh.
    #[test]
    fn compaction_retries_escalate_to_the_floor_then_give_up() {
        let mut m = machine();
        let hz = 1;
        let mut t = TaskCtx::default();
        assert_eq!(t.compact_priority, P::SyncLight);
        assert!(
            !m.should_compact_retry(0, hz, R::Complete, &mut t),
            "order 0 never"
        );
        assert!(m.should_compact_retry(3, hz, R::Complete, &mut t));
        assert_eq!(t.compact_priority, P::SyncFull);
        assert!(
            !m.should_compact_retry(3, hz, R::Complete, &mut t),
            "no harder priority"
        );
        assert!(!m.should_compact_retry(3, hz, R::Deferred, &mut t));

        let mut t = TaskCtx::default();
        assert!(
            !m.should_compact_retry(9, hz, R::Complete, &mut t),
            "costly: floor SYNC_LIGHT"
        );

        for (order, max) in [(3, MAX_COMPACT_RETRIES), (9, MAX_COMPACT_RETRIES / 4)] {
            let mut t = TaskCtx::default();
            for _ in 0..max {
                assert!(m.should_compact_retry(order, hz, R::Success, &mut t));
            }
            assert_eq!(
                (t.compact_priority, t.compaction_retries),
                (P::SyncLight, max)
            );
            // One retry past the limit: a harder priority if there is one, counting afresh.
            let harder = m.should_compact_retry(order, hz, R::Success, &mut t);
            assert_eq!(harder, order == 3, "order {order}");
            if harder {
                assert_eq!((t.compact_priority, t.compaction_retries), (P::SyncFull, 0));
            }
            t.end_of_request();
            assert_eq!(
                (t.compact_priority, t.compaction_retries),
                (P::SyncLight, 0)
            );
        }

        // Skipped for want of free pages: retry while reclaim could give compaction enough.
        let mut t = TaskCtx::default();
        assert!(m.should_compact_retry(3, hz, R::Skipped, &mut t));
        assert_eq!(t.compact_priority, P::SyncLight, "a skip does not escalate");
    }
}
