//! Render a node's state in the kernel's text formats (`/proc/vmstat`, `/proc/zoneinfo`,
//! `/proc/buddyinfo`): the mapping from the model's state to the kernel's counters.

use super::procfs::{self, PcpSnapshot, ZoneSnapshot};
use crate::machine::lru::{
    LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, LRU_UNEVICTABLE,
};
use crate::machine::vmscan::MAX_RECLAIM_RETRIES;
use crate::machine::vmstat::{
    self, NodeStat, NumaStat, ZoneStat, NR_NODE_STATS, NR_NUMA_STATS, NR_ZONE_STATS,
};
use crate::machine::watermark;
use crate::machine::Machine;
use crate::machine::MAX_NR_ZONES;

/// Zone counters of zone `z` (`nr_zone_*`, `nr_free_pages`).
fn zone_stats(node: &Machine, z: usize) -> [u64; NR_ZONE_STATS] {
    let mut s = [0u64; NR_ZONE_STATS];
    // Every memcg's lists (the machine's one lruvec without cgroups).
    let zs = &node.node_lru_zone_size()[z];
    s[ZoneStat::NrFreePages as usize] = node.zones[z].free_pages();
    s[ZoneStat::NrZoneInactiveAnon as usize] = zs[LRU_INACTIVE_ANON];
    s[ZoneStat::NrZoneActiveAnon as usize] = zs[LRU_ACTIVE_ANON];
    s[ZoneStat::NrZoneInactiveFile as usize] = zs[LRU_INACTIVE_FILE];
    s[ZoneStat::NrZoneActiveFile as usize] = zs[LRU_ACTIVE_FILE];
    s[ZoneStat::NrZoneUnevictable as usize] = zs[LRU_UNEVICTABLE];
    s
}

fn numa_stats(node: &Machine, z: usize) -> [u64; NR_NUMA_STATS] {
    let mut s = [0u64; NR_NUMA_STATS];
    // One node: every allocation is a local hit.
    s[NumaStat::NumaHit as usize] = node.zones[z].numa_hit;
    s[NumaStat::NumaLocal as usize] = node.zones[z].numa_hit;
    s
}

/// Node counters (`node_stat_item`).
pub fn node_stats(node: &Machine) -> [u64; NR_NODE_STATS] {
    let mut s = [0u64; NR_NODE_STATS];
    let l = |lru: usize| node.node_lru_size(lru);
    let st = &node.stat;
    s[NodeStat::NrInactiveAnon as usize] = l(LRU_INACTIVE_ANON);
    s[NodeStat::NrActiveAnon as usize] = l(LRU_ACTIVE_ANON);
    s[NodeStat::NrInactiveFile as usize] = l(LRU_INACTIVE_FILE);
    s[NodeStat::NrActiveFile as usize] = l(LRU_ACTIVE_FILE);
    s[NodeStat::NrUnevictable as usize] = l(LRU_UNEVICTABLE);
    s[NodeStat::WorkingsetRefaultAnon as usize] = st.workingset_refault[0];
    s[NodeStat::WorkingsetRefaultFile as usize] = st.workingset_refault[1];
    s[NodeStat::WorkingsetActivateAnon as usize] = st.workingset_activate[0];
    s[NodeStat::WorkingsetActivateFile as usize] = st.workingset_activate[1];
    s[NodeStat::WorkingsetRestoreAnon as usize] = st.workingset_restore[0];
    s[NodeStat::WorkingsetRestoreFile as usize] = st.workingset_restore[1];
    s[NodeStat::NrAnonPages as usize] = st.nr_anon_pages;
    s[NodeStat::NrFilePages as usize] = st.nr_file_pages;
    s[NodeStat::NrDirty as usize] = st.nr_dirty;
    s[NodeStat::NrWriteback as usize] = st.nr_writeback;
    s[NodeStat::NrVmscanWrite as usize] = st.nr_vmscan_write;
    s[NodeStat::NrVmscanImmediateReclaim as usize] = st.nr_vmscan_immediate_reclaim;
    s[NodeStat::NrDirtied as usize] = st.nr_dirtied;
    s[NodeStat::NrWritten as usize] = st.nr_written;
    s[NodeStat::NrSwapcached as usize] = st.nr_swapcached;
    s[NodeStat::NrPageTablePages as usize] = st.nr_page_table_pages;
    let (reclaimable, unreclaimable) = node.slab.pages();
    s[NodeStat::NrSlabReclaimable as usize] = reclaimable;
    s[NodeStat::NrSlabUnreclaimable as usize] = unreclaimable;
    s
}

