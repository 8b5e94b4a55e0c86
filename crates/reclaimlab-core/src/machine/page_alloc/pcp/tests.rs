//! Per-CPU page lists against core-mm §1.5, on a 2 GiB host with 2 CPUs: DMA (3840 managed,
//! low 106: batch 1, high 53) and DMA32 (501824 managed, low 13972: batch 63, high 6986).

use super::*;
use crate::engine::units::GIB;
use crate::machine::frames::pg;
use crate::machine::watermark::alloc_flags::ALLOC_WMARK_LOW;
use crate::machine::watermark::MIGRATE_UNMOVABLE;
use crate::machine::zone::PerCpuPages;
use crate::machine::{ZONE_DMA, ZONE_DMA32, ZONE_MOVABLE};
use crate::observe::invariants::Checker;
use crate::scenario::Scenario;

const Z: usize = ZONE_DMA32;

fn node() -> Machine {
    let mut scn = Scenario::default();
    scn.host.ram_bytes = 2 * GIB;
    scn.host.cpus = 2;
    crate::run::host_machine(&scn, 1, false).unwrap()
}

/// `n` movable pages allocated on `cpu` (they come from DMA32, the highest zone).
fn alloc(m: &mut Machine, cpu: u32, n: usize, mt: usize) -> Vec<u32> {
    m.set_cpu(cpu);
    (0..n)
        .map(|_| {
            m.get_page_from_freelist(0, ALLOC_WMARK_LOW, ZONE_MOVABLE, mt)
                .unwrap()
        })
        .collect()
}

/// Free pages on `cpu` until the list gives some back; returns (frees, pages given back).
fn free_until_giveback(m: &mut Machine, cpu: u32, pages: &mut Vec<u32>) -> (u32, u64) {
    m.set_cpu(cpu);
    let before = m.zones[Z].free_pages();
    let mut frees = 0;
    while m.zones[Z].free_pages() == before {
        m.free_pages(pages.pop().unwrap(), 0);
        frees += 1;
    }
    (frees, m.zones[Z].free_pages() - before)
}

#[test]
fn batch_and_high_follow_the_spec() {
    // §2.6's 16 GiB guest on 2 CPUs.
    let sizes = |managed, low| {
        let p = PerCpuPages::new(managed, low, 2);
        (p.batch, p.high)
    };
    assert_eq!(sizes(3840, 18), (1, 9));
    assert_eq!(sizes(782_000, 3945), (63, 1972));
    assert_eq!(sizes(3_400_000, 17_153), (63, 8576));
    // At least four batches.
    assert_eq!(PerCpuPages::new(782_000, 100, 4).high, 252);
    let m = node();
    for cpu in 0..2 {
        let (dma, dma32) = (&m.zones[ZONE_DMA].pcp[cpu], &m.zones[Z].pcp[cpu]);
        assert_eq!((dma.batch, dma.high, dma.count), (1, 53, 0));
        assert_eq!((dma32.batch, dma32.high, dma32.count), (63, 6986, 0));
    }
    assert_eq!(m.zones[Z].pcp.len(), 2);
}

#[test]
fn an_empty_list_is_refilled_with_a_batch() {
    let mut m = node();
    let free0 = m.zones[Z].free_pages();
    let got = alloc(&mut m, 1, 1, MIGRATE_MOVABLE);
    // NR_FREE_PAGES dropped by the whole batch; 62 pages wait on CPU 1's movable list.
    assert_eq!(m.zones[Z].free_pages(), free0 - 63);
    let pcp = &m.zones[Z].pcp[1];
    assert_eq!((pcp.count, pcp.lists[MIGRATE_MOVABLE].len), (62, 62));
    assert_eq!(m.zones[Z].pcp[0].count, 0);
    // The rest of the batch is handed out in the buddy's order without touching the buddy.
    let more = alloc(&mut m, 1, 62, MIGRATE_MOVABLE);
    assert_eq!(more[0], got[0] + 1);
    assert_eq!(m.zones[Z].free_pages(), free0 - 63);
    assert_eq!(m.zones[Z].pcp[1].count, 0);
    assert_eq!(m.zones[Z].numa_hit, 63);
    // The 64th allocation refills again.
    alloc(&mut m, 1, 1, MIGRATE_MOVABLE);
    assert_eq!(m.zones[Z].free_pages(), free0 - 126);
    // Each migratetype has its own list.
    alloc(&mut m, 1, 1, MIGRATE_UNMOVABLE);
    let pcp = &m.zones[Z].pcp[1];
    assert_eq!(pcp.lists[MIGRATE_UNMOVABLE].len, 62);
    assert_eq!(pcp.lists[MIGRATE_MOVABLE].len, 62);
    assert_eq!(pcp.count, 124);
    assert_eq!(m.zones[Z].free_pages(), free0 - 189);
    Checker::new(&m).check(&m).unwrap();
}

