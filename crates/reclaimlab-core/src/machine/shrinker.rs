//! Slab shrinkers (`shrink_slab`, `do_shrink_slab` in 6.1's `mm/vmscan.c`; mechanisms §A.0,
//! core-mm §6): the contract between reclaim and a cache of kernel objects, and the walk over
//! the registered shrinkers that every `shrink_node` pass and `drop_caches` make.
//!
//! How much a shrinker scans, and what happens to the work a caller could not do (the
//! `nr_deferred` backlog), is the debated part (seed 002): it is the `[policy] shrinker` switch,
//! the [`ShrinkerDeferral`] trait below, with one variant per file in `policy/shrinker/`. The
//! pieces every variant shares (the `delta` formula, the batch loop, the return conventions)
//! are here, so the variants differ only where the kernels did.
//!
//! With memory cgroups, `shrink_slab` runs per memcg (6.1's `shrink_node_memcgs` calls it after
//! each memcg's lruvec): for the root every registered shrinker, with `sc.memcg` the root; for
//! another memcg only the memcg-aware shrinkers whose bit in the memcg's shrinker map is set
//! (`shrink_slab_memcg`: the memcg has had objects on the shrinker's lists since the shrinker
//! last found it empty), each with the memcg's own `nr_deferred` (mechanisms §A.3: per (memcg,
//! node) for a memcg-aware shrinker; the root's is the shrinker's own slot here, as the root
//! memcg's `shrinker_info` would be).

use super::gfp::{Gfp, __GFP_FS, GFP_KERNEL};
use super::page_counter::{CounterId, ROOT_COUNTER};
pub use super::tracepoint::TraceStyle;
use super::tracepoint::{ShrinkSlabTrace, Tracepoint};
use super::vmstat::VmEvent;
use super::Machine;

/// `SHRINK_BATCH`: objects per `scan_objects` call when a shrinker sets no batch.
pub const SHRINK_BATCH: u64 = 128;
/// `DEFAULT_SEEKS`: the cost of recreating an object, relative to a page (2 = two seeks).
pub const DEFAULT_SEEKS: u64 = 2;
/// `count_objects`: "there are no objects" (`ULONG_MAX - 1`).
pub const SHRINK_EMPTY: u64 = u64::MAX - 1;
/// `scan_objects`: "cannot make progress in this context" (`ULONG_MAX`).
pub const SHRINK_STOP: u64 = u64::MAX;

/// `struct shrink_control`: the per-call context a shrinker is given.
#[derive(Debug, Clone, Copy)]
pub struct ShrinkControl {
    pub gfp: Gfp,
    /// Node being reclaimed (one-node machines: 0).
    pub nid: usize,
    /// Priority of the reclaim pass calling (0 for drop_caches).
    pub priority: i32,
    /// The caller is kswapd (`current_is_kswapd()`).
    pub kswapd: bool,
    /// Objects to scan in this `scan_objects` call (set by the caller).
    pub nr_to_scan: u64,
    /// Preset to `nr_to_scan`; a shrinker that looked at fewer lowers it.
    pub nr_scanned: u64,
    /// Set by a `count_objects` that already knows it cannot scan (the seed 002 patch's
    /// `sc->will_defer`, read only by the `chinner` variant).
    pub will_defer: bool,
    /// The caller's clock when this shrinker's call began (a shrinker that sleeps or charges
    /// time adds to `Machine::shrink_cost_ns` from here).
    pub clock: u64,
    /// The memcg whose objects to count and scan (`sc->memcg`; the root: the objects charged
    /// to no memcg, every object of a machine without cgroups).
    pub memcg: CounterId,
}

impl ShrinkControl {
    pub fn new(gfp: Gfp, priority: i32, kswapd: bool) -> ShrinkControl {
        ShrinkControl {
            gfp,
            nid: 0,
            priority,
            kswapd,
            nr_to_scan: 0,
            nr_scanned: 0,
            will_defer: false,
            clock: 0,
            memcg: ROOT_COUNTER,
        }
    }

    /// The caller may recurse into the filesystem (`__GFP_FS`).
    pub fn may_enter_fs(&self) -> bool {
        self.gfp & __GFP_FS != 0
    }
}

