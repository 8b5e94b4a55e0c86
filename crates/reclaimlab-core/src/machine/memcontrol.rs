//! The memory controller of cgroup v2 (`mm/memcontrol.c`, docs/design/memcg-psi.md §2-§7):
//! for now its self-contained arithmetic, as functions of plain values and of the page
//! counter tree (`page_counter.rs`; a memcg's id is its counter's id).
//!
//! - The interface files' values: bytes written (a `memparse` number with an optional K..E
//!   suffix, or `max`), pages inside, bytes or `max` read back (§2, §2.6).
//! - The charge's first steps: a 64-page batch, then exactly the pages asked for before any
//!   reclaim, and the memcg whose limit refused it (§3.2 steps 2-3, §3.3); the event counts
//!   of `memory.events`, hierarchical and local (§7.2).
//! - Swap: the slots a memcg may still take under the `memory.swap.max` of its chain, and
//!   the half-full test that makes a swap-in give its slot back (§3.1, §3.6).
//! - `memory.high`: the relative overage in 20-bit fixed point, the penalty that grows with
//!   its square, scaled to the task's debt and capped at 2 s, in whole jiffies of the
//!   machine's HZ (§4.3, §4.4), and the loop that decides between more reclaim and the sleep
//!   on return to user space (§4.2), with reclaim and the overages handed in by the caller.
//! - Protection in `get_scan_count`: a list's scan target shrinks with the memcg's effective
//!   protection relative to its size (§5.3, §5.4).
//! - The keys of `memory.stat` in 6.1's printed order (§7.1), as data.
//!
//! Abstracted here: nothing yet runs reclaim, keeps the per-CPU charge stock or puts a task
//! to sleep; the callers (the wiring step) do, and hand in what these functions need. Where
//! the kernel's arithmetic is 64-bit and can wrap (the penalty's square once usage is some
//! 260 times `memory.high` at HZ = 250, as with a `memory.high` near 0), it wraps here too. Writes the kernel reads
//! oddly are refused instead: a value with no digits (the kernel takes it as 0) or one past
//! 2^64 bytes (the kernel wraps it).

pub mod charge;
pub mod kmem;
pub mod mem_cgroup;
pub mod writes;

use super::page_counter::{CounterId, PageCounters, PAGE_COUNTER_MAX};
use super::watermark::SWAP_CLUSTER_MAX;
use super::PAGE_SIZE;

/// `MEMCG_CHARGE_BATCH`: pages a charge takes from the counters at once (the surplus goes
/// to the CPU's stock); also the unit of the `memory.high` debt.
pub const MEMCG_CHARGE_BATCH: u64 = 64;
/// Reclaim passes a charge (or the over-high loop) makes without progress before giving up.
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// The overage's fixed point: 2^20 is 100 % over `memory.high`.
pub const MEMCG_DELAY_PRECISION_SHIFT: u32 = 20;
/// Scales the squared overage down to jiffies.
pub const MEMCG_DELAY_SCALING_SHIFT: u32 = 14;

// ------------------------------------------------------------------ interface files (§2)

/// White space as the kernel's `strstrip` sees it.
fn strip(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r'))
}

/// `simple_strtoull(s, &end, 0)`: the number at the start of `s` (hexadecimal after `0x`,
/// octal after a leading `0`, else decimal) and the text after it. `None` when there is no
/// digit or the number does not fit 64 bits.
fn strtoull_base0(s: &str) -> Option<(u64, &str)> {
    let b = s.as_bytes();
    let (radix, start) =
        if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' && b[2].is_ascii_hexdigit() {
            (16, 2)
        } else if b.first() == Some(&b'0') {
            (8, 0)
        } else {
            (10, 0)
        };
    let digits = s[start..]
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(s.len() - start);
    if digits == 0 {
        return None;
    }
    let v = u64::from_str_radix(&s[start..start + digits], radix).ok()?;
    Some((v, &s[start + digits..]))
}

