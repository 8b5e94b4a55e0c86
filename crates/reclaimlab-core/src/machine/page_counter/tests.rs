//! Unit tests of the page counters, from the worked examples of docs/design/memcg-psi.md.

use super::*;

/// 2^51 - 1 pages: `LONG_MAX` bytes in 4 KiB pages.
#[test]
fn page_counter_max_is_long_max_in_pages() {
    assert_eq!(PAGE_COUNTER_MAX, (1u64 << 51) - 1);
    assert_eq!(PAGE_COUNTER_MAX, 2_251_799_813_685_247);
}

/// root -> P -> {A, B}, with A's first child A1: the pre-order walk and the ancestors.
#[test]
fn the_tree_is_walked_in_pre_order_with_siblings_oldest_first() {
    let mut pc = PageCounters::new();
    let p = pc.add(ROOT_COUNTER).unwrap();
    let a = pc.add(p).unwrap();
    let b = pc.add(p).unwrap();
    let a1 = pc.add(a).unwrap();
    let other = pc.add(ROOT_COUNTER).unwrap();
    let walk: Vec<_> = pc.preorder(ROOT_COUNTER).collect();
    assert_eq!(walk, vec![ROOT_COUNTER, p, a, a1, b, other]);
    // A subtree's walk stays inside it.
    assert_eq!(pc.preorder(p).collect::<Vec<_>>(), vec![p, a, a1, b]);
    assert_eq!(pc.preorder(a1).collect::<Vec<_>>(), vec![a1]);
    assert_eq!(
        pc.ancestors(a1).collect::<Vec<_>>(),
        vec![a1, a, p, ROOT_COUNTER]
    );
    assert!(pc.add(99).is_err());
}

/// A failure at the parent gives the child its pages back and names the parent; the
/// peak never passes `max` on a checked charge, and a forced charge does pass it.
#[test]
fn a_charge_lands_on_every_level_or_on_none() {
    let mut pc = PageCounters::new();
    let p = pc.add(ROOT_COUNTER).unwrap();
    let a = pc.add(p).unwrap();
    pc.set_max(p, 100);
    assert_eq!(pc.try_charge(a, 60), Ok(()));
    assert_eq!(pc.try_charge(a, 40), Ok(()));
    // Usage may equal max; one more page fails at P.
    assert_eq!(pc.get(p).usage, 100);
    assert_eq!(pc.try_charge(a, 1), Err(p));
    assert_eq!((pc.get(a).usage, pc.get(p).usage), (100, 100));
    assert_eq!(pc.get(ROOT_COUNTER).usage, 100);
    assert_eq!((pc.get(a).failcnt, pc.get(p).failcnt), (0, 1));
    assert_eq!(pc.get(p).watermark, 100);
    // Forced: past max, and the peak follows.
    pc.charge(a, 5);
    assert_eq!(pc.get(p).usage, 105);
    assert_eq!(pc.get(p).watermark, 105);
    assert_eq!(pc.margin(p), 0);
    pc.uncharge(a, 45);
    assert_eq!((pc.get(a).usage, pc.get(p).usage), (60, 60));
    assert_eq!(pc.margin(p), 40);
    // The peak stays where it was.
    assert_eq!(pc.get(p).watermark, 105);
    assert_eq!(pc.underflows, 0);
    pc.uncharge(a, 61);
    assert_eq!(pc.get(a).usage, 0);
    assert_eq!(pc.underflows, 3);
}

