//! `IdMap`: an open-addressing hash map from 64-bit object ids to 32-bit indices.
//!
//! Linear probing over a power-of-two table of 16-byte entries (key, value), kept at most half
//! full, with backward-shift deletion (no tombstones, so lookups never slow down as objects come
//! and go). The hash is one multiply (Fibonacci hashing of the id folded onto itself), taking the
//! top bits: cheap, and good for the sequential or random ids traces have. No allocation except
//! when the table doubles.

const EMPTY: u32 = u32::MAX;
const MIN_SLOTS: usize = 16;

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u64,
    /// `EMPTY` marks a free slot, so every key (including `u64::MAX`) can be stored.
    val: u32,
}

const FREE: Entry = Entry { key: 0, val: EMPTY };

#[derive(Debug, Clone)]
pub struct IdMap {
    table: Vec<Entry>,
    mask: usize,
    shift: u32,
    len: usize,
}

impl Default for IdMap {
    fn default() -> Self {
        IdMap::with_capacity(0)
    }
}

impl IdMap {
    /// A map that holds `n` entries without growing.
    pub fn with_capacity(n: usize) -> Self {
        let slots = (n.saturating_mul(2)).max(MIN_SLOTS).next_power_of_two();
        IdMap {
            table: vec![FREE; slots],
            mask: slots - 1,
            shift: 64 - slots.trailing_zeros(),
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of table memory (for documentation and benchmarks).
    pub fn table_bytes(&self) -> usize {
        self.table.len() * std::mem::size_of::<Entry>()
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        ((key ^ (key >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// `Ok(value)` if `key` is present, else `Err(slot)`: the free slot where it would go (valid
    /// for [`IdMap::insert_at`] until the map is next changed).
    #[inline(always)]
    pub fn find(&self, key: u64) -> Result<u32, usize> {
        let mut i = self.home(key);
        loop {
            let e = self.table[i];
            if e.val == EMPTY {
                return Err(i);
            }
            if e.key == key {
                return Ok(e.val);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Hint the CPU to fetch the table line where a lookup of `key` starts (no effect on
    /// results; used to overlap the memory latency of upcoming lookups).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let p = self.table.as_ptr().wrapping_add(self.home(key)) as *const i8;
            // SAFETY: a prefetch is only a hint: it reads nothing into the program and never
            // faults; `p` points inside the table anyway. SSE is part of the x86_64 baseline.
            unsafe { core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        self.find(key).ok()
    }

    /// Insert `key` (absent) at the free `slot` that [`IdMap::find`] returned for it.
    #[inline(always)]
    pub fn insert_at(&mut self, slot: usize, key: u64, val: u32) {
        debug_assert!(val != EMPTY && self.table[slot].val == EMPTY);
        if (self.len + 1) * 2 > self.table.len() {
            self.grow();
            self.insert(key, val);
            return;
        }
        self.table[slot] = Entry { key, val };
        self.len += 1;
    }

    /// Insert or replace; returns the previous value.
    pub fn insert(&mut self, key: u64, val: u32) -> Option<u32> {
        assert!(val != EMPTY, "IdMap values must be below u32::MAX");
        match self.find(key) {
            Ok(_) => {
                let mut i = self.home(key);
                while self.table[i].key != key || self.table[i].val == EMPTY {
                    i = (i + 1) & self.mask;
                }
                Some(std::mem::replace(&mut self.table[i].val, val))
            }
            Err(slot) => {
                self.insert_at(slot, key, val);
                None
            }
        }
    }

    /// Remove `key`; returns its value.
    #[inline]
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let mut i = self.home(key);
        loop {
            let e = self.table[i];
            if e.val == EMPTY {
                return None;
            }
            if e.key == key {
                break;
            }
            i = (i + 1) & self.mask;
        }
        let val = self.table[i].val;
        // Backward shift: pull later entries of the probe run into the hole when their home
        // position allows it, so no tombstone is needed.
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let e = self.table[j];
            if e.val == EMPTY {
                break;
            }
            let home = self.home(e.key);
            // Can `e` move to `hole`? Only if its home is not cyclically inside (hole, j].
            let inside = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !inside {
                self.table[hole] = e;
                hole = j;
            }
        }
        self.table[hole] = FREE;
        self.len -= 1;
        Some(val)
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.table);
        let slots = old.len() * 2;
        self.table = vec![FREE; slots];
        self.mask = slots - 1;
        self.shift = 64 - slots.trailing_zeros();
        for e in old.into_iter().filter(|e| e.val != EMPTY) {
            let mut i = self.home(e.key);
            while self.table[i].val != EMPTY {
                i = (i + 1) & self.mask;
            }
            self.table[i] = e;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn matches_std_hashmap_under_random_churn() {
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for &space in &[8u64, 64, 1000, u64::MAX] {
            let mut m = IdMap::with_capacity(4);
            let mut r: HashMap<u64, u32> = HashMap::new();
            for step in 0..20_000u32 {
                let k = if space == u64::MAX {
                    next()
                } else {
                    next() % space
                };
                match next() % 3 {
                    0 | 1 => assert_eq!(m.insert(k, step), r.insert(k, step)),
                    _ => assert_eq!(m.remove(k), r.remove(&k)),
                }
                assert_eq!(m.len(), r.len());
            }
            for (k, v) in &r {
                assert_eq!(m.get(*k), Some(*v));
            }
            for k in 0..2000u64 {
                assert_eq!(m.get(k), r.get(&k).copied(), "{k}");
            }
        }
    }

    #[test]
    fn extreme_keys_and_clustered_keys() {
        let mut m = IdMap::with_capacity(0);
        let keys = [
            0,
            1,
            u64::MAX,
            u64::MAX - 1,
            1 << 32,
            1 << 63,
            (1 << 32) + 1,
        ];
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(m.insert(*k, i as u32), None);
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(m.get(*k), Some(i as u32));
        }
        // Keys that differ only in high bits, then removal of every other one.
        for i in 0..5000u64 {
            m.insert(i << 40, i as u32);
        }
        for i in (0..5000u64).step_by(2) {
            assert_eq!(m.remove(i << 40), Some(i as u32));
        }
        for i in 0..5000u64 {
            // Key 0 (i = 0) was overwritten by the loop and then removed with the even ones.
            assert_eq!(m.get(i << 40), (i % 2 == 1).then_some(i as u32), "{i}");
        }
        for (i, k) in keys.iter().enumerate().skip(1) {
            assert_eq!(m.get(*k), Some(i as u32));
        }
    }

    #[test]
    fn insert_at_uses_the_found_slot_and_grows() {
        let mut m = IdMap::with_capacity(1);
        for k in 0..100u64 {
            let slot = m.find(k * 7919).unwrap_err();
            m.insert_at(slot, k * 7919, k as u32);
        }
        assert_eq!(m.len(), 100);
        for k in 0..100u64 {
            assert_eq!(m.get(k * 7919), Some(k as u32));
        }
        assert!(m.table_bytes() >= 200 * 16);
    }
}