/// `memparse`: a number with an optional binary suffix (K, M, G, T, P, E, either case) and
/// the text after it. `None` as for [`strtoull_base0`], or when the suffix overflows 64 bits.
fn memparse(s: &str) -> Option<(u64, &str)> {
    let (v, rest) = strtoull_base0(s)?;
    let shift = match rest.as_bytes().first().map(u8::to_ascii_uppercase) {
        Some(b'K') => 10,
        Some(b'M') => 20,
        Some(b'G') => 30,
        Some(b'T') => 40,
        Some(b'P') => 50,
        Some(b'E') => 60,
        _ => return Some((v, rest)),
    };
    if v.leading_zeros() < shift {
        return None;
    }
    Some((v << shift, &rest[1..]))
}

/// A write to `memory.max`, `memory.high`, `memory.low`, `memory.min` or a swap limit
/// (`page_counter_memparse`): `max`, or bytes turned into pages by truncating division and
/// capped at [`PAGE_COUNTER_MAX`]. `file` names the knob in the error.
pub fn parse_memory_knob(file: &str, text: &str) -> Result<u64, String> {
    let s = strip(text);
    if s == "max" {
        return Ok(PAGE_COUNTER_MAX);
    }
    match memparse(s) {
        Some((bytes, "")) => Ok((bytes / PAGE_SIZE).min(PAGE_COUNTER_MAX)),
        _ => Err(format!(
            "{file} = {text:?}: not a byte count (the kernel answers EINVAL); write a number \
             of bytes, with an optional K, M, G, T, P or E suffix and nothing after it, or \"max\""
        )),
    }
}

/// How a memory knob reads back (`seq_puts_memcg_tunable`): `max` at [`PAGE_COUNTER_MAX`],
/// else its bytes; one line.
pub fn show_memory_knob(pages: u64) -> String {
    if pages == PAGE_COUNTER_MAX {
        "max\n".to_string()
    } else {
        format!("{}\n", pages * PAGE_SIZE)
    }
}

/// A write to `memory.oom.group` (`kstrtoint`, base 0): 0 or 1, else EINVAL.
pub fn parse_oom_group(text: &str) -> Result<bool, String> {
    let s = strip(text);
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    match strtoull_base0(digits) {
        Some((0, "")) => Ok(false),
        Some((1, "")) if !neg => Ok(true),
        _ => Err(format!(
            "memory.oom.group = {text:?}: must be 0 or 1 (the kernel answers EINVAL)"
        )),
    }
}

// ------------------------------------------------------------------ charging (§3.2, §3.3)

/// The pages a charge of `n` first asks the counters for: a whole batch, the surplus going to
/// the CPU's stock.
#[inline]
pub fn charge_batch(n: u64) -> u64 {
    n.max(MEMCG_CHARGE_BATCH)
}

/// Steps 2 and 3 of `try_charge_memcg`: charge `*batch` pages (start it at
/// [`charge_batch`]) to memcg `id` and its ancestors; if a level refuses and the batch is
/// larger than the `n` pages needed, shrink it to `n` and try once more before any reclaim.
/// The caller keeps `*batch` across its retries (the kernel's stays at `n` once shrunk), and
/// on success puts `*batch - n` into its stock. `Err(over)`: the lowest memcg on the path whose
/// `max` refused the charge, the one whose subtree limit reclaim must shrink. The root memcg
/// is never charged: Ok with `*batch` = 0. (The stock test the kernel makes between the two
/// tries cannot succeed there: it failed just before and nothing refilled it.)
pub fn try_charge_counters(
    counters: &mut PageCounters,
    id: CounterId,
    n: u64,
    batch: &mut u64,
) -> Result<(), CounterId> {
    if counters.is_root(id) {
        *batch = 0;
        return Ok(());
    }
    loop {
        match counters.try_charge(id, *batch) {
            Ok(()) => return Ok(()),
            Err(_) if *batch > n => *batch = n,
            Err(over) => return Err(over),
        }
    }
}

