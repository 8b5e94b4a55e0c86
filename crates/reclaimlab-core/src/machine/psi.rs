//! Pressure stall information for memory (`kernel/sched/psi.c`, docs/design/memcg-psi.md
//! §8): how much of the time the tasks of a group lose waiting on memory, as `some` (at
//! least one task of the group stalls) and `full` (every task of the group that could run is
//! stalled, or the CPU is itself busy in a stall and nothing productive runs on it), per group
//! and for the system.
//!
//! Tasks report state changes (woken, put to sleep, given or taken off a CPU, entering or
//! leaving a memstall section); each change updates counts of the task's group and every
//! ancestor on the task's CPU, first adding the time since the last change to the states
//! the CPU was in. Aggregation folds the CPUs into one figure per group: each CPU's stall
//! time weighted by how many whole jiffies it was busy (non-idle), so `total` is a mean over
//! the busy CPUs, not a sum. Every `psi_period` (2 s plus a jiffy) the stall share of the
//! period goes into three decaying averages (10 s, 60 s, 300 s) in the load average's 11-bit
//! fixed point; periods the averaging missed decay the averages at once. The text is that of
//! `/proc/pressure/memory` and `memory.pressure`.
//!
//! Group 0 is the system group (the root cgroup's: kernel threads count only there). Groups
//! are created in the memcg tree's order, so a cgroup's group id can be its memcg id.
//!
//! Abstracted: only the memory states and the non-idle weight are kept (no CPU or I/O
//! pressure lines, no `PSI_IRQ`, no triggers or poll aggregator). Time is the simulator's
//! nanosecond clock; per-CPU times are 64-bit (the kernel's are 32-bit and wrap, which its
//! 2 s aggregation makes harmless). A change stamped before the last one on the same CPU
//! counts from that last one (the simulator's actors are not bound to one monotonic clock per
//! CPU). Clearing a count that is already zero, a kernel warning, is counted in
//! [`Psi::bugs`] and ignored.

/// Fixed point of the averages: 11 fraction bits (`FSHIFT`, `FIXED_1`).
pub const FSHIFT: u32 = 11;
pub const FIXED_1: u64 = 1 << FSHIFT;
/// Decay per 2 s period of the 10 s, 60 s and 300 s averages: `FIXED_1 / exp(2 s / window)`.
pub const EXP_10S: u64 = 1677;
pub const EXP_60S: u64 = 1981;
pub const EXP_300S: u64 = 2034;
const EXPS: [u64; 3] = [EXP_10S, EXP_60S, EXP_300S];

/// Task counts kept per group and CPU (`enum psi_task_count`).
pub const NR_IOWAIT: usize = 0;
pub const NR_MEMSTALL: usize = 1;
pub const NR_RUNNING: usize = 2;
pub const NR_MEMSTALL_RUNNING: usize = 3;
const NR_PSI_TASK_COUNTS: usize = 4;

/// A task's PSI flags (`TSK_*`): one per count, plus "executing on its CPU".
pub const TSK_IOWAIT: u32 = 1 << NR_IOWAIT;
pub const TSK_MEMSTALL: u32 = 1 << NR_MEMSTALL;
pub const TSK_RUNNING: u32 = 1 << NR_RUNNING;
pub const TSK_MEMSTALL_RUNNING: u32 = 1 << NR_MEMSTALL_RUNNING;
pub const TSK_ONCPU: u32 = 1 << NR_PSI_TASK_COUNTS;

/// The states kept (a subset of `enum psi_states`), as bit numbers of a state mask.
pub const PSI_MEM_SOME: usize = 0;
pub const PSI_MEM_FULL: usize = 1;
pub const PSI_NONIDLE: usize = 2;
const NR_STATES: usize = 3;
/// State-mask bit: a task of the group's subtree executes on this CPU (`PSI_ONCPU`).
const PSI_ONCPU: u32 = 1 << NR_STATES;

/// A PSI group's index; 0 is the system group.
pub type PsiGroupId = u16;
pub const PSI_SYSTEM: PsiGroupId = 0;

/// `calc_load`: one step of an exponentially decaying average in 11-bit fixed point, rounded
/// up while it rises.
pub fn calc_load(load: u64, exp: u64, active: u64) -> u64 {
    let mut new = load * exp + active * (FIXED_1 - exp);
    if active >= load {
        new += FIXED_1 - 1;
    }
    new / FIXED_1
}

