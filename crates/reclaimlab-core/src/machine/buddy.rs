//! The buddy allocator of one zone (core-mm §1.4, §1.6): free lists per order and migratetype,
//! split on allocation, merge on free, migratetype fallback with pageblock stealing.
//!
//! Free blocks are linked through the frames' list links at their head frame, whose state
//! (`Frames::set_buddy_head`) says it is a free head, of which order, on which migratetype's
//! list. Pageblock migratetypes live in a byte per pageblock owned by the node
//! (`pageblock_mt`, indexed by `pfn >> PAGEBLOCK_ORDER`).
//!
//! Order-0 pages reach these lists through the per-CPU page lists (`page_alloc/pcp.rs`), in
//! batches; higher orders come and go directly.

use super::frames::{pg, Frames, List, NIL};
use super::vmstat_drift::FreePagesStat;
use super::watermark::{
    MIGRATE_HIGHATOMIC, MIGRATE_MOVABLE, MIGRATE_RECLAIMABLE, MIGRATE_TYPES, MIGRATE_UNMOVABLE,
};
use super::{MAX_ORDER, PAGEBLOCK_ORDER};

const PAGEBLOCK_PAGES: u32 = 1 << PAGEBLOCK_ORDER;

/// Fallback order per requested migratetype (`fallbacks[]`).
const FALLBACKS: [[usize; 2]; 3] = [
    [MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE],   // UNMOVABLE
    [MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE], // MOVABLE
    [MIGRATE_UNMOVABLE, MIGRATE_MOVABLE],     // RECLAIMABLE
];

#[derive(Debug, Clone)]
pub struct FreeArea {
    /// Zone frame range [start, end); `start` is aligned to 2^(MAX_ORDER-1).
    pub start: u32,
    pub end: u32,
    pub lists: [[List; MIGRATE_TYPES]; MAX_ORDER],
    /// Free blocks per order and migratetype (`free_area[o].nr_free`, split by type).
    pub nr_free: [[u64; MIGRATE_TYPES]; MAX_ORDER],
    /// NR_FREE_PAGES of the zone (pages in buddy blocks), exact.
    pub free_pages: u64,
    /// The same count as the kernel's counters hold it: per-CPU differentials not yet folded
    /// (`[host] vmstat_drift`; `vmstat_drift.rs`).
    pub stat: FreePagesStat,
    /// A fallback steal of a block smaller than a pageblock happened (an external
    /// fragmentation event): the allocator boosts the zone's watermarks and clears this.
    pub fragmentation_event: bool,
    /// A guest's hinting wants to hear of frees that merge into a block of at least this
    /// order (`page_reporting_order` for free page reporting); `MAX_ORDER`: nobody listens.
    pub notify_order: usize,
    /// Such blocks (head, order) since the machine last looked (`page_reporting.rs` drains it).
    pub merged: Vec<(u32, u8)>,
    /// `PG_reported`, one bit per frame of the zone (indexed from `start`): set on a block put
    /// back after a report that did not merge, cleared whenever the block leaves its list.
    /// Empty unless the machine reports free pages.
    reported: Vec<u64>,
    /// Per region of 2^(MAX_ORDER-1) frames (indexed from `start`), the value of `changes`
    /// when a free block in it last joined or left a list. Empty unless a reader asked for it
    /// (`track_changes`): free page hinting's inline scan reads it to skip resolving again a
    /// block head whose region nothing has touched since its last scan.
    region_changed: Vec<u64>,
    /// Free blocks that joined or left a list since `track_changes`.
    changes: u64,
}

#[inline]
fn pageblock_of(pfn: u32) -> usize {
    (pfn >> PAGEBLOCK_ORDER) as usize
}

impl FreeArea {
    pub fn new(start: u32, end: u32) -> FreeArea {
        debug_assert_eq!(start % (1 << (MAX_ORDER - 1)), 0);
        FreeArea {
            start,
            end,
            lists: [[List::default(); MIGRATE_TYPES]; MAX_ORDER],
            nr_free: [[0; MIGRATE_TYPES]; MAX_ORDER],
            free_pages: 0,
            stat: FreePagesStat::default(),
            fragmentation_event: false,
            notify_order: MAX_ORDER,
            merged: Vec::new(),
            reported: Vec::new(),
            region_changed: Vec::new(),
            changes: 0,
        }
    }

