//! The averaging work of pressure stall information (`psi_avgs_work`: each CPU's stall
//! times folded into a group's totals and its avg10/avg60/avg300), and what a read shows
//! (`psi_show`, the pressure file's text).

use super::*;

impl Psi {
    /// `collect_percpu_times` for the averages: each CPU's stall time since the last
    /// aggregation, weighted by its whole jiffies of non-idle time, added to `total`.
    /// Returns whether some CPU was non-idle since the last aggregation (the averaging work
    /// queues itself again only then).
    pub(super) fn collect_percpu_times(&mut self, g: PsiGroupId, now: u64) -> bool {
        let hz = self.hz;
        let group = &mut self.groups[g as usize];
        let mut deltas = [0u128; 2];
        let mut nonidle_total = 0u64;
        let mut active = false;
        for gc in &mut group.cpus {
            let mut d = [0u64; NR_STATES];
            for (s, ds) in d.iter_mut().enumerate() {
                let mut t = gc.times[s];
                if gc.state_mask & (1 << s) != 0 {
                    t += now.saturating_sub(gc.state_start);
                }
                *ds = t.saturating_sub(gc.times_prev[s]);
                gc.times_prev[s] = gc.times_prev[s].max(t);
            }
            active |= d[PSI_NONIDLE] > 0;
            let nonidle = nsecs_to_jiffies(d[PSI_NONIDLE], hz);
            nonidle_total += nonidle;
            for s in [PSI_MEM_SOME, PSI_MEM_FULL] {
                deltas[s] += d[s] as u128 * nonidle as u128;
            }
        }
        for s in [PSI_MEM_SOME, PSI_MEM_FULL] {
            group.total[s] += (deltas[s] / nonidle_total.max(1) as u128) as u64;
        }
        active
    }

    /// `update_averages`, run once `now` has reached the group's next update: the share of
    /// the elapsed period spent stalled goes into the three averages, after decaying them
    /// over the whole periods the averaging missed.
    pub(super) fn update_averages(&mut self, g: PsiGroupId, now: u64) {
        let psi_period = self.period;
        let group = &mut self.groups[g as usize];
        let expires = group.avg_next_update;
        // Whole periods past the one that was due.
        let missed = (now - expires) / psi_period;
        group.avg_next_update = expires + (1 + missed) * psi_period;
        let period = now - (group.avg_last_update + missed * psi_period);
        group.avg_last_update = now;
        for s in [PSI_MEM_SOME, PSI_MEM_FULL] {
            // The kernel holds a sample in 32 bits; more than the period is carried over to
            // the next one, since `avg_total` advances only by what was used.
            let sample = ((group.total[s] - group.avg_total[s]) as u32 as u64).min(period);
            group.avg_total[s] += sample;
            let avg = &mut group.avg[s];
            if missed > 0 {
                for (a, &e) in avg.iter_mut().zip(&EXPS) {
                    *a = calc_load_n(*a, e, 0, missed);
                }
            }
            let pct = sample * 100 / period * FIXED_1;
            for (a, &e) in avg.iter_mut().zip(&EXPS) {
                *a = calc_load(*a, e, pct);
            }
        }
    }

    /// Aggregate group `g` at `now`: fold its CPUs into `total`, and update the averages if
    /// their period has ended (the periodic averaging work and a read of the file both do).
    pub fn aggregate(&mut self, g: PsiGroupId, now: u64) {
        self.collect_percpu_times(g, now);
        if now >= self.groups[g as usize].avg_next_update {
            self.update_averages(g, now);
        }
    }

    /// [`aggregate`](Self::aggregate) every group.
    pub fn aggregate_all(&mut self, now: u64) {
        for g in 0..self.groups.len() {
            self.aggregate(g as PsiGroupId, now);
        }
    }

    /// `psi_avgs_work` of group `g`, run at `now`: fold the CPUs, update the averages if their
    /// period is over, and run again a jiffy after the next update is due if the group was
    /// busy since the last fold; else stop until the group's next change.
    pub(super) fn avgs_work(&mut self, g: PsiGroupId, now: u64) {
        let active = self.collect_percpu_times(g, now);
        if now >= self.groups[g as usize].avg_next_update {
            self.update_averages(g, now);
        }
        let group = &mut self.groups[g as usize];
        group.work_at = if active {
            let wait = nsecs_to_jiffies(group.avg_next_update.saturating_sub(now), self.hz) + 1;
            now + jiffies_to_nsecs(wait, self.hz)
        } else {
            u64::MAX
        };
    }

