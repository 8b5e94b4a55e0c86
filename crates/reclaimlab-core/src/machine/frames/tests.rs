//! Unit tests of `machine/frames.rs`.

use super::*;

#[test]
fn list_push_remove_order() {
    let mut fr = Frames::new(8);
    let mut l = List::default();
    l.push_head(&mut fr, 1);
    l.push_head(&mut fr, 2);
    l.push_tail(&mut fr, 3);
    assert_eq!(l.iter_from_tail(&fr).collect::<Vec<_>>(), vec![3, 1, 2]);
    l.remove(&mut fr, 1);
    assert_eq!(l.iter_from_tail(&fr).collect::<Vec<_>>(), vec![3, 2]);
    l.remove(&mut fr, 3);
    l.remove(&mut fr, 2);
    assert!(l.is_empty());
    assert_eq!(l.len, 0);
    assert_eq!(l.tail, NIL);
}

#[test]
fn links_keep_flags_and_flags_keep_links() {
    let mut fr = Frames::new(1 << 4);
    let big = (1u32 << 28) - 2;
    let mut l = List::default();
    fr.set_page(
        5,
        pg::DIRTY | pg::WORKINGSET | pg::SWAPCACHE,
        OWNER_LIMIT - 1,
    );
    l.push_head(&mut fr, 5);
    fr.set_links_raw(6, big, 0);
    assert_eq!((fr.prev(6), fr.next(6)), (big, 0));
    fr.set_links_raw(6, raw(NIL), big);
    assert_eq!((fr.prev(6), fr.next(6)), (NIL, big));
    fr.set(5, pg::LRU | pg::ACTIVE);
    assert_eq!(
        fr.flags(5),
        pg::DIRTY | pg::WORKINGSET | pg::SWAPCACHE | pg::LRU | pg::ACTIVE
    );
    assert_eq!(fr.owner(5), OWNER_LIMIT - 1);
    assert_eq!((fr.prev(5), fr.next(5)), (NIL, NIL));
    assert!(fr.test_and_clear(5, pg::WORKINGSET));
    assert!(!fr.test(5, pg::WORKINGSET | pg::REFERENCED));
    l.remove(&mut fr, 5);
    assert_eq!(
        fr.page_flags(5),
        pg::DIRTY | pg::SWAPCACHE | pg::LRU | pg::ACTIVE
    );
}

#[test]
fn owner_states() {
    let mut fr = Frames::new(4);
    assert_eq!(fr.flags(0), pg::RESERVED);
    assert_eq!(fr.owner(0), NIL);
    fr.set_flags(0, 0);
    assert_eq!((fr.flags(0), fr.state(0)), (0, FrameState::NoOwner));
    fr.set_buddy_head(0, 10, 3);
    assert_eq!(fr.flags(0), pg::BUDDY);
    assert_eq!(fr.state(0), FrameState::Buddy { order: 10, mt: 3 });
    assert_eq!((fr.buddy_order(0), fr.buddy_list_mt(0)), (Some(10), 3));
    assert!(fr.is_buddy_head_of_order(0, 10) && !fr.is_buddy_head_of_order(0, 2));
    fr.clear_buddy_head(0);
    assert_eq!((fr.buddy_order(0), fr.owner(0)), (None, NIL));
    fr.set_pcp(2, 1);
    assert_eq!(fr.state(2), FrameState::Pcp { mt: 1 });
    assert!((0..16).all(|o| !fr.is_buddy_head_of_order(2, o)) && fr.flags(2) == 0);
    for o in 0..16 {
        assert!(!fr.is_buddy_head_of_order(0, o));
    }
    fr.set_flags(1, pg::ALLOCATED);
    fr.set_owner(1, NIL);
    assert_eq!((fr.flags(1), fr.owner(1)), (pg::ALLOCATED, NIL));
    fr.set_flags(1, pg::SWAPBACKED);
    assert_eq!(
        (fr.flags(1), fr.state(1)),
        (pg::SWAPBACKED, FrameState::NoOwner)
    );
    fr.set_owner(1, 7);
    assert_eq!((fr.owner(1), fr.flags(1)), (7, pg::SWAPBACKED));
    fr.set_owner(1, NIL);
    assert_eq!(fr.state(1), FrameState::NoOwner);
}
