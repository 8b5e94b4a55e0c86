//! Hierarchical page counters (`mm/page_counter.c`, memcg-psi spec §1.2, §5.1): the usage,
//! limits and protection of every memory cgroup, in pages.
//!
//! A charge runs up the tree from a cgroup to the root and either lands on every level or on
//! none: the first level whose `max` it would pass counts a failure, the levels below it are
//! given back, and that level is named to the caller (the memcg whose subtree limit reclaim
//! must then shrink). A forced charge takes the same walk without the test, so it may leave a
//! level above its `max`. Each level also reports to its parent how much of its usage its
//! `memory.min` and `memory.low` cover; reclaim reads those sums to share a parent's effective
//! protection among its children in proportion to what each claims and uses
//! (`mem_cgroup_calculate_protection`, with the `memory_recursiveprot` mount option as a
//! switch that hands unclaimed protection down to children that claim none).
//!
//! The counters live in one arena indexed by a small id; a memcg's id is its counter's id, so
//! the arena is also the memcg tree (parent, children in creation order, pre-order walk as
//! `mem_cgroup_iter` visits a subtree). Id 0 is the root, created with the arena. A machine
//! keeps two arenas of the same shape: `memory` and `swap`.
//!
//! Abstracted: the counters are plain integers updated by one thread (the kernel's are atomics
//! raced by many CPUs, so its `failcnt` and `watermark` are approximate under contention; here
//! they are exact). An uncharge below zero, a kernel warning, is clamped at zero and counted
//! in [`PageCounters::underflows`] for the invariant checks to see.

/// `PAGE_COUNTER_MAX`: the largest count a counter holds, `LONG_MAX / PAGE_SIZE` pages
/// (2^51 - 1); a limit at this value reads back as `max`.
pub const PAGE_COUNTER_MAX: u64 = (i64::MAX as u64) / super::PAGE_SIZE;

/// A counter's (and its memcg's) index in its arena.
pub type CounterId = u16;

/// The root counter, created with the arena.
pub const ROOT_COUNTER: CounterId = 0;

/// One level of the hierarchy.
#[derive(Debug, Clone)]
pub struct PageCounter {
    /// Pages charged to this counter and its descendants.
    pub usage: u64,
    /// `memory.max`: charges past it fail.
    pub max: u64,
    /// `memory.high`: stored here, enforced by the memcg code (throttling, not failure).
    pub high: u64,
    /// `memory.min`, `memory.low` as written.
    pub min: u64,
    pub low: u64,
    /// Highest usage ever charged (`memory.peak`); only charges raise it.
    pub watermark: u64,
    /// Charges refused at this level.
    pub failcnt: u64,
    /// Effective protection, written by [`PageCounters::calculate_protection`] during reclaim.
    pub emin: u64,
    pub elow: u64,
    /// What this counter last reported to its parent as protected (min(usage, min/low)).
    min_usage: u64,
    low_usage: u64,
    /// The sum of the children's reports.
    children_min_usage: u64,
    children_low_usage: u64,
    pub parent: Option<CounterId>,
    first_child: Option<CounterId>,
    last_child: Option<CounterId>,
    next_sibling: Option<CounterId>,
}

impl PageCounter {
    /// A new counter: no usage, no limits, no protection (`page_counter_init`).
    fn new(parent: Option<CounterId>) -> PageCounter {
        PageCounter {
            usage: 0,
            max: PAGE_COUNTER_MAX,
            high: PAGE_COUNTER_MAX,
            min: 0,
            low: 0,
            watermark: 0,
            failcnt: 0,
            emin: 0,
            elow: 0,
            min_usage: 0,
            low_usage: 0,
            children_min_usage: 0,
            children_low_usage: 0,
            parent,
            first_child: None,
            last_child: None,
            next_sibling: None,
        }
    }

    /// The sum of the children's protected usage under `memory.min` (`children_min_usage`).
    pub fn children_min_usage(&self) -> u64 {
        self.children_min_usage
    }

    /// The same under `memory.low` (`children_low_usage`).
    pub fn children_low_usage(&self) -> u64 {
        self.children_low_usage
    }
}

/// The arena: every counter of one resource of one machine.
#[derive(Debug, Clone)]
pub struct PageCounters {
    counters: Vec<PageCounter>,
    /// Uncharges that would have taken a counter below zero (clamped; the kernel warns).
    pub underflows: u64,
}

impl Default for PageCounters {
    fn default() -> Self {
        Self::new()
    }
}

/// `effective_protection` (spec §5.1): the share of its parent's effective protection a
/// child gets. `usage`: the child's; `setting`: its `memory.min` or `memory.low`;
/// `siblings`: the parent's sum of its children's protected usage. Integer pages in 64-bit
/// arithmetic as the kernel's: with recursive protection under a parent protected up to
/// `max`, its product wraps as 6.1's does.
pub fn effective_protection(
    usage: u64,
    parent_usage: u64,
    setting: u64,
    parent_effective: u64,
    siblings: u64,
    recursiveprot: bool,
) -> u64 {
    let protected = usage.min(setting);
    // The children together claim more than the parent has: each gets a share in proportion
    // to what it claims and uses.
    if siblings > parent_effective {
        return protected.wrapping_mul(parent_effective) / siblings;
    }
    let mut ep = protected;
    if !recursiveprot {
        return ep;
    }
    // With memory_recursiveprot the protection nobody claimed is spread over the children's
    // unprotected usage.
    if parent_effective > siblings && parent_usage > siblings && usage > protected {
        let unclaimed = (parent_effective - siblings).wrapping_mul(usage - protected)
            / (parent_usage - siblings);
        ep = ep.wrapping_add(unclaimed);
    }
    ep
}

