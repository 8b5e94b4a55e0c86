//! One memory zone: its span, buddy free area, watermarks and reserves (core-mm §1.2, §2).

use super::buddy::FreeArea;
use super::layout::ZoneSpan;
use super::watermark::{self, Watermarks};
use super::{MAX_NR_ZONES, ZONE_NAMES};

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