#[test]
fn a_full_list_gives_back_growing_batches() {
    let mut m = node();
    let mut pages = alloc(&mut m, 1, 20_000, MIGRATE_MOVABLE);
    // Freed on CPU 0: the list fills to high (6986), then gives back the oldest pages,
    // batch << free_factor at a time, free_factor growing by one per give-back up to 5.
    let (frees, back) = free_until_giveback(&mut m, 0, &mut pages);
    assert_eq!((frees, back), (6986, 63));
    assert_eq!(m.zones[Z].pcp[0].count, 6923);
    assert_eq!(m.zones[Z].pcp[0].free_factor, 1);
    let mut seen = vec![];
    for _ in 0..6 {
        seen.push(free_until_giveback(&mut m, 0, &mut pages));
    }
    assert_eq!(
        seen,
        vec![
            (63, 126),
            (126, 252),
            (252, 504),
            (504, 1008),
            (1008, 2016),
            (2016, 2016)
        ]
    );
    assert_eq!(m.zones[Z].pcp[0].free_factor, PCP_BATCH_SCALE_MAX);
    // An allocation halves free_factor.
    alloc(&mut m, 0, 1, MIGRATE_MOVABLE);
    assert_eq!(m.zones[Z].pcp[0].free_factor, 2);
    Checker::new(&m).check(&m).unwrap();
}

#[test]
fn the_oldest_pages_go_back_first() {
    let mut m = node();
    let mut pages = alloc(&mut m, 1, 8000, MIGRATE_MOVABLE);
    let order: Vec<u32> = pages.iter().rev().copied().collect();
    free_until_giveback(&mut m, 0, &mut pages);
    // The 63 pages freed first went back to the buddy; the 64th and later are still cached.
    assert!(order[..63].iter().all(|&p| m.frames.pcp_mt(p).is_none()));
    assert!(order[63..6986]
        .iter()
        .all(|&p| m.frames.pcp_mt(p) == Some(MIGRATE_MOVABLE)));
    // The newest is at the head, handed out first.
    assert_eq!(m.zones[Z].pcp[0].lists[MIGRATE_MOVABLE].head, order[6985]);
    assert_eq!(alloc(&mut m, 0, 1, MIGRATE_MOVABLE), vec![order[6985]]);
    Checker::new(&m).check(&m).unwrap();
}

#[test]
fn reclaim_active_caps_the_list_at_four_batches() {
    let mut m = node();
    let mut pages = alloc(&mut m, 1, 10_000, MIGRATE_MOVABLE);
    m.zones[Z].reclaim_active = true;
    // high_eff = min(4 * 63, 6986) = 252; give-backs clamp to [63, 252 - 63].
    let seen: Vec<_> = (0..4)
        .map(|_| free_until_giveback(&mut m, 0, &mut pages))
        .collect();
    assert_eq!(seen, vec![(252, 63), (63, 126), (126, 189), (189, 189)]);
    assert_eq!(m.zones[Z].pcp[0].count, 63);
    // free_factor stops growing once the batch reaches the clamp.
    assert_eq!(m.zones[Z].pcp[0].free_factor, 2);
    // Back to the full high once kswapd is done.
    m.zones[Z].reclaim_active = false;
    let (frees, _) = free_until_giveback(&mut m, 0, &mut pages);
    assert_eq!(frees, 6986 - 63);
}

#[test]
fn drain_all_pages_empties_every_list() {
    let mut m = node();
    let managed = m.zones[Z].managed();
    let mut pages = alloc(&mut m, 1, 100, MIGRATE_MOVABLE);
    m.set_cpu(0);
    for _ in 0..50 {
        m.free_pages(pages.pop().unwrap(), 0);
    }
    // CPU 1 holds 2 * 63 - 100 = 26 pages, CPU 0 the 50 freed ones.
    assert_eq!((m.zones[Z].pcp[0].count, m.zones[Z].pcp[1].count), (50, 26));
    assert_eq!(m.pcp_pages(Z), 76);
    assert_eq!(m.zones[Z].free_pages(), managed - 126);
    Checker::new(&m).check(&m).unwrap();
    m.drain_all_pages();
    assert_eq!(m.pcp_pages(Z), 0);
    assert_eq!(m.zones[Z].free_pages(), managed - 50);
    Checker::new(&m).check(&m).unwrap();
}

#[test]
fn compaction_takes_a_page_off_its_list() {
    let mut m = node();
    let got = alloc(&mut m, 1, 10, MIGRATE_MOVABLE);
    // The head of CPU 1's list is the next page the buddy handed over.
    let p = got[9] + 1;
    assert_eq!(m.zones[Z].pcp[1].lists[MIGRATE_MOVABLE].head, p);
    let mid = p + 20;
    m.pcp_take(Z, mid);
    m.frames.set_flags(mid, pg::ALLOCATED);
    assert_eq!(m.zones[Z].pcp[1].count, 52);
    assert_eq!(m.zones[Z].pcp[1].lists[MIGRATE_MOVABLE].len, 52);
    Checker::new(&m).check(&m).unwrap();
}