/// `try_to_free_mem_cgroup_pages`' goal: at least a reclaim batch (§6.2).
#[inline]
pub fn limit_reclaim_target(n: u64) -> u64 {
    n.max(SWAP_CLUSTER_MAX)
}

// ------------------------------------------------------------------ swap (§3.1, §3.6)

/// `mem_cgroup_get_nr_swap_pages`: the swap slots memcg `id` may still take, `free_swap`
/// (the device's free slots) limited by the room under `memory.swap.max` of `id` and each
/// ancestor below the root. Reclaim scans a memcg's anon pages only if this is above 0.
pub fn get_nr_swap_pages(swap: &PageCounters, id: CounterId, free_swap: u64) -> u64 {
    swap.ancestors(id)
        .filter(|&c| !swap.is_root(c))
        .fold(free_swap, |n, c| n.min(swap.margin(c)))
}

/// The memcg half of `mem_cgroup_swap_full`: `id` or an ancestor below the root uses at
/// least half of its `memory.swap.high` or `memory.swap.max` (a swapped-in page then gives
/// its slot back at once, as when the device is half full).
pub fn memcg_swap_full(swap: &PageCounters, id: CounterId) -> bool {
    swap.ancestors(id).filter(|&c| !swap.is_root(c)).any(|c| {
        let s = swap.get(c);
        s.usage * 2 >= s.high || s.usage * 2 >= s.max
    })
}

// ------------------------------------------------------------------ events (§7.2)

/// `enum memcg_memory_event`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemcgEvent {
    Low,
    High,
    Max,
    Oom,
    OomKill,
    OomGroupKill,
    SwapHigh,
    SwapMax,
    SwapFail,
}

/// One memcg's event counts (one of its two arrays: local or hierarchical).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemcgEvents {
    pub low: u64,
    pub high: u64,
    pub max: u64,
    pub oom: u64,
    pub oom_kill: u64,
    pub oom_group_kill: u64,
    pub swap_high: u64,
    pub swap_max: u64,
    pub swap_fail: u64,
}

impl MemcgEvents {
    fn slot(&mut self, e: MemcgEvent) -> &mut u64 {
        match e {
            MemcgEvent::Low => &mut self.low,
            MemcgEvent::High => &mut self.high,
            MemcgEvent::Max => &mut self.max,
            MemcgEvent::Oom => &mut self.oom,
            MemcgEvent::OomKill => &mut self.oom_kill,
            MemcgEvent::OomGroupKill => &mut self.oom_group_kill,
            MemcgEvent::SwapHigh => &mut self.swap_high,
            MemcgEvent::SwapMax => &mut self.swap_max,
            MemcgEvent::SwapFail => &mut self.swap_fail,
        }
    }

    /// `memory.events` (or `memory.events.local` from the local array), keys in order.
    pub fn memory_events_text(&self) -> String {
        format!(
            "low {}\nhigh {}\nmax {}\noom {}\noom_kill {}\noom_group_kill {}\n",
            self.low, self.high, self.max, self.oom, self.oom_kill, self.oom_group_kill
        )
    }

    /// `memory.swap.events`.
    pub fn swap_events_text(&self) -> String {
        format!(
            "high {}\nmax {}\nfail {}\n",
            self.swap_high, self.swap_max, self.swap_fail
        )
    }
}

/// A memcg's two arrays (`memory_events_local[]`, `memory_events[]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemcgEventCounts {
    pub local: MemcgEvents,
    pub hier: MemcgEvents,
}

/// `memcg_memory_event`: count `e` in memcg `id`'s local array, then in its hierarchical
/// array and its ancestors', stopping below the root; with `memory_localevents` only in its
/// own. `events` is indexed by memcg id.
pub fn memcg_memory_event(
    events: &mut [MemcgEventCounts],
    tree: &PageCounters,
    id: CounterId,
    e: MemcgEvent,
    localevents: bool,
) {
    *events[id as usize].local.slot(e) += 1;
    let mut c = id;
    loop {
        *events[c as usize].hier.slot(e) += 1;
        if localevents {
            return;
        }
        match tree.parent(c) {
            Some(p) if !tree.is_root(p) => c = p,
            _ => return,
        }
    }
}

