//! The guest kernel's side of free page hinting (`mm/page_reporting.c` and the proposals of
//! mechanisms.md §D): what a guest tells its host about free memory, when, and how its
//! allocator treats memory it reported.
//!
//! A machine that is a guest has a [`GuestSide`]. Its allocator records every block it hands
//! out (the host must back those frames), and the hinting variant
//! (`policy/hinting/`, the [`FreePageHinting`] trait) hears of frees before the per-CPU lists
//! and merging (`arch_free_page`) and of frees that merge into large blocks (`__free_one_page`).
//! Touches and reports go to `events`, in order, for the host to replay; time the guest spends blocked
//! (waiting for a report's ack, a hypercall) accumulates in `stall_ns`. The memory slot that
//! links the guest to its host (`virt::kvm_main`) takes all three after every step of a guest
//! actor: it faults the touched frames in on the host, discards the reported ranges, and makes
//! the step's actor wait for what it cost.
//!
//! Free page reporting proper (D4, 6.1) is implemented here, as the kernel has it in
//! mm/page_reporting.c: the notification on a large enough merged free, the IDLE / REQUESTED /
//! ACTIVE state and its 2 s delay, and the pass over each zone's free lists with its watermark
//! skip, its per-list budget, the 32-entry report and the tail placement of reported blocks.
//! The other variants use the primitives below (isolate a free block, report blocks, put them
//! back).

use super::cost::KvmCost;
use super::watermark::MIGRATE_TYPES;
use super::{Machine, MAX_NR_ZONES, MAX_ORDER, PAGE_SIZE};
use crate::engine::units::NS_PER_SEC;

/// `PAGE_REPORTING_CAPACITY`: scatterlist entries per report.
pub const PAGE_REPORTING_CAPACITY: usize = 32;
/// `PAGE_REPORTING_DELAY` (2 * HZ): from a request to the pass.
pub const PAGE_REPORTING_DELAY_NS: u64 = 2 * NS_PER_SEC;
/// The list budget divisor: a pass reports about 1/16 of each free list
/// (`DIV_ROUND_UP(nr_free, PAGE_REPORTING_CAPACITY * 16)` report calls per list).
const BUDGET_SHARE: u64 = (PAGE_REPORTING_CAPACITY * 16) as u64;

/// The synthetic counters of mechanisms.md §D.6 that the guest side keeps (the host side
/// counts its discards and refaults in the memory slot).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HintStats {
    /// Report calls (a virtqueue round trip, a flushed buffer, a hypercall).
    pub reports: u64,
    /// Blocks reported, and the pages in them.
    pub blocks: u64,
    pub pages: u64,
    /// Time guest threads spent blocked in hinting (waiting for acks, hypercalls, inline scans).
    pub blocked_ns: u64,
    /// Frees captured (D2: pages in the per-CPU arrays; D3: merged blocks in the per-vCPU
    /// buffers), and frees lost because the array was full (D2).
    pub captured: u64,
    pub lost: u64,
    /// Blocks that were no longer free, or failed the watermark check, when isolated.
    pub isolate_failed: u64,
    /// Free page reporting passes.
    pub passes: u64,
}

/// One thing a guest did to a block of its memory (pfn, order), for its host to replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotEvent {
    /// Handed out by the allocator (and written): the host must back it.
    Touch(u32, u8),
    /// Reported free: the host may drop it.
    Report(u32, u8),
    /// Marked unused (s390 CMMA's `ESSA SET_UNUSED`): host reclaim may drop it.
    Unused(u32, u8),
    /// Marked stable again (`ESSA SET_STABLE`).
    Stable(u32, u8),
}

/// `prdev->state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportingState {
    Idle,
    Requested,
    Active,
}

/// Where a free page reporting pass is: zone, order, migratetype, the list's budget, and the
/// blocks isolated for the next report.
#[derive(Debug, Clone)]
struct PassCursor {
    zone: usize,
    order: usize,
    mt: usize,
    budget: i64,
    /// The zone passed its watermark test and its lists are being walked.
    in_zone: bool,
    /// The current list's budget was computed.
    in_list: bool,
    sg: Vec<(u32, u8)>,
}