/// `fixed_power_int`: `x^n` for `x` in fixed point with `frac_bits` fraction bits, rounding
/// each product to nearest.
pub fn fixed_power_int(mut x: u64, frac_bits: u32, mut n: u64) -> u64 {
    let half = 1u64 << (frac_bits - 1);
    let mut result = 1u64 << frac_bits;
    while n > 0 {
        if n & 1 == 1 {
            result = (result * x + half) >> frac_bits;
        }
        n >>= 1;
        if n == 0 {
            break;
        }
        x = (x * x + half) >> frac_bits;
    }
    result
}

/// `calc_load_n`: `n` steps of [`calc_load`] at the same `active`, in one step of the
/// decay's n-th power.
pub fn calc_load_n(load: u64, exp: u64, active: u64, n: u64) -> u64 {
    calc_load(load, fixed_power_int(exp, FSHIFT, n), active)
}

/// `nsecs_to_jiffies` at `hz` (whole jiffies, rounded down).
pub fn nsecs_to_jiffies(ns: u64, hz: u64) -> u64 {
    if 1_000_000_000u64.is_multiple_of(hz) {
        ns / (1_000_000_000 / hz)
    } else {
        // HZ = 300: the kernel's approximation of a jiffy that is not a whole number of ns.
        (ns as u128 * 9 / ((9_000_000_000 + hz as u128 / 2) / hz as u128)) as u64
    }
}

/// `jiffies_to_nsecs` at `hz`.
pub fn jiffies_to_nsecs(j: u64, hz: u64) -> u64 {
    j * 1_000_000_000 / hz
}

/// `psi_period`: `PSI_FREQ` = 2 s plus a jiffy, in ns (2,004,000,000 at HZ = 250).
pub fn psi_period_ns(hz: u64) -> u64 {
    (2 * hz + 1) * 1_000_000 / hz * 1000
}

/// The state mask of one group on one CPU from its counts (`test_state` for the memory and
/// non-idle states): `oncpu`, a task of the group executes there; `curr_in_memstall`, that
/// task is inside a memstall section, which makes the CPU's memory state full by itself.
pub fn test_states(tasks: &[u32; NR_PSI_TASK_COUNTS], oncpu: bool, curr_in_memstall: bool) -> u32 {
    let mut mask = if oncpu { PSI_ONCPU } else { 0 };
    if tasks[NR_MEMSTALL] > 0 {
        mask |= 1 << PSI_MEM_SOME;
        if tasks[NR_RUNNING] == tasks[NR_MEMSTALL_RUNNING] {
            mask |= 1 << PSI_MEM_FULL;
        }
    }
    if tasks[NR_IOWAIT] + tasks[NR_MEMSTALL] + tasks[NR_RUNNING] > 0 {
        mask |= 1 << PSI_NONIDLE;
    }
    if oncpu && curr_in_memstall {
        mask |= 1 << PSI_MEM_FULL;
    }
    mask
}

/// One group's state on one CPU (`struct psi_group_cpu`).
#[derive(Debug, Clone, Default)]
struct GroupCpu {
    tasks: [u32; NR_PSI_TASK_COUNTS],
    state_mask: u32,
    state_start: u64,
    /// Time spent in each state, ns.
    times: [u64; NR_STATES],
    /// `times` (with the running part) at the last aggregation.
    times_prev: [u64; NR_STATES],
}

impl GroupCpu {
    /// `record_times`: the time since the last change goes to the states the CPU was in.
    fn record_times(&mut self, now: u64) {
        let delta = now.saturating_sub(self.state_start);
        self.state_start = self.state_start.max(now);
        if self.state_mask & (1 << PSI_MEM_SOME) != 0 {
            self.times[PSI_MEM_SOME] += delta;
            if self.state_mask & (1 << PSI_MEM_FULL) != 0 {
                self.times[PSI_MEM_FULL] += delta;
            }
        }
        if self.state_mask & (1 << PSI_NONIDLE) != 0 {
            self.times[PSI_NONIDLE] += delta;
        }
    }
}

