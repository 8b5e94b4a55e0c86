//! `shrink_lruvec`'s stop once a pass has reclaimed enough (6.1, spec core-mm §5.4): one
//! proportionality nudge, then the end of the pass.

use reclaimlab_core::machine::gfp::GFP_KERNEL;
use reclaimlab_core::machine::pte::PTE_YOUNG;
use reclaimlab_core::machine::vmscan::ScanControl;
use reclaimlab_core::machine::vmstat::VmEvent;
use reclaimlab_core::machine::{Access, Machine, TaskCtx, MAX_NR_ZONES};

/// A 64 MiB machine with swap whose inactive anon list holds `anon` written pages and whose
/// inactive file list holds `file` clean pages read once, none of them young: a pass frees
/// each file page it scans and starts the swap-out of each anon page (freed on a later pass).
fn machine(anon: u32, file: u32) -> Machine {
    let text = "name = \"t\"\n[host]\nram = \"64MiB\"\n[swap]\nsize = \"1GiB\"\n\
                latency_jitter = 0.0\n\
                [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
    let scn = reclaimlab_core::scenario::parse_str(text, "t.toml").unwrap();
    let mut m = reclaimlab_core::run::host_machine(&scn, 1, false).unwrap();
    let task = m.add_task("w", 0);
    let mut t = TaskCtx {
        task,
        ..TaskCtx::default()
    };
    let r = m.add_region(task, anon as u64, true).unwrap();
    let base = m.regions[r].base;
    for vp in base..base + anon {
        assert!(matches!(m.anon_access(vp, true, &mut t), Access::Done));
        m.pte[vp as usize] &= !PTE_YOUNG;
    }
    let r = m.add_region(task, file as u64, false).unwrap();
    let (base, end) = (m.regions[r].base, m.regions[r].base + file);
    for vp in base..end {
        loop {
            match m.file_access(vp, end, false, &mut t) {
                Access::Done => break,
                Access::Block(at) => {
                    m.now = m.now.max(at);
                    m.process_io_completions(at);
                }
                a => panic!("{a:?}"),
            }
        }
    }
    for vp in base..end {
        m.pte[vp as usize] &= !PTE_YOUNG;
    }
    m
}

/// Worked example: kswapd's pass at priority 0 (equal balance: the targets are the whole
/// lists), 32 pages to reclaim, over 64 inactive anon pages, 3,968 inactive file pages and 128
/// active ones (the first page of each 32-page readahead window, marked at the miss and again
/// at the read that follows it). The first round of batches scans 32 anon pages (written,
/// nothing freed yet) and 32 inactive file pages (32 freed), and deactivates 32 active file
/// pages: enough. The nudge stops anon, which had 32 of 64 left (49 %), and cuts the file
/// lists to 51 % of their targets (2,023 and 65). In 6.1 the next round scans one more batch
/// of each file list and the pass ends there, anon being at 0: 64 inactive file pages scanned
/// and freed. A pass that went on through the cut targets (older kernels' `scan_adjusted`, which
/// the model had) scans 2,023.
#[test]
fn a_pass_that_reclaimed_enough_stops_after_one_more_round() {
    let mut m = machine(64, 4096);
    assert_eq!(
        (0..4).map(|l| m.lruvec.size(l)).collect::<Vec<_>>(),
        [64, 0, 3968, 128]
    );
    let (anon0, file0) = (m.vm.get(VmEvent::PgscanAnon), m.vm.get(VmEvent::PgscanFile));
    let mut sc = ScanControl::new(GFP_KERNEL, 0, MAX_NR_ZONES - 1, 32, true);
    sc.priority = 0;
    sc.quantum_end = u64::MAX;
    m.shrink_node(&mut sc);
    assert!(!sc.preempted);
    let anon = m.vm.get(VmEvent::PgscanAnon) - anon0;
    let file = m.vm.get(VmEvent::PgscanFile) - file0;
    assert_eq!((anon, file), (32, 64));
    assert_eq!(sc.nr_reclaimed, 64);
    assert_eq!(m.vm.get(VmEvent::Pswpout), 32);
}
