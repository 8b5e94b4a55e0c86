//! One memory zone: its span, buddy free area, per-CPU page lists, watermarks and reserves
//! (core-mm §1.2, §1.5, §2).

use super::buddy::FreeArea;
use super::layout::ZoneSpan;
use super::watermark::{self, Watermarks, MIGRATE_PCPTYPES};
use super::{MAX_NR_ZONES, ZONE_NAMES};

/// One CPU's page lists of a zone (`struct per_cpu_pages`, core-mm §1.5): free order-0 pages
/// kept back from the buddy lists, one list per migratetype. The page allocator works them
/// (`page_alloc/pcp.rs`); they are declared here, beside the zone, as `mmzone.h` does.
///
/// A list is a ring of frame numbers ([`PcpList`]) rather than a chain through the frames'
/// links: every order-0 page passes through these lists twice per life (refill and hand-out,
/// free and give-back), and a ring costs no load or store in the frames array for either.
#[derive(Debug, Clone)]
pub struct PerCpuPages {
    /// Newest at the front (handed out first), oldest at the back (given back first).
    pub lists: [PcpList; MIGRATE_PCPTYPES],
    /// Pages on all the lists.
    pub count: u32,
    /// Give pages back to the buddy once `count` reaches this (`pcp->high`).
    pub high: u32,
    /// Pages moved to or from the buddy at a time (`pcp->batch`).
    pub batch: u32,
    /// Frees in a row without an allocation double the next give-back (`pcp->free_factor`).
    pub free_factor: u32,
}