/// A PSI group (`struct psi_group`), memory part.
#[derive(Debug, Clone)]
struct Group {
    parent: Option<PsiGroupId>,
    cpus: Vec<GroupCpu>,
    /// Stall time, ns, [some, full].
    total: [u64; 2],
    /// The part of `total` the averages have taken in.
    avg_total: [u64; 2],
    /// [some, full] x [10 s, 60 s, 300 s], fixed point (percent x FIXED_1).
    avg: [[u64; 3]; 2],
    avg_last_update: u64,
    avg_next_update: u64,
    /// When the group's averaging work (`psi_avgs_work`) runs next; `u64::MAX`: not queued.
    work_at: u64,
}

/// A task as PSI sees it: its group, its CPU, its flags and its memstall nesting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PsiTask {
    group: PsiGroupId,
    cpu: usize,
    flags: u32,
    /// Depth of nested memstall sections; only the outermost counts (`in_memstall`).
    memstall: u32,
}

impl PsiTask {
    /// A task of `group` on `cpu`, asleep and not stalled.
    pub fn new(group: PsiGroupId, cpu: usize) -> PsiTask {
        PsiTask {
            group,
            cpu,
            flags: 0,
            memstall: 0,
        }
    }

    #[inline]
    pub fn group(&self) -> PsiGroupId {
        self.group
    }

    #[inline]
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    #[inline]
    pub fn in_memstall(&self) -> bool {
        self.memstall > 0
    }

    #[inline]
    pub fn flags(&self) -> u32 {
        self.flags
    }
}

/// Every PSI group of one machine.
#[derive(Debug, Clone)]
pub struct Psi {
    hz: u64,
    period: u64,
    groups: Vec<Group>,
    /// Per CPU: the task executing there is in a memstall section (`cpu_curr(cpu)->in_memstall`).
    curr_in_memstall: Vec<bool>,
    /// Counts cleared below zero (the kernel prints a one-time warning).
    pub bugs: u64,
    /// The earliest `work_at` of any group: one compare per change finds nothing due.
    next_work: u64,
}

/// What a read of a group's pressure file gives: the stall totals (ns) and the averages
/// (fixed point), `[some, full]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PsiReading {
    pub total_ns: [u64; 2],
    pub avg: [[u64; 3]; 2],
}

impl PsiReading {
    /// The file's text.
    pub fn text(&self) -> String {
        psi_text(&self.avg, &self.total_ns)
    }

    /// An average (window 0, 1, 2: 10 s, 60 s, 300 s) in hundredths of a percent, truncated
    /// as the file prints it (`4.34` is 434).
    pub fn avg_x100(&self, full: bool, window: usize) -> u64 {
        let a = self.avg[full as usize][window];
        (a >> FSHIFT) * 100 + (((a & (FIXED_1 - 1)) * 100) >> FSHIFT)
    }
}

impl Psi {
    /// The system group on `ncpus` CPUs, created at `now`, at the machine's `hz`.
    pub fn new(ncpus: usize, hz: u64, now: u64) -> Psi {
        let mut psi = Psi {
            hz,
            period: psi_period_ns(hz),
            groups: Vec::new(),
            curr_in_memstall: vec![false; ncpus.max(1)],
            bugs: 0,
            next_work: u64::MAX,
        };
        psi.push_group(None, now);
        psi
    }

    fn push_group(&mut self, parent: Option<PsiGroupId>, now: u64) {
        let cpu = GroupCpu {
            state_start: now,
            ..Default::default()
        };
        self.groups.push(Group {
            parent,
            cpus: vec![cpu; self.curr_in_memstall.len()],
            total: [0; 2],
            avg_total: [0; 2],
            avg: [[0; 3]; 2],
            avg_last_update: now,
            avg_next_update: now + self.period,
            work_at: u64::MAX,
        });
    }

    /// CPUs the groups keep counts for.
    #[inline]
    pub fn ncpus(&self) -> usize {
        self.curr_in_memstall.len()
    }

    /// A task of `group` on `cpu` (a CPU number past the last wraps around, as the engine's
    /// CPU accounting does).
    pub fn task(&self, group: PsiGroupId, cpu: usize) -> PsiTask {
        PsiTask::new(group, cpu % self.ncpus())
    }

