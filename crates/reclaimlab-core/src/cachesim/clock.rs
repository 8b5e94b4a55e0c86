//! CLOCK: second chance with a one-bit reference counter.

use super::{Cache, PRESIZE, VICTIM_AHEAD};
use crate::trace::idmap::IdMap;

/// CLOCK (second chance) with a one-bit reference counter, as libCacheSim's `Clock`.
#[derive(Debug, Clone)]
pub struct Clock {
    cap: usize,
    map: IdMap,
    ids: Vec<u64>,
    referenced: Vec<bool>,
    hand: usize,
}

impl Clock {
    pub fn new(capacity: u32) -> Self {
        assert!((1..u32::MAX).contains(&capacity), "capacity out of range");
        let cap = capacity as usize;
        Clock {
            cap,
            map: IdMap::with_capacity(cap.min(PRESIZE)),
            ids: Vec::with_capacity(cap.min(PRESIZE)),
            referenced: Vec::with_capacity(cap.min(PRESIZE)),
            hand: 0,
        }
    }
}

impl Cache for Clock {
    #[inline(always)]
    fn access(&mut self, id: u64) -> bool {
        match self.map.find(id) {
            Ok(s) => {
                self.referenced[s as usize] = true;
                true
            }
            Err(free) => {
                if self.ids.len() < self.cap {
                    self.map.insert_at(free, id, self.ids.len() as u32);
                    self.ids.push(id);
                    self.referenced.push(false);
                } else {
                    let mut s = self.hand;
                    while self.referenced[s] {
                        self.referenced[s] = false;
                        s = if s + 1 == self.cap { 0 } else { s + 1 };
                    }
                    let old = std::mem::replace(&mut self.ids[s], id);
                    self.map.insert_at(free, id, s as u32);
                    self.map.remove(old);
                    self.hand = if s + 1 == self.cap { 0 } else { s + 1 };
                    // A later miss probably evicts an object a little ahead of the hand.
                    self.map
                        .prefetch(self.ids[(self.hand + VICTIM_AHEAD) % self.cap]);
                }
                false
            }
        }
    }

    #[inline(always)]
    fn prefetch(&self, id: u64) {
        self.map.prefetch(id);
    }

    fn len(&self) -> usize {
        self.ids.len()
    }
}