// ------------------------------------------------------------------ memory.high (§4)

/// `calculate_overage`: how far `usage` is over `high`, as a fraction of `high` in 20-bit
/// fixed point (0 at or below it; a `high` of 0 counts as 1 page).
pub fn calculate_overage(usage: u64, high: u64) -> u64 {
    if usage <= high {
        return 0;
    }
    let high = high.max(1);
    ((usage - high) << MEMCG_DELAY_PRECISION_SHIFT) / high
}

/// `mem_find_max_overage` / `swap_find_max_overage` (pass the memory or the swap counters):
/// the largest overage of memcg `id` and its ancestors below the root.
pub fn find_max_overage(counters: &PageCounters, id: CounterId) -> u64 {
    let mut max = 0;
    let mut c = id;
    loop {
        let pc = counters.get(c);
        max = max.max(calculate_overage(pc.usage, pc.high));
        match pc.parent {
            Some(p) if !counters.is_root(p) => c = p,
            _ => return max,
        }
    }
}

/// The first memcg from `id` up to the root over its `memory.high` or its `memory.swap.high`
/// (§4.1): where a charge that reached the counters records its pages as the task's debt.
pub fn first_over_high(
    memory: &PageCounters,
    swap: &PageCounters,
    id: CounterId,
) -> Option<CounterId> {
    memory.ancestors(id).find(|&c| {
        let (m, s) = (memory.get(c), swap.get(c));
        m.usage > m.high || s.usage > s.high
    })
}

/// `calculate_high_delay`: the sleep in jiffies for a debt of `nr_pages` at `max_overage`.
/// Quadratic in the overage, proportional to the debt in 64-page units; 64-bit arithmetic,
/// wrapping where the kernel's does.
pub fn calculate_high_delay(nr_pages: u64, max_overage: u64, hz: u64) -> u64 {
    if max_overage == 0 {
        return 0;
    }
    let penalty = max_overage.wrapping_mul(max_overage).wrapping_mul(hz)
        >> MEMCG_DELAY_PRECISION_SHIFT
        >> MEMCG_DELAY_SCALING_SHIFT;
    penalty.wrapping_mul(nr_pages) / MEMCG_CHARGE_BATCH
}

/// `MEMCG_MAX_HIGH_DELAY_JIFFIES`: the penalty's cap, 2 s.
#[inline]
pub fn max_high_delay_jiffies(hz: u64) -> u64 {
    2 * hz
}

/// The penalty of `mem_cgroup_handle_over_high`: memory's and swap's delays added, capped at
/// 2 s. A penalty of at most `hz / 100` jiffies is not slept (see [`handle_over_high`]).
pub fn high_penalty_jiffies(nr_pages: u64, mem_overage: u64, swap_overage: u64, hz: u64) -> u64 {
    let p = calculate_high_delay(nr_pages, mem_overage, hz).saturating_add(calculate_high_delay(
        nr_pages,
        swap_overage,
        hz,
    ));
    p.min(max_high_delay_jiffies(hz))
}

/// A sleep of `j` jiffies in nanoseconds of the machine's clock (a jiffy is `1/hz` s).
#[inline]
pub fn jiffies_to_ns(j: u64, hz: u64) -> u64 {
    j * (1_000_000_000 / hz)
}

/// What one `mem_cgroup_handle_over_high` call did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OverHigh {
    /// Passes of the loop (calls of `reclaim_high`).
    pub passes: u32,
    /// Pages they reclaimed.
    pub reclaimed: u64,
    /// The penalty slept at the end, in jiffies (0: no sleep).
    pub sleep_jiffies: u64,
}

/// What the over-high loop does after a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverHighStep {
    /// Reclaim again, [`OverHighLoop::request`] pages.
    Again,
    /// Return to user space without sleeping.
    Done,
    /// Sleep this many jiffies, in a memstall, then return.
    Sleep(u64),
}