    /// A cgroup's group below `parent`, created at `now` (`group_init`); returns its id.
    pub fn add_group(&mut self, parent: PsiGroupId, now: u64) -> Result<PsiGroupId, String> {
        if parent as usize >= self.groups.len() {
            return Err(format!("PSI group {parent} does not exist"));
        }
        let id = PsiGroupId::try_from(self.groups.len())
            .map_err(|_| format!("more than {} PSI groups", PsiGroupId::MAX))?;
        self.push_group(Some(parent), now);
        Ok(id)
    }

    /// `psi_period` at this machine's HZ, ns.
    #[inline]
    pub fn period_ns(&self) -> u64 {
        self.period
    }

    /// `psi_task_change`: clear and set `t`'s flags, updating its group and every ancestor on
    /// its CPU at `now`.
    fn task_change(&mut self, t: &mut PsiTask, clear: u32, set: u32, now: u64) {
        if now >= self.next_work {
            self.run_work(now);
        }
        t.flags = (t.flags & !clear) | set;
        let cpu = t.cpu;
        let curr_ms = self.curr_in_memstall[cpu];
        let period = self.period;
        let mut next_work = self.next_work;
        let mut bugs = 0;
        let mut id = t.group;
        loop {
            let group = &mut self.groups[id as usize];
            // A change queues the group's averaging work if it is not queued (it stops
            // when the group has been idle for a period).
            if group.work_at == u64::MAX {
                group.work_at = now + period;
                next_work = next_work.min(group.work_at);
            }
            let gc = &mut group.cpus[cpu];
            gc.record_times(now);
            let oncpu = if (clear | set) & TSK_ONCPU != 0 {
                set & TSK_ONCPU != 0
            } else {
                gc.state_mask & PSI_ONCPU != 0
            };
            for (i, n) in gc.tasks.iter_mut().enumerate() {
                if clear & (1 << i) != 0 {
                    match n.checked_sub(1) {
                        Some(v) => *n = v,
                        None => bugs += 1,
                    }
                }
                if set & (1 << i) != 0 {
                    *n += 1;
                }
            }
            gc.state_mask = test_states(&gc.tasks, oncpu, curr_ms);
            match group.parent {
                Some(p) => id = p,
                None => break,
            }
        }
        self.next_work = next_work;
        self.bugs += bugs;
    }

    /// The task becomes runnable (`psi_enqueue` on wake-up): its I/O wait, if any, ends.
    pub fn wake(&mut self, t: &mut PsiTask, now: u64) {
        if t.flags & TSK_RUNNING != 0 {
            return;
        }
        let mut set = TSK_RUNNING;
        if t.in_memstall() {
            set |= TSK_MEMSTALL_RUNNING;
        }
        let clear = t.flags & TSK_IOWAIT;
        self.task_change(t, clear, set, now);
    }

    /// The task is woken, if it slept, and starts executing on its CPU: [`wake`](Self::wake)
    /// and [`switch_in`](Self::switch_in) as one change.
    pub fn run(&mut self, t: &mut PsiTask, now: u64) {
        let want = TSK_RUNNING | TSK_ONCPU;
        if t.flags & want == want {
            return;
        }
        let mut set = want & !t.flags;
        if set & TSK_RUNNING != 0 && t.in_memstall() {
            set |= TSK_MEMSTALL_RUNNING;
        }
        let clear = if set & TSK_RUNNING != 0 {
            t.flags & TSK_IOWAIT
        } else {
            0
        };
        self.curr_in_memstall[t.cpu] = t.in_memstall();
        self.task_change(t, clear, set, now);
    }

    /// Put the task in a state in one change: running on its CPU or asleep (in I/O wait if
    /// `iowait`), inside a memstall section or not (`stalled`; leaving ends every nested
    /// section). What [`run`](Self::run), [`sleep`](Self::sleep) and the memstall calls do
    /// in turn, for a caller that knows where the task ends up: one update of the counts
    /// instead of two.
    pub fn set(&mut self, t: &mut PsiTask, running: bool, iowait: bool, stalled: bool, now: u64) {
        let mut want = if running {
            TSK_RUNNING | TSK_ONCPU
        } else if iowait {
            TSK_IOWAIT
        } else {
            0
        };
        if stalled {
            want |= TSK_MEMSTALL;
            if running {
                want |= TSK_MEMSTALL_RUNNING;
            }
        }
        if stalled != t.in_memstall() {
            t.memstall = stalled as u32;
        }
        if want == t.flags {
            return;
        }
        if running {
            self.curr_in_memstall[t.cpu] = stalled;
        } else if t.flags & TSK_ONCPU != 0 {
            self.curr_in_memstall[t.cpu] = false;
        }
        let (clear, set) = (t.flags & !want, want & !t.flags);
        self.task_change(t, clear, set, now);
    }

