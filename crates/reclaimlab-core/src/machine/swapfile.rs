//! Swap space (`mm/swapfile.c`). Slots are only counted: where a page lands on the device does
//! not matter to reclaim, and a swapped page's page-table entry holds its entry.

#[derive(Debug, Clone, Default)]
pub struct SwapSpace {
    pub total: u64,
    pub used: u64,
}

impl SwapSpace {
    #[inline]
    pub fn has_free(&self) -> bool {
        self.used < self.total
    }
    /// `vm_swap_full`: more than half of swap in use.
    #[inline]
    pub fn is_half_full(&self) -> bool {
        self.used * 2 > self.total
    }
    #[inline]
    pub fn alloc(&mut self) -> bool {
        if self.used < self.total {
            self.used += 1;
            true
        } else {
            false
        }
    }
    #[inline]
    pub fn free(&mut self) {
        debug_assert!(self.used > 0);
        self.used -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_slots_and_half_full() {
        let mut s = SwapSpace { total: 4, used: 0 };
        assert!(s.alloc() && s.alloc());
        assert!(!s.is_half_full());
        assert!(s.alloc());
        assert!(s.is_half_full());
        assert!(s.alloc());
        assert!(!s.alloc());
        s.free();
        assert!(s.has_free());
    }
}
