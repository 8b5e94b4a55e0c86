//! kswapd driven step by step on a machine built from a scenario: its vmstat threshold while
//! awake, and the start of a run (`[cost] balance_start`). An integration test: the actor's own
//! unit tests may not reach up to the scenario parser and the machine builder.

use reclaimlab_core::actors::kswapd::{Kswapd, Next};

/// core-mm §4.4: awake, kswapd runs with the pressure vmstat threshold on the zones that
/// have a drift mark (the 512 MiB guest's DMA: 2 instead of 4) and restores the normal one
/// before its full sleep; DMA32, without a drift mark, keeps its 12 throughout.
#[test]
fn an_awake_kswapd_lowers_the_vmstat_threshold_of_drift_mark_zones() {
    let text = "name = \"t\"\n[host]\nram = \"512MiB\"\ncpus = 2\nvmstat_drift = true\n\
                [cost]\nwakeup_latency = \"0us\"\n\
                [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
    let scn = reclaimlab_core::scenario::parse_str(text, "t.toml").unwrap();
    let mut m = reclaimlab_core::run::host_machine(&scn, 1, false).unwrap();
    let mut k = Kswapd::new(
        reclaimlab_core::policy::kswapd_loop::SWITCH.make("v6.1"),
        reclaimlab_core::policy::kcompactd::SWITCH.make("v6.1"),
    );
    let thresholds = |m: &reclaimlab_core::machine::Machine| {
        (
            m.zones[0].free_area.stat.threshold(),
            m.zones[1].free_area.stat.threshold(),
        )
    };
    assert_eq!(thresholds(&m), (4, 12));
    let mut next = k.wake(&mut m);
    assert_eq!(thresholds(&m), (2, 12));
    // The node is balanced: one balance_pgdat, the nap, then the full sleep.
    while let Next::At(t) = next {
        m.now = t;
        next = k.step(&mut m);
    }
    assert!(k.is_asleep());
    assert_eq!(thresholds(&m), (4, 12));
}

/// `balance_start`: kswapd decides as it begins its run and reaches its first LRU batch
/// that long after, so a node that another reclaimer balanced meanwhile still gets that
/// batch; without it the batch's step itself decides, and finds the node balanced.
#[test]
fn balance_start_delays_the_first_batch_not_the_decision_to_reclaim() {
    use reclaimlab_core::machine::memory::{Access, TaskCtx};
    use reclaimlab_core::machine::vmstat::VmEvent;
    use reclaimlab_core::machine::watermark::{
        alloc_flags::ALLOC_NO_WATERMARKS, MIGRATE_UNMOVABLE,
    };
    use reclaimlab_core::machine::MAX_NR_ZONES;
    let first_batch = |start: &str| {
        let text = format!(
            "name = \"t\"\n[host]\nram = \"256MiB\"\npcp_lists = false\n\
             [cost]\nwakeup_latency = \"0us\"\nbalance_start = \"{start}\"\n\
             [[workload]]\nname = \"w\"\nanon = {{ size = \"1MiB\" }}\n"
        );
        let scn = reclaimlab_core::scenario::parse_str(&text, "t.toml").unwrap();
        let mut m = reclaimlab_core::run::host_machine(&scn, 1, false).unwrap();
        // 32 MiB of clean page cache, then every free page held by the kernel.
        let task = m.add_task("reader", 0);
        let r = m.add_region(task, 8192, false).unwrap();
        let base = m.regions[r].base;
        let mut t = TaskCtx {
            task,
            ..TaskCtx::default()
        };
        for vp in base..base + 8192 {
            if !reclaimlab_core::machine::pte::pte_present(m.pte[vp as usize]) {
                let a = m.file_access(vp, base + 8192, false, &mut t);
                assert!(matches!(a, Access::Block(_)), "{a:?}");
            }
        }
        let hz = MAX_NR_ZONES - 1;
        let mut held = Vec::new();
        while let Some(p) = m.get_page_from_freelist(0, ALLOC_NO_WATERMARKS, hz, MIGRATE_UNMOVABLE)
        {
            m.mark_kernel_pages(p, 0);
            held.push(p);
        }
        assert!(!m.pgdat_balanced(0, hz));
        // Not a boosted run (the fallbacks of taking every page boosted watermarks).
        for z in m.zones.iter_mut() {
            z.watermark_boost = 0;
        }
        let mut k = Kswapd::new(
            reclaimlab_core::policy::kswapd_loop::SWITCH.make("v6.1"),
            reclaimlab_core::policy::kcompactd::SWITCH.make("v6.1"),
        );
        m.now = 1_000_000;
        let Next::At(at) = k.wake(&mut m) else {
            panic!("kswapd did not start a run")
        };
        assert_eq!(
            m.vm.get(VmEvent::PgscanKswapd),
            0,
            "no batch before its time"
        );
        // Someone else balances the node before kswapd's next step.
        for p in held {
            m.free_pages(p, 0);
        }
        assert!(m.pgdat_balanced(0, hz));
        m.now = at;
        k.step(&mut m);
        (at - 1_000_000, m.vm.get(VmEvent::PgscanKswapd))
    };
    let (wait, scanned) = first_batch("150us");
    assert_eq!(wait, 150_000);
    assert!(
        scanned > 0,
        "the batch decided on at the start of the run was skipped"
    );
    assert_eq!(first_batch("0us"), (0, 0));
}