/// A guest machine's hinting state and its exchange with the host.
#[derive(Debug)]
pub struct GuestSide {
    /// The variant (taken out while it runs, so it can work on the machine).
    pub hinting: Option<Box<dyn FreePageHinting>>,
    /// `page_reporting_order`.
    pub order: u32,
    pub cost: KvmCost,
    /// What the guest did to its memory since the slot last looked, in order.
    pub events: Vec<SlotEvent>,
    /// Time the current step spent blocked in hinting.
    pub stall_ns: u64,
    /// The variant's worker (D2's kthread, D4's work item) wants to run by this time.
    pub work_due: Option<u64>,
    pub stats: HintStats,
    /// Free page reporting's `prdev->state`, and its pass under way.
    pub state: ReportingState,
    pass: Option<PassCursor>,
}

impl GuestSide {
    pub fn new(hinting: Box<dyn FreePageHinting>, order: u32, cost: KvmCost) -> GuestSide {
        GuestSide {
            hinting: Some(hinting),
            order,
            cost,
            events: Vec::new(),
            stall_ns: 0,
            work_due: None,
            stats: HintStats::default(),
            state: ReportingState::Idle,
            pass: None,
        }
    }
}

/// What one call of the reporting work did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkStep {
    /// Sent a report (or moved on); call again once its cost has passed.
    More,
    /// The pass is over; run again after this delay (a request came in meanwhile), or not.
    Finished(Option<u64>),
}

impl Machine {
    /// Make this machine a guest with this hinting variant.
    pub fn make_guest(&mut self, hinting: Box<dyn FreePageHinting>, order: u32, cost: KvmCost) {
        let notify = hinting.merged_min_order(order);
        let reported_bits = hinting.tracks_reported();
        for z in 0..MAX_NR_ZONES {
            let managed = self.zones[z].is_managed();
            let fa = &mut self.zones[z].free_area;
            fa.notify_order = notify;
            if reported_bits && managed {
                fa.track_reported();
            }
        }
        self.guest = Some(Box::new(GuestSide::new(hinting, order, cost)));
    }

    /// The allocator handed out 2^order frames at `pfn` (`arch_alloc_page`, and the first write
    /// to them that zeroing or the caller makes): the host must back them.
    #[inline(always)]
    pub(super) fn guest_alloc(&mut self, pfn: u32, order: u32) {
        // A host pays one test per allocation; the rest is out of line.
        if self.guest.is_some() {
            self.guest_alloc_slow(pfn, order);
        }
    }

    #[cold]
    #[inline(never)]
    fn guest_alloc_slow(&mut self, pfn: u32, order: u32) {
        if let Some(g) = self.guest.as_deref_mut() {
            g.events.push(SlotEvent::Touch(pfn, order as u8));
            if let Some(mut h) = g.hinting.take() {
                h.on_alloc(self, pfn, order);
                self.guest_mut().hinting = Some(h);
            }
        }
    }

    /// `arch_free_page`: 2^order frames at `pfn` are about to be freed (before the per-CPU
    /// lists and merging).
    #[inline(always)]
    pub(super) fn guest_free(&mut self, pfn: u32, order: u32) {
        if self.guest.is_some() {
            self.guest_free_slow(pfn, order);
        }
    }

    #[cold]
    #[inline(never)]
    fn guest_free_slow(&mut self, pfn: u32, order: u32) {
        if let Some(g) = self.guest.as_deref_mut() {
            if let Some(mut h) = g.hinting.take() {
                h.on_free(self, pfn, order);
                self.guest_mut().hinting = Some(h);
            }
        }
    }

    /// After a free: hand the variant the blocks that merged to its order (`__free_one_page`'s
    /// notification).
    #[inline(always)]
    pub(super) fn guest_after_free(&mut self) {
        if self.guest.is_some() {
            self.guest_after_free_slow();
        }
    }

