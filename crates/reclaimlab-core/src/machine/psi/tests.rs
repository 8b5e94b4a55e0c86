//! Unit tests of PSI's memory accounting, from the worked examples of
//! docs/design/memcg-psi.md §8.7 (HZ = 250, `psi_period` = 2,004,000,000 ns).

use super::*;
use crate::machine::HZ;

const MS: u64 = 1_000_000;
const SYS: PsiGroupId = PSI_SYSTEM;

/// The decay constants are `FIXED_1 / exp(2 s / window)` rounded: computed here from that
/// definition, so a mistyped constant fails.
#[test]
fn the_decay_constants_are_two_seconds_of_each_window() {
    for (window_s, exp) in [(10.0f64, EXP_10S), (60.0, EXP_60S), (300.0, EXP_300S)] {
        let want = (FIXED_1 as f64 / (2.0 / window_s).exp()).round() as u64;
        assert_eq!(exp, want, "{window_s} s");
    }
    assert_eq!(FIXED_1, 2048);
}

/// §8.4, §8.7 (d): the decay's powers for missed periods, rounded at each product.
#[test]
fn fixed_power_gives_the_decay_over_missed_periods() {
    let powers: Vec<u64> = (1..=4)
        .map(|n| fixed_power_int(EXP_10S, FSHIFT, n))
        .collect();
    assert_eq!(powers, vec![1677, 1373, 1124, 920]);
    assert_eq!(fixed_power_int(EXP_60S, FSHIFT, 3), 1853);
    assert_eq!(fixed_power_int(EXP_300S, FSHIFT, 3), 2006);
    assert_eq!(fixed_power_int(EXP_10S, FSHIFT, 0), FIXED_1);
    assert_eq!(calc_load_n(102_147, EXP_10S, 0, 3), 56_061);
    assert_eq!(calc_load_n(64_657, EXP_60S, 0, 3), 58_500);
    assert_eq!(calc_load_n(19_059, EXP_300S, 0, 3), 18_668);
}

/// `psi_period` is 2 s plus a jiffy; a jiffy is 4 ms at HZ = 250.
#[test]
fn the_period_is_two_seconds_and_a_jiffy() {
    assert_eq!(psi_period_ns(HZ), 2_004_000_000);
    assert_eq!(nsecs_to_jiffies(psi_period_ns(HZ), HZ), 501);
    assert_eq!(nsecs_to_jiffies(3_999_999, HZ), 0);
    assert_eq!(psi_period_ns(1000), 2_001_000_000);
    assert_eq!(nsecs_to_jiffies(2_001_000_000, 1000), 2001);
    assert_eq!(Psi::new(2, HZ, 0).period_ns(), 2_004_000_000);
}

/// §8.7 (a): the state table of one group on one CPU with tasks A and B; counts are
/// [IOWAIT, MEMSTALL, RUNNING, MEMSTALL_RUNNING].
#[test]
fn some_and_full_follow_the_state_table() {
    let state = |t: [u32; 4], oncpu: bool, curr_ms: bool| {
        let m = test_states(&t, oncpu, curr_ms);
        (m & (1 << PSI_MEM_SOME) != 0, m & (1 << PSI_MEM_FULL) != 0)
    };
    // A running, B asleep.
    assert_eq!(state([0, 0, 1, 0], true, false), (false, false));
    // B reclaiming on the CPU, A waiting for it: full because the CPU itself is stalled.
    assert_eq!(state([0, 1, 2, 1], true, true), (true, true));
    // The same counts with A on the CPU would not be full.
    assert_eq!(state([0, 1, 2, 1], true, false), (true, false));
    // B asleep in the throttle, A running.
    assert_eq!(state([0, 1, 1, 0], true, false), (true, false));
    // B asleep in the throttle, A asleep: nothing runnable, so full.
    assert_eq!(state([0, 1, 0, 0], false, false), (true, true));
    // B reclaiming, A asleep.
    assert_eq!(state([0, 1, 1, 1], true, true), (true, true));
    // Non-idle: any task runnable, stalled or in I/O wait.
    assert_eq!(test_states(&[1, 0, 0, 0], false, false), 1 << PSI_NONIDLE);
    assert_eq!(test_states(&[0, 0, 0, 0], false, false), 0);
}

