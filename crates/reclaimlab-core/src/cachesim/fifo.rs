//! First in, first out: hits change nothing, the oldest insertion is evicted.

use super::{Cache, PRESIZE, VICTIM_AHEAD};
use crate::trace::idmap::IdMap;

/// First in, first out: a ring of slots; the hand points at the oldest.
#[derive(Debug, Clone)]
pub struct Fifo {
    cap: usize,
    map: IdMap,
    ids: Vec<u64>,
    hand: usize,
}

impl Fifo {
    pub fn new(capacity: u32) -> Self {
        assert!((1..u32::MAX).contains(&capacity), "capacity out of range");
        let cap = capacity as usize;
        Fifo {
            cap,
            map: IdMap::with_capacity(cap.min(PRESIZE)),
            ids: Vec::with_capacity(cap.min(PRESIZE)),
            hand: 0,
        }
    }
}

impl Cache for Fifo {
    #[inline(always)]
    fn access(&mut self, id: u64) -> bool {
        match self.map.find(id) {
            Ok(_) => true,
            Err(free) => {
                if self.ids.len() < self.cap {
                    self.map.insert_at(free, id, self.ids.len() as u32);
                    self.ids.push(id);
                } else {
                    let s = self.hand;
                    let old = std::mem::replace(&mut self.ids[s], id);
                    self.map.insert_at(free, id, s as u32);
                    self.map.remove(old);
                    self.hand = if s + 1 == self.cap { 0 } else { s + 1 };
                    // The object a later miss evicts is known: fetch its table line.
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