    /// Count the changes of each region's free blocks from now on (see `region_changed`).
    pub fn track_changes(&mut self) {
        if self.region_changed.is_empty() {
            let n = (self.end - self.start) as usize;
            self.region_changed = vec![0; n.div_ceil(1 << (MAX_ORDER - 1)).max(1)];
        }
    }

    /// The count of changes so far, for [`FreeArea::unchanged_since`].
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// No free block of `pfn`'s region (the aligned 2^(MAX_ORDER-1) frames around it, all that
    /// [`FreeArea::free_block_of`] reads) joined or left a list since `changes()` was `at`, so
    /// `free_block_of(pfn)` answers as it did then. Needs `track_changes` before `at`.
    #[inline]
    pub fn unchanged_since(&self, pfn: u32, at: u64) -> bool {
        let r = ((pfn - self.start) >> (MAX_ORDER - 1)) as usize;
        self.region_changed.get(r).is_some_and(|&c| c <= at)
    }

    #[inline]
    fn note_change(&mut self, pfn: u32) {
        self.changes += 1;
        let r = ((pfn - self.start) >> (MAX_ORDER - 1)) as usize;
        self.region_changed[r] = self.changes;
    }

    /// Keep `PG_reported` bits for this zone (a guest that reports free pages).
    pub fn track_reported(&mut self) {
        let n = (self.end - self.start) as usize;
        self.reported = vec![0; n.div_ceil(64)];
    }