/// A cache as a deferral variant sees it: the two callbacks of `struct shrinker`.
pub trait Shrinkable {
    /// `count_objects`: freeable objects, or 0 ("skip this time"), or [`SHRINK_EMPTY`].
    fn count_objects(&mut self, sc: &mut ShrinkControl) -> u64;
    /// `scan_objects`: scan `sc.nr_to_scan` objects, return the number freed or
    /// [`SHRINK_STOP`].
    fn scan_objects(&mut self, sc: &mut ShrinkControl) -> u64;
}

/// A shrinker's deferred-work state (`nr_deferred[nid]`; one node) plus the small-cache
/// remainder of the `legacy_rik` variant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Deferred {
    pub nr_deferred: u64,
    /// A.1r's `small_scan` accumulator (0 for every other variant).
    pub small_scan: u64,
}

/// The per-call parameters of a registered shrinker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShrinkerParams {
    /// Objects per `scan_objects` call (`shrinker->batch`, 0 → [`SHRINK_BATCH`]).
    pub batch: u64,
    pub seeks: u64,
}

impl ShrinkerParams {
    pub fn batch_size(&self) -> u64 {
        if self.batch == 0 {
            SHRINK_BATCH
        } else {
            self.batch
        }
    }
}

/// What one `do_shrink_slab` call did, in the terms of its trace events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShrinkOutcome {
    /// `count_objects`' answer (0 or [`SHRINK_EMPTY`]: nothing else happened).
    pub freeable: u64,
    /// Deferred work this call took (`nr`; `dcount` under chinner).
    pub nr: u64,
    /// This call's own share (`delta`).
    pub delta: u64,
    /// Objects it planned to scan (`total_scan` / `scan_count` as the start event prints it).
    pub planned: u64,
    /// Objects scanned (sum of `nr_scanned` over the batches that ran).
    pub scanned: u64,
    /// `scan_objects` calls that returned a count (not SHRINK_STOP).
    pub batches: u64,
    /// Objects freed.
    pub freed: u64,
    /// Planned work left unscanned when the loop ended.
    pub remaining: u64,
    /// `nr_deferred` after the call.
    pub new_nr: u64,
    /// `scan_objects` returned SHRINK_STOP (or chinner's `will_defer` skipped the loop).
    pub stopped: bool,
}

impl ShrinkOutcome {
    /// `count_objects` said "skip" or "empty": the call returns at once.
    pub fn counted_nothing(freeable: u64) -> ShrinkOutcome {
        ShrinkOutcome {
            freeable,
            ..Default::default()
        }
    }

    /// Whether the call got past `count_objects`.
    pub fn ran(&self) -> bool {
        self.freeable != 0 && self.freeable != SHRINK_EMPTY
    }
}

/// `[policy] shrinker`: `do_shrink_slab`, how much one call scans and what becomes of the work
/// it does not do (mechanisms §A.1-§A.3).
pub trait ShrinkerDeferral: std::fmt::Debug {
    fn do_shrink_slab(
        &self,
        cache: &mut dyn Shrinkable,
        deferred: &mut Deferred,
        p: ShrinkerParams,
        sc: &mut ShrinkControl,
    ) -> ShrinkOutcome;
    /// The format of its trace events.
    fn trace_style(&self) -> TraceStyle {
        TraceStyle::V61
    }
}

/// The pressure a call puts on a cache of `freeable` objects at `priority`, before any
/// deferred work: `(freeable >> priority) * 4 / seeks`, or half the cache for a zero-seek
/// shrinker (v4.20+). Exact integer arithmetic (seed 002's 1,800,000 at 12 gives 878).
pub fn delta(freeable: u64, priority: i32, seeks: u64) -> u64 {
    // seeks == 0 (no division) is the zero-seek rule.
    ((freeable >> priority) * 4)
        .checked_div(seeks)
        .unwrap_or(freeable / 2)
}

/// What the batch loop did.
#[derive(Debug, Clone, Copy, Default)]
pub struct BatchLoop {
    pub scanned: u64,
    pub freed: u64,
    pub batches: u64,
    /// Work left when the loop ended.
    pub left: u64,
    pub stopped: bool,
}