/// The loop of `mem_cgroup_handle_over_high` (§4.2) for a task whose debt is `nr_pages`, one
/// reclaim pass at a time (so a caller whose reclaim yields can resume it): ask
/// `reclaim_high` for [`request`](Self::request) pages (the debt the first time, a reclaim
/// batch after), then report what it got and the chain's largest overages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverHighLoop {
    nr_pages: u64,
    retries: u32,
    in_retry: bool,
    pub done: OverHigh,
}

impl OverHighLoop {
    /// `None` without a debt: nothing to do.
    pub fn new(nr_pages: u64) -> Option<OverHighLoop> {
        (nr_pages > 0).then_some(OverHighLoop {
            nr_pages,
            retries: MAX_RECLAIM_RETRIES,
            in_retry: false,
            done: OverHigh::default(),
        })
    }

    /// Pages the next `reclaim_high` pass aims at.
    pub fn request(&self) -> u64 {
        if self.in_retry {
            SWAP_CLUSTER_MAX
        } else {
            self.nr_pages
        }
    }

    /// After a pass that reclaimed `got` pages, with the chain's largest memory and swap
    /// overages as they are now: done once the penalty is down to `hz / 100` jiffies; again
    /// while reclaim makes progress or fruitless passes have retries left (16 over the whole
    /// call, not restored by progress); else the penalty's sleep.
    pub fn after_pass(
        &mut self,
        got: u64,
        mem_overage: u64,
        swap_overage: u64,
        hz: u64,
    ) -> OverHighStep {
        self.done.passes += 1;
        self.done.reclaimed += got;
        let penalty = high_penalty_jiffies(self.nr_pages, mem_overage, swap_overage, hz);
        if penalty <= hz / 100 {
            return OverHighStep::Done;
        }
        if got > 0 || self.retries > 0 {
            if got == 0 {
                self.retries -= 1;
            }
            self.in_retry = true;
            return OverHighStep::Again;
        }
        self.done.sleep_jiffies = penalty;
        OverHighStep::Sleep(penalty)
    }
}

/// `mem_cgroup_handle_over_high` run to its end: `reclaim_high(pages)` reclaims on the
/// over-high memcgs of the task's chain and says how many pages it got; `overages()` gives
/// the chain's largest memory and swap overages after it.
pub fn handle_over_high(
    nr_pages: u64,
    hz: u64,
    mut reclaim_high: impl FnMut(u64) -> u64,
    mut overages: impl FnMut() -> (u64, u64),
) -> OverHigh {
    let Some(mut l) = OverHighLoop::new(nr_pages) else {
        return OverHigh::default();
    };
    loop {
        let got = reclaim_high(l.request());
        let (mem, swap) = overages();
        if l.after_pass(got, mem, swap, hz) != OverHighStep::Again {
            return l.done;
        }
    }
}

// ------------------------------------------------------------------ protection in the scan (§5.3)

/// A list's scan target under protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtectedScan {
    /// Pages to scan at this priority, before the anon/file balance is applied.
    pub scan: u64,
    /// `memory.low` scaled it (the kernel then sets `sc->memcg_low_skipped`, so a reclaim
    /// that frees nothing retries in low-reclaim mode).
    pub low_used: bool,
}

/// The protection step of `get_scan_count` for one list of memcg m's lruvec: `size` pages on
/// the list (zones up to the reclaim index), `memcg_size` = m's `memory.current` in pages,
/// `(min, low)` = `PageCounters::protection(target, m)`. A protected memcg is scanned in
/// proportion to its unprotected share, never less than a reclaim batch before the priority
/// shift; `memcg_low_reclaim` (the retry) uses only `min`. An offline memcg whose target
/// shifts to 0 still gets a batch.
pub fn get_scan_count_protected(
    size: u64,
    memcg_size: u64,
    (min, low): (u64, u64),
    memcg_low_reclaim: bool,
    priority: i32,
    online: bool,
) -> ProtectedScan {
    let mut low_used = false;
    let mut scan = if min > 0 || low > 0 {
        let protection = if !memcg_low_reclaim && low > min {
            low_used = true;
            low
        } else {
            min
        };
        let csize = memcg_size.max(protection);
        // protection <= csize < csize + 1, so the product's quotient is below `size`.
        let kept = (size as u128 * protection as u128 / (csize as u128 + 1)) as u64;
        (size - kept).max(SWAP_CLUSTER_MAX)
    } else {
        size
    };
    scan >>= priority;
    if scan == 0 && !online {
        scan = size.min(SWAP_CLUSTER_MAX);
    }
    ProtectedScan { scan, low_used }
}

