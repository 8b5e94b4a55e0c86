//! Memcg-aware object LRUs (`mm/list_lru.c`, 6.1; docs/design/memcg-psi.md §6.3): the list a
//! superblock keeps its unused dentries or inodes on, split into one list per memory cgroup.
//! An object goes on the list of the memcg it is charged to (`list_lru_add` finds it from the
//! object: `mem_cgroup_from_slab_obj`), so reclaim of one memcg (`sc->memcg`) counts and walks
//! only that memcg's objects. Objects charged to no memcg (a root task's, or any object of a
//! machine without cgroups) are on the root's list, which is the node's list of a kernel built
//! without memcg: a machine without `[[cgroup]]` has that one list and nothing else.
//!
//! The list that goes from empty to one object sets its memcg's bit in the shrinker map
//! (`set_shrinker_bit`); `shrink_slab_memcg` calls a memcg-aware shrinker only for memcgs whose
//! bit is set and clears it when the shrinker reports the memcg empty. One bit per list here:
//! a superblock's two lists share its shrinker, so the shrinker tests and clears both.
//!
//! Abstracted: one node; the lists of a memcg that goes offline are never reparented (the model
//! does not remove cgroups).

use std::collections::VecDeque;

use super::page_counter::{CounterId, ROOT_COUNTER};

#[derive(Debug, Default, Clone)]
pub struct ListLru {
    /// Each memcg's list (`list_lru_one`), oldest first; index = memcg id, 0 the root's.
    lists: Vec<VecDeque<u32>>,
    /// Items on all lists (`list_lru_count` summed over memcgs).
    total: u64,
    /// Each memcg's bit in the shrinker map of the shrinker this list belongs to.
    bits: Vec<bool>,
}

impl ListLru {
    fn list_mut(&mut self, memcg: CounterId) -> &mut VecDeque<u32> {
        let i = memcg as usize;
        if self.lists.len() <= i {
            self.lists.resize_with(i + 1, VecDeque::new);
            self.bits.resize(i + 1, false);
        }
        &mut self.lists[i]
    }

    /// `list_lru_add`: queue `item` at the tail of `memcg`'s list. The first item of an empty
    /// list sets the memcg's shrinker bit (the root has none: it is always walked).
    pub fn add(&mut self, memcg: CounterId, item: u32) {
        let l = self.list_mut(memcg);
        let first = l.is_empty();
        l.push_back(item);
        self.total += 1;
        if first && memcg != ROOT_COUNTER {
            self.bits[memcg as usize] = true;
        }
    }

    /// The oldest item of `memcg`'s list.
    pub fn front(&self, memcg: CounterId) -> Option<u32> {
        self.lists
            .get(memcg as usize)
            .and_then(|l| l.front().copied())
    }

    /// Take the oldest item of `memcg`'s list off it (`list_lru_isolate`).
    pub fn pop_front(&mut self, memcg: CounterId) -> Option<u32> {
        let l = self.lists.get_mut(memcg as usize)?;
        let item = l.pop_front()?;
        self.total -= 1;
        Some(item)
    }

    /// Move the oldest item of `memcg`'s list to its tail (`LRU_ROTATE`).
    pub fn rotate(&mut self, memcg: CounterId) {
        if let Some(l) = self.lists.get_mut(memcg as usize) {
            if let Some(item) = l.pop_front() {
                l.push_back(item);
            }
        }
    }

    /// `list_lru_count_one`: items on `memcg`'s list.
    pub fn count(&self, memcg: CounterId) -> u64 {
        self.lists.get(memcg as usize).map_or(0, |l| l.len() as u64)
    }

    /// Items on every memcg's list.
    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Every queued item with its memcg (for the invariant checks).
    pub fn iter(&self) -> impl Iterator<Item = (CounterId, u32)> + '_ {
        self.lists
            .iter()
            .enumerate()
            .flat_map(|(m, l)| l.iter().map(move |&i| (m as CounterId, i)))
    }

    /// `memcg`'s shrinker bit.
    pub fn bit(&self, memcg: CounterId) -> bool {
        self.bits.get(memcg as usize).copied().unwrap_or(false)
    }

    /// Clear `memcg`'s shrinker bit (the shrinker found nothing for it).
    pub fn clear_bit(&mut self, memcg: CounterId) {
        if let Some(b) = self.bits.get_mut(memcg as usize) {
            *b = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ListLru;

    #[test]
    fn items_go_to_their_memcgs_list_and_the_first_sets_the_bit() {
        let mut l = ListLru::default();
        l.add(0, 10);
        l.add(2, 20);
        l.add(2, 21);
        l.add(0, 11);
        assert_eq!((l.count(0), l.count(1), l.count(2), l.len()), (2, 0, 2, 4));
        // The root has no bit; memcg 2's was set by its first item, memcg 1 never had one.
        assert!(!l.bit(0) && !l.bit(1) && l.bit(2));
        l.rotate(2);
        assert_eq!(l.front(2), Some(21));
        assert_eq!(l.pop_front(2), Some(21));
        assert_eq!(l.pop_front(2), Some(20));
        assert_eq!(l.pop_front(2), None);
        // Emptying the list leaves the bit: only the shrinker clears it.
        assert!(l.bit(2));
        l.clear_bit(2);
        assert!(!l.bit(2));
        l.add(2, 22);
        assert!(l.bit(2), "the next first item sets it again");
        let all: Vec<_> = l.iter().collect();
        assert_eq!(all, vec![(0, 10), (0, 11), (2, 22)]);
    }
}