    /// The free block whose head is `pfn` was reported and has not left its list since.
    #[inline]
    pub fn is_reported(&self, pfn: u32) -> bool {
        let i = (pfn - self.start) as usize;
        self.reported
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Blocks of each order over all migratetypes (`/proc/buddyinfo`).
    pub fn nr_free_total(&self) -> [u64; MAX_ORDER] {
        let mut out = [0; MAX_ORDER];
        for (o, n) in out.iter_mut().enumerate() {
            *n = self.nr_free[o].iter().sum();
        }
        out
    }

    // Always inlined: called once per allocation, split and merge, a call's register saves
    // cost more than the body (issue 33's profile: 16 of del_block's 62 instructions).
    #[inline(always)]
    fn add_block(&mut self, fr: &mut Frames, pfn: u32, order: usize, mt: usize, tail: bool) {
        fr.set_buddy_head(pfn, order, mt);
        if tail {
            self.lists[order][mt].push_tail(fr, pfn);
        } else {
            self.lists[order][mt].push_head(fr, pfn);
        }
        self.nr_free[order][mt] += 1;
        if !self.region_changed.is_empty() {
            self.note_change(pfn);
        }
    }

    #[inline(always)]
    fn del_block(&mut self, fr: &mut Frames, pfn: u32, order: usize, mt: usize) {
        self.lists[order][mt].remove(fr, pfn);
        self.nr_free[order][mt] -= 1;
        fr.clear_buddy_head(pfn);
        if !self.reported.is_empty() {
            self.clear_reported(pfn);
        }
        if !self.region_changed.is_empty() {
            self.note_change(pfn);
        }
    }

    /// Leaving the free list (allocation, merge, isolation) clears PG_reported.
    #[cold]
    #[inline(never)]
    fn clear_reported(&mut self, pfn: u32) {
        let i = (pfn - self.start) as usize;
        self.reported[i / 64] &= !(1 << (i % 64));
    }

    /// The migratetype list a free block head is on (`Frames::buddy_list_mt`).
    #[inline]
    fn list_mt_of(fr: &Frames, pfn: u32) -> usize {
        fr.buddy_list_mt(pfn)
    }

    #[inline]
    fn is_free_head(&self, fr: &Frames, pfn: u32, order: usize) -> bool {
        pfn >= self.start && pfn < self.end && fr.is_buddy_head_of_order(pfn, order)
    }

    /// `__free_one_page`: free a block of 2^order pages at `pfn` and merge it with its buddies,
    /// onto the list of its pageblock's migratetype.
    #[inline]
    pub fn free(&mut self, fr: &mut Frames, pageblock_mt: &[u8], pfn: u32, order: usize) {
        let mt = pageblock_mt[pageblock_of(pfn)] as usize;
        self.free_as(fr, pageblock_mt, pfn, order, mt);
    }

    /// `__free_one_page` onto migratetype `mt`'s list: a page coming back from a per-CPU list
    /// keeps the type it was cached under (its pageblock's type when it was freed, or the type
    /// it was taken for).
    pub fn free_as(
        &mut self,
        fr: &mut Frames,
        pageblock_mt: &[u8],
        pfn: u32,
        order: usize,
        mt: usize,
    ) {
        self.free_pages += 1 << order;
        self.stat.modify(1 << order);
        let mut pfn = pfn;
        let mut order = order;
        while order < MAX_ORDER - 1 {
            let buddy = pfn ^ (1 << order);
            if !self.is_free_head(fr, buddy, order) {
                break;
            }
            if order >= PAGEBLOCK_ORDER as usize {
                let bmt = pageblock_mt[pageblock_of(buddy)] as usize;
                if mt != bmt && (mt >= MIGRATE_HIGHATOMIC || bmt >= MIGRATE_HIGHATOMIC) {
                    break;
                }
            }
            let bl = Self::list_mt_of(fr, buddy);
            self.del_block(fr, buddy, order, bl);
            pfn &= buddy;
            order += 1;
        }
        // Queue at the tail when the next-larger merge is likely, so the block stays unused longer.
        let mut tail = false;
        if order < MAX_ORDER - 2 {
            let combined = pfn & !(1 << order);
            let higher_buddy = combined ^ (1 << (order + 1));
            tail = self.is_free_head(fr, higher_buddy, order + 1);
        }
        self.add_block(fr, pfn, order, mt, tail);
        if order >= self.notify_order {
            self.note_merged(pfn, order);
        }
    }

    #[cold]
    #[inline(never)]
    fn note_merged(&mut self, pfn: u32, order: usize) {
        self.merged.push((pfn, order as u8));
    }

    /// `__putback_isolated_page` after a report (FPI_TO_TAIL | FPI_SKIP_REPORT_NOTIFY): free the
    /// isolated block at the tail of its list, merging as any free does but telling nobody; a
    /// block that did not merge is marked reported. Returns whether it was.
    pub fn putback_reported(
        &mut self,
        fr: &mut Frames,
        pageblock_mt: &[u8],
        pfn: u32,
        order: usize,
    ) -> bool {
        let notify = std::mem::replace(&mut self.notify_order, MAX_ORDER);
        let mt = pageblock_mt[pageblock_of(pfn)] as usize;
        self.free_as(fr, pageblock_mt, pfn, order, mt);
        self.notify_order = notify;
        let unmerged = fr.is_buddy_head_of_order(pfn, order);
        if unmerged {
            let lmt = Self::list_mt_of(fr, pfn);
            // To the tail, where allocations (which take from the head) reach it last.
            self.lists[order][lmt].remove(fr, pfn);
            self.lists[order][lmt].push_tail(fr, pfn);
            if !self.reported.is_empty() {
                let i = (pfn - self.start) as usize;
                self.reported[i / 64] |= 1 << (i % 64);
            }
        }
        unmerged
    }

    /// The free block that holds frame `pfn`, if `pfn` is free in the buddy: (head, order).
    pub fn free_block_of(&self, fr: &Frames, pfn: u32) -> Option<(u32, usize)> {
        // A page in use is in no free block: skip the search over the orders (free page
        // hinting's scans ask this of every page they captured, many of them reused).
        if fr.is_in_use(pfn) {
            return None;
        }
        // A block's own head answers at once (hinting's arrays hold heads, scanned again and
        // again while they stay full); only a frame inside a block needs the search.
        if let Some(o) = fr.buddy_order(pfn) {
            return (pfn >= self.start && pfn < self.end).then_some((pfn, o));
        }
        (1..MAX_ORDER).find_map(|o| {
            let head = pfn & !((1u32 << o) - 1);
            self.is_free_head(fr, head, o).then_some((head, o))
        })
    }

    /// Remove the free block whose head is `pfn` from its list (compaction isolating a free
    /// page); the caller owns its pages afterwards.
    pub fn take_block(&mut self, fr: &mut Frames, pfn: u32) {
        let order = fr
            .buddy_order(pfn)
            .expect("take_block of a free block head");
        let mt = Self::list_mt_of(fr, pfn);
        self.del_block(fr, pfn, order, mt);
        self.free_pages -= 1 << order;
        self.stat.modify(-(1 << order));
    }

    /// Give a range of frames to the allocator at boot, as the largest aligned blocks.
    pub fn free_range(&mut self, fr: &mut Frames, pageblock_mt: &[u8], start: u32, end: u32) {
        let mut pfn = start;
        while pfn < end {
            let mut order = MAX_ORDER - 1;
            while order > 0 && (!pfn.is_multiple_of(1 << order) || pfn + (1 << order) > end) {
                order -= 1;
            }
            self.free(fr, pageblock_mt, pfn, order);
            pfn += 1 << order;
        }
    }

    /// `__rmqueue_smallest`: take the smallest suitable block of `mt` and split it down.
    /// Always inlined: it is the allocator's hot path (issue 33: called out of line it cost
    /// 2.5 % of file-streaming's instructions in the call alone).
    #[inline(always)]
    pub fn rmqueue_smallest(&mut self, fr: &mut Frames, order: usize, mt: usize) -> Option<u32> {
        for o in order..MAX_ORDER {
            let head = self.lists[o][mt].head;
            if head == NIL {
                continue;
            }
            self.del_block(fr, head, o, mt);
            let mut h = o;
            while h > order {
                h -= 1;
                self.add_block(fr, head + (1 << h), h, mt, false);
            }
            self.free_pages -= 1 << order;
            self.stat.modify(-(1 << order));
            return Some(head);
        }
        None
    }

    /// A migration target for compaction's free scanner (`suitable_migration_target`): a free
    /// page out of a free block smaller than a pageblock (a whole free pageblock is what
    /// compaction makes, never a target), of a movable pageblock unless `any_block`
    /// (`ignore_block_suitable`, direct compaction at its last priority). Nothing is stolen:
    /// a target is an isolated free page, not an allocation, so no pageblock changes type.
    pub fn take_migration_target(
        &mut self,
        fr: &mut Frames,
        pageblock_mt: &[u8],
        any_block: bool,
    ) -> Option<u32> {
        for o in 0..PAGEBLOCK_ORDER as usize {
            for &mt in Self::target_lists(any_block) {
                let mut head = self.lists[o][mt].head;
                while head != NIL && !Self::suitable_target(pageblock_mt, head, any_block) {
                    head = fr.next(head);
                }
                if head == NIL {
                    continue;
                }
                self.del_block(fr, head, o, mt);
                let mut h = o;
                while h > 0 {
                    h -= 1;
                    self.add_block(fr, head + (1 << h), h, mt, false);
                }
                self.free_pages -= 1;
                self.stat.modify(-1);
                return Some(head);
            }
        }
        None
    }

    /// Whether compaction finds at least `need` target pages (`take_migration_target`)
    /// outside `[blk, blk + size)`. The walk stops once it has found them: the free lists can
    /// hold tens of thousands of single pages, and a block needs at most a pageblock's worth.
    pub fn has_migration_targets(
        &self,
        fr: &Frames,
        pageblock_mt: &[u8],
        (blk, size): (u32, u32),
        need: u64,
        any_block: bool,
    ) -> bool {
        let mut n = 0u64;
        for o in (0..PAGEBLOCK_ORDER as usize).rev() {
            for &mt in Self::target_lists(any_block) {
                let mut p = self.lists[o][mt].head;
                while p != NIL {
                    if Self::suitable_target(pageblock_mt, p, any_block)
                        && !(blk..blk + size).contains(&p)
                    {
                        n += 1 << o;
                        if n >= need {
                            return true;
                        }
                    }
                    p = fr.next(p);
                }
            }
        }
        n >= need
    }

    /// The free lists compaction takes targets from: the movable ones, or with `any_block`
    /// every list of the per-CPU types (movable first).
    fn target_lists(any_block: bool) -> &'static [usize] {
        if any_block {
            &[MIGRATE_MOVABLE, MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE]
        } else {
            &[MIGRATE_MOVABLE]
        }
    }

