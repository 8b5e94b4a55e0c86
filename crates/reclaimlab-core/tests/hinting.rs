//! The hinting variants on a real guest machine: the spec's worked example of free page
//! reporting's pace (mechanisms.md §D4), D3's buffer, D2's capture arrays.

use reclaimlab_core::machine::page_reporting::{SlotEvent, WorkStep, PAGE_REPORTING_CAPACITY};
use reclaimlab_core::machine::{Machine, MAX_ORDER};
use reclaimlab_core::policy::hinting::SWITCH;

/// A guest whose RAM is all one zone (DMA32 up to 4 GiB, after DMA's 16 MiB), all free.
fn guest(variant: &str, ram: &str) -> Machine {
    let text = format!(
        "name = \"t\"\n[host]\nram = \"{ram}\"\nlowmem = \"{ram}\"\nkernel_used = \"0\"\n\
         [[workload]]\nname = \"w\"\nanon = {{ size = \"1MiB\" }}\n"
    );
    let scn = reclaimlab_core::scenario::parse_str(&text, "t.toml").unwrap();
    let mut m = reclaimlab_core::run::host_machine(&scn, 1, false).unwrap();
    m.make_guest(
        SWITCH.make(variant),
        9,
        reclaimlab_core::machine::cost::KvmCost::default(),
    );
    m
}

fn reported_blocks(m: &Machine) -> Vec<(u32, u8)> {
    m.guest
        .as_ref()
        .unwrap()
        .events
        .iter()
        .filter_map(|e| match *e {
            SlotEvent::Report(p, o) => Some((p, o)),
            _ => None,
        })
        .collect()
}

/// One pass of the reporting work: the blocks it reported.
fn pass(m: &mut Machine) -> (usize, WorkStep) {
    m.guest_mut().events.clear();
    loop {
        match m.guest_work(0) {
            WorkStep::More => continue,
            done => return (reported_blocks(m).len(), done),
        }
    }
}

/// §D4's example: with about 1,024 free order-10 blocks a list's budget is
/// ceil(nr_free / 512) = 2, so a pass makes 3 reports of 32 (96 blocks, 384 MiB) and asks for
/// another pass; all of it goes in about 11 passes.
#[test]
fn d4_reports_a_sixteenth_of_a_list_and_one_more_report_per_pass() {
    let mut m = guest("D4", "4GiB");
    let z = reclaimlab_core::machine::ZONE_DMA32;
    let blocks = m.zones[z].free_area.nr_free_total()[MAX_ORDER - 1];
    // 4 GiB less DMA and the memmap: about a thousand blocks.
    assert!((960..=1024).contains(&blocks), "{blocks} order-10 blocks");
    let budget = blocks.div_ceil(32 * 16);
    assert_eq!(budget, 2);
    m.page_reporting_notify();
    let (n, step) = pass(&mut m);
    assert_eq!(n as u64, (budget + 1) * PAGE_REPORTING_CAPACITY as u64);
    assert_eq!(step, WorkStep::Finished(Some(2_000_000_000)));
    // Reported blocks sit at the tail of their list, flagged; the head is unreported.
    let fa = &m.zones[z].free_area;
    let list = &fa.lists[MAX_ORDER - 1][reclaimlab_core::machine::watermark::MIGRATE_MOVABLE];
    assert!(fa.is_reported(list.tail));
    assert!(!fa.is_reported(list.head));
    // Every pass takes the same bite until the list is done.
    let mut passes = 1;
    let mut total = n as u64;
    loop {
        let (n, step) = pass(&mut m);
        total += n as u64;
        passes += 1;
        if step == WorkStep::Finished(None) {
            break;
        }
        assert!(passes < 30);
    }
    assert_eq!(total, blocks);
    assert_eq!(passes, blocks.div_ceil(96) as u32);
    assert_eq!(passes, 11);
    // Allocation takes from the head: once all is reported, a block leaving the list is no
    // longer reported.
    let p = m.alloc_pages(
        reclaimlab_core::machine::gfp::GFP_KERNEL,
        10,
        &mut Default::default(),
    );
    let p = p.unwrap();
    assert!(!m.zones[z].free_area.is_reported(p));
}

/// D3: a vCPU's buffer of merged blocks is reported when its 512th entry arrives, by the
/// freeing vCPU itself (its stall is the round trip plus the isolations).
#[test]
fn d3_reports_when_its_512_entry_buffer_fills() {
    let mut m = guest("D3", "4GiB");
    let mut t = Default::default();
    let blocks: Vec<u32> = (0..600)
        .map(|_| {
            m.alloc_pages(reclaimlab_core::machine::gfp::GFP_KERNEL, 9, &mut t)
                .unwrap()
        })
        .collect();
    m.guest_mut().events.clear();
    for (i, &p) in blocks.iter().enumerate() {
        m.free_pages(p, 9);
        let reported = reported_blocks(&m).len();
        if i + 1 < 512 {
            assert_eq!(reported, 0, "after {} frees", i + 1);
        }
    }
    let g = m.guest_mut();
    assert_eq!(g.stats.reports, 1);
    assert!(g.stats.captured >= 512);
    let cost = reclaimlab_core::machine::cost::KvmCost::default();
    assert_eq!(
        g.stats.blocked_ns,
        cost.report_ns + g.stats.blocks * cost.isolate_ns
    );
}

