//! Least recently used: a hit moves the object to the head, the tail is evicted.

use super::{prefetch_ptr, Cache, Link, MISS_HINT, NIL, PRESIZE};
use crate::trace::idmap::IdMap;

/// Least recently used.
#[derive(Debug, Clone)]
pub struct Lru {
    cap: usize,
    map: IdMap,
    ids: Vec<u64>,
    links: Vec<Link>,
    head: u32,
    tail: u32,
}

impl Lru {
    pub fn new(capacity: u32) -> Self {
        assert!((1..u32::MAX).contains(&capacity), "capacity out of range");
        let cap = capacity as usize;
        Lru {
            cap,
            map: IdMap::with_capacity(cap.min(PRESIZE)),
            ids: Vec::with_capacity(cap.min(PRESIZE)),
            links: Vec::with_capacity(cap.min(PRESIZE)),
            head: NIL,
            tail: NIL,
        }
    }

    #[inline(always)]
    fn push_head(&mut self, s: u32) {
        self.links[s as usize] = Link {
            prev: NIL,
            next: self.head,
        };
        if self.head != NIL {
            self.links[self.head as usize].prev = s;
        } else {
            self.tail = s;
        }
        self.head = s;
    }

    #[inline(always)]
    fn unlink(&mut self, s: u32) {
        let Link { prev, next } = self.links[s as usize];
        if prev != NIL {
            self.links[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.links[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    /// Ids from most to least recently used (for tests).
    pub fn order(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.ids.len());
        let mut s = self.head;
        while s != NIL {
            out.push(self.ids[s as usize]);
            s = self.links[s as usize].next;
        }
        out
    }
}

impl Cache for Lru {
    #[inline(always)]
    fn access(&mut self, id: u64) -> bool {
        match self.map.find(id) {
            Ok(s) => {
                if s != self.head {
                    self.unlink(s);
                    self.push_head(s);
                }
                true
            }
            Err(free) => {
                if self.ids.len() < self.cap {
                    let s = self.ids.len() as u32;
                    self.ids.push(id);
                    self.links.push(Link {
                        prev: NIL,
                        next: NIL,
                    });
                    self.map.insert_at(free, id, s);
                    self.push_head(s);
                } else {
                    let s = self.tail;
                    let old = std::mem::replace(&mut self.ids[s as usize], id);
                    self.map.insert_at(free, id, s);
                    self.map.remove(old);
                    if s != self.head {
                        self.unlink(s);
                        self.push_head(s);
                    }
                }
                false
            }
        }
    }

    #[inline(always)]
    fn prefetch(&self, id: u64) {
        self.map.prefetch(id);
    }

    #[inline(always)]
    fn prefetch_slot(&self, id: u64) -> u32 {
        match self.map.get(id) {
            Some(s) => {
                prefetch_ptr(self.links.as_ptr().wrapping_add(s as usize));
                s
            }
            None => {
                // A miss will reuse the tail slot (or one near it) and remove its id.
                if self.tail != NIL {
                    prefetch_ptr(self.links.as_ptr().wrapping_add(self.tail as usize));
                    prefetch_ptr(self.ids.as_ptr().wrapping_add(self.tail as usize));
                }
                MISS_HINT
            }
        }
    }

    #[inline(always)]
    fn prefetch_neighbours(&self, hint: u32) {
        if hint == MISS_HINT {
            if self.ids.len() == self.cap && self.tail != NIL {
                self.map.prefetch(self.ids[self.tail as usize]);
            }
            return;
        }
        if let Some(l) = self.links.get(hint as usize) {
            if l.prev != NIL {
                prefetch_ptr(self.links.as_ptr().wrapping_add(l.prev as usize));
            }
            if l.next != NIL {
                prefetch_ptr(self.links.as_ptr().wrapping_add(l.next as usize));
            }
        }
    }

    fn len(&self) -> usize {
        self.ids.len()
    }
}
