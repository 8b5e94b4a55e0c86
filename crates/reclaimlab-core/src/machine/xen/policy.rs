//! The policy switches Xen's blkback consults (`[policy] blkback_pool`, `blkback_grants`,
//! `blkback_backing`), beside the driver state they act on; the variants, one file each, live
//! in `crate::policy::blkback_*/`.

/// `[policy] blkback_pool`: how big each blkback ring's page pool may stay, and what dom0's
/// memory pressure does to it (mechanisms.md §B.4).
pub trait BlkbackPool: std::fmt::Debug {
    /// B0: no per-ring pool; a global array of `reqs` requests of 11 pages, allocated at
    /// module init, limits requests in flight across every device.
    fn fixed_array(&self) -> bool {
        false
    }
    /// The shrinker it registers as a pressure detector (`count_objects` only), by name.
    fn shrinker(&self) -> Option<&'static str> {
        None
    }
    /// Its shrinker was counted: the squeeze lasts until `until` (ns, on a jiffy).
    fn on_pressure(&self, _x: &mut super::XenBackend, _until: u64) {}
    /// The pool size a ring's housekeeping shrinks to at jiffy time `now`, given the
    /// module-global (B2) and the device's (B3) squeeze deadlines.
    fn target(&self, max_buffer_pages: u64, _now: u64, _module_end: u64, _device_end: u64) -> u64 {
        max_buffer_pages
    }
}

/// `[policy] blkback_grants`: persistent grants in blkback (mechanisms.md §C).
pub trait PersistentGrants: std::fmt::Debug {
    /// The backend offers them at all.
    fn enabled(&self) -> bool {
        true
    }
    /// Grants a ring keeps mapped.
    fn max_grants(&self, params: &super::BlkbackParams) -> u32;
    /// The 100 ms purge runs.
    fn purges(&self) -> bool {
        false
    }
}

/// `[policy] blkback_backing`: where a pool page comes from (mechanisms.md §B.2).
pub trait GnttabBacking: std::fmt::Debug {
    /// Take a page for the pool: a dom0 frame (balloon) or `NO_FRAME`; may reclaim in dom0.
    fn alloc(
        &self,
        m: &mut super::super::Machine,
        t: &mut super::super::memory::TaskCtx,
    ) -> Result<u32, super::super::memory::Access>;
    /// Give a pool page back at `now`; returns when the balloon worker must run, if later.
    fn free(&self, m: &mut super::super::Machine, page: u32, now: u64) -> Option<u64>;
}
