//! D2 (mechanisms.md §D2, Nitesh Narayan Lal's "KVM: Guest Free Page Hinting" RFC v8, 2019):
//! every free is captured in a per-CPU array of 1,000 (pfn, order) entries from
//! `arch_free_page`. When an array fills, the pages on the per-CPU lists are drained into the
//! buddy and the array is scanned inline: an entry inside a free buddy block becomes that
//! block's head (or is dropped when the head is already there), an entry whose page is in use
//! again is dropped (the seed's prose; the stored code keeps it: variant `D2stored`, `keep_allocated`). If 1,000
//! valid entries remain, the CPU's `hinting/N` kthread is woken; until it runs, the array stays
//! full and frees on that CPU are not captured (lost). The kthread isolates each entry's free
//! block, sends the list to the host, puts the blocks back and empties the array.
//!
//! When the kthread runs: it is per-CPU, woken by the freeing task, and gets the CPU at the
//! task's next preemption point, `[guest.kvm] kthread_wakeup` of the task's time later (its
//! frees meanwhile are lost); it then runs before the task goes on, so its time delays the
//! task. The task's time between frees is the guest's `[cost] free_page` per page. A pass the
//! task does not reach (it stopped freeing) is run by the worker at that time instead.

use crate::machine::page_reporting::FreePageHinting;
use crate::machine::page_reporting::WorkStep;
use crate::machine::{Machine, MAX_NR_ZONES};

/// `MAX_FGPT_ENTRIES`: entries per CPU array.
pub const MAX_FGPT_ENTRIES: usize = 1000;

#[derive(Debug, Default)]
struct CpuArray {
    entries: Vec<(u32, u8)>,
    /// The kthread was woken and has not run yet.
    pending: bool,
    /// The freeing task's time since the wake-up.
    since_wake_ns: u64,
    /// The last inline scan's result is `entries[..heads.len()]`; `heads[i]`: entry `i` was a
    /// free block's head (with its order), not a page in use kept as it was.
    heads: Vec<bool>,
    /// Each zone's `FreeArea::changes` when that scan ended.
    at: [u64; MAX_NR_ZONES],
}

#[derive(Debug, Default)]
pub struct CaptureArrays {
    cpus: Vec<CpuArray>,
    /// The stored v7/v8 code: keep entries whose page was allocated again (the kthread skips
    /// them later) instead of dropping them in the inline scan.
    pub keep_allocated: bool,
    /// Scratch for the inline scan: one bit per frame, set for the heads kept so far and
    /// cleared again before the scan returns (a set of 1,000 frame numbers hashed on every
    /// scan cost a fifth of a D2 run's time; a bit per frame costs 1/8 byte of frame
    /// memory and no hashing).
    seen: Vec<u64>,
    /// The zones count their free blocks' changes (`FreeArea::track_changes`).
    tracking: bool,
    /// Scratch for the scan's result, swapped with its array's (the hot path allocates
    /// nothing).
    kept: Vec<(u32, u8)>,
    heads: Vec<bool>,
    /// The frames whose bit in `seen` the scan set, to clear again.
    marked: Vec<u32>,
}

