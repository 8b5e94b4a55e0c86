//! The kswapd thread of a node (core-mm §4.3–§4.6) as a state machine, and its policy traits.
//!
//! One step of the actor is one decision of the kernel's loop: an attempt to go to sleep, the
//! end of the 100 ms nap, or one priority iteration of `balance_pgdat` (one `kswapd_shrink_node`
//! call). Each step costs the simulated CPU time of the reclaim it did, so kswapd runs
//! concurrently with the workloads.

use std::any::Any;

use crate::actors::kcompactd::KcompactdPolicy;
use crate::machine::gfp::GFP_KERNEL;
use crate::machine::psi::{PsiTask, PSI_SYSTEM};
use crate::machine::tracepoint::Tracepoint;
use crate::machine::vmscan::{
    ScanControl, ThrottleReason, DEF_PRIORITY, MAX_RECLAIM_RETRIES, RECLAIM_QUANTUM_NS,
    SWAP_CLUSTER_MAX,
};
use crate::machine::vmstat::VmEvent;
use crate::machine::{Machine, Signal, MAX_NR_ZONES};
use crate::world::{Actor, StepCx, Wake};

const NS_PER_MS: u64 = 1_000_000;
/// kswapd0's pid in trace output.
pub const KSWAPD_PID: u32 = 70;

/// kswapd's nap before a full sleep: HZ/10.
pub const KSWAPD_NAP_NS: u64 = 100 * NS_PER_MS;

/// `[policy] kswapd_loop` (variants in `crate::policy::kswapd_loop`).
pub trait KswapdLoop: std::fmt::Debug {
    /// Go on at order 0 once a pass has reclaimed `compact_gap(order)` pages (6.1).
    fn order_zero_after_compact_gap(&self) -> bool;
    /// Restart an unbalanced priority sweep at DEF_PRIORITY (`loop_again`, 2.6.3x).
    fn restart_unbalanced_sweep(&self) -> bool;
}

#[derive(Debug, Clone)]
struct BalanceRun {
    alloc_order: u32,
    hz: usize,
    sc: ScanControl,
    /// `sc.nr_reclaimed` when the current priority sweep began (historical `loop_again`).
    sweep_start: u64,
    nr_boost_reclaim: u64,
    zone_boosts: [u64; MAX_NR_ZONES],
    boosted: bool,
    /// The iteration whose `shrink_node` yielded at the end of its quantum: what it had
    /// reclaimed before, whether it may still raise the priority, and its order-zero rule.
    resume: Option<Iteration>,
    /// The first iteration, checked when the run began and waiting out `balance_start`
    /// before its `shrink_node`.
    started: Option<Iteration>,
}

/// The state of one `balance_pgdat` priority iteration carried across a preempted
/// `shrink_node`.
#[derive(Debug, Clone, Copy)]
struct Iteration {
    reclaimed_before: u64,
    raise_priority: bool,
    order_zero: bool,
}

#[derive(Debug, Clone)]
enum State {
    /// At `kswapd_try_to_sleep` entry.
    TrySleep {
        alloc_order: u32,
        reclaim_order: u32,
        hz: usize,
    },
    /// In the 100 ms nap; a wake-up ends it early.
    Napping {
        alloc_order: u32,
        reclaim_order: u32,
        hz: usize,
    },
    /// Fully asleep until `wakeup_kswapd`.
    Asleep {
        hz: usize,
    },
    /// Woken from the nap or the sleep (the state it was in), not yet running: the scheduler's
    /// wake-up latency (`[cost] wakeup_latency`) until `at`.
    Woken {
        from: Box<State>,
        at: u64,
    },
    Balancing(Box<BalanceRun>),
}

/// What kswapd does next: run again at a time, or wait for a wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    At(u64),
    /// Wait for a wake-up.
    Sleep,
}

impl From<Next> for Wake {
    fn from(n: Next) -> Wake {
        match n {
            Next::At(t) => Wake::At(t),
            Next::Sleep => Wake::Idle,
        }
    }
}

