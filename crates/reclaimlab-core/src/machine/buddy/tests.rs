//! Unit tests of `machine/buddy.rs`.

use super::*;

fn setup(n: u32) -> (Frames, Vec<u8>, FreeArea) {
    let mut fr = Frames::new(n as usize);
    let pbs = vec![MIGRATE_MOVABLE as u8; (n as usize).div_ceil(512)];
    let mut fa = FreeArea::new(0, n);
    for p in 0..n {
        fr.set_flags(p, 0);
    }
    fa.free_range(&mut fr, &pbs, 0, n);
    (fr, pbs, fa)
}

#[test]
fn boot_range_uses_largest_aligned_blocks() {
    let (_, _, fa) = setup(1024 + 512 + 3);
    let t = fa.nr_free_total();
    assert_eq!(t[10], 1);
    assert_eq!(t[9], 1);
    assert_eq!(t[1], 1);
    assert_eq!(t[0], 1);
    assert_eq!(fa.free_pages, 1024 + 512 + 3);
}

#[test]
fn split_then_merge_restores_one_max_block() {
    let (mut fr, mut pbs, mut fa) = setup(1024);
    let a = fa.rmqueue(&mut fr, &mut pbs, 0, MIGRATE_MOVABLE).unwrap();
    assert_eq!(a, 0);
    // Splitting 1024 down to 1 leaves one free block at each order 0..=9.
    let t = fa.nr_free_total();
    for (o, n) in t.iter().enumerate().take(10) {
        assert_eq!(*n, 1, "order {o}");
    }
    assert_eq!(t[10], 0);
    assert_eq!(fa.free_pages, 1023);
    let b = fa.rmqueue(&mut fr, &mut pbs, 3, MIGRATE_MOVABLE).unwrap();
    assert_eq!(b, 8);
    assert_eq!(fa.free_pages, 1015);
    fa.free(&mut fr, &pbs, a, 0);
    fa.free(&mut fr, &pbs, b, 3);
    let t = fa.nr_free_total();
    assert_eq!(t[10], 1);
    assert_eq!(t.iter().sum::<u64>(), 1);
    assert_eq!(fa.free_pages, 1024);
}

#[test]
fn no_merge_with_allocated_buddy() {
    let (mut fr, mut pbs, mut fa) = setup(1024);
    let a = fa.rmqueue(&mut fr, &mut pbs, 0, MIGRATE_MOVABLE).unwrap();
    let b = fa.rmqueue(&mut fr, &mut pbs, 0, MIGRATE_MOVABLE).unwrap();
    assert_eq!((a, b), (0, 1));
    fa.free(&mut fr, &pbs, a, 0);
    let t = fa.nr_free_total();
    assert_eq!(t[0], 1, "page 0 cannot merge while page 1 is in use");
    fa.free(&mut fr, &pbs, b, 0);
    assert_eq!(fa.nr_free_total()[10], 1);
}

#[test]
fn change_tracking_names_the_regions_touched() {
    // Three regions of 1024 frames; an allocation and its free touch only the one they
    // come from.
    let (mut fr, mut pbs, mut fa) = setup(3 * 1024);
    assert!(!fa.unchanged_since(5, 0), "untracked: nothing is known");
    fa.track_changes();
    let at = fa.changes();
    assert!((0..3).all(|r| fa.unchanged_since(r * 1024 + 7, at)));
    let p = fa.rmqueue(&mut fr, &mut pbs, 0, MIGRATE_MOVABLE).unwrap();
    let touched = p / 1024;
    for r in 0..3 {
        assert_eq!(
            fa.unchanged_since(r * 1024 + 7, at),
            r != touched,
            "region {r}"
        );
    }
    let at = fa.changes();
    assert!((0..3).all(|r| fa.unchanged_since(r * 1024 + 7, at)));
    fa.free(&mut fr, &pbs, p, 0);
    for r in 0..3 {
        assert_eq!(
            fa.unchanged_since(r * 1024 + 1023, at),
            r != touched,
            "region {r}"
        );
    }
    // In a region nothing touched, free_block_of answers as it did at the start.
    let other = (touched + 1) % 3;
    assert_eq!(
        fa.free_block_of(&fr, other * 1024 + 7),
        Some((other * 1024, 10))
    );
}

#[test]
fn unmovable_request_steals_a_whole_pageblock() {
    let (mut fr, mut pbs, mut fa) = setup(2048);
    let p = fa.rmqueue(&mut fr, &mut pbs, 0, MIGRATE_UNMOVABLE).unwrap();
    // The largest block (order 10 = two pageblocks) was stolen and retyped.
    assert_eq!(pbs[(p >> 9) as usize] as usize, MIGRATE_UNMOVABLE);
    assert_eq!(fa.free_pages, 2047);
    let unmovable: u64 = (0..MAX_ORDER)
        .map(|o| fa.nr_free[o][MIGRATE_UNMOVABLE])
        .sum();
    assert_eq!(unmovable, 10, "orders 0..=9 left over from the split");
}
