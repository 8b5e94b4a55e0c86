//! Persistent grants of one ring (mechanisms.md §C.2, §C.5): guest pages blkback keeps mapped
//! between requests, keyed by grant reference. A segment whose gref is in the tree and not in
//! use needs no map; one that is not gets mapped, and kept if the ring is under its cap.
//!
//! 6.1 purges every 100 ms: every idle grant unused for `persistent_grant_unused_seconds`
//! goes; if the tree is over its cap (or at it after an overflow), more idle ones go in gref
//! order until `count - max + max/100*5` are gone. v3.8 never purges: grants live until disconnect.

use std::collections::BTreeMap;

use super::LRU_PERCENT_CLEAN;

/// One persistent grant: the page it is mapped at, whether a request is using it, and when
/// it was last released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PersistentGnt {
    pub page: u32,
    pub active: bool,
    pub last_used: u64,
}

/// The tree (`persistent_gnts`) and its counts.
#[derive(Debug, Clone, Default)]
pub struct PersistentGnts {
    pub tree: BTreeMap<u32, PersistentGnt>,
    /// `persistent_gnt_in_use`.
    pub in_use: u32,
    /// Highest `persistent_gnt_c` seen.
    pub max_seen: u32,
}

impl PersistentGnts {
    /// `persistent_gnt_c`.
    pub fn count(&self) -> u32 {
        self.tree.len() as u32
    }

    /// `get_persistent_gnt`: the page of an idle grant for `gref`, now in use. A grant
    /// already in use (a gref used twice at once) counts as not found.
    pub fn get(&mut self, gref: u32) -> Option<u32> {
        let g = self.tree.get_mut(&gref)?;
        if g.active {
            return None;
        }
        g.active = true;
        self.in_use += 1;
        Some(g.page)
    }

    /// `add_persistent_gnt`: a freshly mapped grant joins the tree, in use.
    pub fn add(&mut self, gref: u32, page: u32) {
        self.tree.insert(
            gref,
            PersistentGnt {
                page,
                active: true,
                last_used: 0,
            },
        );
        self.in_use += 1;
        self.max_seen = self.max_seen.max(self.count());
    }

    /// `put_persistent_gnt`: the request is done with it.
    pub fn put(&mut self, gref: u32, now: u64) {
        if let Some(g) = self.tree.get_mut(&gref) {
            g.active = false;
            g.last_used = now;
            self.in_use -= 1;
        }
    }

    /// `purge_persistent_gnt`: remove idle grants as 6.1 does; returns the pages of the
    /// removed grants (to unmap and give back to the pool). `overflow` is the device's
    /// `overflow_max_grants`, cleared when anything was removed.
    pub fn purge(&mut self, max: u32, unused_ns: u64, now: u64, overflow: &mut bool) -> Vec<u32> {
        let c = self.count();
        // Under the cap (or at it without having overflowed) only the timed-out ones go.
        let num_clean = if c < max || (c == max && !*overflow) {
            0
        } else {
            c.min(c - max + (max / 100) * LRU_PERCENT_CLEAN)
        };
        let mut gone: Vec<u32> = Vec::new();
        // Pass 1: every idle grant unused for long enough.
        if unused_ns > 0 {
            gone.extend(
                self.tree
                    .iter()
                    .filter(|(_, g)| !g.active && now.saturating_sub(g.last_used) >= unused_ns)
                    .map(|(&r, _)| r),
            );
        }
        // Pass 2: more idle grants, in gref order, until enough are gone.
        if (gone.len() as u32) < num_clean {
            let more: Vec<u32> = self
                .tree
                .iter()
                .filter(|(r, g)| !g.active && !gone.contains(r))
                .map(|(&r, _)| r)
                .take((num_clean - gone.len() as u32) as usize)
                .collect();
            gone.extend(more);
        }
        if !gone.is_empty() {
            *overflow = false;
        }
        gone.iter()
            .filter_map(|r| self.tree.remove(r))
            .map(|g| g.page)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(n: u32) -> PersistentGnts {
        let mut p = PersistentGnts::default();
        for r in 0..n {
            p.add(r, r);
            p.put(r, 1_000);
        }
        p
    }

    #[test]
    fn an_overflowed_full_tree_loses_the_excess_plus_fifty_in_gref_order() {
        // 1056 grants at the cap, overflowed: (1056/100)*5 = 50 go, the lowest grefs.
        let mut p = full(1056);
        let mut overflow = true;
        let pages = p.purge(1056, 60_000_000_000, 2_000, &mut overflow);
        assert_eq!(pages.len(), 50);
        assert_eq!(pages[0], 0);
        assert_eq!(pages[49], 49);
        assert!(!overflow);
        assert_eq!(p.count(), 1006);
    }

    #[test]
    fn under_the_cap_or_at_it_without_overflow_only_timed_out_grants_go() {
        let mut p = full(1000);
        let mut overflow = true;
        assert!(p.purge(1056, 0, 5, &mut overflow).is_empty());
        let mut p = full(1056);
        let mut overflow = false;
        assert!(p
            .purge(1056, 60_000_000_000, 5_000, &mut overflow)
            .is_empty());
        // 60 s after their release they have timed out, cap or not.
        assert_eq!(
            p.purge(1056, 60_000_000_000, 60_000_001_000, &mut overflow)
                .len(),
            1056
        );
    }

    #[test]
    fn grants_in_use_are_never_purged_and_idle_ones_time_out() {
        let mut p = full(1056);
        assert_eq!(p.get(3), Some(3));
        assert_eq!(p.get(3), None, "a gref in use twice is not found");
        let mut overflow = true;
        // 61 s after they were released every idle grant has timed out.
        let pages = p.purge(1056, 60_000_000_000, 61_000_001_000, &mut overflow);
        assert_eq!(pages.len(), 1055);
        assert_eq!(p.count(), 1);
        assert!(p.tree[&3].active);
    }
}