impl PageCounters {
    /// An arena holding only the root counter.
    pub fn new() -> PageCounters {
        PageCounters {
            counters: vec![PageCounter::new(None)],
            underflows: 0,
        }
    }

    /// Add a counter below `parent`; returns its id. Children are kept in creation order.
    pub fn add(&mut self, parent: CounterId) -> Result<CounterId, String> {
        if parent as usize >= self.counters.len() {
            return Err(format!("page counter {parent} does not exist"));
        }
        let id = CounterId::try_from(self.counters.len())
            .map_err(|_| format!("more than {} memory cgroups", CounterId::MAX))?;
        self.counters.push(PageCounter::new(Some(parent)));
        let prev = self.counters[parent as usize].last_child.replace(id);
        match prev {
            Some(last) => self.counters[last as usize].next_sibling = Some(id),
            None => self.counters[parent as usize].first_child = Some(id),
        }
        Ok(id)
    }

    #[inline]
    pub fn get(&self, id: CounterId) -> &PageCounter {
        &self.counters[id as usize]
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.counters.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.counters.is_empty()
    }

    /// The root is the one counter without a parent.
    #[inline]
    pub fn is_root(&self, id: CounterId) -> bool {
        self.counters[id as usize].parent.is_none()
    }

    #[inline]
    pub fn parent(&self, id: CounterId) -> Option<CounterId> {
        self.counters[id as usize].parent
    }