    #[cold]
    #[inline(never)]
    fn guest_after_free_slow(&mut self) {
        for z in 0..MAX_NR_ZONES {
            if self.zones[z].free_area.merged.is_empty() {
                continue;
            }
            let merged = std::mem::take(&mut self.zones[z].free_area.merged);
            let mut h = self.guest_mut().hinting.take();
            if let Some(h) = h.as_mut() {
                for &(pfn, order) in &merged {
                    h.on_merged(self, pfn, order as u32);
                }
            }
            self.guest_mut().hinting = h;
            let mut merged = merged;
            merged.clear();
            // Keep the allocation for the next free.
            if self.zones[z].free_area.merged.is_empty() {
                self.zones[z].free_area.merged = merged;
            }
        }
    }

    /// The guest side; the machine must be a guest.
    pub fn guest_mut(&mut self) -> &mut GuestSide {
        self.guest.as_deref_mut().expect("a guest machine")
    }

    /// The guest has booted: its hinting device registers.
    pub fn guest_start(&mut self) {
        let mut h = self.guest_mut().hinting.take();
        if let Some(h) = h.as_mut() {
            h.on_start(self);
        }
        self.guest_mut().hinting = h;
    }

    /// Run the variant's deferred work once (D2's kthread, D4's reporting work item).
    pub fn guest_work(&mut self, now: u64) -> WorkStep {
        let mut h = self.guest_mut().hinting.take();
        let step = match h.as_mut() {
            Some(h) => h.work(self, now),
            None => WorkStep::Finished(None),
        };
        self.guest_mut().hinting = h;
        step
    }

    /// Ask for the variant's worker to run by `at`.
    pub fn guest_kick_work(&mut self, at: u64) {
        let g = self.guest_mut();
        g.work_due = Some(g.work_due.map_or(at, |t| t.min(at)));
        self.outbox.raise(super::Signal::HintingWork);
    }

    // ------------------------------------------------------------ primitives for the variants

    /// `__isolate_free_page`: take the free block (head, order) off its list, unless that would
    /// leave its zone below the min watermark plus the block.
    pub fn isolate_free_block(&mut self, head: u32, order: u32) -> bool {
        let z = self.zone_of(head);
        let zone = &self.zones[z];
        if !self.frames.is_buddy_head_of_order(head, order as usize)
            || zone.free_pages() < zone.min_wmark_pages() + (2 << order)
        {
            self.guest_mut().stats.isolate_failed += 1;
            return false;
        }
        self.zones[z].free_area.take_block(&mut self.frames, head);
        true
    }

    /// Give an isolated block back to the buddy without notifying anyone; with `mark` it goes to
    /// the tail and is flagged reported if it did not merge (`__putback_isolated_page`).
    pub fn putback_isolated(&mut self, head: u32, order: u32, mark: bool) {
        let z = self.zone_of(head);
        let fa = &mut self.zones[z].free_area;
        if mark {
            fa.putback_reported(&mut self.frames, &self.pageblock_mt, head, order as usize);
        } else {
            let notify = std::mem::replace(&mut fa.notify_order, MAX_ORDER);
            fa.free(&mut self.frames, &self.pageblock_mt, head, order as usize);
            fa.notify_order = notify;
        }
    }

    /// Send one report of these blocks to the host and wait for its ack: the host discards
    /// them (through the memory slot, which adds the discards' time); the report's round trip
    /// is charged here, `isolated` blocks' isolation too.
    pub fn report_to_host(&mut self, blocks: &[(u32, u8)], round_trip_ns: u64, isolated: bool) {
        let g = self.guest_mut();
        let mut ns = round_trip_ns;
        if isolated {
            ns += g.cost.isolate_ns * blocks.len() as u64;
        }
        g.stats.reports += 1;
        g.stats.blocks += blocks.len() as u64;
        g.stats.pages += blocks.iter().map(|&(_, o)| 1u64 << o).sum::<u64>();
        g.events
            .extend(blocks.iter().map(|&(p, o)| SlotEvent::Report(p, o)));
        g.stall_ns += ns;
        g.stats.blocked_ns += ns;
    }