/// §8.7 (b)'s timeline on one CPU, through the task calls: 0-100 ms A runs; 100-300 ms B
/// reclaims on the CPU with A waiting; 300-500 ms B sleeps in the throttle while A runs;
/// 500-600 ms both asleep, B still stalled; then idle.
fn timeline_b() -> Psi {
    let mut psi = Psi::new(1, HZ, 0);
    let mut a = PsiTask::new(SYS, 0);
    let mut b = PsiTask::new(SYS, 0);
    psi.wake(&mut a, 0);
    psi.switch_in(&mut a, 0);
    assert_eq!(psi.mem_state(SYS, 0), (false, false));
    psi.wake(&mut b, 100 * MS);
    psi.switch_out(&mut a, 100 * MS);
    psi.switch_in(&mut b, 100 * MS);
    psi.memstall_enter(&mut b, 100 * MS);
    assert_eq!(psi.mem_state(SYS, 0), (true, true));
    psi.sleep(&mut b, false, 300 * MS);
    psi.switch_in(&mut a, 300 * MS);
    assert_eq!(psi.mem_state(SYS, 0), (true, false));
    psi.sleep(&mut a, false, 500 * MS);
    assert_eq!(psi.mem_state(SYS, 0), (true, true));
    psi.wake(&mut b, 600 * MS);
    psi.switch_in(&mut b, 600 * MS);
    psi.memstall_leave(&mut b, 600 * MS);
    psi.sleep(&mut b, false, 600 * MS);
    assert_eq!(psi.mem_state(SYS, 0), (false, false));
    assert!(!b.in_memstall() && b.flags() == 0 && a.flags() == 0);
    assert_eq!(psi.bugs, 0);
    psi
}

/// §8.7 (b): some 500 ms and full 300 ms (the one CPU's 150 jiffies of non-idle time cancel),
/// and the first averages and the file's text after one period.
#[test]
fn one_cpu_one_period_gives_the_spec_totals_and_averages() {
    let mut psi = timeline_b();
    // A read before the period ends folds the totals but leaves the averages.
    let early = psi.show_memory(SYS, 1_000 * MS);
    assert_eq!(
        early,
        "some avg10=0.00 avg60=0.00 avg300=0.00 total=500000\n\
         full avg10=0.00 avg60=0.00 avg300=0.00 total=300000\n"
    );
    let text = psi.show_memory(SYS, psi.period_ns());
    assert_eq!(psi.total_ns(SYS, false), 500_000_000);
    assert_eq!(psi.total_ns(SYS, true), 300_000_000);
    assert_eq!(psi.avgs(SYS, false), [8_904, 1_608, 336]);
    assert_eq!(psi.avgs(SYS, true), [5_194, 938, 196]);
    assert_eq!(
        text,
        "some avg10=4.34 avg60=0.78 avg300=0.16 total=500000\n\
         full avg10=2.53 avg60=0.45 avg300=0.09 total=300000\n"
    );
    // The same timeline read only at the period's end gives the same figures.
    let mut once = timeline_b();
    assert_eq!(once.show_memory(SYS, once.period_ns()), text);
}

/// §8.7 (c) and (d): a task stalled half of every period, on its own on its CPU (so full
/// equals some); then idle, with the next update three periods late.
#[test]
fn steady_half_stall_and_the_idle_catch_up() {
    let mut psi = Psi::new(1, HZ, 0);
    let p = psi.period_ns();
    let mut t = PsiTask::new(SYS, 0);
    psi.wake(&mut t, 0);
    psi.switch_in(&mut t, 0);
    let mut seen = Vec::new();
    for k in 0..30 {
        psi.memstall_enter(&mut t, k * p);
        psi.memstall_leave(&mut t, k * p + p / 2);
        psi.aggregate(SYS, (k + 1) * p);
        if [1, 2, 5, 30].contains(&(k + 1)) {
            seen.push(psi.avgs(SYS, false));
        }
    }
    assert_eq!(
        seen,
        vec![
            [18_550, 3_350, 700],
            [33_740, 6_591, 1_396],
            [64_703, 15_691, 3_455],
            [102_147, 64_657, 19_059],
        ]
    );
    assert_eq!(psi.avgs(SYS, true), [102_147, 64_657, 19_059]);
    assert_eq!(psi.total_ns(SYS, false), 30 * (p / 2));
    assert_eq!(avgs::fixed_pct(102_147), "49.87");

    psi.sleep(&mut t, false, 30 * p);
    let text = psi.show_memory(SYS, 34 * p + 1);
    assert_eq!(psi.avgs(SYS, false), [45_905, 56_586, 18_540]);
    assert_eq!(
        text.lines().next(),
        Some("some avg10=22.41 avg60=27.62 avg300=9.05 total=30060000")
    );
    // The next update is due on the grid, one period after the current one.
    psi.aggregate(SYS, 35 * p - 1);
    assert_eq!(psi.avgs(SYS, false), [45_905, 56_586, 18_540]);
    psi.aggregate(SYS, 35 * p);
    assert!(psi.avgs(SYS, false)[0] < 45_905);
}

