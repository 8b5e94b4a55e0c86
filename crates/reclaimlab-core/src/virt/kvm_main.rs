//! The memory slot of a KVM guest (`virt/kvm/kvm_main.c`'s memslots and `hva_to_pfn`): guest
//! frame `pfn` is host page `base + pfn` of one anonymous region of the VM's process. The host
//! backs a frame when the guest first touches it, with an ordinary anonymous fault in that
//! process (its allocator, reclaim and OOM killer; its RSS counter), and drops it when the
//! guest reports it free (`virtio_balloon`) or, for a CMMA guest, when host reclaim finds it
//! marked unused.
//!
//! The guest machine records what it did; after every step of one of its actors the world
//! calls [`GuestMemory::sync`], which replays it on the host in order and returns how long the
//! step's actor waits for it: the guest's own blocked time (report round trips, hypercalls),
//! the host faults and the discards.
//!
//! What the host sees of guest memory is the guest's allocations (a frame handed out is
//! written: zeroed, or filled by its user) and its reports. Later accesses to a frame the
//! guest still holds are not replayed: the host's reclaim ages guest frames by when they were
//! allocated, not by every access (a documented abstraction; the seed experiment's host has no
//! swap, so nothing there depends on it).

use crate::machine::cost::KvmCost;
use crate::machine::memory::TaskCtx;
use crate::machine::page_reporting::SlotEvent;
use crate::machine::psi::{PsiGroupId, PsiTask};
use crate::machine::pte::pte_present;
use crate::machine::{Access, Machine};

use super::virtio_balloon;

/// The memory slot's own counters (mechanisms.md §D.6, host side).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlotStats {
    /// Host faults taken on guest frames.
    pub host_faults: u64,
    /// Of those, on frames the host had dropped after a report (refaults).
    pub refaults: u64,
    /// Report ranges handled, and resident pages the host dropped for them.
    pub discard_ranges: u64,
    pub discarded_pages: u64,
    /// Reports acked without discarding (discards inhibited).
    pub inhibited_ranges: u64,
    /// Ranges below 2 MiB that cut into a fully resident 2 MiB host range (a huge page split
    /// when guest RAM is THP-backed).
    pub thp_splits: u64,
    /// Host faults that had to wait for the host's reclaim or back-off and were replayed.
    pub faults_deferred: u64,
    /// Time guest actors waited on the host (faults, discards).
    pub wait_ns: u64,
}

/// One guest's RAM in its host.
#[derive(Debug)]
pub struct GuestMemory {
    /// The VM process on the host.
    pub task: usize,
    /// Host page of guest frame 0, and the guest's frames.
    pub base: u32,
    pub frames: u32,
    pub inhibited: bool,
    pub host_thp: bool,
    pub cost: KvmCost,
    /// The VM was killed or shut down: its memory is gone and nothing more is replayed.
    pub dead: bool,
    /// Frames dropped by the host after a report and not touched since, one bit each.
    discarded: Vec<u64>,
    /// The VM process's context for its host faults (its direct reclaim carries over).
    ctx: TaskCtx,
    pub stats: SlotStats,
}

impl GuestMemory {
    pub fn new(
        task: usize,
        base: u32,
        frames: u32,
        inhibited: bool,
        host_thp: bool,
        cost: KvmCost,
        psi_group: PsiGroupId,
    ) -> GuestMemory {
        GuestMemory {
            task,
            base,
            frames,
            inhibited,
            host_thp,
            cost,
            dead: false,
            discarded: vec![0; (frames as usize).div_ceil(64)],
            ctx: TaskCtx {
                task,
                // Its host faults' stalls count in its cgroup's group (the system group's
                // without one).
                psi: PsiTask::new(psi_group, 0),
                ..Default::default()
            },
            stats: SlotStats::default(),
        }
    }

    #[inline]
    fn is_discarded(&self, pfn: u32) -> bool {
        self.discarded[pfn as usize / 64] & (1 << (pfn % 64)) != 0
    }

    #[inline]
    fn set_discarded(&mut self, pfn: u32, on: bool) {
        let w = &mut self.discarded[pfn as usize / 64];
        if on {
            *w |= 1 << (pfn % 64);
        } else {
            *w &= !(1 << (pfn % 64));
        }
    }