/// The batch loop every variant shares: while at least a batch is left, or the work covers
/// the whole cache (a small cache is still scanned at high pressure), call `scan_objects` on
/// `min(batch, left)` objects; stop at SHRINK_STOP.
pub fn batch_loop(
    cache: &mut dyn Shrinkable,
    sc: &mut ShrinkControl,
    mut total: u64,
    batch: u64,
    freeable: u64,
) -> BatchLoop {
    let mut out = BatchLoop::default();
    while total >= batch || total >= freeable {
        let n = batch.min(total);
        if n == 0 {
            break;
        }
        sc.nr_to_scan = n;
        sc.nr_scanned = n;
        let ret = cache.scan_objects(sc);
        if ret == SHRINK_STOP {
            out.stopped = true;
            break;
        }
        out.freed += ret;
        out.batches += 1;
        // A shrinker that looked at fewer objects says so; it never reports more.
        let done = sc.nr_scanned.min(n);
        total -= done;
        out.scanned += done;
        if done == 0 {
            // Nothing looked at: another round would see the same (a cache that emptied).
            break;
        }
    }
    out.left = total;
    out
}

/// A filesystem-like cache of a fixed number of freeable objects, as in the seed 002
/// arithmetic: every scan frees what it was asked to (the count does not move), and a caller
/// without `__GFP_FS` gets SHRINK_STOP (and `will_defer` from the count, which only the
/// `chinner` variant reads). The worked examples (mechanisms §A.4) and the reproduction's
/// exact checks run the variants against it.
#[derive(Debug, Clone, Copy)]
pub struct FixedCache {
    pub freeable: u64,
    /// `scan_objects` calls that returned a count.
    pub scan_calls: u64,
}

impl FixedCache {
    pub fn new(freeable: u64) -> FixedCache {
        FixedCache {
            freeable,
            scan_calls: 0,
        }
    }
}

impl Shrinkable for FixedCache {
    fn count_objects(&mut self, sc: &mut ShrinkControl) -> u64 {
        if !sc.may_enter_fs() {
            sc.will_defer = true;
        }
        if self.freeable == 0 {
            SHRINK_EMPTY
        } else {
            self.freeable
        }
    }
    fn scan_objects(&mut self, sc: &mut ShrinkControl) -> u64 {
        if !sc.may_enter_fs() {
            return SHRINK_STOP;
        }
        self.scan_calls += 1;
        sc.nr_to_scan
    }
}

// ---------------------------------------------------------------- registered shrinkers

/// A cache reclaim can shrink, as the machine holds it: `count_objects`/`scan_objects` get
/// the machine, since the objects (and the pages they sit in) are part of it.
pub trait ShrinkerOps: std::fmt::Debug {
    /// The `scan_objects` function's symbol, as `%pS` prints it in trace events
    /// (`super_cache_scan+0x0/0x1a0`).
    fn scan_symbol(&self) -> &'static str;
    fn count_objects(&mut self, m: &mut Machine, sc: &mut ShrinkControl) -> u64;
    fn scan_objects(&mut self, m: &mut Machine, sc: &mut ShrinkControl) -> u64;
    /// `SHRINKER_MEMCG_AWARE`: its objects are on per-memcg lists and `sc.memcg` selects one.
    fn memcg_aware(&self) -> bool {
        false
    }
    /// Memcg `memcg`'s bit in its shrinker map (set when one of its lists gained a first
    /// object). Only a memcg-aware shrinker has one.
    fn memcg_bit(&self, _m: &Machine, _memcg: CounterId) -> bool {
        false
    }
    /// Clear it (the shrinker reported the memcg empty).
    fn clear_memcg_bit(&mut self, _m: &mut Machine, _memcg: CounterId) {}
}

/// `struct shrinker` as registered (`register_shrinker`): name (for debugfs), parameters,
/// deferred work, the cache, and the per-shrinker totals 6.1's shrinker debugfs reports.
#[derive(Debug)]
pub struct Shrinker {
    pub name: String,
    /// Registration number (debugfs `<name>-<id>`).
    pub id: usize,
    pub params: ShrinkerParams,
    /// The root memcg's deferred work (every caller's without cgroups).
    pub deferred: Deferred,
    /// Each other memcg's, by memcg id (a memcg-aware shrinker's only; slot 0 unused).
    pub memcg_deferred: Vec<Deferred>,
    pub ops: Box<dyn ShrinkerOps>,
    pub stats: ShrinkerStats,
}