impl PerCpuPages {
    /// Empty lists sized for a zone of `managed` pages whose low watermark is `low`, on a node
    /// of `cpus` CPUs (`zone_batchsize`, `zone_highsize`).
    pub fn new(managed: u64, low: u64, cpus: u64) -> PerCpuPages {
        let batch = watermark::pcp_batch(managed);
        let high = watermark::pcp_high(low, cpus, batch);
        PerCpuPages {
            lists: std::array::from_fn(|_| PcpList::default()),
            count: 0,
            high: high as u32,
            batch: batch as u32,
            free_factor: 0,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Zone {
    pub idx: usize,
    pub span: ZoneSpan,
    pub free_area: FreeArea,
    /// `_watermark[]` without boost.
    pub wmark: Watermarks,
    pub watermark_boost: u64,
    /// `lowmem_reserve[j]`: pages this zone keeps back from allocations whose highest_zoneidx is j.
    pub lowmem_reserve: [u64; MAX_NR_ZONES],
    pub nr_reserved_highatomic: u64,
    /// NUMA counters of the zone (single node: every allocation is a local hit).
    pub numa_hit: u64,
    /// Per-CPU page lists, one per CPU of the machine (empty for an unmanaged zone).
    pub pcp: Vec<PerCpuPages>,
    /// `ZONE_RECLAIM_ACTIVE`: kswapd is balancing the node for this zone, so the per-CPU lists
    /// keep at most four batches (`nr_pcp_high`).
    pub reclaim_active: bool,
}

impl Zone {
    pub fn name(&self) -> &'static str {
        ZONE_NAMES[self.idx]
    }
    #[inline]
    pub fn managed(&self) -> u64 {
        self.span.managed
    }
    #[inline]
    pub fn is_managed(&self) -> bool {
        self.span.managed > 0
    }
    #[inline]
    pub fn free_pages(&self) -> u64 {
        self.free_area.free_pages
    }
    /// `zone_page_state(zone, NR_FREE_PAGES)`: the folded counter the allocator's watermark
    /// checks read, off from the exact count by the per-CPU differentials not yet folded
    /// (exact without `[host] vmstat_drift`). Never below 0, as the kernel clamps it.
    #[inline(always)]
    pub fn nr_free_pages_state(&self) -> i64 {
        (self.free_area.free_pages as i64 - self.free_area.stat.pending()).max(0)
    }
    /// The count `zone_watermark_ok_safe` uses: the exact one
    /// (`zone_page_state_snapshot`) when the counter is below the zone's `percpu_drift_mark`.
    #[inline]
    pub fn nr_free_pages_safe(&self) -> i64 {
        let state = self.nr_free_pages_state();
        let mark = self.free_area.stat.drift_mark;
        if mark != 0 && (state as u64) < mark {
            self.free_area.free_pages as i64
        } else {
            state
        }
    }
    #[inline]
    pub fn min_wmark_pages(&self) -> u64 {
        self.wmark.min + self.watermark_boost
    }
    #[inline]
    pub fn low_wmark_pages(&self) -> u64 {
        self.wmark.low + self.watermark_boost
    }
    #[inline]
    pub fn high_wmark_pages(&self) -> u64 {
        self.wmark.high + self.watermark_boost
    }
    /// `wmark_pages(zone, alloc_flags & ALLOC_WMARK_MASK)`.
    #[inline]
    pub fn wmark_pages(&self, which: u32) -> u64 {
        match which {
            watermark::alloc_flags::ALLOC_WMARK_MIN => self.min_wmark_pages(),
            watermark::alloc_flags::ALLOC_WMARK_LOW => self.low_wmark_pages(),
            _ => self.high_wmark_pages(),
        }
    }
}

/// One per-CPU list: frame numbers in a ring whose size is a power of two, doubled when full
/// (a list holds about `high` pages at most, so it stops growing early in a run).
#[derive(Debug, Clone, Default)]
pub struct PcpList {
    buf: Vec<u32>,
    /// Index of the front (newest) entry.
    head: u32,
    len: u32,
}

impl PcpList {
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    fn mask(&self) -> u32 {
        self.buf.len() as u32 - 1
    }
    #[inline]
    fn reserve_one(&mut self) {
        self.reserve(1);
    }
    /// Room for `n` more pages.
    #[inline]
    pub fn reserve(&mut self, n: usize) {
        while self.len as usize + n > self.buf.len() {
            self.grow();
        }
    }
    /// Double the ring (at least 64 entries, one batch), keeping the order.
    #[cold]
    fn grow(&mut self) {
        let mut buf = Vec::with_capacity((self.buf.len() * 2).max(64));
        buf.extend(self.iter());
        buf.resize(buf.capacity(), 0);
        self.buf = buf;
        self.head = 0;
    }
    /// Add the newest page.
    #[inline]
    pub fn push_front(&mut self, pfn: u32) {
        self.reserve_one();
        self.head = self.head.wrapping_sub(1) & self.mask();
        self.buf[self.head as usize] = pfn;
        self.len += 1;
    }
    /// Add a page behind the others (a refill keeps the buddy's order).
    #[inline]
    pub fn push_back(&mut self, pfn: u32) {
        self.reserve_one();
        let i = self.head.wrapping_add(self.len) & self.mask();
        self.buf[i as usize] = pfn;
        self.len += 1;
    }
    /// [`PcpList::push_back`] after a [`PcpList::reserve`] made room.
    #[inline]
    pub fn push_back_reserved(&mut self, pfn: u32) {
        debug_assert!((self.len as usize) < self.buf.len());
        let i = self.head.wrapping_add(self.len) & self.mask();
        self.buf[i as usize] = pfn;
        self.len += 1;
    }
    /// Take the newest page.
    #[inline]
    pub fn pop_front(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let p = self.buf[self.head as usize];
        self.head = self.head.wrapping_add(1) & self.mask();
        self.len -= 1;
        Some(p)
    }
    /// Take the oldest page.
    #[inline]
    pub fn pop_back(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let i = self.head.wrapping_add(self.len) & self.mask();
        Some(self.buf[i as usize])
    }
    /// The newest page.
    pub fn front(&self) -> Option<u32> {
        (self.len > 0).then(|| self.buf[self.head as usize])
    }
    /// Newest to oldest.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len).map(move |k| self.buf[(self.head.wrapping_add(k) & self.mask()) as usize])
    }
    /// Take `pfn` out from anywhere in the list (rare: compaction); whether it was there.
    pub fn remove(&mut self, pfn: u32) -> bool {
        let Some(k) = self.iter().position(|p| p == pfn) else {
            return false;
        };
        let rest: Vec<u32> = self.iter().skip(k + 1).collect();
        self.len = k as u32;
        for p in rest {
            self.push_back(p);
        }
        true
    }
}

/// Why a reclaimer sleeps on the node's wait queue (`enum vmscan_throttle_state`, declared
/// with the node in `mmzone.h`; the throttle itself is `vmscan::throttle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottleReason {
    /// kswapd met pages it had already marked for immediate reclaim still under writeback.
    Writeback,
    /// Direct reclaim at priority 1 reclaimed nothing.
    Noprogress,
    /// Direct reclaim on a node whose dirty pages are all congested.
    Congested,
}

impl ThrottleReason {
    /// The name `mm_vmscan_throttled` prints.
    pub fn name(self) -> &'static str {
        match self {
            ThrottleReason::Writeback => "VMSCAN_THROTTLE_WRITEBACK",
            ThrottleReason::Noprogress => "VMSCAN_THROTTLE_NOPROGRESS",
            ThrottleReason::Congested => "VMSCAN_THROTTLE_CONGESTED",
        }
    }

    /// The sleep's upper bound in jiffies ("pulled out of thin air", the kernel says).
    pub fn timeout_jiffies(self) -> u64 {
        match self {
            ThrottleReason::Writeback => super::HZ / 10,
            ThrottleReason::Noprogress | ThrottleReason::Congested => 1,
        }
    }
}