#[derive(Debug)]
pub struct Kswapd {
    state: State,
    looping: Box<dyn KswapdLoop>,
    kcompactd: Box<dyn KcompactdPolicy>,
    /// When the current awake period began (`kswapd_wake` after a `kswapd_sleep`).
    awake_since: Option<u64>,
    /// Total time from a wake to the following full sleep (the trace script's "time awake").
    pub awake_ns: u64,
    /// `mm_vmscan_kswapd_wake` events (one per `balance_pgdat` run).
    pub wake_events: u64,
    /// Wakes from a full sleep (the trace script's "Kswapd wakeups"); the other wake events
    /// are its "re-wakeups".
    pub wakeups: u64,
    /// `mm_vmscan_kswapd_sleep` events.
    pub sleep_events: u64,
    /// CPU time of the last step.
    cost_ns: u64,
    /// When the current (or last) 100 ms nap runs out.
    nap_end: u64,
    /// kswapd as PSI counts it: a kernel thread of the root cgroup (the system group only),
    /// on its node's CPU 0, in a memory stall for the whole of each `balance_pgdat` run.
    psi: PsiTask,
}

impl Kswapd {
    /// kswapd starts fully asleep (the host has settled before the scenario begins); the
    /// node must be marked waiting (`KswapdNode::waiting`) to match.
    pub fn new(looping: Box<dyn KswapdLoop>, kcompactd: Box<dyn KcompactdPolicy>) -> Kswapd {
        Kswapd {
            state: State::Asleep {
                hz: MAX_NR_ZONES - 1,
            },
            looping,
            kcompactd,
            awake_since: None,
            awake_ns: 0,
            wake_events: 0,
            wakeups: 0,
            sleep_events: 0,
            cost_ns: 0,
            nap_end: 0,
            psi: PsiTask::new(PSI_SYSTEM, 0),
        }
    }

    fn balancing(&self) -> bool {
        matches!(self.state, State::Balancing(_))
    }

    /// PSI after a step (or a wake-up) that began at `now` and ended at `end`, in one change:
    /// the nap and the full sleep are sleeps from `end`, which end the stall of the
    /// `balance_pgdat` run before them (the run's `out:` and the step into
    /// `kswapd_try_to_sleep`, one `balance_iteration` apart, count in the stall); otherwise
    /// kswapd runs from `now`, stalled from the start of a run to that sleep. Between the
    /// steps of a run it stays running: the gaps are the iterations' own time or a throttle
    /// inside the run, which counts as running as a direct reclaimer's does. No other change
    /// of kswapd's comes within a step, so reporting its start at the end is exact.
    fn psi_update(&mut self, node: &mut Machine, now: u64, end: u64) {
        if matches!(self.state, State::Napping { .. } | State::Asleep { .. }) {
            node.psi.set(&mut self.psi, false, false, false, end);
        } else {
            let stalled = self.psi.in_memstall() || self.balancing();
            node.psi.set(&mut self.psi, true, false, stalled, now);
        }
    }

    pub fn is_asleep(&self) -> bool {
        matches!(self.state, State::Asleep { .. })
    }

    /// Close the awake period at the end of the run, for reporting.
    pub fn awake_ns_at(&self, now: u64) -> u64 {
        self.awake_ns + self.awake_since.map_or(0, |s| now - s)
    }

    /// A `wakeup_kswapd` found kswapd waiting and woke it. Returns when it runs next: after
    /// the wake-up latency, when it then reads the request (as the kernel's kswapd reads
    /// `kswapd_order` once it runs).
    pub fn wake(&mut self, node: &mut Machine) -> Next {
        if matches!(self.state, State::Napping { .. } | State::Asleep { .. }) {
            let latency = node.cfg.cost.kswapd_wakeup_latency(&mut node.wakeup_rng);
            // The latency counts from when the waking task issued the wake-up (it may be
            // into its step), but a nap cannot be cut short after it has run out.
            let mut issued = node.kswapd.woken_at.max(node.now);
            if matches!(self.state, State::Napping { .. }) {
                issued = issued.min(self.nap_end);
            }
            if latency == 0 && issued == node.now {
                return self.wake_now(node);
            }
            let from = std::mem::replace(&mut self.state, State::Asleep { hz: 0 });
            let at = issued + latency;
            self.state = State::Woken {
                from: Box::new(from),
                at,
            };
            return Next::At(at);
        }
        self.wake_now(node)
    }