    /// Run the averaging work of every group that is due by `now`, each at the time it was
    /// queued for, in time order (the simulator runs it when the machine next changes a
    /// task's state or is read, not from a timer of its own: between changes nothing moves).
    pub fn run_work(&mut self, now: u64) {
        while self.next_work <= now {
            let at = self.next_work;
            for g in 0..self.groups.len() {
                if self.groups[g].work_at == at {
                    self.avgs_work(g as PsiGroupId, at);
                }
            }
            self.next_work = self
                .groups
                .iter()
                .map(|g| g.work_at)
                .min()
                .unwrap_or(u64::MAX);
        }
    }

    /// What a read of group `g`'s pressure file at `now` shows (`psi_show`: the due
    /// averaging work, then a fold and, if due, an update), without changing this state: the
    /// reader is an observer, and a fold at a read would make the totals depend on when it
    /// is read (the weights are whole jiffies per fold).
    pub fn read(&self, g: PsiGroupId, now: u64) -> PsiReading {
        let mut psi = self.clone();
        psi.run_work(now);
        psi.aggregate(g, now);
        let group = &psi.groups[g as usize];
        PsiReading {
            total_ns: group.total,
            avg: group.avg,
        }
    }

    /// [`read`](Self::read) of every group at `now`, indexed by group id: one copy of the
    /// state for all of them (a group's fold touches only its own counts), so a time-series
    /// sample of many cgroups costs one clone, not one per cgroup.
    pub fn read_all(&self, now: u64) -> Vec<PsiReading> {
        let mut psi = self.clone();
        psi.run_work(now);
        (0..psi.groups.len())
            .map(|g| {
                psi.aggregate(g as PsiGroupId, now);
                let group = &psi.groups[g];
                PsiReading {
                    total_ns: group.total,
                    avg: group.avg,
                }
            })
            .collect()
    }

    /// A read of group `g`'s pressure file by an actor at `now` (`psi_show`): unlike
    /// [`read`](Self::read), it folds the group into this state, as the kernel's read does
    /// (an agent that reads the file every few seconds is part of the run; an observer is
    /// not).
    pub fn read_now(&mut self, g: PsiGroupId, now: u64) -> PsiReading {
        self.run_work(now);
        self.aggregate(g, now);
        let group = &self.groups[g as usize];
        PsiReading {
            total_ns: group.total,
            avg: group.avg,
        }
    }

    /// Memory stall time of group `g` folded so far, ns: `some` or (`full`) full.
    pub fn total_ns(&self, g: PsiGroupId, full: bool) -> u64 {
        self.groups[g as usize].total[full as usize]
    }

    /// The 10 s, 60 s and 300 s averages of `some` or (`full`) full, fixed point.
    pub fn avgs(&self, g: PsiGroupId, full: bool) -> [u64; 3] {
        self.groups[g as usize].avg[full as usize]
    }

    /// The memory pressure text of group `g` as last aggregated.
    pub fn memory_pressure_text(&self, g: PsiGroupId) -> String {
        let group = &self.groups[g as usize];
        psi_text(&group.avg, &group.total)
    }

    /// A read of `/proc/pressure/memory` (group 0) or a cgroup's `memory.pressure` at `now`
    /// (`psi_show`): aggregate, then print.
    pub fn show_memory(&mut self, g: PsiGroupId, now: u64) -> String {
        self.aggregate(g, now);
        self.memory_pressure_text(g)
    }
}

/// A fixed-point average as the file prints it: whole percent, then two truncated decimals.
pub(super) fn fixed_pct(a: u64) -> String {
    format!(
        "{}.{:02}",
        a >> FSHIFT,
        ((a & (FIXED_1 - 1)) * 100) >> FSHIFT
    )
}

/// The two lines of a memory pressure file from the averages and totals (ns).
pub fn psi_text(avg: &[[u64; 3]; 2], total: &[u64; 2]) -> String {
    let mut out = String::new();
    for (name, s) in [("some", PSI_MEM_SOME), ("full", PSI_MEM_FULL)] {
        let [a10, a60, a300] = avg[s];
        out.push_str(&format!(
            "{name} avg10={} avg60={} avg300={} total={}\n",
            fixed_pct(a10),
            fixed_pct(a60),
            fixed_pct(a300),
            total[s] / 1000
        ));
    }
    out
}