pub fn vmstat_text(node: &Machine) -> String {
    let mut zone = [0u64; NR_ZONE_STATS];
    let mut numa = [0u64; NR_NUMA_STATS];
    for z in 0..MAX_NR_ZONES {
        for (a, b) in zone.iter_mut().zip(zone_stats(node, z)) {
            *a += b;
        }
        for (a, b) in numa.iter_mut().zip(numa_stats(node, z)) {
            *a += b;
        }
    }
    let (thresh, bg) = node.dirty_limits();
    vmstat::format_vmstat(&zone, &numa, &node_stats(node), thresh, bg, &node.vm.c)
}

pub fn zone_snapshots(node: &Machine, cpus: u64) -> [ZoneSnapshot; MAX_NR_ZONES] {
    std::array::from_fn(|z| {
        let zone = &node.zones[z];
        ZoneSnapshot {
            free: zone.free_pages(),
            boost: zone.watermark_boost,
            min: zone.wmark.min,
            low: zone.wmark.low,
            high: zone.wmark.high,
            spanned: zone.span.spanned,
            present: zone.span.present,
            managed: zone.span.managed,
            cma: 0,
            protection: zone.lowmem_reserve,
            zone_stats: zone_stats(node, z),
            numa_stats: numa_stats(node, z),
            // `high` as set at boot: the kernel prints `pcp->high`, which ZONE_RECLAIM_ACTIVE
            // does not change (it caps the list in `nr_pcp_high` only).
            pcp: zone
                .pcp
                .iter()
                .map(|p| PcpSnapshot {
                    count: p.count as u64,
                    high: p.high as u64,
                    batch: p.batch as u64,
                })
                .collect(),
            stat_threshold: watermark::stat_threshold(zone.managed(), cpus),
            start_pfn: zone.span.start_pfn,
            nr_free: zone.free_area.nr_free_total(),
        }
    })
}

pub fn zoneinfo_text(node: &Machine, cpus: u64) -> String {
    procfs::format_zoneinfo(
        node.nid,
        &zone_snapshots(node, cpus),
        &node_stats(node),
        node.kswapd.failures >= MAX_RECLAIM_RETRIES,
    )
}

pub fn buddyinfo_text(node: &Machine, cpus: u64) -> String {
    procfs::format_buddyinfo(node.nid, &zone_snapshots(node, cpus))
}

/// `/proc/meminfo` of the node (`meminfo_proc_show`, `si_mem_available`).
pub fn meminfo_text(node: &Machine) -> String {
    let l = |lru: usize| node.node_lru_size(lru);
    let st = &node.stat;
    let (sreclaimable, sunreclaim) = node.slab.pages();
    let free = node.total_free_pages();
    let file = l(LRU_ACTIVE_FILE) + l(LRU_INACTIVE_FILE);
    // si_mem_available: free pages above the reserves, plus the page cache and reclaimable
    // slab that could be freed without going below the low watermarks.
    let (mut reserve, mut wmark_low) = (0u64, 0u64);
    for z in &node.zones {
        reserve += z.lowmem_reserve.iter().max().copied().unwrap_or(0) + z.wmark.high;
        wmark_low += z.wmark.low;
    }
    let mut available = free as i64 - reserve as i64;
    available += (file - (file / 2).min(wmark_low)) as i64;
    available += (sreclaimable - (sreclaimable / 2).min(wmark_low)) as i64;
    // Cached is the page cache less the block device's pages (`Buffers`).
    let buffers = node.nr_blockdev_pages();
    procfs::format_meminfo(&procfs::MeminfoSnapshot {
        total: node.total_managed_pages(),
        free,
        available: available.max(0) as u64,
        buffers,
        cached: st.nr_file_pages - buffers,
        swap_cached: st.nr_swapcached,
        active_anon: l(LRU_ACTIVE_ANON),
        inactive_anon: l(LRU_INACTIVE_ANON),
        active_file: l(LRU_ACTIVE_FILE),
        inactive_file: l(LRU_INACTIVE_FILE),
        unevictable: l(LRU_UNEVICTABLE),
        swap_total: node.swap.total,
        swap_free: node.swap.total - node.swap.used,
        dirty: st.nr_dirty,
        writeback: st.nr_writeback,
        anon_pages: st.nr_anon_pages,
        slab_reclaimable: sreclaimable,
        slab_unreclaimable: sunreclaim,
    })
}
