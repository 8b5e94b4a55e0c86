//! The per-CPU drift of a zone's NR_FREE_PAGES counter (`mm/vmstat.c`, 6.1; core-mm §2.5).
//!
//! The kernel does not update `zone->vm_stat[NR_FREE_PAGES]` on every buddy change: each CPU
//! accumulates its changes in `vm_stat_diff` and adds them to the zone counter only once their
//! magnitude exceeds the zone's `stat_threshold` (`__mod_zone_page_state`), or when the
//! per-CPU `vmstat_update` work folds them (every `sysctl_stat_interval`, one second). So the
//! counter the allocator's watermark checks read (`zone_page_state`) is off from the exact
//! free count by up to `stat_threshold` pages per CPU.
//!
//! Where that drift could let an allocation pass the low mark while the min one is breached
//! (more than `low - min` pages over all CPUs), `refresh_zone_stat_thresholds` sets the zone's
//! `percpu_drift_mark` (high watermark plus the largest drift), and `zone_watermark_ok_safe`
//! (`pgdat_balanced`, kswapd's sleep check) then reads the exact sum of the counter and the
//! differentials (`zone_page_state_snapshot`) below it. For those zones kswapd also lowers the
//! threshold while it is awake (`calculate_pressure_threshold`: `(low - min) / cpus`, at
//! least 1) and restores `calculate_normal_threshold` before a full sleep.
//!
//! Modelled: the differential of each CPU (the CPU of the actor that runs), the fold past the
//! threshold, both thresholds, the drift mark and the exact read below it. Simplified: the
//! one-second `vmstat_update` folds every CPU's differentials at once, at the first change
//! after each whole second of simulated time (the kernel's per-CPU deferrable works are not
//! synchronised); `rmqueue_bulk` moves its batch one page at a time (the kernel changes the
//! counter once per batch, which folds at once when the batch exceeds the threshold).

use super::watermark::{self, Watermarks};

/// `sysctl_stat_interval`: HZ, one second.
pub const STAT_INTERVAL_NS: u64 = 1_000_000_000;

/// NR_FREE_PAGES of one zone as the kernel counts it: the folded zone counter and each
/// CPU's differential.
#[derive(Debug, Clone, Default)]
pub struct FreePagesStat {
    /// Off (the default for an unmanaged zone or without `[host] vmstat_drift`): the counter
    /// is exact.
    pub enabled: bool,
    /// The CPU whose differential the next change goes to (the running actor's).
    pub cpu: usize,
    /// `vm_stat_diff[NR_FREE_PAGES]` of each CPU.
    diff: Vec<i32>,
    /// Σ diff: the exact free count minus the zone counter.
    pending: i64,
    /// The `stat_threshold` in force.
    threshold: i32,
    /// `calculate_normal_threshold`.
    normal: i32,
    /// `calculate_pressure_threshold`, used while kswapd is awake (zones with a drift mark).
    pressure: i32,
    /// `percpu_drift_mark`: below it `zone_watermark_ok_safe` reads the exact count (0: none).
    pub drift_mark: u64,
}

impl FreePagesStat {
    /// `refresh_zone_stat_thresholds` for a zone of `managed` pages with watermarks `wm` on a
    /// machine of `cpus` CPUs.
    pub fn new(managed: u64, wm: &Watermarks, cpus: u64) -> FreePagesStat {
        let cpus = cpus.max(1);
        let normal = watermark::stat_threshold(managed, cpus);
        let tolerate_drift = wm.low - wm.min;
        let max_drift = cpus * normal;
        let drift_mark = if max_drift > tolerate_drift {
            wm.high + max_drift
        } else {
            0
        };
        let pressure = (tolerate_drift / cpus).clamp(1, 125);
        FreePagesStat {
            enabled: true,
            cpu: 0,
            diff: vec![0; cpus as usize],
            pending: 0,
            threshold: normal as i32,
            normal: normal as i32,
            pressure: pressure as i32,
            drift_mark,
        }
    }