    /// Report the free blocks that hold these frames, in one round trip: each frame's block,
    /// if it is still free (it may have merged since, or been allocated again) and of at least
    /// `min_order`, is isolated once, reported, and put back when the host acks (the RFC's
    /// kthread pass, the s390-like buffer flush).
    pub fn report_free_blocks_of(&mut self, frames: &[(u32, u8)], min_order: usize) {
        let mut isolated: Vec<(u32, u8)> = Vec::with_capacity(frames.len());
        for &(pfn, _) in frames {
            let z = self.zone_of(pfn);
            let Some((head, o)) = self.zones[z].free_area.free_block_of(&self.frames, pfn) else {
                continue;
            };
            // A frame inside a block already taken adds nothing: the block is no longer free.
            if o >= min_order && self.isolate_free_block(head, o as u32) {
                isolated.push((head, o as u8));
            }
        }
        if isolated.is_empty() {
            return;
        }
        let ns = self.guest_mut().cost.report_ns;
        self.report_to_host(&isolated, ns, true);
        for &(head, o) in &isolated {
            self.putback_isolated(head, o as u32, false);
        }
    }

    /// Time the current step of a guest thread spends blocked in hinting (an inline scan).
    pub fn guest_stall(&mut self, ns: u64) {
        let g = self.guest_mut();
        g.stall_ns += ns;
        g.stats.blocked_ns += ns;
    }

    // ------------------------------------------------------------ free page reporting (6.1)

    /// `__page_reporting_notify`: a free merged into a block of the reporting order. A request
    /// while one is pending does nothing; one that finds the device idle queues the work
    /// `PAGE_REPORTING_DELAY` later; one during a pass makes the pass run again after it.
    pub fn page_reporting_notify(&mut self) {
        let now = self.now;
        let g = self.guest_mut();
        if g.state == ReportingState::Requested {
            return;
        }
        let prev = std::mem::replace(&mut g.state, ReportingState::Requested);
        if prev == ReportingState::Idle {
            self.guest_kick_work(now + PAGE_REPORTING_DELAY_NS);
        }
    }

    /// One call of `page_reporting_process`: walk the free lists from where the pass stopped
    /// until one report is sent (32 blocks) or the pass ends.
    pub fn page_reporting_work(&mut self) -> WorkStep {
        let order = self.guest_mut().order as usize;
        let mut cur = match self.guest_mut().pass.take() {
            Some(c) => c,
            None => {
                let g = self.guest_mut();
                g.state = ReportingState::Active;
                g.stats.passes += 1;
                PassCursor {
                    zone: 0,
                    order,
                    mt: 0,
                    budget: 0,
                    in_zone: false,
                    in_list: false,
                    sg: Vec::with_capacity(PAGE_REPORTING_CAPACITY),
                }
            }
        };
        let report_ns = self.guest_mut().cost.report_ns;
        while cur.zone < MAX_NR_ZONES {
            let z = cur.zone;
            if !cur.in_zone {
                // `page_reporting_process_zone`: skip a zone that would be left short.
                let zone = &self.zones[z];
                let mark = zone.low_wmark_pages() + ((PAGE_REPORTING_CAPACITY as u64) << order);
                if !zone.is_managed() || zone.free_pages() <= mark {
                    cur.zone += 1;
                    continue;
                }
                cur.in_zone = true;
                cur.order = order;
                cur.mt = 0;
                cur.in_list = false;
            }
            while cur.order < MAX_ORDER {
                while cur.mt < MIGRATE_TYPES {
                    if !cur.in_list {
                        let nr_free: u64 = self.zones[z].free_area.nr_free[cur.order].iter().sum();
                        cur.budget = nr_free.div_ceil(BUDGET_SHARE) as i64;
                        cur.in_list = true;
                    }
                    match self.page_reporting_cycle(&mut cur) {
                        Cycle::Full => {
                            let sg = std::mem::take(&mut cur.sg);
                            self.report_and_drain(&sg, report_ns);
                            cur.sg = sg;
                            cur.sg.clear();
                            cur.budget -= 1;
                            self.guest_mut().pass = Some(cur);
                            return WorkStep::More;
                        }
                        Cycle::ListDone => {
                            cur.mt += 1;
                            cur.in_list = false;
                        }
                    }
                }
                cur.mt = 0;
                cur.order += 1;
            }
            // Report what is left before leaving the zone.
            cur.in_zone = false;
            cur.zone += 1;
            if !cur.sg.is_empty() {
                let sg = std::mem::take(&mut cur.sg);
                self.report_and_drain(&sg, report_ns);
                self.guest_mut().pass = Some(cur);
                return WorkStep::More;
            }
        }
        // The pass is over: back to idle, unless a request came in during it.
        let g = self.guest_mut();
        let again = g.state == ReportingState::Requested;
        g.state = if again {
            ReportingState::Requested
        } else {
            ReportingState::Idle
        };
        WorkStep::Finished(again.then_some(PAGE_REPORTING_DELAY_NS))
    }