/// §8.7 (e): two CPUs, one busy all period with 1 s of stall, one busy 0.5 s without: the
/// total is the stall weighted by non-idle jiffies (501 and 125), not 1 s nor 0.5 s.
#[test]
fn two_cpus_are_weighted_by_their_non_idle_time() {
    let mut psi = Psi::new(2, HZ, 0);
    let mut x = PsiTask::new(SYS, 0);
    let mut y = PsiTask::new(SYS, 1);
    psi.wake(&mut x, 0);
    psi.switch_in(&mut x, 0);
    psi.memstall_enter(&mut x, 0);
    psi.memstall_leave(&mut x, 1_000 * MS);
    psi.wake(&mut y, 0);
    psi.switch_in(&mut y, 0);
    psi.sleep(&mut y, false, 500 * MS);
    psi.aggregate(SYS, psi.period_ns());
    assert_eq!(psi.total_ns(SYS, false), 800_319_488);
    assert_eq!(psi.total_ns(SYS, true), 800_319_488);
}

/// §8.4: a CPU with less than a jiffy of non-idle time in the interval weighs nothing, so on
/// one CPU a 3 ms stall between two aggregations is dropped; 4 ms (one jiffy) is kept.
#[test]
fn a_stall_shorter_than_a_jiffy_between_aggregations_is_dropped() {
    for (ms, kept) in [(3, 0), (4, 4 * MS)] {
        let mut psi = Psi::new(1, HZ, 0);
        let mut t = PsiTask::new(SYS, 0);
        psi.wake(&mut t, 0);
        psi.switch_in(&mut t, 0);
        psi.memstall_enter(&mut t, 0);
        psi.memstall_leave(&mut t, ms * MS);
        psi.sleep(&mut t, false, ms * MS);
        psi.aggregate(SYS, 10 * MS);
        assert_eq!(psi.total_ns(SYS, false), kept, "{ms} ms");
    }
}

/// §8.7 (f): a task's stall counts in its cgroup's group and every ancestor's; kswapd's only
/// in the system group.
#[test]
fn stalls_count_up_the_hierarchy_and_kswapd_only_in_the_system() {
    let mut psi = Psi::new(2, HZ, 0);
    let parent = psi.add_group(SYS, 0).unwrap();
    let child = psi.add_group(parent, 0).unwrap();
    assert!(psi.add_group(9, 0).is_err());
    let mut task = PsiTask::new(child, 0);
    psi.wake(&mut task, 0);
    psi.switch_in(&mut task, 0);
    psi.memstall_enter(&mut task, 0);
    for g in [child, parent, SYS] {
        assert_eq!(psi.mem_state(g, 0), (true, true));
    }
    psi.memstall_leave(&mut task, 1_000 * MS);

    let mut kswapd = PsiTask::new(SYS, 1);
    psi.wake(&mut kswapd, 0);
    psi.switch_in(&mut kswapd, 0);
    psi.memstall_enter(&mut kswapd, 500 * MS);
    assert_eq!(psi.mem_state(SYS, 1), (true, true));
    assert_eq!(psi.mem_state(parent, 1), (false, false));
    assert_eq!(psi.mem_state(child, 1), (false, false));
    psi.memstall_leave(&mut kswapd, 1_000 * MS);
    psi.sleep(&mut kswapd, false, 1_500 * MS);

    psi.aggregate_all(psi.period_ns());
    for g in [child, parent] {
        assert_eq!(psi.total_ns(g, false), 1_000_000_000);
        assert_eq!(psi.total_ns(g, true), 1_000_000_000);
    }
    // The system group: CPU0 (501 jiffies busy) stalled 1 s, CPU1 (375) 0.5 s.
    let system = (1_000_000_000u64 * 501 + 500_000_000 * 375) / (501 + 375);
    assert_eq!(psi.total_ns(SYS, false), system);
    assert_eq!(system, 785_958_904);
}