    /// The wake itself, as kswapd starts running.
    fn wake_now(&mut self, node: &mut Machine) -> Next {
        match self.state {
            State::Napping {
                alloc_order,
                reclaim_order,
                hz,
            } => self.after_nap(node, alloc_order, reclaim_order, hz, true),
            State::Asleep { hz } => {
                node.kswapd.waiting = false;
                node.kswapd.asleep = false;
                // Awake, kswapd keeps the drift of the free counts below low - min.
                node.set_pgdat_percpu_threshold(true);
                self.start_balance(node, hz)
            }
            // Already running: the request was recorded in kswapd_order/highest_zoneidx.
            State::TrySleep { .. } | State::Balancing(_) => Next::At(node.now),
            // Already woken: it runs when the wake-up latency is over.
            State::Woken { at, .. } => Next::At(at),
        }
    }

    /// Run one step at `node.now`.
    pub fn step(&mut self, node: &mut Machine) -> Next {
        // Take the state out (no clone: a balance run is boxed and reused across steps).
        let state = std::mem::replace(&mut self.state, State::Asleep { hz: 0 });
        match state {
            State::TrySleep {
                alloc_order,
                reclaim_order,
                hz,
            } => {
                node.kswapd.waiting = true;
                if self.prepare_kswapd_sleep(node, reclaim_order, hz) {
                    // Hand the original high-order request to kcompactd (6.1; the 2.6.3x
                    // kernels had no kcompactd and relied on lumpy reclaim).
                    if self.kcompactd.woken_by_kswapd() {
                        node.wakeup_kcompactd(alloc_order, hz);
                    }
                    self.state = State::Napping {
                        alloc_order,
                        reclaim_order,
                        hz,
                    };
                    self.nap_end = node.now + KSWAPD_NAP_NS;
                    return Next::At(self.nap_end);
                }
                self.after_nap(node, alloc_order, reclaim_order, hz, false)
            }
            State::Napping {
                alloc_order,
                reclaim_order,
                hz,
            } => self.after_nap(node, alloc_order, reclaim_order, hz, false),
            State::Asleep { hz } => {
                self.state = State::Asleep { hz };
                Next::Sleep
            }
            State::Balancing(run) => self.balance_step(node, run),
            State::Woken { from, .. } => {
                self.state = *from;
                self.wake_now(node)
            }
        }
    }

    /// `prepare_kswapd_sleep`.
    fn prepare_kswapd_sleep(&self, node: &mut Machine, order: u32, hz: usize) -> bool {
        if node.kswapd.failures >= MAX_RECLAIM_RETRIES {
            return true;
        }
        if node.pgdat_balanced(order, hz) {
            node.kswapd.lruvec_congested = false;
            node.kswapd.pgdat_dirty = false;
            node.kswapd.pgdat_writeback = false;
            return true;
        }
        false
    }

    /// The second half of `kswapd_try_to_sleep`: full sleep, or back to work.
    fn after_nap(
        &mut self,
        node: &mut Machine,
        _alloc_order: u32,
        reclaim_order: u32,
        hz: usize,
        woken_early: bool,
    ) -> Next {
        if woken_early {
            let k = &mut node.kswapd;
            if k.highest_zoneidx.is_none() {
                k.highest_zoneidx = Some(hz);
            }
            k.order = k.order.max(reclaim_order);
        }
        if !woken_early && self.prepare_kswapd_sleep(node, reclaim_order, hz) {
            self.sleep_events += 1;
            let (now, nid) = (node.now, node.nid);
            node.trace(|| (now, Tracepoint::KswapdSleep { nid }));
            if let Some(s) = self.awake_since.take() {
                self.awake_ns += node.now - s;
            }
            self.state = State::Asleep { hz };
            node.kswapd.asleep = true;
            node.set_pgdat_percpu_threshold(false);
            return Next::Sleep;
        }
        node.vm.add(
            if woken_early {
                VmEvent::KswapdLowWmarkHitQuickly
            } else {
                VmEvent::KswapdHighWmarkHitQuickly
            },
            1,
        );
        node.kswapd.waiting = false;
        self.start_balance(node, hz)
    }