/// Spec §1.2 / §9.2 item 3: a parent's `children_low_usage` (and min) stays the sum of
/// min(usage, low) of its children through settings, charges and uncharges.
#[test]
fn children_protected_usage_follows_settings_and_charges() {
    let mut pc = PageCounters::new();
    let p = pc.add(ROOT_COUNTER).unwrap();
    let kids: Vec<_> = (0..3).map(|_| pc.add(p).unwrap()).collect();
    let check = |pc: &PageCounters| {
        let low: u64 = kids
            .iter()
            .map(|&k| pc.get(k).usage.min(pc.get(k).low))
            .sum();
        let min: u64 = kids
            .iter()
            .map(|&k| pc.get(k).usage.min(pc.get(k).min))
            .sum();
        assert_eq!(pc.get(p).children_low_usage(), low);
        assert_eq!(pc.get(p).children_min_usage(), min);
        (min, low)
    };
    pc.charge(kids[0], 500);
    assert_eq!(check(&pc), (0, 0));
    pc.set_low(kids[0], 300);
    assert_eq!(check(&pc), (0, 300));
    pc.set_min(kids[1], 200);
    pc.charge(kids[1], 150);
    assert_eq!(check(&pc), (150, 300));
    pc.charge(kids[1], 100);
    assert_eq!(check(&pc), (200, 300));
    pc.uncharge(kids[0], 400);
    assert_eq!(check(&pc), (200, 100));
    pc.set_low(kids[2], 1000);
    pc.charge(kids[2], 10);
    assert_eq!(check(&pc), (200, 110));
    // A failed charge leaves the reports as they were.
    pc.set_max(p, pc.get(p).usage);
    assert_eq!(pc.try_charge(kids[2], 5), Err(p));
    assert_eq!(check(&pc), (200, 110));
    // P claims nothing, so the root's sum is 0.
    assert_eq!(pc.get(ROOT_COUNTER).children_low_usage(), 0);
}

/// The tree of spec §5.4 (a): root -> P0 -> P1 (low 50 MiB) -> C0..C3 with low 75, 25,
/// 0 and 500 MiB, usage 50, 50, 50 and 0 MiB.
fn selftest_tree() -> (PageCounters, [CounterId; 6]) {
    let mib = 256; // pages
    let mut pc = PageCounters::new();
    let p0 = pc.add(ROOT_COUNTER).unwrap();
    pc.set_max(p0, 200 * mib);
    let p1 = pc.add(p0).unwrap();
    pc.set_low(p1, 50 * mib);
    let c: Vec<_> = (0..4).map(|_| pc.add(p1).unwrap()).collect();
    for (&id, low) in c.iter().zip([75, 25, 0, 500]) {
        pc.set_low(id, low * mib);
    }
    for &id in &c[..3] {
        assert_eq!(pc.try_charge(id, 50 * mib), Ok(()));
    }
    (pc, [p0, p1, c[0], c[1], c[2], c[3]])
}

/// Spec §5.4 (a): overcommitted siblings share P1's 12,800 pages in proportion to what
/// they claim and use: 8,533 and 4,266; C2 claims nothing; C3 (empty) keeps its values.
#[test]
fn overcommitted_siblings_share_the_parents_protection() {
    let (mut pc, [p0, p1, c0, c1, c2, c3]) = selftest_tree();
    assert_eq!(pc.get(p1).children_low_usage(), 19_200);
    pc.calculate_subtree_protection(p0, false);
    assert_eq!(pc.get(p1).elow, 12_800);
    assert_eq!(pc.get(c0).elow, 8_533);
    assert_eq!(pc.get(c1).elow, 4_266);
    assert_eq!(pc.get(c2).elow, 0);
    assert_eq!(pc.get(c3).elow, 0);
    // None is below low: all are scanned in the first pass.
    for c in [c0, c1, c2] {
        assert!(!pc.below_low(c));
    }
    assert_eq!(pc.protection(p0, c0), (0, 8_533));
    // The target has no protection of its own in its reclaim.
    assert_eq!(pc.protection(p0, p0), (0, 0));
    // The same numbers with recursive protection: the children claim more than P1 has.
    pc.calculate_subtree_protection(p0, true);
    assert_eq!((pc.get(c0).elow, pc.get(c1).elow), (8_533, 4_266));
    // An empty memcg is below min (0 >= 0) and below low; the root is neither.
    assert!(pc.below_min(c3) && pc.below_low(c3));
    assert!(!pc.below_min(ROOT_COUNTER));
}

