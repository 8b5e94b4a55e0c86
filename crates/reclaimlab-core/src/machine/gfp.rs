//! GFP flags that matter to the model (core-mm §3.1), with the kernel's bit names.

use super::watermark::{MIGRATE_MOVABLE, MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE};
use super::{ZONE_DMA, ZONE_DMA32, ZONE_MOVABLE, ZONE_NORMAL};

pub type Gfp = u32;

pub const __GFP_DMA: Gfp = 0x01;
pub const __GFP_HIGHMEM: Gfp = 0x02;
pub const __GFP_DMA32: Gfp = 0x04;
pub const __GFP_MOVABLE: Gfp = 0x08;
pub const __GFP_RECLAIMABLE: Gfp = 0x10;
pub const __GFP_HIGH: Gfp = 0x20;
pub const __GFP_IO: Gfp = 0x40;
pub const __GFP_FS: Gfp = 0x80;
pub const __GFP_ZERO: Gfp = 0x100;
pub const __GFP_ATOMIC: Gfp = 0x200;
pub const __GFP_DIRECT_RECLAIM: Gfp = 0x400;
pub const __GFP_KSWAPD_RECLAIM: Gfp = 0x800;
pub const __GFP_WRITE: Gfp = 0x1000;
pub const __GFP_NOWARN: Gfp = 0x2000;
pub const __GFP_RETRY_MAYFAIL: Gfp = 0x4000;
pub const __GFP_NOFAIL: Gfp = 0x8000;
pub const __GFP_NORETRY: Gfp = 0x10000;
pub const __GFP_MEMALLOC: Gfp = 0x20000;
pub const __GFP_COMP: Gfp = 0x40000;
pub const __GFP_NOMEMALLOC: Gfp = 0x80000;
pub const __GFP_HARDWALL: Gfp = 0x100000;
pub const __GFP_THISNODE: Gfp = 0x200000;
pub const __GFP_ACCOUNT: Gfp = 0x400000;

pub const __GFP_RECLAIM: Gfp = __GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM;
pub const GFP_ATOMIC: Gfp = __GFP_HIGH | __GFP_ATOMIC | __GFP_KSWAPD_RECLAIM;
pub const GFP_KERNEL: Gfp = __GFP_RECLAIM | __GFP_IO | __GFP_FS;
pub const GFP_NOWAIT: Gfp = __GFP_KSWAPD_RECLAIM;
pub const GFP_NOIO: Gfp = __GFP_RECLAIM;
pub const GFP_NOFS: Gfp = __GFP_RECLAIM | __GFP_IO;
pub const GFP_USER: Gfp = __GFP_RECLAIM | __GFP_IO | __GFP_FS | __GFP_HARDWALL;
pub const GFP_HIGHUSER: Gfp = GFP_USER | __GFP_HIGHMEM;
pub const GFP_HIGHUSER_MOVABLE: Gfp = GFP_HIGHUSER | __GFP_MOVABLE;
pub const GFP_TRANSHUGE_LIGHT: Gfp =
    (GFP_HIGHUSER_MOVABLE | __GFP_COMP | __GFP_NOMEMALLOC | __GFP_NOWARN) & !__GFP_RECLAIM;
pub const GFP_TRANSHUGE: Gfp = GFP_TRANSHUGE_LIGHT | __GFP_DIRECT_RECLAIM;

/// `gfp_zone`: the highest zone the allocation may use (its `highest_zoneidx`).
#[inline]
pub fn gfp_zone(gfp: Gfp) -> usize {
    if gfp & __GFP_DMA != 0 {
        ZONE_DMA
    } else if gfp & __GFP_DMA32 != 0 {
        ZONE_DMA32
    } else if gfp & (__GFP_MOVABLE | __GFP_HIGHMEM) == (__GFP_MOVABLE | __GFP_HIGHMEM) {
        ZONE_MOVABLE
    } else {
        ZONE_NORMAL
    }
}

#[inline]
pub fn gfp_migratetype(gfp: Gfp) -> usize {
    if gfp & __GFP_MOVABLE != 0 {
        MIGRATE_MOVABLE
    } else if gfp & __GFP_RECLAIMABLE != 0 {
        MIGRATE_RECLAIMABLE
    } else {
        MIGRATE_UNMOVABLE
    }
}