/// Memstall sections nest (only the outermost counts); leaving one never entered is a bug
/// the counts ignore; a task asleep in I/O wait is non-idle but not stalled.
#[test]
fn memstall_sections_nest_and_iowait_is_not_a_stall() {
    let mut psi = Psi::new(1, HZ, 0);
    let mut t = PsiTask::new(SYS, 0);
    psi.wake(&mut t, 0);
    psi.switch_in(&mut t, 0);
    psi.memstall_enter(&mut t, 0);
    psi.memstall_enter(&mut t, MS);
    psi.memstall_leave(&mut t, 2 * MS);
    assert!(t.in_memstall());
    assert_eq!(psi.mem_state(SYS, 0), (true, true));
    psi.memstall_leave(&mut t, 8 * MS);
    assert_eq!(psi.mem_state(SYS, 0), (false, false));
    psi.memstall_leave(&mut t, 8 * MS);
    assert_eq!(psi.bugs, 1);
    psi.sleep(&mut t, true, 8 * MS);
    assert_eq!(t.flags(), TSK_IOWAIT);
    assert_eq!(psi.mem_state(SYS, 0), (false, false));
    psi.wake(&mut t, 20 * MS);
    assert_eq!(t.flags(), TSK_RUNNING);
    psi.sleep(&mut t, false, 20 * MS);
    psi.aggregate(SYS, 40 * MS);
    // 8 ms of stall; 20 ms non-idle (5 jiffies) on the only CPU: kept whole.
    assert_eq!(psi.total_ns(SYS, false), 8 * MS);
    assert_eq!(psi.total_ns(SYS, true), 8 * MS);
}

/// A task asleep in a stall that moves to another CPU takes its stall with it.
#[test]
fn a_migrating_task_takes_its_counts_along() {
    let mut psi = Psi::new(2, HZ, 0);
    let mut t = PsiTask::new(SYS, 0);
    psi.wake(&mut t, 0);
    psi.switch_in(&mut t, 0);
    psi.memstall_enter(&mut t, 0);
    psi.sleep(&mut t, false, MS);
    assert_eq!(psi.mem_state(SYS, 0), (true, true));
    psi.migrate(&mut t, 1, 2 * MS);
    assert_eq!((t.cpu(), t.group()), (1, SYS));
    assert_eq!(psi.mem_state(SYS, 0), (false, false));
    assert_eq!(psi.mem_state(SYS, 1), (true, true));
    psi.wake(&mut t, 3 * MS);
    psi.switch_in(&mut t, 3 * MS);
    psi.memstall_leave(&mut t, 4 * MS);
    assert_eq!(psi.mem_state(SYS, 1), (false, false));
    assert_eq!(t.flags(), TSK_RUNNING | TSK_ONCPU);
    assert_eq!(psi.bugs, 0);
}

/// §8.6: two lines, the fractions zero-padded and truncated, `total` in microseconds.
#[test]
fn the_text_has_two_lines_with_padded_fractions() {
    let avg = [[2048 + 100, 8_904, 0], [5 * 2048, 2047, 1]];
    let text = psi_text(&avg, &[1_999, 123_456_789]);
    assert_eq!(
        text,
        "some avg10=1.04 avg60=4.34 avg300=0.00 total=1\n\
         full avg10=5.00 avg60=0.99 avg300=0.00 total=123456\n"
    );
}