    /// Replay on the host what the guest did since the last call (touches are host faults,
    /// reports discards, CMMA marks bits), in order. Returns the time the step's actor waits
    /// for it all.
    pub fn sync(&mut self, guest: &mut Machine, host: &mut Machine) -> u64 {
        let Some(g) = guest.guest.as_deref_mut() else {
            return 0;
        };
        let stall = std::mem::take(&mut g.stall_ns);
        let mut events = std::mem::take(&mut g.events);
        let mut wait = 0;
        let mut done = 0;
        'events: for (i, &e) in events.iter().enumerate() {
            if self.dead {
                done = events.len();
                break;
            }
            match e {
                SlotEvent::Touch(pfn, order) => {
                    for p in pfn..pfn + (1u32 << order) {
                        let vp = self.base + p;
                        if pte_present(host.pte[vp as usize]) {
                            continue;
                        }
                        match self.host_fault(host, p, vp) {
                            Ok(ns) => wait += ns,
                            Err(ns) => {
                                self.stats.faults_deferred += 1;
                                // The host must reclaim or back off first: the vCPU waits and
                                // the rest is replayed after its next step.
                                wait += ns;
                                done = i;
                                break 'events;
                            }
                        }
                    }
                }
                SlotEvent::Report(pfn, order) => wait += self.discard(host, pfn, 1 << order),
                SlotEvent::Unused(pfn, order) => {
                    host.mark_pte_unused(self.base + pfn, 1 << order, true)
                }
                SlotEvent::Stable(pfn, order) => {
                    host.mark_pte_unused(self.base + pfn, 1 << order, false)
                }
            }
            done = i + 1;
        }
        events.drain(..done);
        // What is left waits for the next call; the buffer is reused either way.
        guest.guest_mut().events = events;
        self.stats.wait_ns += wait;
        stall + wait
    }

    /// The host's handling of one reported range.
    fn discard(&mut self, host: &mut Machine, pfn: u32, n: u32) -> u64 {
        // Frames the host really drops: a later touch of one of them is a refault.
        if !self.inhibited {
            for p in pfn..pfn + n {
                if pte_present(host.pte[(self.base + p) as usize]) {
                    self.set_discarded(p, true);
                }
            }
        }
        let d = virtio_balloon::discard_range(
            host,
            self.task,
            self.base + pfn,
            n,
            self.inhibited,
            self.host_thp,
        );
        if self.inhibited {
            self.stats.inhibited_ranges += 1;
            return 0;
        }
        self.stats.discard_ranges += 1;
        self.stats.discarded_pages += d.pages;
        self.stats.thp_splits += d.thp_split as u64;
        n as u64 * self.cost.discard_page_ns
    }

    /// One host fault on guest frame `pfn` (host page `vp`). `Ok`: done, in this time;
    /// `Err`: not yet (the host's allocator must reclaim more or back off), after this time.
    fn host_fault(&mut self, host: &mut Machine, pfn: u32, vp: u32) -> Result<u64, u64> {
        self.ctx.begin_step();
        let base = self.cost.host_fault_ns;
        let done = match host.anon_access(vp, true, &mut self.ctx) {
            Access::Done => Ok(self.ctx.cost_ns + base),
            Access::Block(until) => Ok(until.saturating_sub(host.now).max(self.ctx.cost_ns) + base),
            // Retried after the back-off, or after a reclaim quantum (at least a
            // microsecond, so the host's other threads get to run).
            Access::Retry(d) => return Err(self.ctx.cost_ns + d),
            Access::Yield => return Err(self.ctx.cost_ns.max(1_000)),
            Access::Killed => {
                // The VM itself was chosen: its vCPUs stop here.
                self.dead = true;
                return Err(self.ctx.cost_ns);
            }
        };
        self.stats.host_faults += 1;
        if self.is_discarded(pfn) {
            self.stats.refaults += 1;
            self.set_discarded(pfn, false);
        }
        done
    }

    /// Host-resident frames of the guest (host pages present in the slot).
    pub fn resident(&self, host: &Machine) -> u64 {
        let r = self.base as usize..(self.base + self.frames) as usize;
        host.pte[r].iter().filter(|&&e| pte_present(e)).count() as u64
    }

    /// The cross-machine invariants: a frame the host dropped after a report is not
    /// host-resident; the VM's RSS counter is its resident mapped guest frames.
    pub fn check(&self, host: &Machine) -> Result<(), String> {
        use crate::machine::pte::PTE_MAPPED;
        let mut mapped = 0u64;
        for pfn in 0..self.frames {
            let e = host.pte[(self.base + pfn) as usize];
            if pte_present(e) {
                if self.is_discarded(pfn) {
                    return Err(format!(
                        "guest frame {pfn} is both host-resident and discarded"
                    ));
                }
                if e & PTE_MAPPED != 0 {
                    mapped += 1;
                }
            }
        }
        let rss = host.tasks[self.task].rss_anon;
        if !self.dead && rss != mapped {
            return Err(format!(
                "the VM's host RSS counter is {rss} pages but {mapped} of its guest frames are mapped"
            ));
        }
        Ok(())
    }
}