    /// Consume the pending request and begin `balance_pgdat`.
    fn start_balance(&mut self, node: &mut Machine, prev_hz: usize) -> Next {
        let k = &mut node.kswapd;
        let alloc_order = k.order;
        let hz = k.highest_zoneidx.unwrap_or(prev_hz);
        k.order = 0;
        k.highest_zoneidx = None;
        self.wake_events += 1;
        if self.awake_since.is_none() {
            self.awake_since = Some(node.now);
            self.wakeups += 1;
        }
        node.vm.add(VmEvent::Pageoutrun, 1);
        let (now, nid) = (node.now, node.nid);
        node.trace(|| {
            let order = alloc_order;
            (now, Tracepoint::KswapdWake { nid, order })
        });
        let mut sc = ScanControl::new(GFP_KERNEL, alloc_order, hz, 0, true);
        sc.may_unmap = true;
        let mut zone_boosts = [0u64; MAX_NR_ZONES];
        let top = hz.min(MAX_NR_ZONES - 1);
        for (boost, zone) in zone_boosts.iter_mut().zip(&mut node.zones).take(top + 1) {
            if zone.is_managed() {
                *boost = zone.watermark_boost;
                // set_reclaim_active: the zones' per-CPU lists keep at most four batches
                // while kswapd works on them, so freed pages reach the buddy sooner.
                zone.reclaim_active = true;
            }
        }
        let nr_boost_reclaim: u64 = zone_boosts.iter().sum();
        let run = BalanceRun {
            alloc_order,
            hz,
            sc,
            sweep_start: 0,
            nr_boost_reclaim,
            zone_boosts,
            boosted: nr_boost_reclaim > 0,
            resume: None,
            started: None,
        };
        let start = node.cfg.cost.balance_start_ns;
        if start == 0 {
            self.state = State::Balancing(Box::new(run));
            return Next::At(node.now);
        }
        // The run's first checks come as it begins; then it takes `balance_start` to reach its
        // first LRU batch (the set-up, the scan counts), which goes ahead even if a direct
        // reclaim meanwhile balanced the node. An allocation racing kswapd gets that long.
        match self.balance_check(node, Box::new(run)) {
            Ok((mut run, it)) => {
                run.started = Some(it);
                // The checks' own cost (the anon aging) is charged with the wait.
                self.cost_ns += start + run.sc.cost_ns;
                self.state = State::Balancing(run);
                Next::At(node.now + start)
            }
            Err(next) => next,
        }
    }

    /// One iteration of `balance_pgdat`'s priority loop, or the rest of one whose
    /// `shrink_node` yielded.
    fn balance_step(&mut self, node: &mut Machine, mut run: Box<BalanceRun>) -> Next {
        let sc = &mut run.sc;
        // Cost is per step: events and I/O are stamped at `node.now + sc.cost_ns`.
        sc.cost_ns = 0;
        sc.sleep_ns = 0;
        sc.quantum_end = RECLAIM_QUANTUM_NS;
        if let Some(it) = run.resume.take() {
            node.shrink_node(sc);
            return self.after_shrink_node(node, run, it);
        }
        let (mut run, it) = match run.started.take() {
            Some(it) => (run, it),
            None => match self.balance_check(node, run) {
                Ok(checked) => checked,
                Err(next) => return next,
            },
        };
        kswapd_shrink_node(node, &mut run.sc);
        self.after_shrink_node(node, run, it)
    }