    #[inline]
    fn suitable_target(pageblock_mt: &[u8], pfn: u32, any_block: bool) -> bool {
        any_block || pageblock_mt[pageblock_of(pfn)] as usize == MIGRATE_MOVABLE
    }

    /// `__rmqueue`: the requested type first, then steal from a fallback type.
    #[inline]
    pub fn rmqueue(
        &mut self,
        fr: &mut Frames,
        pageblock_mt: &mut [u8],
        order: usize,
        mt: usize,
    ) -> Option<u32> {
        if let Some(p) = self.rmqueue_smallest(fr, order, mt) {
            return Some(p);
        }
        self.rmqueue_steal(fr, pageblock_mt, order, mt)
    }

    /// `rmqueue`'s second half, out of line: the requested list was empty, so steal a block
    /// of a fallback type and take from it.
    #[cold]
    #[inline(never)]
    fn rmqueue_steal(
        &mut self,
        fr: &mut Frames,
        pageblock_mt: &mut [u8],
        order: usize,
        mt: usize,
    ) -> Option<u32> {
        if mt < 3 && self.rmqueue_fallback(fr, pageblock_mt, order, mt) {
            return self.rmqueue_smallest(fr, order, mt);
        }
        None
    }

    /// `__rmqueue_fallback`: steal the largest block of a fallback type (core-mm §1.6).
    /// ALLOC_NOFRAGMENT is not modelled (core-mm §10.2 item 11); a steal below pageblock size
    /// sets `fragmentation_event` for the watermark boost.
    fn rmqueue_fallback(
        &mut self,
        fr: &mut Frames,
        pageblock_mt: &mut [u8],
        order: usize,
        mt: usize,
    ) -> bool {
        let find = |fa: &FreeArea, cur: usize| {
            FALLBACKS[mt]
                .iter()
                .copied()
                .find(|&ft| !fa.lists[cur][ft].is_empty())
        };
        let mut cur = MAX_ORDER - 1;
        loop {
            if let Some(mut ft) = find(self, cur) {
                let can_steal = cur >= PAGEBLOCK_ORDER as usize
                    || cur >= 4
                    || mt == MIGRATE_UNMOVABLE
                    || mt == MIGRATE_RECLAIMABLE;
                if !can_steal && mt == MIGRATE_MOVABLE && cur > order {
                    // Movable requests steal the smallest block instead of breaking up a large one.
                    match (order..=cur).find_map(|o| find(self, o).map(|t| (o, t))) {
                        Some((o, t)) => {
                            cur = o;
                            ft = t;
                        }
                        None => return false,
                    }
                }
                let block = self.lists[cur][ft].head;
                self.steal(fr, pageblock_mt, block, cur, ft, mt, can_steal);
                return true;
            }
            if cur == order {
                return false;
            }
            cur -= 1;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn steal(
        &mut self,
        fr: &mut Frames,
        pageblock_mt: &mut [u8],
        block: u32,
        cur: usize,
        from: usize,
        mt: usize,
        whole: bool,
    ) {
        let pb = pageblock_of(block);
        let move_one = |fa: &mut FreeArea, fr: &mut Frames| {
            fa.del_block(fr, block, cur, from);
            fa.add_block(fr, block, cur, mt, false);
        };
        if pageblock_mt[pb] as usize == MIGRATE_HIGHATOMIC {
            move_one(self, fr);
            return;
        }
        if cur >= PAGEBLOCK_ORDER as usize {
            let n = 1usize << (cur - PAGEBLOCK_ORDER as usize);
            for b in pageblock_mt.iter_mut().skip(pb).take(n) {
                *b = mt as u8;
            }
            move_one(self, fr);
            return;
        }
        // Stealing less than a pageblock mixes types inside one: the zone's watermarks get
        // boosted (`boost_watermark`), whether or not the whole pageblock changes hands.
        self.fragmentation_event = true;
        if !whole {
            move_one(self, fr);
            return;
        }
        // Move every free block of the pageblock to `mt` and count what is free and movable.
        let old_mt = pageblock_mt[pb] as usize;
        let start = (pb as u32) << PAGEBLOCK_ORDER;
        let mut free = 0u32;
        let mut movable = 0u32;
        let mut pfn = start;
        while pfn < start + PAGEBLOCK_PAGES {
            if let Some(o) = fr.buddy_order(pfn) {
                let l = Self::list_mt_of(fr, pfn);
                if l != mt {
                    self.del_block(fr, pfn, o, l);
                    self.add_block(fr, pfn, o, mt, false);
                }
                free += 1 << o;
                pfn += 1 << o;
                continue;
            }
            if fr.test(pfn, pg::LRU) {
                movable += 1;
            }
            pfn += 1;
        }
        let alike = if mt == MIGRATE_MOVABLE {
            movable
        } else if old_mt == MIGRATE_MOVABLE {
            PAGEBLOCK_PAGES - free - movable
        } else {
            0
        };
        if free + alike >= PAGEBLOCK_PAGES / 2 {
            pageblock_mt[pb] = mt as u8;
        }
    }
}

#[cfg(test)]
mod tests;