    /// `__mod_zone_page_state(zone, NR_FREE_PAGES, delta)` on the current CPU.
    #[inline(always)]
    pub fn modify(&mut self, delta: i64) {
        if self.enabled {
            self.modify_enabled(delta);
        }
    }

    #[inline]
    fn modify_enabled(&mut self, delta: i64) {
        let d = &mut self.diff[self.cpu];
        let x = *d as i64 + delta;
        if x.abs() > self.threshold as i64 {
            // Folded into the zone counter: it no longer waits on this CPU.
            self.pending -= *d as i64;
            *d = 0;
        } else {
            self.pending += delta;
            *d = x as i32;
        }
    }

    /// `refresh_cpu_vm_stats` of every CPU: all differentials into the zone counter.
    pub fn fold_all(&mut self) {
        self.diff.iter_mut().for_each(|d| *d = 0);
        self.pending = 0;
    }

    /// `set_pgdat_percpu_threshold`: the pressure threshold while kswapd is awake, the normal
    /// one before it sleeps; only zones with a drift mark change.
    pub fn set_pressure(&mut self, pressure: bool) {
        if self.enabled && self.drift_mark != 0 {
            self.threshold = if pressure { self.pressure } else { self.normal };
        }
    }

    /// Changes not yet in the zone counter (exact minus counter).
    #[inline(always)]
    pub fn pending(&self) -> i64 {
        self.pending
    }