/// Per-shrinker totals over the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShrinkerStats {
    /// `do_shrink_slab` calls (count_objects calls).
    pub calls: u64,
    pub scanned: u64,
    pub freed: u64,
    /// Calls whose scan stopped on SHRINK_STOP (or deferred everything).
    pub stopped: u64,
    /// Largest `nr_deferred` seen after a call.
    pub max_deferred: u64,
    /// Deferred work taken by kswapd and by other callers (who ends up doing the backlog).
    pub taken_kswapd: u64,
    pub taken_direct: u64,
    /// Calls by other callers than kswapd, and the largest scan one of them planned.
    pub direct_calls: u64,
    pub max_direct_planned: u64,
}

/// The machine's registered shrinkers, in registration order.
#[derive(Debug, Default)]
pub struct Shrinkers {
    pub list: Vec<Shrinker>,
}

impl Shrinkers {
    pub fn register(&mut self, name: &str, params: ShrinkerParams, ops: Box<dyn ShrinkerOps>) {
        let id = self.list.len();
        self.list.push(Shrinker {
            name: name.to_string(),
            id,
            params,
            deferred: Deferred::default(),
            memcg_deferred: Vec::new(),
            ops,
            stats: ShrinkerStats::default(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// A registered shrinker's callbacks bound to the machine for one call.
struct Bound<'a> {
    ops: &'a mut dyn ShrinkerOps,
    m: &'a mut Machine,
}

impl Shrinkable for Bound<'_> {
    fn count_objects(&mut self, sc: &mut ShrinkControl) -> u64 {
        self.ops.count_objects(self.m, sc)
    }
    fn scan_objects(&mut self, sc: &mut ShrinkControl) -> u64 {
        self.ops.scan_objects(self.m, sc)
    }
}

impl Shrinker {
    /// The deferred work of this shrinker for memcg `memcg`'s calls.
    pub fn deferred_of(&mut self, memcg: CounterId) -> &mut Deferred {
        if memcg == ROOT_COUNTER || !self.ops.memcg_aware() {
            return &mut self.deferred;
        }
        let i = memcg as usize;
        if self.memcg_deferred.len() <= i {
            self.memcg_deferred.resize(i + 1, Deferred::default());
        }
        &mut self.memcg_deferred[i]
    }
}

impl Machine {
    /// `shrink_slab(gfp, nid, memcg, priority)`: for the root memcg every registered shrinker
    /// in registration order; for another (`shrink_slab_memcg`) the memcg-aware ones whose
    /// bit is set in its shrinker map, a shrinker that finds the memcg empty clearing it. Each
    /// runs under the `[policy] shrinker` variant with the memcg's `nr_deferred`. Returns the
    /// objects freed (pages freed by emptied slabs go to `reclaimed_slab`). `at` is the
    /// caller's clock (for trace timestamps).
    pub fn shrink_slab(
        &mut self,
        gfp: Gfp,
        memcg: CounterId,
        priority: i32,
        kswapd: bool,
        at: u64,
    ) -> u64 {
        if self.shrinkers.is_empty() {
            return 0;
        }
        // The list leaves the machine while its callbacks run on it (they free pages, count
        // vmstat events, may charge time); nothing registers a shrinker meanwhile.
        let mut list = std::mem::take(&mut self.shrinkers.list);
        let mut freed = 0u64;
        let policy = self.policy.shrinker.clone();
        let style = policy.trace_style();
        for s in list.iter_mut() {
            if memcg != ROOT_COUNTER && !(s.ops.memcg_aware() && s.ops.memcg_bit(self, memcg)) {
                continue;
            }
            let mut sc = ShrinkControl::new(gfp, priority, kswapd);
            sc.clock = at;
            sc.memcg = memcg;
            let params = s.params;
            let mut deferred = *s.deferred_of(memcg);
            let out = {
                let mut b = Bound {
                    ops: s.ops.as_mut(),
                    m: self,
                };
                policy.do_shrink_slab(&mut b, &mut deferred, params, &mut sc)
            };
            *s.deferred_of(memcg) = deferred;
            if memcg != ROOT_COUNTER && out.freeable == SHRINK_EMPTY {
                // Nothing of the memcg's left: off the map until its lists gain an object.
                s.ops.clear_memcg_bit(self, memcg);
            }
            if !out.ran() {
                continue;
            }
            s.stats.calls += 1;
            s.stats.scanned += out.scanned;
            s.stats.freed += out.freed;
            s.stats.stopped += out.stopped as u64;
            s.stats.max_deferred = s.stats.max_deferred.max(out.new_nr);
            if kswapd {
                s.stats.taken_kswapd += out.nr;
            } else {
                s.stats.taken_direct += out.nr;
                s.stats.direct_calls += 1;
                s.stats.max_direct_planned = s.stats.max_direct_planned.max(out.planned);
            }
            self.vm.add(VmEvent::SlabsScanned, out.scanned);
            freed += out.freed;
            if self.tracepoints.enabled {
                let symbol = s.ops.scan_symbol();
                let id = s.id;
                let out = ShrinkSlabTrace {
                    nr: out.nr,
                    freeable: out.freeable,
                    delta: out.delta,
                    total_scan: out.planned,
                    remaining: out.remaining,
                    freed: out.freed,
                    new_nr: out.new_nr,
                };
                let start = Tracepoint::ShrinkSlabStart {
                    symbol,
                    id,
                    gfp,
                    priority,
                    out,
                    style,
                };
                self.tracepoints.buf.push((at, start));
                let end = Tracepoint::ShrinkSlabEnd {
                    symbol,
                    id,
                    out,
                    style,
                };
                self.tracepoints.buf.push((at, end));
            }
        }
        self.shrinkers.list = list;
        freed
    }

    /// `shrink_slab` for memcg `memcg` as one `shrink_node` pass calls it: on the pass's
    /// clock, with its gfp and priority; the CPU time the shrinkers charged and the pages they
    /// freed go to the pass.
    pub fn shrink_slab_in_pass(&mut self, sc: &mut super::vmscan::ScanControl, memcg: CounterId) {
        let at = self.now + sc.cost_ns;
        self.shrink_cost_ns = 0;
        self.shrink_sleep_ns = 0;
        self.reclaimed_slab = 0;
        self.shrink_slab(sc.gfp, memcg, sc.priority, sc.kswapd, at);
        sc.cost_ns += std::mem::take(&mut self.shrink_cost_ns);
        sc.sleep_ns += std::mem::take(&mut self.shrink_sleep_ns);
        sc.nr_reclaimed += std::mem::take(&mut self.reclaimed_slab);
    }

    /// `drop_slab()` (`echo 2 > /proc/sys/vm/drop_caches`): a round calls `shrink_slab(GFP_KERNEL,
    /// priority 0)` for every memcg in pre-order (the root only without cgroups); rounds repeat
    /// while the objects freed in a round, shifted right by the round number, is more than 1.
    /// Counts `drop_slab`. Returns the objects freed.
    /// The time the shrinkers took is left in `shrink_cost_ns` / `shrink_sleep_ns` for the
    /// caller.
    pub fn drop_slab(&mut self, at: u64) -> u64 {
        self.vm.add(VmEvent::DropSlab, 1);
        self.shrink_cost_ns = 0;
        self.shrink_sleep_ns = 0;
        let mut total = 0u64;
        let mut shift = 0u32;
        let memcgs: Vec<CounterId> = match &self.memcg {
            None => vec![ROOT_COUNTER],
            Some(mc) => mc.memory.preorder(ROOT_COUNTER).collect(),
        };
        loop {
            let mut freed = 0;
            for &m in &memcgs {
                freed += self.shrink_slab(GFP_KERNEL, m, 0, false, at);
            }
            total += freed;
            let more = freed.checked_shr(shift).unwrap_or(0) > 1;
            shift += 1;
            if !more {
                break;
            }
        }
        total
    }
}
