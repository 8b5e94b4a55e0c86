//! The host machine's memory: one node, its zones, watermarks, page frames, buddy allocator,
//! LRU lists and swap space.

pub mod buddy;
pub mod compaction;
pub mod frames;
pub mod gfp;
pub mod layout;
pub mod lru;
pub mod node;
pub mod page_alloc;
pub mod policy;
pub mod swap;
pub mod watermark;
pub mod zone;

/// Base page size (x86_64, 4 KiB pages).
pub const PAGE_SIZE: u64 = 4096;
pub const PAGE_SHIFT: u32 = 12;
/// Orders 0..=10 (6.1's MAX_ORDER = 11 is exclusive).
pub const MAX_ORDER: usize = 11;
pub const PAGEBLOCK_ORDER: u32 = 9;
pub const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;

/// Zone indices as in `enum zone_type` with CONFIG_ZONE_DMA, DMA32 and ZONE_DEVICE on x86_64.
pub const ZONE_DMA: usize = 0;
pub const ZONE_DMA32: usize = 1;
pub const ZONE_NORMAL: usize = 2;
pub const ZONE_MOVABLE: usize = 3;
pub const ZONE_DEVICE: usize = 4;
pub const MAX_NR_ZONES: usize = 5;
pub const ZONE_NAMES: [&str; MAX_NR_ZONES] = ["DMA", "DMA32", "Normal", "Movable", "Device"];
/// Lower-case suffixes used by vmstat items (`pgalloc_dma32`, `allocstall_movable`, ...).
pub const ZONE_SUFFIXES: [&str; MAX_NR_ZONES] = ["dma", "dma32", "normal", "movable", "device"];