    /// The threshold in force.
    pub fn threshold(&self) -> i32 {
        self.threshold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The validation guest's zones (2 CPUs): DMA, 3840 managed pages, and DMA32, 112690.
    const DMA: Watermarks = Watermarks {
        min: 22,
        low: 27,
        high: 32,
        promo: 0,
    };
    const DMA32: Watermarks = Watermarks {
        min: 656,
        low: 820,
        high: 984,
        promo: 0,
    };

    /// The guest's DMA zone of the validation scenarios (3840 managed, min 22 low 27 high 32)
    /// and its DMA32 zone (112690 managed, min 656 low 820 high 984), 2 CPUs: DMA's drift of
    /// 2 × 4 pages exceeds its 5-page low - min gap, so it has a drift mark of 32 + 8 and a
    /// pressure threshold of 5 / 2 = 2; DMA32's 2 × 12 stays inside its 164 pages.
    #[test]
    fn thresholds_and_drift_mark_of_the_guest_zones() {
        let dma = DMA;
        let s = FreePagesStat::new(3840, &dma, 2);
        assert_eq!((s.normal, s.pressure, s.drift_mark), (4, 2, 40));
        let dma32 = DMA32;
        let s = FreePagesStat::new(112_690, &dma32, 2);
        assert_eq!((s.normal, s.drift_mark), (12, 0));
    }

    #[test]
    fn changes_fold_past_the_threshold_per_cpu() {
        let dma = DMA;
        let mut s = FreePagesStat::new(3840, &dma, 2);
        // Four allocations on CPU 0 wait; the fifth folds all five.
        for _ in 0..4 {
            s.modify(-1);
        }
        assert_eq!(s.pending(), -4);
        s.modify(-1);
        assert_eq!(s.pending(), 0);
        // CPU 1 has its own differential.
        s.modify(-3);
        s.cpu = 1;
        s.modify(2);
        assert_eq!(s.pending(), -1);
        // A large change folds at once.
        s.modify(512);
        assert_eq!(s.pending(), -3);
        s.fold_all();
        assert_eq!(s.pending(), 0);
    }

    #[test]
    fn pressure_threshold_only_for_zones_with_a_drift_mark() {
        let dma = DMA;
        let mut s = FreePagesStat::new(3840, &dma, 2);
        s.set_pressure(true);
        assert_eq!(s.threshold(), 2);
        s.modify(-2);
        assert_eq!(s.pending(), -2);
        s.modify(-1);
        assert_eq!(s.pending(), 0);
        s.set_pressure(false);
        assert_eq!(s.threshold(), 4);
        let dma32 = DMA32;
        let mut s = FreePagesStat::new(112_690, &dma32, 2);
        s.set_pressure(true);
        assert_eq!(s.threshold(), 12);
    }

    fn machine(drift: bool) -> crate::machine::Machine {
        let text = format!(
            "name = \"t\"\n[host]\nram = \"512MiB\"\ncpus = 2\nvmstat_drift = {drift}\n\
             [[workload]]\nname = \"w\"\nanon = {{ size = \"1MiB\" }}\n"
        );
        let scn = crate::scenario::parse_str(&text, "t.toml").unwrap();
        crate::run::host_machine(&scn, 1, false).unwrap()
    }

    /// Allocations on one CPU reach the counter the allocator reads only past the threshold;
    /// below the drift mark kswapd's `zone_watermark_ok_safe` reads the exact count.
    #[test]
    fn the_allocator_reads_the_folded_counter_kswapd_the_exact_one_below_the_drift_mark() {
        use crate::machine::watermark::alloc_flags::ALLOC_NO_WATERMARKS;
        use crate::machine::watermark::MIGRATE_UNMOVABLE;
        let mut m = machine(true);
        let dma = 0;
        let take = |m: &mut crate::machine::Machine| {
            m.get_page_from_freelist(0, ALLOC_NO_WATERMARKS, dma, MIGRATE_UNMOVABLE)
                .unwrap();
        };
        let z = &m.zones[dma];
        let (exact, threshold, mark) = (
            z.free_pages(),
            z.free_area.stat.threshold() as u64,
            z.free_area.stat.drift_mark,
        );
        assert_eq!(threshold, 4);
        assert!(mark > 0 && exact > mark);
        for _ in 0..threshold {
            take(&mut m);
        }
        let z = &m.zones[dma];
        assert_eq!(z.free_pages(), exact - threshold);
        assert_eq!(z.nr_free_pages_state(), exact as i64);
        // Above the drift mark kswapd reads the counter too.
        assert_eq!(z.nr_free_pages_safe(), exact as i64);
        take(&mut m);
        assert_eq!(
            m.zones[dma].nr_free_pages_state(),
            (exact - threshold - 1) as i64
        );
        // Down to just below the drift mark, with four allocations not yet folded.
        while m.zones[dma].nr_free_pages_state() as u64 >= mark {
            take(&mut m);
        }
        m.zones[dma].free_area.stat.fold_all();
        for _ in 0..threshold {
            take(&mut m);
        }
        let z = &m.zones[dma];
        assert!((z.nr_free_pages_state() as u64) < mark);
        assert_eq!(
            z.nr_free_pages_state() - z.free_pages() as i64,
            threshold as i64
        );
        assert_eq!(z.nr_free_pages_safe(), z.free_pages() as i64);
    }

    /// `vmstat_update` folds every CPU's differentials once a second has passed; without
    /// `vmstat_drift` the counter is the exact count.
    #[test]
    fn the_periodic_fold_and_the_exact_default() {
        use crate::machine::watermark::alloc_flags::ALLOC_NO_WATERMARKS;
        use crate::machine::watermark::MIGRATE_UNMOVABLE;
        for drift in [true, false] {
            let mut m = machine(drift);
            m.set_cpu(1);
            m.get_page_from_freelist(0, ALLOC_NO_WATERMARKS, 0, MIGRATE_UNMOVABLE)
                .unwrap();
            let z = &m.zones[0];
            let behind = if drift { 1 } else { 0 };
            assert_eq!(z.nr_free_pages_state() - z.free_pages() as i64, behind);
            m.now = STAT_INTERVAL_NS - 1;
            m.set_cpu(0);
            let z = &m.zones[0];
            assert_eq!(z.nr_free_pages_state() - z.free_pages() as i64, behind);
            m.now = STAT_INTERVAL_NS;
            m.set_cpu(0);
            let z = &m.zones[0];
            assert_eq!(z.nr_free_pages_state(), z.free_pages() as i64);
        }
    }

    #[test]
    fn disabled_is_exact() {
        let mut s = FreePagesStat::default();
        s.modify(-7);
        assert_eq!(s.pending(), 0);
    }
}