impl CaptureArrays {
    /// The inline scan of a full array: resolve each entry to the free block that holds it,
    /// drop duplicates (and, as the seed describes, pages in use again), compact.
    ///
    /// A full array whose scan kept most of it is scanned again at the next capture (an idle
    /// guest's residue, once per free): an entry the last scan found to be a free block's head
    /// is taken as that head again without reading the frame when nothing in its region of
    /// the buddy has changed since (`FreeArea::unchanged_since`): the same answer, without a
    /// cache miss per entry (they made a fifth of a D2 run's time).
    fn scan(&mut self, m: &mut Machine, cpu: usize, entries: &mut Vec<(u32, u8)>) {
        m.drain_all_pages();
        if !self.tracking {
            for zone in m.zones.iter_mut() {
                zone.free_area.track_changes();
            }
            self.tracking = true;
        }
        let prev = std::mem::take(&mut self.cpus[cpu].heads);
        let at = self.cpus[cpu].at;
        let mut kept = std::mem::take(&mut self.kept);
        let mut heads = std::mem::take(&mut self.heads);
        kept.clear();
        heads.clear();
        let n = entries.len() as u64;
        // The linear duplicate search: about n^2 / 2 comparisons.
        let ns = n * n / 2 * m.guest_mut().cost.scan_compare_ns;
        m.guest_stall(ns);
        // The kernel searches linearly (charged above); a bit per head kept gives the same
        // result, in array order, without the simulator paying n^2 too.
        let frames = m.frames.len();
        if self.seen.len() * 64 < frames {
            self.seen.resize(frames.div_ceil(64), 0);
        }
        let seen = &mut self.seen;
        let mut marked = std::mem::take(&mut self.marked);
        marked.clear();
        let mut first = |pfn: u32| {
            let (w, b) = (pfn as usize / 64, 1u64 << (pfn % 64));
            let new = seen[w] & b == 0;
            if new {
                seen[w] |= b;
                marked.push(pfn);
            }
            new
        };
        // The last entry is the page being freed now (the capture runs before the free): it
        // is not in the buddy yet, but it is free, and it stays.
        let Some(&current) = entries.last() else {
            return;
        };
        // The buddy does not change during the scan, so a page inside the block found last is
        // in that block: consecutive frees of one region mostly are, and need no search.
        let mut last: Option<(u32, usize)> = None;
        for (i, &(pfn, order)) in entries[..entries.len() - 1].iter().enumerate() {
            let (block, reused) = match last {
                Some((h, o)) if pfn >= h && pfn - h < 1 << o => (last, false),
                _ => {
                    let z = m.zone_of(pfn);
                    let fa = &m.zones[z].free_area;
                    if prev.get(i) == Some(&true) && fa.unchanged_since(pfn, at[z]) {
                        last = Some((pfn, order as usize));
                        (last, true)
                    } else {
                        let b = fa.free_block_of(&m.frames, pfn);
                        if b.is_some() {
                            last = b;
                        }
                        (b, false)
                    }
                }
            };
            match block {
                // A head kept by the last scan, in a region nothing changed since, needs no
                // duplicate test: the last scan kept one entry per head, and no other entry
                // can be in its block now (a page joins a free block only by a change of its
                // region: its own free, or an allocation that split the block).
                Some((head, o)) if reused || first(head) => {
                    kept.push((head, o as u8));
                    heads.push(true);
                }
                Some(_) => {}
                None if self.keep_allocated => {
                    kept.push((pfn, order));
                    heads.push(false);
                }
                None => {}
            }
        }
        if first(current.0) {
            kept.push(current);
            heads.push(false);
        }
        // Clear exactly the bits set.
        for &pfn in &marked {
            self.seen[pfn as usize / 64] &= !(1u64 << (pfn % 64));
        }
        self.marked = marked;
        std::mem::swap(entries, &mut kept);
        self.kept = kept;
        let arr = &mut self.cpus[cpu];
        arr.heads = heads;
        arr.at = std::array::from_fn(|z| m.zones[z].free_area.changes());
        self.heads = prev;
    }

    /// The kthread's pass over CPU `cpu`'s array: isolate, report, put back, empty.
    fn kthread_pass(&mut self, m: &mut Machine, cpu: usize) {
        let arr = &mut self.cpus[cpu];
        let entries = std::mem::take(&mut arr.entries);
        arr.heads.clear();
        arr.pending = false;
        arr.since_wake_ns = 0;
        // Reallocated pages are skipped; a page inside a free block takes that block.
        m.report_free_blocks_of(&entries, 0);
        let mut entries = entries;
        entries.clear();
        self.cpus[cpu].entries = entries;
    }
}

impl FreePageHinting for CaptureArrays {
    fn on_free(&mut self, m: &mut Machine, pfn: u32, order: u32) {
        let cpu = m.cpu;
        if self.cpus.len() <= cpu {
            self.cpus.resize_with(cpu + 1, CpuArray::default);
        }
        if self.cpus[cpu].pending {
            let arr = &mut self.cpus[cpu];
            arr.since_wake_ns += m.cfg.cost.free_page_ns << order;
            if arr.since_wake_ns < m.guest_mut().cost.kthread_wakeup_ns {
                m.guest_mut().stats.lost += 1 << order;
                return;
            }
            // The task reached a preemption point: the kthread runs first.
            self.kthread_pass(m, cpu);
        }
        m.guest_mut().stats.captured += 1 << order;
        let arr = &mut self.cpus[cpu];
        arr.entries.push((pfn, order as u8));
        if arr.entries.len() < MAX_FGPT_ENTRIES {
            return;
        }
        let mut entries = std::mem::take(&mut arr.entries);
        self.scan(m, cpu, &mut entries);
        let full = entries.len() >= MAX_FGPT_ENTRIES;
        let arr = &mut self.cpus[cpu];
        arr.entries = entries;
        if full {
            arr.pending = true;
            arr.since_wake_ns = 0;
            // If the task stops freeing before its next preemption point, the kthread still
            // gets the CPU then.
            let at = m.now + m.guest_mut().cost.kthread_wakeup_ns;
            m.guest_kick_work(at);
        }
    }

    fn work(&mut self, m: &mut Machine, _now: u64) -> WorkStep {
        for cpu in 0..self.cpus.len() {
            if self.cpus[cpu].pending {
                self.kthread_pass(m, cpu);
            }
        }
        WorkStep::Finished(None)
    }
}
