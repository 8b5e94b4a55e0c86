//! `/proc/zoneinfo` and `/proc/buddyinfo` text, byte for byte as Linux 6.1 prints them
//! (core-mm §7.3 and §1.7).
//!
//! 6.1 specifics kept on purpose: no `promo` line (later kernels print one after `high`), the
//! pageset block has only `count`/`high`/`batch` with the 6.1 spacing (`high:  N`; kernels from
//! 6.7 re-align the block and add `high_min`/`high_max`), zone items include `nr_bounce`.

use std::fmt::Write;

use crate::machine::vmstat::{
    NodeStat, NumaStat, ZoneStat, NR_NODE_STATS, NR_NUMA_STATS, NR_ZONE_STATS,
};
use crate::machine::{MAX_NR_ZONES, MAX_ORDER, ZONE_NAMES};

/// One CPU's per-CPU page list of a zone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcpSnapshot {
    /// Pages currently cached on the list.
    pub count: u64,
    pub high: u64,
    pub batch: u64,
}

/// What `/proc/zoneinfo` and `/proc/buddyinfo` show about one zone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZoneSnapshot {
    /// NR_FREE_PAGES (buddy free pages; PCP-cached pages excluded).
    pub free: u64,
    /// `watermark_boost`.
    pub boost: u64,
    /// `_watermark[MIN/LOW/HIGH]` **without** the boost; the printer adds `boost`, as the
    /// kernel's `min_wmark_pages()` etc. do.
    pub min: u64,
    pub low: u64,
    pub high: u64,
    pub spanned: u64,
    pub present: u64,
    pub managed: u64,
    pub cma: u64,
    /// `lowmem_reserve[0..MAX_NR_ZONES]`.
    pub protection: [u64; MAX_NR_ZONES],
    pub zone_stats: [u64; NR_ZONE_STATS],
    pub numa_stats: [u64; NR_NUMA_STATS],
    /// One entry per online CPU, in CPU order.
    pub pcp: Vec<PcpSnapshot>,
    /// Per-CPU vmstat threshold (the same for every CPU of the zone).
    pub stat_threshold: u64,
    pub start_pfn: u64,
    /// Free blocks per order, all migratetypes together (`free_area[o].nr_free`).
    pub nr_free: [u64; MAX_ORDER],
}

impl ZoneSnapshot {
    /// The kernel's `populated_zone()`.
    #[inline]
    pub fn populated(&self) -> bool {
        self.present > 0
    }
}

/// `/proc/zoneinfo` for node `nid`: all five zones in zone order. The per-node stats (given in
/// the units [`crate::observe::vmstat`] documents: THP-sized items in base pages, divided by
/// 512 when printed) appear under the first populated zone. A zone with no present pages ends
/// after its `protection:` line. `node_unreclaimable` is `kswapd_failures >= MAX_RECLAIM_RETRIES`.
pub fn format_zoneinfo(
    nid: usize,
    zones: &[ZoneSnapshot; MAX_NR_ZONES],
    node_stats: &[u64; NR_NODE_STATS],
    node_unreclaimable: bool,
) -> String {
    let mut s = String::with_capacity(8 * 1024);
    let first_populated = zones.iter().position(ZoneSnapshot::populated);
    for (idx, z) in zones.iter().enumerate() {
        let _ = write!(s, "Node {nid}, zone {:>8}", ZONE_NAMES[idx]);
        if first_populated == Some(idx) {
            s.push_str("\n  per-node stats");
            for (item, &v) in NodeStat::ALL.iter().zip(node_stats) {
                let _ = write!(s, "\n      {:<12} {}", item.name(), item.printed_value(v));
            }
        }
        let _ = write!(
            s,
            "\n  pages free     {}\
             \n        boost    {}\
             \n        min      {}\
             \n        low      {}\
             \n        high     {}\
             \n        spanned  {}\
             \n        present  {}\
             \n        managed  {}\
             \n        cma      {}",
            z.free,
            z.boost,
            z.min + z.boost,
            z.low + z.boost,
            z.high + z.boost,
            z.spanned,
            z.present,
            z.managed,
            z.cma
        );
        let _ = write!(s, "\n        protection: ({}", z.protection[0]);
        for p in &z.protection[1..] {
            let _ = write!(s, ", {p}");
        }
        s.push(')');
        if !z.populated() {
            s.push('\n');
            continue;
        }
        for (item, v) in ZoneStat::ALL.iter().zip(&z.zone_stats) {
            let _ = write!(s, "\n      {:<12} {}", item.name(), v);
        }
        for (item, v) in NumaStat::ALL.iter().zip(&z.numa_stats) {
            let _ = write!(s, "\n      {:<12} {}", item.name(), v);
        }
        s.push_str("\n  pagesets");
        for (cpu, pcp) in z.pcp.iter().enumerate() {
            let _ = write!(
                s,
                "\n    cpu: {cpu}\
                 \n              count: {}\
                 \n              high:  {}\
                 \n              batch: {}\
                 \n  vm stats threshold: {}",
                pcp.count, pcp.high, pcp.batch, z.stat_threshold
            );
        }
        let _ = writeln!(
            s,
            "\n  node_unreclaimable:  {}\n  start_pfn:           {}",
            u8::from(node_unreclaimable),
            z.start_pfn
        );
    }
    s
}