/// The `%s` rendering of gfp flags in trace events (`show_gfp_flags`), composite names first.
pub fn show_gfp_flags(gfp: Gfp) -> String {
    if gfp == 0 {
        return "none".to_string();
    }
    const COMPOSITE: &[(Gfp, &str)] = &[
        (GFP_TRANSHUGE, "GFP_TRANSHUGE"),
        (GFP_TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT"),
        (GFP_HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"),
        (GFP_HIGHUSER, "GFP_HIGHUSER"),
        (GFP_USER, "GFP_USER"),
        (GFP_KERNEL, "GFP_KERNEL"),
        (GFP_NOFS, "GFP_NOFS"),
        (GFP_ATOMIC, "GFP_ATOMIC"),
        (GFP_NOIO, "GFP_NOIO"),
        (GFP_NOWAIT, "GFP_NOWAIT"),
    ];
    const SINGLE: &[(Gfp, &str)] = &[
        (__GFP_DMA, "GFP_DMA"),
        (__GFP_HIGHMEM, "__GFP_HIGHMEM"),
        (__GFP_DMA32, "GFP_DMA32"),
        (__GFP_HIGH, "__GFP_HIGH"),
        (__GFP_ATOMIC, "__GFP_ATOMIC"),
        (__GFP_IO, "__GFP_IO"),
        (__GFP_FS, "__GFP_FS"),
        (__GFP_NOWARN, "__GFP_NOWARN"),
        (__GFP_RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL"),
        (__GFP_NOFAIL, "__GFP_NOFAIL"),
        (__GFP_NORETRY, "__GFP_NORETRY"),
        (__GFP_COMP, "__GFP_COMP"),
        (__GFP_ZERO, "__GFP_ZERO"),
        (__GFP_NOMEMALLOC, "__GFP_NOMEMALLOC"),
        (__GFP_MEMALLOC, "__GFP_MEMALLOC"),
        (__GFP_HARDWALL, "__GFP_HARDWALL"),
        (__GFP_THISNODE, "__GFP_THISNODE"),
        (__GFP_RECLAIMABLE, "__GFP_RECLAIMABLE"),
        (__GFP_MOVABLE, "__GFP_MOVABLE"),
        (__GFP_ACCOUNT, "__GFP_ACCOUNT"),
        (__GFP_WRITE, "__GFP_WRITE"),
        (__GFP_RECLAIM, "__GFP_RECLAIM"),
        (__GFP_DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM"),
        (__GFP_KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM"),
    ];
    let mut rest = gfp;
    let mut parts = Vec::new();
    for &(mask, name) in COMPOSITE.iter().chain(SINGLE.iter()) {
        if rest & mask == mask && mask != 0 {
            parts.push(name);
            rest &= !mask;
        }
    }
    if rest != 0 {
        parts.push("");
        return format!("{}{:#x}", parts.join("|"), rest);
    }
    parts.join("|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_and_types() {
        assert_eq!(gfp_zone(GFP_KERNEL), ZONE_NORMAL);
        assert_eq!(gfp_zone(GFP_HIGHUSER_MOVABLE), ZONE_MOVABLE);
        assert_eq!(gfp_zone(GFP_KERNEL | __GFP_DMA32), ZONE_DMA32);
        assert_eq!(gfp_migratetype(GFP_HIGHUSER_MOVABLE), MIGRATE_MOVABLE);
        assert_eq!(gfp_migratetype(GFP_KERNEL), MIGRATE_UNMOVABLE);
    }

    #[test]
    fn gfp_names() {
        assert_eq!(show_gfp_flags(GFP_KERNEL), "GFP_KERNEL");
        assert_eq!(show_gfp_flags(GFP_HIGHUSER_MOVABLE), "GFP_HIGHUSER_MOVABLE");
        assert_eq!(show_gfp_flags(0), "none");
        assert_eq!(
            show_gfp_flags(GFP_KERNEL | __GFP_NOWARN),
            "GFP_KERNEL|__GFP_NOWARN"
        );
    }
}