    /// `id` and its ancestors up to the root, nearest first.
    pub fn ancestors(&self, id: CounterId) -> impl Iterator<Item = CounterId> + '_ {
        std::iter::successors(Some(id), move |&c| self.counters[c as usize].parent)
    }

    /// The subtree of `top` in pre-order (a counter before its children, siblings oldest
    /// first), `top` included: the order `mem_cgroup_iter(top, ...)` visits memcgs.
    pub fn preorder(&self, top: CounterId) -> impl Iterator<Item = CounterId> + '_ {
        std::iter::successors(Some(top), move |&c| self.preorder_next(top, c))
    }

    /// The counter after `c` in the pre-order walk of `top`'s subtree (a walk that must not
    /// hold a borrow of the tree between two steps: reclaim's).
    pub fn preorder_next(&self, top: CounterId, c: CounterId) -> Option<CounterId> {
        if let Some(child) = self.counters[c as usize].first_child {
            return Some(child);
        }
        let mut node = c;
        while node != top {
            let n = &self.counters[node as usize];
            if let Some(s) = n.next_sibling {
                return Some(s);
            }
            node = n.parent?;
        }
        None
    }

    /// `propagate_protected_usage`: report to the parent how much of `usage` this counter's
    /// min and low cover. Nothing for the root.
    fn propagate(&mut self, id: CounterId, usage: u64) {
        let c = &self.counters[id as usize];
        let Some(parent) = c.parent else {
            return;
        };
        let (pm, pl) = (usage.min(c.min), usage.min(c.low));
        let (old_m, old_l) = (c.min_usage, c.low_usage);
        if pm != old_m {
            self.counters[id as usize].min_usage = pm;
            let p = &mut self.counters[parent as usize];
            p.children_min_usage += pm;
            p.children_min_usage -= old_m;
        }
        if pl != old_l {
            self.counters[id as usize].low_usage = pl;
            let p = &mut self.counters[parent as usize];
            p.children_low_usage += pl;
            p.children_low_usage -= old_l;
        }
    }

    /// `page_counter_try_charge`: add `n` pages to `id` and every ancestor, unless that takes
    /// one past its `max` (usage may equal max). On failure the levels below the failing one
    /// are given back, the failing one's `failcnt` counts it, and its id is returned.
    pub fn try_charge(&mut self, id: CounterId, n: u64) -> Result<(), CounterId> {
        let mut c = Some(id);
        while let Some(cur) = c {
            let level = &mut self.counters[cur as usize];
            let new = level.usage + n;
            if new > level.max {
                level.failcnt += 1;
                // Give back what the levels below took.
                let mut u = id;
                while u != cur {
                    self.cancel(u, n);
                    u = self.counters[u as usize]
                        .parent
                        .expect("the failing level is an ancestor");
                }
                return Err(cur);
            }
            level.usage = new;
            level.watermark = level.watermark.max(new);
            let parent = level.parent;
            self.propagate(cur, new);
            c = parent;
        }
        Ok(())
    }

    /// `page_counter_charge`: add `n` pages up the tree without testing any `max`.
    pub fn charge(&mut self, id: CounterId, n: u64) {
        let mut c = Some(id);
        while let Some(cur) = c {
            let level = &mut self.counters[cur as usize];
            let new = level.usage + n;
            level.usage = new;
            level.watermark = level.watermark.max(new);
            let parent = level.parent;
            self.propagate(cur, new);
            c = parent;
        }
    }

    /// `page_counter_uncharge`: take `n` pages off `id` and every ancestor.
    pub fn uncharge(&mut self, id: CounterId, n: u64) {
        let mut c = Some(id);
        while let Some(cur) = c {
            self.cancel(cur, n);
            c = self.counters[cur as usize].parent;
        }
    }

    /// `page_counter_cancel`: one level's part of an uncharge.
    fn cancel(&mut self, id: CounterId, n: u64) {
        let level = &mut self.counters[id as usize];
        let new = match level.usage.checked_sub(n) {
            Some(v) => v,
            None => {
                self.underflows += 1;
                0
            }
        };
        level.usage = new;
        self.propagate(id, new);
    }

    /// `memory.max` on cgroup v2: the new limit applies at once, even below the usage (the
    /// write's reclaim, spec §2.3, is the memcg code's).
    pub fn set_max(&mut self, id: CounterId, pages: u64) {
        self.counters[id as usize].max = pages;
    }

    /// `memory.high`.
    pub fn set_high(&mut self, id: CounterId, pages: u64) {
        self.counters[id as usize].high = pages;
    }

    /// `page_counter_set_min`: store, then refresh the protected-usage reports of `id` and
    /// every ancestor.
    pub fn set_min(&mut self, id: CounterId, pages: u64) {
        self.counters[id as usize].min = pages;
        self.propagate_up(id);
    }

    /// `page_counter_set_low`.
    pub fn set_low(&mut self, id: CounterId, pages: u64) {
        self.counters[id as usize].low = pages;
        self.propagate_up(id);
    }

    fn propagate_up(&mut self, id: CounterId) {
        let mut c = Some(id);
        while let Some(cur) = c {
            let usage = self.counters[cur as usize].usage;
            self.propagate(cur, usage);
            c = self.counters[cur as usize].parent;
        }
    }

    /// `mem_cgroup_margin` (v2): pages `id` can still take before its own `max`.
    #[inline]
    pub fn margin(&self, id: CounterId) -> u64 {
        let c = &self.counters[id as usize];
        c.max.saturating_sub(c.usage)
    }

    /// `mem_cgroup_calculate_protection(root, id)`: refresh `emin`/`elow` of `id` for a
    /// reclaim whose target is `root`. Must be called top-down (it reads the parent's fresh
    /// values), as the pre-order walk of reclaim does. The target itself, and a counter with
    /// no usage, keep their previous (stale) values; a direct child of the target gets its
    /// raw settings, not capped by its usage.
    pub fn calculate_protection(&mut self, root: CounterId, id: CounterId, recursiveprot: bool) {
        if id == root {
            return;
        }
        let c = &self.counters[id as usize];
        let usage = c.usage;
        if usage == 0 {
            return;
        }
        let Some(parent) = c.parent else {
            return;
        };
        if parent == root {
            let (min, low) = (c.min, c.low);
            let c = &mut self.counters[id as usize];
            c.emin = min;
            c.elow = low;
            return;
        }
        let p = &self.counters[parent as usize];
        let emin = effective_protection(
            usage,
            p.usage,
            c.min,
            p.emin,
            p.children_min_usage,
            recursiveprot,
        );
        let elow = effective_protection(
            usage,
            p.usage,
            c.low,
            p.elow,
            p.children_low_usage,
            recursiveprot,
        );
        let c = &mut self.counters[id as usize];
        c.emin = emin;
        c.elow = elow;
    }

    /// Effective protection of every counter of `root`'s subtree, in pre-order.
    pub fn calculate_subtree_protection(&mut self, root: CounterId, recursiveprot: bool) {
        let mut c = Some(root);
        while let Some(cur) = c {
            self.calculate_protection(root, cur, recursiveprot);
            c = self.preorder_next(root, cur);
        }
    }

    /// `mem_cgroup_protection(root, id)`: (emin, elow) as reclaim towards `root` uses them in
    /// the scan count; the target itself has none.
    #[inline]
    pub fn protection(&self, root: CounterId, id: CounterId) -> (u64, u64) {
        if id == root {
            return (0, 0);
        }
        let c = &self.counters[id as usize];
        (c.emin, c.elow)
    }

    /// `mem_cgroup_below_min`: never reclaimed, even close to OOM (spec §5.1: the root is
    /// never below; the test reads the values the last calculation left).
    #[inline]
    pub fn below_min(&self, id: CounterId) -> bool {
        let c = &self.counters[id as usize];
        c.parent.is_some() && c.emin >= c.usage
    }

    /// `mem_cgroup_below_low`: reclaimed only in the low-reclaim retry.
    #[inline]
    pub fn below_low(&self, id: CounterId) -> bool {
        let c = &self.counters[id as usize];
        c.parent.is_some() && c.elow >= c.usage
    }
}

#[cfg(test)]
mod tests;