    /// The task exits: every count it holds is dropped, a memstall it is in ends.
    pub fn exit(&mut self, t: &mut PsiTask, now: u64) {
        if t.flags & TSK_ONCPU != 0 {
            self.curr_in_memstall[t.cpu] = false;
        }
        t.memstall = 0;
        let clear = t.flags;
        if clear != 0 {
            self.task_change(t, clear, 0, now);
        }
    }

    /// The task starts executing on its CPU (`psi_task_switch`, the incoming side).
    pub fn switch_in(&mut self, t: &mut PsiTask, now: u64) {
        if t.flags & TSK_ONCPU != 0 {
            return;
        }
        self.curr_in_memstall[t.cpu] = t.in_memstall();
        self.task_change(t, 0, TSK_ONCPU, now);
    }

    /// The task stops executing but stays runnable (preempted; the outgoing side of a switch).
    pub fn switch_out(&mut self, t: &mut PsiTask, now: u64) {
        if t.flags & TSK_ONCPU == 0 {
            return;
        }
        self.curr_in_memstall[t.cpu] = false;
        self.task_change(t, TSK_ONCPU, 0, now);
    }

    /// The task goes to sleep, off its CPU; in I/O wait when `iowait` (a page-lock or read
    /// wait in `io_schedule`). A memstall it is in goes on while it sleeps.
    pub fn sleep(&mut self, t: &mut PsiTask, iowait: bool, now: u64) {
        if t.flags & TSK_RUNNING == 0 {
            return;
        }
        if t.flags & TSK_ONCPU != 0 {
            self.curr_in_memstall[t.cpu] = false;
        }
        let clear = t.flags & (TSK_ONCPU | TSK_RUNNING | TSK_MEMSTALL_RUNNING);
        let set = if iowait { TSK_IOWAIT } else { 0 };
        self.task_change(t, clear, set, now);
    }

    /// The task moves to `cpu` (a task executing there is switched out first): its counts
    /// leave the old CPU and join the new one at `now`.
    pub fn migrate(&mut self, t: &mut PsiTask, cpu: usize, now: u64) {
        if t.cpu == cpu {
            return;
        }
        self.switch_out(t, now);
        let flags = t.flags;
        self.task_change(t, flags, 0, now);
        t.cpu = cpu;
        self.task_change(t, 0, flags, now);
    }

    /// `psi_memstall_enter`: sections nest; only the outermost changes the counts.
    pub fn memstall_enter(&mut self, t: &mut PsiTask, now: u64) {
        t.memstall += 1;
        if t.memstall > 1 {
            return;
        }
        if t.flags & TSK_ONCPU != 0 {
            self.curr_in_memstall[t.cpu] = true;
        }
        let mut set = TSK_MEMSTALL;
        if t.flags & TSK_RUNNING != 0 {
            set |= TSK_MEMSTALL_RUNNING;
        }
        self.task_change(t, 0, set, now);
    }

    /// `psi_memstall_leave`.
    pub fn memstall_leave(&mut self, t: &mut PsiTask, now: u64) {
        if t.memstall == 0 {
            self.bugs += 1;
            return;
        }
        t.memstall -= 1;
        if t.memstall > 0 {
            return;
        }
        if t.flags & TSK_ONCPU != 0 {
            self.curr_in_memstall[t.cpu] = false;
        }
        let clear = t.flags & (TSK_MEMSTALL | TSK_MEMSTALL_RUNNING);
        self.task_change(t, clear, 0, now);
    }

    /// Whether group `g` is in memory `some` and `full` on `cpu` now.
    pub fn mem_state(&self, g: PsiGroupId, cpu: usize) -> (bool, bool) {
        let m = self.groups[g as usize].cpus[cpu].state_mask;
        (m & (1 << PSI_MEM_SOME) != 0, m & (1 << PSI_MEM_FULL) != 0)
    }
}

mod avgs;
pub use avgs::psi_text;

#[cfg(test)]
mod tests;