/// The averaging work (`psi_avgs_work`) runs a period after the first change, then a jiffy
/// after each update is due, at the time it was queued for, whenever the next change or read
/// comes: here a change at 3 s runs the 2.004 s work, and a read at 4.5 s the 4.012 s work.
#[test]
fn the_averaging_work_runs_on_the_period_grid_plus_a_jiffy() {
    let mut psi = Psi::new(1, HZ, 0);
    let p = psi.period_ns();
    let mut t = psi.task(SYS, 0);
    psi.run(&mut t, 0);
    psi.memstall_enter(&mut t, 0);
    psi.memstall_leave(&mut t, 1_000 * MS);
    // Nothing has folded yet: no change came after the work was due.
    assert_eq!(psi.total_ns(SYS, false), 0);
    psi.memstall_enter(&mut t, 3_000 * MS);
    // The work ran at 2.004 s: 1 s of 2.004 s stalled, 49 %.
    let first = calc_load(0, EXP_10S, 49 * FIXED_1);
    assert_eq!(psi.total_ns(SYS, false), 1_000 * MS);
    assert_eq!(psi.avgs(SYS, false)[0], first);
    // Busy since, so it runs again at 4.012 s (the next update, 4.008 s, plus a jiffy): the
    // stall from 3 s, 1.012 s of the 2.008 s since the last update, is 50 %.
    let r = psi.read(SYS, 4_500 * MS);
    assert_eq!(p + 502 * 4 * MS, 4_012 * MS);
    assert_eq!(r.avg[0][0], calc_load(first, EXP_10S, 50 * FIXED_1));
    assert_eq!(r.total_ns[0], 2_500 * MS);
    // A read changes nothing: the same read again, the state as it was.
    assert_eq!(psi.read(SYS, 4_500 * MS), r);
    assert_eq!(psi.total_ns(SYS, false), 1_000 * MS);
    assert_eq!(psi.avgs(SYS, false)[0], first);
    assert_eq!(r.avg_x100(false, 0), r.avg[0][0] * 100 / FIXED_1);
}

/// An idle group stops its work; the next change queues it a period later, and the update
/// then decays the averages over the periods it missed in one step (`calc_load_n`).
#[test]
fn an_idle_group_stops_its_work_and_catches_up() {
    let mut psi = Psi::new(1, HZ, 0);
    let p = psi.period_ns();
    let mut t = psi.task(SYS, 0);
    psi.run(&mut t, 0);
    psi.memstall_enter(&mut t, 0);
    psi.memstall_leave(&mut t, p / 2);
    psi.sleep(&mut t, false, p / 2);
    // Work at p (busy: queued again for 2p + a jiffy), at 2p + a jiffy (idle: stops).
    psi.run(&mut t, 10 * p);
    let after_one = psi.avgs(SYS, false);
    // Half of the first period stalled: 50 %; nothing in the second.
    assert_eq!(
        after_one[0],
        calc_load(calc_load(0, EXP_10S, 50 * FIXED_1), EXP_10S, 0)
    );
    // Queued again at 10p, due at 11p: the update due at 3p comes 8 whole periods late.
    let r = psi.read(SYS, 11 * p);
    let decayed = calc_load_n(after_one[0], EXP_10S, 0, 8);
    assert_eq!(r.avg[0][0], calc_load(decayed, EXP_10S, 0));
}

/// `run` is a wake-up and a switch in at once; `exit` drops every count a task holds, a
/// stall and an I/O wait included.
#[test]
fn run_and_exit_set_and_drop_every_count() {
    let mut psi = Psi::new(2, HZ, 0);
    let mut t = psi.task(SYS, 3);
    assert_eq!(t.cpu(), 1, "CPU numbers wrap around");
    psi.memstall_enter(&mut t, 0);
    psi.run(&mut t, MS);
    assert_eq!(
        t.flags(),
        TSK_RUNNING | TSK_ONCPU | TSK_MEMSTALL | TSK_MEMSTALL_RUNNING
    );
    psi.sleep(&mut t, true, 2 * MS);
    assert_eq!(t.flags(), TSK_MEMSTALL | TSK_IOWAIT);
    assert_eq!(psi.mem_state(SYS, 1), (true, true));
    psi.exit(&mut t, 3 * MS);
    assert_eq!((t.flags(), t.in_memstall()), (0, false));
    assert_eq!(psi.mem_state(SYS, 1), (false, false));
    assert_eq!(psi.bugs, 0);
}