    /// The head of a priority iteration: the balance and boost checks and the anon aging.
    /// `Err` when the run ends or restarts here (the state is set), else the iteration to
    /// shrink for.
    fn balance_check(
        &mut self,
        node: &mut Machine,
        mut run: Box<BalanceRun>,
    ) -> Result<(Box<BalanceRun>, Iteration), Next> {
        let hz = run.hz;
        let sc = &mut run.sc;
        let reclaimed_before = sc.nr_reclaimed;
        let mut raise_priority = true;
        sc.reclaim_idx = hz;
        let balanced = node.pgdat_balanced(sc.order, hz);
        if !balanced && run.nr_boost_reclaim > 0 {
            // Boosted reclaim gave way to real reclaim: start over without the boost.
            run.nr_boost_reclaim = 0;
            sc.priority = DEF_PRIORITY;
            self.state = State::Balancing(run);
            return Err(Next::At(node.now + node.cfg.cost.balance_iteration_ns));
        }
        if run.nr_boost_reclaim == 0 && balanced {
            return Err(self.balance_out(node, run));
        }
        if run.nr_boost_reclaim > 0 && sc.priority == DEF_PRIORITY - 2 {
            raise_priority = false;
        }
        sc.may_writepage = run.nr_boost_reclaim == 0;
        sc.may_swap = run.nr_boost_reclaim == 0;
        node.kswapd_age_node(sc);
        if sc.priority < DEF_PRIORITY - 2 {
            sc.may_writepage = true;
        }
        sc.nr_scanned = 0;
        let it = Iteration {
            reclaimed_before,
            raise_priority,
            order_zero: self.looping.order_zero_after_compact_gap(),
        };
        Ok((run, it))
    }

    /// The rest of a priority iteration once its `shrink_node` has run (or yielded).
    fn after_shrink_node(
        &mut self,
        node: &mut Machine,
        mut run: Box<BalanceRun>,
        it: Iteration,
    ) -> Next {
        let sc = &mut run.sc;
        if sc.preempted {
            // Its quantum is used up: the others run, then the pass goes on.
            let elapsed = sc.cost_ns;
            self.cost_ns = elapsed - sc.sleep_ns;
            run.resume = Some(it);
            self.state = State::Balancing(run);
            return Next::At(node.now + elapsed);
        }
        let hz = run.hz;
        let Iteration {
            reclaimed_before,
            mut raise_priority,
            order_zero,
        } = it;
        // kswapd_shrink_node's end: drop to order 0 once compact_gap pages are free (6.1),
        // and say whether enough was scanned at this priority.
        if order_zero && sc.order > 0 && sc.nr_reclaimed >= (2u64 << sc.order) {
            sc.order = 0;
        }
        if sc.nr_scanned >= sc.nr_to_reclaim {
            raise_priority = false;
        }
        let delta = sc.nr_reclaimed - reclaimed_before;
        run.nr_boost_reclaim -= run.nr_boost_reclaim.min(delta);
        let mut done = run.nr_boost_reclaim > 0 && delta == 0;
        if raise_priority || delta == 0 {
            sc.priority -= 1;
        }
        if sc.priority < 1 {
            done = true;
        }
        let immediate = sc.nr.immediate > 0;
        let elapsed = sc.cost_ns + node.cfg.cost.balance_iteration_ns;
        // Waiting for a request slot passes on kswapd's clock but is not CPU time.
        self.cost_ns = elapsed - sc.sleep_ns;
        if done {
            if self.looping.restart_unbalanced_sweep() && sc.nr_reclaimed > run.sweep_start {
                // 2.6.3x `loop_again`: still unbalanced after a whole sweep, so start over at
                // DEF_PRIORITY; a sweep that freed under SWAP_CLUSTER_MAX pages gives up on the
                // order. Each restart counts as a pageoutrun, as in those kernels.
                if !node.pgdat_balanced(sc.order, hz) {
                    if sc.nr_reclaimed - run.sweep_start < SWAP_CLUSTER_MAX {
                        sc.order = 0;
                    }
                    sc.priority = DEF_PRIORITY;
                    run.sweep_start = sc.nr_reclaimed;
                    node.vm.add(VmEvent::Pageoutrun, 1);
                    self.state = State::Balancing(run);
                    return Next::At(node.now + elapsed);
                }
            }
            if sc.nr_reclaimed == 0 {
                node.kswapd.failures += 1;
            }
            return self.balance_out(node, run);
        }
        let mut next = node.now + elapsed;
        if immediate {
            // shrink_node's reclaim_throttle(WRITEBACK): pages cycle through the LRU faster
            // than they are written; sleep until writeback has made progress.
            next = node.reclaim_throttle(ThrottleReason::Writeback, next);
        }
        self.state = State::Balancing(run);
        Next::At(next)
    }