/// D3 counts every free, not only those that reach its order (the proposal blocks "on every
/// 512th free"): 4 KiB frees that complete a 2 MiB block are reported on the 512th, while 512
/// frees that leave every block small cost no round trip and report nothing.
#[test]
fn d3_counts_every_free_and_reports_only_blocks_of_its_order() {
    let mut m = guest("D3", "4GiB");
    let mut t = Default::default();
    let gfp = reclaimlab_core::machine::gfp::GFP_KERNEL;
    // A 2 MiB block taken page by page, and 1,024 more pages of which every other one stays.
    let block = m.alloc_pages(gfp, 9, &mut t).unwrap();
    let spread: Vec<u32> = (0..1024)
        .map(|_| m.alloc_pages(gfp, 0, &mut t).unwrap())
        .collect();
    m.guest_mut().events.clear();
    for &p in spread.iter().step_by(2) {
        m.free_pages(p, 0);
    }
    let g = m.guest_mut();
    assert_eq!(g.stats.captured, 512);
    assert_eq!((g.stats.reports, g.stats.blocked_ns), (0, 0));
    for i in 0..512 {
        m.free_pages(block + i, 0);
    }
    let reported = reported_blocks(&m);
    // The 2 MiB block, or the larger block it merged into.
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert!(reported[0].1 >= 9 && reported[0].0 <= block);
    assert_eq!(m.guest_mut().stats.reports, 1);
}

/// D2: frees are captured until an array holds 1,000 distinct free blocks; then, until the
/// kthread gets the CPU (`kthread_wakeup` of the freeing task's time), frees are lost.
#[test]
fn d2_loses_frees_while_its_array_is_full() {
    let mut m = guest("D2", "1GiB");
    let mut t = Default::default();
    // Every other page stays allocated, so no two freed pages merge: 1,000 distinct blocks.
    let pages: Vec<u32> = (0..4000)
        .map(|_| {
            m.alloc_pages(reclaimlab_core::machine::gfp::GFP_KERNEL, 0, &mut t)
                .unwrap()
        })
        .collect();
    let mut freed = 0u64;
    for &p in pages.iter().step_by(2) {
        m.free_pages(p, 0);
        freed += 1;
    }
    let g = m.guest_mut();
    assert_eq!(g.stats.captured + g.stats.lost, freed);
    let cost = reclaimlab_core::machine::cost::KvmCost::default();
    let free_ns = reclaimlab_core::machine::cost::CostModel::default().free_page_ns;
    // After 1,000 captures the kthread is woken; the next wakeup/free_ns frees are lost.
    let lost_per_wake = cost.kthread_wakeup_ns.div_ceil(free_ns);
    assert!(g.stats.lost > 0);
    assert_eq!(
        g.stats.lost % (lost_per_wake - 1),
        0,
        "lost {}",
        g.stats.lost
    );
    assert!(g.stats.reports >= 1);
    assert_eq!(g.stats.blocks % 1000, 0);
}

/// The inline scan drops an entry whose page is in use again (the seed's prose, `D2`) or keeps it
/// (the stored code, `D2stored`): a guest that frees and reallocates the same pages fills the
/// stored code's array and wakes its kthread, while the seed's array never fills.
#[test]
fn d2_stored_keeps_entries_in_use_again_and_wakes_its_kthread() {
    let frees_lost = |variant: &str| {
        let mut m = guest(variant, "1GiB");
        let mut t = Default::default();
        let gfp = reclaimlab_core::machine::gfp::GFP_KERNEL;
        let pages: Vec<u32> = (0..3000)
            .map(|_| m.alloc_pages(gfp, 0, &mut t).unwrap())
            .collect();
        // Each freed page is taken again at once (the allocator reuses the page just freed).
        for &p in pages.iter().step_by(2) {
            m.free_pages(p, 0);
            assert_eq!(m.alloc_pages(gfp, 0, &mut t).ok(), Some(p));
        }
        let g = m.guest_mut();
        (g.stats.lost, g.stats.blocks)
    };
    let (lost, blocks) = frees_lost("D2");
    assert_eq!((lost, blocks), (0, 0));
    let (lost, blocks) = frees_lost("D2stored");
    // Its array filled with pages in use: the kthread was woken (frees lost meanwhile) and
    // found nothing free to report.
    assert!(lost > 0, "lost {lost}");
    assert_eq!(blocks, 0);
}
