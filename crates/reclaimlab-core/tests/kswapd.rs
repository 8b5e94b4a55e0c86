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