    /// The `out:` label of `balance_pgdat` and the return into `kswapd()`'s loop.
    fn balance_out(&mut self, node: &mut Machine, run: Box<BalanceRun>) -> Next {
        for z in 0..=run.hz.min(MAX_NR_ZONES - 1) {
            node.zones[z].reclaim_active = false;
        }
        if run.boosted {
            for z in 0..MAX_NR_ZONES {
                let b = &mut node.zones[z].watermark_boost;
                *b -= (*b).min(run.zone_boosts[z]);
            }
        }
        node.snapshot_refaults();
        let reclaim_order = run.sc.order;
        if reclaim_order < run.alloc_order {
            self.state = State::TrySleep {
                alloc_order: run.alloc_order,
                reclaim_order,
                hz: run.hz,
            };
        } else {
            let order = node.kswapd.order;
            let hz = node.kswapd.highest_zoneidx.unwrap_or(run.hz);
            self.state = State::TrySleep {
                alloc_order: order,
                reclaim_order: order,
                hz,
            };
        }
        Next::At(node.now + node.cfg.cost.balance_iteration_ns)
    }
}

/// `kswapd_shrink_node`: reclaim toward the sum of high watermarks. Its end (with `order_zero`
/// (6.1) kswapd drops to order 0 once `compact_gap` pages are free, leaving the high-order
/// block to kcompactd; enough scanned keeps the priority) is in `after_shrink_node`, because
/// the `shrink_node` may yield and resume on a later step.
fn kswapd_shrink_node(node: &mut Machine, sc: &mut ScanControl) {
    sc.nr_to_reclaim = (0..=sc.reclaim_idx.min(MAX_NR_ZONES - 1))
        .filter(|&z| node.zones[z].is_managed())
        .map(|z| node.zones[z].high_wmark_pages().max(SWAP_CLUSTER_MAX))
        .sum();
    node.shrink_node(sc);
}

impl Actor for Kswapd {
    fn name(&self) -> &str {
        "kswapd0"
    }

    fn pid(&self) -> Option<u32> {
        Some(KSWAPD_PID)
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        self.cost_ns = 0;
        let now = cx.now();
        let node = cx.machine();
        let was_balancing = self.balancing();
        let next = Kswapd::step(self, node);
        // Most steps are a run's iterations, which change nothing PSI sees.
        if !(was_balancing && self.balancing()) {
            let end = now + self.cost_ns;
            self.psi_update(node, now, end);
        }
        cx.charge_cpu(self.cost_ns);
        next.into()
    }

    fn wants(&self, signal: Signal) -> bool {
        signal == Signal::KswapdWake
    }

    /// What kswapd does on being woken happens in its own context (its kswapd_wake event).
    fn on_signal(&mut self, _signal: Signal, cx: &mut StepCx) -> Option<Wake> {
        let now = cx.now();
        let node = cx.machine();
        let next = self.wake(node);
        // Woken with no latency, it is already in `balance_pgdat`.
        if self.balancing() {
            self.psi_update(node, now, now);
        }
        Some(next.into())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
