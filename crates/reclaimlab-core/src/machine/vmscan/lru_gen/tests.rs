use super::*;
use crate::machine::gfp::GFP_KERNEL;
use crate::machine::pte::PTE_YOUNG;
use crate::machine::{Access, TaskCtx};

/// A 64 MiB machine under the multi-generational LRU with 1 GiB of swap.
fn machine() -> Machine {
    let text = "name = \"t\"\n[host]\nram = \"64MiB\"\n[swap]\nsize = \"1GiB\"\n\
                latency_jitter = 0.0\n[policy]\nlru = \"mglru\"\n\
                [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
    let scn = crate::scenario::parse_str(text, "t.toml").unwrap();
    let m = crate::run::host_machine(&scn, 1, false).unwrap();
    assert!(m.lru_gen.is_some());
    m
}

/// Fault `n` anon pages in a new region, their accessed bits cleared; returns the vpages.
fn fault(m: &mut Machine, task: usize, n: u32) -> std::ops::Range<u32> {
    let r = m.add_region(task, n as u64, true).unwrap();
    let base = m.regions[r].base;
    let mut t = TaskCtx::default();
    for vp in base..base + n {
        assert!(matches!(m.anon_access(vp, true, &mut t), Access::Done));
        m.pte[vp as usize] &= !PTE_YOUNG;
    }
    base..base + n
}

fn age(m: &mut Machine) {
    m.with_lruvec(0, |m, g, l| {
        let ms = g.max_seq;
        assert!(m.lru_gen_try_to_inc_max_seq(0, g, l, ms, true, &mut 0));
    });
}

/// Resident and mapped, not in the swap cache.
fn untouched(m: &Machine, vp: u32) -> bool {
    let pte = m.pte[vp as usize];
    pte & PTE_MAPPED != 0
        && pte & PTE_SWAP == 0
        && !m
            .frames
            .test(pte & crate::machine::pte::PTE_PFN_MASK, pg::SWAPCACHE)
}

/// Pages faulted before an aging step are a generation older than those faulted after
/// it, and reclaim takes the older generation first: all of it before any of the younger.
#[test]
fn the_oldest_generation_is_evicted_first() {
    let mut m = machine();
    let task = m.add_task("w", 0);
    let a = fault(&mut m, task, 512);
    age(&mut m);
    let b = fault(&mut m, task, 512);
    age(&mut m);
    let st = m.lru_gen_state(0).clone();
    assert_eq!((st.max_seq, st.min_seq[ANON]), (5, 2));
    assert_eq!(st.gen_size(3, ANON), 512, "A in generation 3");
    assert_eq!(st.gen_size(4, ANON), 512, "B in generation 4");
    m.lru_gen_check().unwrap();
    // As kswapd: direct reclaim on a machine this empty stops at its first batch, which
    // here only retires the empty generation 2 (should_abort_scan).
    let mut sc = ScanControl::new(GFP_KERNEL, 0, MAX_NR_ZONES - 1, 256, true);
    sc.priority = 0;
    m.shrink_node(&mut sc);
    // kswapd goes on until it has its 256 and the zones are above high: all from A.
    let gone_a = a.clone().filter(|&vp| !untouched(&m, vp)).count();
    let gone_b = b.clone().filter(|&vp| !untouched(&m, vp)).count();
    assert!(gone_a >= 256, "A lost {gone_a}");
    assert_eq!(gone_b, 0, "B is younger: untouched while A has pages");
    m.lru_gen_check().unwrap();
    // A page of A used again (accessed bit set) is promoted by the next aging step's walk.
    let hot = a.clone().find(|&vp| untouched(&m, vp)).unwrap();
    m.pte[hot as usize] |= PTE_YOUNG;
    age(&mut m);
    let pfn = m.pte[hot as usize] & crate::machine::pte::PTE_PFN_MASK;
    let gen = m.lru_gen.as_deref().unwrap().folios.get(pfn).gen();
    assert_eq!(
        gen,
        Some(lru_gen_from_seq(5)),
        "promoted to the then youngest"
    );
    assert_eq!(
        m.pte[hot as usize] & PTE_YOUNG,
        0,
        "the walk cleared the bit"
    );
    m.lru_gen_check().unwrap();
}