// ------------------------------------------------------------------ memory.stat (§7.1)

/// How a `memory.stat` value is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatUnit {
    /// A size, printed in bytes.
    Bytes,
    /// An event count (pages for the workingset and scan events).
    Count,
}

/// One `memory.stat` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatKey {
    pub name: &'static str,
    pub unit: StatUnit,
    /// Printed only by a kernel built with `CONFIG_ZSWAP` (Debian amd64's; not its cloud
    /// kernel's).
    pub zswap_only: bool,
}

const fn key(name: &'static str, unit: StatUnit) -> StatKey {
    StatKey {
        name,
        unit,
        zswap_only: false,
    }
}

const fn zswap_key(name: &'static str, unit: StatUnit) -> StatKey {
    StatKey {
        name,
        unit,
        zswap_only: true,
    }
}

use StatUnit::{Bytes, Count};

/// `memory.stat`'s keys in 6.1's printed order. `slab` is the sum of the two keys before it;
/// `pgscan`/`pgsteal` are the sums of their kswapd and direct lines.
pub static MEMORY_STAT_KEYS: [StatKey; 51] = [
    key("anon", Bytes),
    key("file", Bytes),
    key("kernel", Bytes),
    key("kernel_stack", Bytes),
    key("pagetables", Bytes),
    key("sec_pagetables", Bytes),
    key("percpu", Bytes),
    key("sock", Bytes),
    key("vmalloc", Bytes),
    key("shmem", Bytes),
    zswap_key("zswap", Bytes),
    zswap_key("zswapped", Bytes),
    key("file_mapped", Bytes),
    key("file_dirty", Bytes),
    key("file_writeback", Bytes),
    key("swapcached", Bytes),
    key("anon_thp", Bytes),
    key("file_thp", Bytes),
    key("shmem_thp", Bytes),
    key("inactive_anon", Bytes),
    key("active_anon", Bytes),
    key("inactive_file", Bytes),
    key("active_file", Bytes),
    key("unevictable", Bytes),
    key("slab_reclaimable", Bytes),
    key("slab_unreclaimable", Bytes),
    key("slab", Bytes),
    key("workingset_refault_anon", Count),
    key("workingset_refault_file", Count),
    key("workingset_activate_anon", Count),
    key("workingset_activate_file", Count),
    key("workingset_restore_anon", Count),
    key("workingset_restore_file", Count),
    key("workingset_nodereclaim", Count),
    key("pgscan", Count),
    key("pgsteal", Count),
    key("pgscan_kswapd", Count),
    key("pgscan_direct", Count),
    key("pgsteal_kswapd", Count),
    key("pgsteal_direct", Count),
    key("pgfault", Count),
    key("pgmajfault", Count),
    key("pgrefill", Count),
    key("pgactivate", Count),
    key("pgdeactivate", Count),
    key("pglazyfree", Count),
    key("pglazyfreed", Count),
    zswap_key("zswpin", Count),
    zswap_key("zswpout", Count),
    key("thp_fault_alloc", Count),
    key("thp_collapse_alloc", Count),
];

/// The keys a kernel with (`zswap`) or without `CONFIG_ZSWAP` prints, in order.
pub fn memory_stat_keys(zswap: bool) -> impl Iterator<Item = &'static StatKey> {
    MEMORY_STAT_KEYS
        .iter()
        .filter(move |k| zswap || !k.zswap_only)
}

#[cfg(test)]
mod tests;