/// `/proc/buddyinfo` for node `nid`: one line per populated zone with the number of free blocks
/// of each order 0..=10.
pub fn format_buddyinfo(nid: usize, zones: &[ZoneSnapshot; MAX_NR_ZONES]) -> String {
    let mut s = String::with_capacity(MAX_NR_ZONES * 100);
    for (idx, z) in zones.iter().enumerate() {
        if !z.populated() {
            continue;
        }
        let _ = write!(s, "Node {nid}, zone {:>8} ", ZONE_NAMES[idx]);
        for n in &z.nr_free {
            let _ = write!(s, "{n:>6} ");
        }
        s.push('\n');
    }
    s
}

/// What `/proc/meminfo` shows, in pages (the lines the model has).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeminfoSnapshot {
    pub total: u64,
    pub free: u64,
    pub available: u64,
    /// Block-device page cache (ext4 metadata blocks).
    pub buffers: u64,
    /// File pages, swap cache and buffers excluded.
    pub cached: u64,
    pub swap_cached: u64,
    pub active_anon: u64,
    pub inactive_anon: u64,
    pub active_file: u64,
    pub inactive_file: u64,
    pub unevictable: u64,
    pub swap_total: u64,
    pub swap_free: u64,
    pub dirty: u64,
    pub writeback: u64,
    pub anon_pages: u64,
    pub slab_reclaimable: u64,
    pub slab_unreclaimable: u64,
}

/// `/proc/meminfo` in 6.1's layout (`meminfo_proc_show`): the label padded to 16 columns, the
/// value in kB right-aligned in 8, lines in the kernel's order; lines of what the model does
/// not have (Mlocked, Shmem, KernelStack, PageTables, HugePages, ...) are left out.
pub fn format_meminfo(m: &MeminfoSnapshot) -> String {
    let kb = |pages: u64| pages * 4;
    let lines: [(&str, u64); 23] = [
        ("MemTotal", m.total),
        ("MemFree", m.free),
        ("MemAvailable", m.available),
        ("Buffers", m.buffers),
        ("Cached", m.cached),
        ("SwapCached", m.swap_cached),
        ("Active", m.active_anon + m.active_file),
        ("Inactive", m.inactive_anon + m.inactive_file),
        ("Active(anon)", m.active_anon),
        ("Inactive(anon)", m.inactive_anon),
        ("Active(file)", m.active_file),
        ("Inactive(file)", m.inactive_file),
        ("Unevictable", m.unevictable),
        ("SwapTotal", m.swap_total),
        ("SwapFree", m.swap_free),
        ("Dirty", m.dirty),
        ("Writeback", m.writeback),
        ("AnonPages", m.anon_pages),
        ("KReclaimable", m.slab_reclaimable),
        ("Slab", m.slab_reclaimable + m.slab_unreclaimable),
        ("SReclaimable", m.slab_reclaimable),
        ("SUnreclaim", m.slab_unreclaimable),
        ("WritebackTmp", 0),
    ];
    let mut s = String::with_capacity(lines.len() * 28);
    for (name, pages) in lines {
        let label = format!("{name}:");
        let _ = writeln!(s, "{label:<16}{:>8} kB", kb(pages));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_lines_are_the_kernels() {
        let m = MeminfoSnapshot {
            total: 250_000,
            free: 1234,
            slab_reclaimable: 100,
            slab_unreclaimable: 20,
            ..Default::default()
        };
        let text = format_meminfo(&m);
        let lines: Vec<&str> = text.lines().collect();
        // The same bytes as a 6.1 machine's lines (label to column 16, value in 8, " kB").
        assert_eq!(lines[0], "MemTotal:        1000000 kB");
        assert_eq!(lines[1], "MemFree:            4936 kB");
        assert!(lines.contains(&"Slab:                480 kB"));
        assert!(lines.contains(&"SReclaimable:        400 kB"));
        assert!(lines.contains(&"SUnreclaim:           80 kB"));
    }

    #[test]
    fn buddyinfo_line_shape() {
        let mut zones: [ZoneSnapshot; MAX_NR_ZONES] = Default::default();
        zones[0].present = 3998;
        zones[0].nr_free = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 3];
        let text = format_buddyinfo(0, &zones);
        // Same bytes as a real 6.x machine's first buddyinfo line.
        assert_eq!(
            text,
            "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
        );
    }
}
