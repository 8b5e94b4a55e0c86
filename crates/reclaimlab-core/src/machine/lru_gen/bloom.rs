//! The aging walk's Bloom filters (6.1 `mm/vmscan.c`, docs/design/mglru.md §4.6): which page
//! tables the next walk enters.
//!
//! A walk for `max_seq` enters only the page tables its filter (`filters[max_seq % 2]`) holds,
//! and puts each table it found dense (`aging::suitable_to_scan`) in the other one, which the
//! next walk reads; eviction's look-around adds a dense window's table to the current one. So a
//! table whose young entries thinned out is left alone by the walk: its young entries then
//! reach eviction, where the reverse-map walk and its look-around meet them. A filter that
//! was never allocated holds everything (the first walk enters every table).
//!
//! As the kernel's: two filters of 2^15 bits, two bits per item, taken from a 30-bit
//! multiplicative hash, allocated at the first reset. The item is a number that names one
//! page table (the kernel hashes the address of the PMD entry pointing at it; the model has no
//! such address, so it hashes [`table_item`] of the table's first vpage), so which tables
//! collide differs from a real kernel's, not how often they do.

/// Bits of one filter's index: 2^15 bits each.
pub const BLOOM_FILTER_SHIFT: u32 = 15;
/// Filters per lruvec: the one the walk under way reads and the one it fills.
pub const NR_BLOOM_FILTERS: usize = 2;
/// The 64-bit golden-ratio multiplier of the kernel's `hash_64`.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
const WORDS: usize = (1 << BLOOM_FILTER_SHIFT) / 64;

/// The number a page table is known by: its first vpage, scaled as PMD entries' addresses
/// are (8 bytes apart) and put above any vpage so that it is never 0.
#[inline]
pub fn table_item(first_vpage: u32) -> u64 {
    (1 << 63) | (first_vpage as u64) << 3
}

/// `get_item_key`: the two bit indexes of `item`, the low and the high half of a 30-bit
/// `hash_64`.
#[inline]
pub fn item_keys(item: u64) -> [usize; 2] {
    let hash = item.wrapping_mul(GOLDEN_RATIO_64) >> (64 - 2 * BLOOM_FILTER_SHIFT);
    let mask = (1 << BLOOM_FILTER_SHIFT) - 1;
    [
        (hash & mask) as usize,
        (hash >> BLOOM_FILTER_SHIFT) as usize,
    ]
}

/// One lruvec's two filters (`lru_gen_mm_state.filters`), each unallocated until its first
/// reset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BloomFilters {
    filters: [Option<Box<[u64; WORDS]>>; NR_BLOOM_FILTERS],
}

impl BloomFilters {
    #[inline]
    fn slot(seq: u64) -> usize {
        (seq % NR_BLOOM_FILTERS as u64) as usize
    }

    /// `reset_bloom_filter`: the filter of `seq` allocated if it was not, and emptied.
    pub fn reset(&mut self, seq: u64) {
        match &mut self.filters[Self::slot(seq)] {
            Some(f) => f.fill(0),
            none => *none = Some(Box::new([0; WORDS])),
        }
    }

    /// `update_bloom_filter`: put `item` in the filter of `seq` (nothing if it is not
    /// allocated).
    pub fn update(&mut self, seq: u64, item: u64) {
        if let Some(f) = &mut self.filters[Self::slot(seq)] {
            for k in item_keys(item) {
                f[k / 64] |= 1 << (k % 64);
            }
        }
    }

    /// `test_bloom_filter`: may `item` be in the filter of `seq`? Always, for a filter not
    /// allocated.
    pub fn test(&self, seq: u64, item: u64) -> bool {
        match &self.filters[Self::slot(seq)] {
            None => true,
            Some(f) => item_keys(item)
                .iter()
                .all(|&k| f[k / 64] & (1 << (k % 64)) != 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys are the two 15-bit halves of the top 30 bits of `item × GOLDEN_RATIO_64`: worked
    /// by hand for item 1, whose product is the multiplier itself (0x61C88646... : top 30
    /// bits 0x18722191, low half 0x2191, high half 0x30E4).
    #[test]
    fn keys_are_the_halves_of_a_30_bit_multiplicative_hash() {
        assert_eq!(GOLDEN_RATIO_64 >> 34, 0x1872_2191);
        assert_eq!(item_keys(1), [0x2191, 0x30E4]);
        for item in [table_item(0), table_item(512), table_item(u32::MAX)] {
            let [a, b] = item_keys(item);
            assert!(a < 1 << 15 && b < 1 << 15);
        }
        assert_ne!(item_keys(table_item(0)), item_keys(table_item(512)));
    }

    /// Unallocated: everything is in, and an update is lost. Reset: nothing is in until it
    /// is updated; the other filter is untouched; a second reset empties it again.
    #[test]
    fn the_double_buffer_as_the_walk_uses_it() {
        let (a, b) = (table_item(0), table_item(512));
        let mut f = BloomFilters::default();
        assert!(f.test(4, a) && f.test(5, b), "unallocated holds all");
        f.update(5, a);
        f.reset(5);
        assert!(!f.test(5, a), "the update before the allocation was lost");
        assert!(f.test(4, a), "the other filter is still unallocated");
        f.update(5, a);
        assert!(f.test(5, a) && !f.test(5, b));
        assert!(f.test(7, a), "seq 7 is the same filter as 5");
        f.reset(6);
        f.update(6, b);
        assert!(f.test(6, b) && !f.test(6, a) && f.test(5, a));
        f.reset(5);
        assert!(!f.test(5, a));
    }

    /// With 512 tables in a filter of 32768 bits and two bits each, a table that was not put
    /// in is reported in at about (1 - e^(-1024/32768))^2 = 0.09 %: of 10,000 other tables, a
    /// handful, not hundreds.
    #[test]
    fn false_positives_are_rare_at_a_guests_table_count() {
        let mut f = BloomFilters::default();
        f.reset(0);
        for t in 0..512u32 {
            f.update(0, table_item(t * 512));
        }
        assert!((0..512u32).all(|t| f.test(0, table_item(t * 512))));
        let fp = (512..10_512u32)
            .filter(|&t| f.test(0, table_item(t * 512)))
            .count();
        assert!(fp < 40, "{fp} false positives of 10,000");
    }
}