/// Spec §5.4 (b): with `memory_recursiveprot`, P1's unclaimed 12,800 pages go to its
/// children in proportion to their usage (5,120 and 7,680: both below low); without the
/// option they get nothing.
#[test]
fn recursive_protection_hands_unclaimed_protection_down() {
    let mut pc = PageCounters::new();
    let p0 = pc.add(ROOT_COUNTER).unwrap();
    let p1 = pc.add(p0).unwrap();
    pc.set_low(p1, 12_800);
    let c0 = pc.add(p1).unwrap();
    let c1 = pc.add(p1).unwrap();
    pc.charge(c0, 5_120);
    pc.charge(c1, 7_680);
    assert_eq!(pc.get(p1).usage, 12_800);
    pc.calculate_subtree_protection(p0, true);
    assert_eq!(pc.get(p1).elow, 12_800);
    assert_eq!((pc.get(c0).elow, pc.get(c1).elow), (5_120, 7_680));
    assert!(pc.below_low(c0) && pc.below_low(c1));
    pc.calculate_subtree_protection(p0, false);
    assert_eq!((pc.get(c0).elow, pc.get(c1).elow), (0, 0));
    assert!(!pc.below_low(c0) && !pc.below_low(c1));
}

/// Spec §5.4 (c): a direct child of the reclaim target gets its raw setting (1 GiB
/// against 50 MiB of usage), so it is below low; one level further down the same setting
/// is capped by usage. Under global reclaim (target root) P0 is the direct child.
#[test]
fn a_direct_child_of_the_target_is_not_capped_by_its_usage() {
    let mut pc = PageCounters::new();
    let p0 = pc.add(ROOT_COUNTER).unwrap();
    let p1 = pc.add(p0).unwrap();
    pc.set_low(p1, 262_144);
    pc.charge(p1, 12_800);
    pc.calculate_subtree_protection(p0, false);
    assert_eq!(pc.get(p1).elow, 262_144);
    assert!(pc.below_low(p1));
    // Global reclaim: P0 (no low) is the direct child; P1 shares P0's zero protection.
    pc.calculate_subtree_protection(ROOT_COUNTER, false);
    assert_eq!(pc.get(p0).elow, 0);
    assert_eq!(pc.get(p1).elow, 0);
    assert!(!pc.below_low(p1));
}

/// A memcg whose usage fell to 0 keeps the effective values of its last calculation
/// (harmless: it has nothing to reclaim); so does the reclaim target itself.
#[test]
fn an_empty_memcg_and_the_target_keep_stale_values() {
    let (mut pc, [p0, p1, c0, ..]) = selftest_tree();
    pc.calculate_subtree_protection(p0, false);
    assert_eq!(pc.get(c0).elow, 8_533);
    pc.uncharge(c0, 12_800);
    pc.calculate_subtree_protection(p0, false);
    assert_eq!(pc.get(c0).elow, 8_533);
    // P1 as the target (memory.reclaim on P1): its elow stays from the last walk.
    pc.set_low(p1, 0);
    pc.calculate_subtree_protection(p1, false);
    assert_eq!(pc.get(p1).elow, 12_800);
    assert_eq!(pc.protection(p1, p1), (0, 0));
}

/// `memory.min` shares the same way and makes a memcg below min.
#[test]
fn min_protection_is_computed_like_low() {
    let mut pc = PageCounters::new();
    let p = pc.add(ROOT_COUNTER).unwrap();
    pc.set_min(p, 1000);
    let a = pc.add(p).unwrap();
    let b = pc.add(p).unwrap();
    pc.set_min(a, 1000);
    pc.set_min(b, 1000);
    pc.charge(a, 600);
    pc.charge(b, 900);
    assert_eq!(pc.get(p).children_min_usage(), 1500);
    pc.calculate_subtree_protection(ROOT_COUNTER, false);
    assert_eq!(pc.get(p).emin, 1000);
    assert_eq!(pc.get(a).emin, 600 * 1000 / 1500);
    assert_eq!(pc.get(b).emin, 900 * 1000 / 1500);
    assert!(!pc.below_min(a));
    pc.uncharge(b, 500);
    pc.calculate_subtree_protection(ROOT_COUNTER, false);
    assert_eq!((pc.get(a).emin, pc.get(b).emin), (600, 400));
    assert!(pc.below_min(a) && pc.below_min(b));
}