/// core-mm §4.2: an allocating task wakes kswapd from `wake_all_kswapds` in its slow path, at
/// the moment it gets there. A task's step batches many accesses: one 80 µs into its step
/// wakes kswapd at the step's start + 80 µs, and kswapd runs its wake-up latency (20 µs)
/// after that, not after the step's start. A nap that has run out meanwhile is not cut short
/// after its end.
#[test]
fn a_task_wakes_kswapd_where_its_clock_is() {
    use reclaimlab_core::machine::gfp::GFP_HIGHUSER_MOVABLE;
    use reclaimlab_core::machine::memory::TaskCtx;
    use reclaimlab_core::machine::watermark::{
        alloc_flags::ALLOC_NO_WATERMARKS, MIGRATE_UNMOVABLE,
    };
    use reclaimlab_core::machine::MAX_NR_ZONES;
    let text = "name = \"t\"\n[host]\nram = \"256MiB\"\n\
                [cost]\nwakeup_latency = \"20us\"\nslowpath = \"0us\"\n\
                [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
    let scn = reclaimlab_core::scenario::parse_str(text, "t.toml").unwrap();
    let mut m = reclaimlab_core::run::host_machine(&scn, 1, false).unwrap();
    let hz = MAX_NR_ZONES - 1;
    // Every free page held by the kernel: the task's allocation goes to the slow path.
    let mut held = Vec::new();
    while let Some(p) = m.get_page_from_freelist(0, ALLOC_NO_WATERMARKS, hz, MIGRATE_UNMOVABLE) {
        m.mark_kernel_pages(p, 0);
        held.push(p);
    }
    for z in m.zones.iter_mut() {
        z.watermark_boost = 0;
    }
    let mut k = Kswapd::new(
        reclaimlab_core::policy::kswapd_loop::SWITCH.make("v6.1"),
        reclaimlab_core::policy::kcompactd::SWITCH.make("v6.1"),
    );
    m.now = 1_000_000;
    let task = m.add_task("w", 0);
    let mut t = TaskCtx {
        task,
        cost_ns: 80_000,
        ..TaskCtx::default()
    };
    // Nothing to reclaim: the allocation fails, after waking kswapd.
    assert!(m.alloc_pages(GFP_HIGHUSER_MOVABLE, 0, &mut t).is_err());
    assert_eq!(m.kswapd.woken_at, 1_080_000);
    assert_eq!(
        m.kswapd.waker_ns, 0,
        "set only while the task is in the allocator"
    );
    assert_eq!(k.wake(&mut m), Next::At(1_100_000));

    // The nap: a balanced node (the pages given back), kswapd run until it naps.
    for p in held {
        m.free_pages(p, 0);
    }
    m.now = 1_100_000;
    let mut next = k.step(&mut m);
    let nap_end = loop {
        let Next::At(at) = next else {
            panic!("kswapd slept without its nap")
        };
        if at == m.now + 100_000_000 {
            break at;
        }
        m.now = at;
        next = k.step(&mut m);
    };
    // A task 60 ms into the nap whose clock is already past its end wakes kswapd: the
    // latency counts from the nap's end.
    m.now = nap_end - 40_000_000;
    m.kswapd.woken_at = nap_end + 5_000_000;
    m.kswapd.waiting = false;
    assert_eq!(k.wake(&mut m), Next::At(nap_end + 20_000));
}