    /// `page_reporting_cycle` on the cursor's list: isolate unreported blocks from the head
    /// until the report is full, the budget is spent, or the list ends.
    fn page_reporting_cycle(&mut self, cur: &mut PassCursor) -> Cycle {
        let (z, order, mt) = (cur.zone, cur.order, cur.mt);
        let mut pfn = self.zones[z].free_area.lists[order][mt].head;
        while pfn != super::frames::NIL {
            let next = self.frames.next(pfn);
            if self.zones[z].free_area.is_reported(pfn) {
                pfn = next;
                continue;
            }
            if cur.budget < 0 {
                // Out of budget: the rest waits for the next pass.
                self.guest_mut().state = ReportingState::Requested;
                return Cycle::ListDone;
            }
            if cur.sg.len() == PAGE_REPORTING_CAPACITY {
                return Cycle::Full;
            }
            if !self.isolate_free_block(pfn, order as u32) {
                return Cycle::ListDone;
            }
            cur.sg.push((pfn, order as u8));
            pfn = next;
        }
        if cur.sg.len() == PAGE_REPORTING_CAPACITY && cur.budget >= 0 {
            return Cycle::Full;
        }
        Cycle::ListDone
    }

    /// Report the isolated blocks, wait for the ack, and put them back at the tails of their
    /// lists (`page_reporting_drain`).
    fn report_and_drain(&mut self, sg: &[(u32, u8)], report_ns: u64) {
        self.report_to_host(sg, report_ns, true);
        for &(pfn, order) in sg {
            self.putback_isolated(pfn, order as u32, true);
        }
    }

    /// Pages of `blocks`, in bytes.
    pub fn blocks_bytes(blocks: &[(u32, u8)]) -> u64 {
        blocks.iter().map(|&(_, o)| PAGE_SIZE << o).sum()
    }
}

enum Cycle {
    /// The report is full: send it.
    Full,
    /// Nothing more to take from this list in this pass.
    ListDone,
}

/// `[guest.policy] hinting`: how a guest tells its host about free memory (mechanisms.md §D).
/// The variant hears of the guest's allocations and frees, keeps its own state, and uses the
/// primitives of `page_reporting.rs` to isolate, report and put back free blocks.
pub trait FreePageHinting: std::fmt::Debug {
    /// The smallest merged-block order whose frees it wants to hear of (`on_merged`);
    /// `MAX_ORDER`: none. `reporting_order` is the guest's `page_reporting_order`.
    fn merged_min_order(&self, _reporting_order: u32) -> usize {
        super::MAX_ORDER
    }
    /// It keeps `PG_reported` on free blocks (free page reporting).
    fn tracks_reported(&self) -> bool {
        false
    }
    /// The guest has booted and its device is registered (free page reporting asks for a
    /// first pass).
    fn on_start(&mut self, _m: &mut super::Machine) {}
    /// `arch_free_page`: 2^order frames at `pfn` are being freed, before the per-CPU lists and
    /// merging.
    fn on_free(&mut self, _m: &mut super::Machine, _pfn: u32, _order: u32) {}
    /// A free merged into the free block (pfn, order), order >= `merged_min_order`.
    fn on_merged(&mut self, _m: &mut super::Machine, _pfn: u32, _order: u32) {}
    /// `arch_alloc_page`: 2^order frames at `pfn` were handed out.
    fn on_alloc(&mut self, _m: &mut super::Machine, _pfn: u32, _order: u32) {}
    /// Its deferred worker runs once (a kthread, a work item) at `now`.
    fn work(&mut self, _m: &mut super::Machine, _now: u64) -> WorkStep {
        WorkStep::Finished(None)
    }
}
