//! Zone layout of the simulated x86_64 machine (core-mm §1.2): where each zone starts, how many
//! page frames it spans, how many of them are real RAM (`present`) and how many the page
//! allocator actually manages (`managed`).
//!
//! Two sources:
//!
//! * [`ZoneLayout::for_host`] sizes the zones from the amount of RAM, the QEMU machine type and an
//!   optional explicit "RAM below 4 GiB". This is an **abstraction** of what firmware and early
//!   boot do; every figure it uses is a named constant below, with the reasoning next to it.
//! * [`parse_zoneinfo`] reads a captured `/proc/zoneinfo` (6.1 or newer) and takes the zone sizes
//!   from it verbatim, together with the watermarks and protection the kernel printed, so that
//!   tests can check our formulas against a real machine.
//!
//! Only one NUMA node is modelled. ZONE_MOVABLE and ZONE_DEVICE are always empty in `for_host`.

use crate::engine::units::{GIB, MIB};
use crate::machine::{
    MAX_NR_ZONES, PAGE_SHIFT, ZONE_DEVICE, ZONE_DMA, ZONE_DMA32, ZONE_MOVABLE, ZONE_NAMES,
    ZONE_NORMAL,
};

/// First PFN of ZONE_DMA. PFN 0 holds the real-mode IVT/BIOS data area and is never RAM to Linux.
pub const DMA_START_PFN: u64 = 1;
/// ZONE_DMA ends at 16 MiB (ISA DMA limit): PFN 4096 (exclusive).
pub const DMA_END_PFN: u64 = (16 * MIB) >> PAGE_SHIFT;
/// ZONE_DMA32 ends at 4 GiB: PFN 1 048 576 (exclusive). ZONE_NORMAL starts here.
pub const DMA32_END_PFN: u64 = (4 * GIB) >> PAGE_SHIFT;

/// Page frames inside [DMA_START_PFN, DMA_END_PFN) that the firmware reports as reserved, not
/// RAM. We assume the usual SeaBIOS/OVMF e820 map of a QEMU guest:
/// usable `0x00000–0x9fbff` (the last 1 KiB below 640 KiB is the EBDA, so PFN 0x9f is not a
/// whole usable page) and reserved `0x9fc00–0xfffff` (EBDA, VGA window, option and system ROMs).
/// The hole is therefore PFNs 0x9f..=0xff: 97 frames. 4095 − 97 = 3998 present pages, which is
/// what real guests (and this repository's host fixture) print.
pub const DMA_BIOS_HOLE_PAGES: u64 = 0x100 - 0x9f;
/// ZONE_DMA `present`: spanned (4095) minus the BIOS hole.
pub const DMA_PRESENT_PAGES: u64 = (DMA_END_PFN - DMA_START_PFN) - DMA_BIOS_HOLE_PAGES;
/// ZONE_DMA `managed`. x86 kernels since 5.13 keep the whole first MiB of RAM out of the page
/// allocator (real-mode trampoline, BIOS corruption guard), so the 158 present pages below 1 MiB
/// are never managed; the memmap and the kernel image live elsewhere (memblock allocates top
/// down). What is left is PFN 0x100..0xfff = 3840 pages, the figure seen on typical guests.
pub const DMA_MANAGED_PAGES: u64 = DMA_END_PFN - 0x100;
/// Bytes of `struct page` per 4 KiB page frame (x86_64, no debug options): the memmap costs
/// 1/64 of every zone's present pages.
pub const STRUCT_PAGE_BYTES: u64 = 64;
/// Boot-time reservation charged to ZONE_DMA32 besides the memmap: kernel text/data/bss of a
/// distro kernel, the initrd until it is freed, early page tables, per-CPU areas, ACPI tables and
/// similar memblock reservations. A typical figure is 30–50 MiB; we pick 40 MiB (10 240 pages).
/// This is an abstraction: real machines differ by a few MiB (the host fixture shows ~37 MiB).
pub const KERNEL_BOOT_RESERVED_BYTES: u64 = 40 * MIB;
/// Smallest machine we size: ZONE_DMA plus enough DMA32 to hold the boot reservation with room
/// to spare. Anything smaller is rejected.
pub const MIN_RAM_BYTES: u64 = 64 * MIB;

/// q35: guests with more than this much RAM get [`Q35_SPLIT_LOWMEM_BYTES`] below 4 GiB.
pub const Q35_SPLIT_THRESHOLD_BYTES: u64 = 2 * GIB + 3 * GIB / 4;
/// q35: RAM placed below 4 GiB when the guest is larger than the threshold.
pub const Q35_SPLIT_LOWMEM_BYTES: u64 = 2 * GIB;
/// i440fx: guests with at least this much RAM get [`I440FX_SPLIT_LOWMEM_BYTES`] below 4 GiB.
pub const I440FX_SPLIT_THRESHOLD_BYTES: u64 = 3 * GIB + GIB / 2;
/// i440fx: RAM placed below 4 GiB when the guest is at or above the threshold.
pub const I440FX_SPLIT_LOWMEM_BYTES: u64 = 3 * GIB;

/// One zone's extent, in page frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZoneSpan {
    pub start_pfn: u64,
    /// end_pfn − start_pfn, holes included.
    pub spanned: u64,
    /// Frames that are RAM (spanned minus holes).
    pub present: u64,
    /// Frames handed to the buddy allocator (present minus boot reservations).
    pub managed: u64,
}

/// The zones of node 0, indexed by zone number (`ZONE_DMA` .. `ZONE_DEVICE`). An unpopulated zone
/// is all zero, start_pfn included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZoneLayout {
    pub zones: [ZoneSpan; MAX_NR_ZONES],
}

/// Pages of `struct page` needed to describe `present` frames.
#[inline]
pub fn memmap_pages(present: u64) -> u64 {
    (present * STRUCT_PAGE_BYTES) >> PAGE_SHIFT
}

/// Bytes of RAM below 4 GiB for this host (before rounding to pages).
pub fn lowmem_bytes(host: &RamLayout) -> u64 {
    if let Some(low) = host.lowmem_bytes {
        return low;
    }
    let ram = host.ram_bytes;
    match host.machine {
        MachineType::Q35 if ram > Q35_SPLIT_THRESHOLD_BYTES => Q35_SPLIT_LOWMEM_BYTES,
        MachineType::I440fx if ram >= I440FX_SPLIT_THRESHOLD_BYTES => I440FX_SPLIT_LOWMEM_BYTES,
        _ => ram,
    }
}

impl ZoneLayout {
    /// Size the zones of an x86_64 machine with `host.ram_bytes` of RAM (core-mm §1.2).
    ///
    /// * DMA: PFN [1, 4096), present [`DMA_PRESENT_PAGES`] (3998), managed
    ///   [`DMA_MANAGED_PAGES`] (3840), whatever the RAM size.
    /// * DMA32: from PFN 4096 to the end of RAM below 4 GiB (`host.lowmem_bytes`, else the machine
    ///   type's rule, see [`lowmem_bytes`]); it spans up to 4 GiB when there is RAM above 4 GiB.
    ///   present = lowmem pages − 4096; managed = present − memmap − [`KERNEL_BOOT_RESERVED_BYTES`].
    /// * Normal: from PFN 1 048 576, present = spanned = RAM above 4 GiB; managed = present − memmap.
    /// * Movable, Device: empty.
    ///
    /// Simplification: the memmap of each zone is charged to that zone (a real kernel allocates
    /// most of it from the top of memory). `host.zoneinfo` is not consulted here; a caller with a
    /// captured zoneinfo uses [`parse_zoneinfo`] instead.
    pub fn for_host(host: &RamLayout) -> Result<ZoneLayout, String> {
        let ram = host.ram_bytes;
        if ram < MIN_RAM_BYTES {
            return Err(format!(
                "host.ram = {ram} bytes is too small: at least {} MiB is needed (16 MiB of ZONE_DMA \
                 plus the {} MiB boot reservation in ZONE_DMA32)",
                MIN_RAM_BYTES / MIB,
                KERNEL_BOOT_RESERVED_BYTES / MIB
            ));
        }
        let low = lowmem_bytes(host);
        if host.lowmem_bytes.is_some() {
            if low > ram {
                return Err(format!(
                    "host.lowmem = {low} bytes is larger than host.ram = {ram} bytes"
                ));
            }
            if low > 4 * GIB {
                return Err(format!(
                    "host.lowmem = {low} bytes is above 4 GiB; RAM below 4 GiB cannot exceed 4 GiB"
                ));
            }
            if low < MIN_RAM_BYTES {
                return Err(format!(
                    "host.lowmem = {low} bytes is too small: at least {} MiB must sit below 4 GiB",
                    MIN_RAM_BYTES / MIB
                ));
            }
        }
        let low_pages = low >> PAGE_SHIFT;
        let high_pages = (ram >> PAGE_SHIFT) - low_pages;

        let mut layout = ZoneLayout::default();
        layout.zones[ZONE_DMA] = ZoneSpan {
            start_pfn: DMA_START_PFN,
            spanned: DMA_END_PFN - DMA_START_PFN,
            present: DMA_PRESENT_PAGES,
            managed: DMA_MANAGED_PAGES,
        };

        let dma32_present = low_pages - DMA_END_PFN;
        let dma32_end = if high_pages > 0 {
            DMA32_END_PFN
        } else {
            low_pages
        };
        let reserved = KERNEL_BOOT_RESERVED_BYTES >> PAGE_SHIFT;
        layout.zones[ZONE_DMA32] = ZoneSpan {
            start_pfn: DMA_END_PFN,
            spanned: dma32_end - DMA_END_PFN,
            present: dma32_present,
            managed: dma32_present - memmap_pages(dma32_present) - reserved,
        };

        if high_pages > 0 {
            layout.zones[ZONE_NORMAL] = ZoneSpan {
                start_pfn: DMA32_END_PFN,
                spanned: high_pages,
                present: high_pages,
                managed: high_pages - memmap_pages(high_pages),
            };
        }
        debug_assert_eq!(layout.zones[ZONE_MOVABLE], ZoneSpan::default());
        debug_assert_eq!(layout.zones[ZONE_DEVICE], ZoneSpan::default());
        Ok(layout)
    }

    /// Managed pages per zone, the input of every watermark formula.
    #[inline]
    pub fn managed(&self) -> [u64; MAX_NR_ZONES] {
        let mut m = [0; MAX_NR_ZONES];
        for (out, z) in m.iter_mut().zip(self.zones.iter()) {
            *out = z.managed;
        }
        m
    }

    /// Present pages per zone (input of the pre-3.8 watermark formula).
    #[inline]
    pub fn present(&self) -> [u64; MAX_NR_ZONES] {
        let mut p = [0; MAX_NR_ZONES];
        for (out, z) in p.iter_mut().zip(self.zones.iter()) {
            *out = z.present;
        }
        p
    }

    #[inline]
    pub fn total_managed(&self) -> u64 {
        self.zones.iter().map(|z| z.managed).sum()
    }

    /// A zone is populated when it has present pages (the kernel's `populated_zone`).
    #[inline]
    pub fn is_populated(&self, zone: usize) -> bool {
        self.zones[zone].present > 0
    }
}

/// Zone index for a zone name as printed by the kernel (`DMA`, `DMA32`, `Normal`, `Movable`,
/// `Device`).
pub fn zone_index(name: &str) -> Option<usize> {
    ZONE_NAMES.iter().position(|n| *n == name)
}

/// What a captured `/proc/zoneinfo` printed for one zone, beyond its sizes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrintedZone {
    pub name: String,
    /// Printed min/low/high include `boost` (the kernel prints `_watermark[x] + watermark_boost`).
    pub min: u64,
    pub low: u64,
    pub high: u64,
    /// `promo` line (6.x kernels after 6.1 print it); `None` when absent.
    pub promo: Option<u64>,
    pub boost: u64,
    /// `protection: (..)`, one entry per zone of the kernel that wrote the file.
    pub protection: Vec<u64>,
    /// `pages free`.
    pub free: u64,
}

/// A parsed `/proc/zoneinfo` of a single-node machine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedZoneinfo {
    pub layout: ZoneLayout,
    /// One entry per zone, in file order.
    pub printed: Vec<PrintedZone>,
}

impl ParsedZoneinfo {
    /// The `lowmem_reserve` the captured kernel had: each zone's `protection:` line, by the
    /// highest usable zone of the allocation. The kernel computes it once at boot from the
    /// managed pages of that moment (before the initramfs is freed, for instance), so it can
    /// differ from what the file's own `managed` counts would give.
    pub fn protection(&self) -> [[u64; MAX_NR_ZONES]; MAX_NR_ZONES] {
        let mut out = [[0u64; MAX_NR_ZONES]; MAX_NR_ZONES];
        for (z, row) in out.iter_mut().enumerate() {
            if let Some(p) = self.printed_zone(z) {
                for (j, v) in p.protection.iter().take(MAX_NR_ZONES).enumerate() {
                    row[j] = *v;
                }
            }
        }
        out
    }

    /// The printed record of zone index `zone`, if the file had one.
    pub fn printed_zone(&self, zone: usize) -> Option<&PrintedZone> {
        let name = ZONE_NAMES.get(zone)?;
        self.printed.iter().find(|p| p.name == *name)
    }
}

/// Where the parser is inside one zone's record.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    /// After `Node N, zone X`, before `pages free` (per-node stats live here).
    Head,
    /// From `pages free` up to `protection:` (boost/min/low/high/promo/spanned/present/...).
    Sizes,
    /// After `protection:` (zone stats, pagesets, start_pfn).
    Tail,
}

/// Zone record being filled.
struct Pending {
    idx: usize,
    header_line: usize,
    printed: PrintedZone,
    start_pfn: Option<u64>,
    spanned: Option<u64>,
    present: Option<u64>,
    managed: Option<u64>,
    min: Option<u64>,
    low: Option<u64>,
    high: Option<u64>,
    free: Option<u64>,
    protection: bool,
}

fn parse_num(tok: Option<&str>, lineno: usize, what: &str) -> Result<u64, String> {
    match tok {
        Some(t) => t.parse::<u64>().map_err(|_| {
            format!("zoneinfo line {lineno}: expected a non-negative integer after `{what}`, found `{t}`")
        }),
        None => Err(format!(
            "zoneinfo line {lineno}: expected a non-negative integer after `{what}`, found end of line"
        )),
    }
}

fn finish(p: Pending, out: &mut ParsedZoneinfo) -> Result<(), String> {
    let missing = |field: &str| {
        format!(
            "zoneinfo line {}: zone {} record ended without a `{field}` line",
            p.header_line, p.printed.name
        )
    };
    let free = p.free.ok_or_else(|| missing("pages free"))?;
    let min = p.min.ok_or_else(|| missing("min"))?;
    let low = p.low.ok_or_else(|| missing("low"))?;
    let high = p.high.ok_or_else(|| missing("high"))?;
    let spanned = p.spanned.ok_or_else(|| missing("spanned"))?;
    let present = p.present.ok_or_else(|| missing("present"))?;
    let managed = p.managed.ok_or_else(|| missing("managed"))?;
    if !p.protection {
        return Err(missing("protection:"));
    }
    // Unpopulated zones end right after `protection:`; their start_pfn is meaningless to us.
    let start_pfn = if present > 0 {
        p.start_pfn.ok_or_else(|| missing("start_pfn:"))?
    } else {
        0
    };
    if managed > present || present > spanned {
        return Err(format!(
            "zoneinfo line {}: zone {} has managed {managed} > present {present} or present > \
             spanned {spanned}; expected managed <= present <= spanned",
            p.header_line, p.printed.name
        ));
    }
    out.layout.zones[p.idx] = ZoneSpan {
        start_pfn,
        spanned,
        present,
        managed,
    };
    let mut printed = p.printed;
    printed.free = free;
    printed.min = min;
    printed.low = low;
    printed.high = high;
    out.printed.push(printed);
    Ok(())
}

/// Parse a `/proc/zoneinfo` text (Linux 6.1 and newer; lines the parser does not need, such as
/// per-node and per-zone stat items, `promo`, `nr_free_pages_blocks`, pageset fields, are
/// skipped). Only single-node files are accepted. Errors name the 1-based line and what was
/// expected there.
pub fn parse_zoneinfo(text: &str) -> Result<ParsedZoneinfo, String> {
    let mut out = ParsedZoneinfo::default();
    let mut cur: Option<Pending> = None;
    let mut section = Section::Head;
    let mut node: Option<u64> = None;
    let mut seen = [false; MAX_NR_ZONES];

    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("Node ") {
            // "Node <nid>, zone <name>"
            let (nid_s, zone_part) = rest.split_once(',').ok_or_else(|| {
                format!(
                    "zoneinfo line {lineno}: expected `Node <nid>, zone <name>`, found `{line}`"
                )
            })?;
            let nid = nid_s.trim().parse::<u64>().map_err(|_| {
                format!(
                    "zoneinfo line {lineno}: expected a node number after `Node`, found `{}`",
                    nid_s.trim()
                )
            })?;
            let name = zone_part
                .trim()
                .strip_prefix("zone")
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| {
                    format!(
                        "zoneinfo line {lineno}: expected `zone <name>` after `Node {nid},`, found `{}`",
                        zone_part.trim()
                    )
                })?;
            match node {
                None => node = Some(nid),
                Some(first) if first != nid => {
                    return Err(format!(
                        "zoneinfo line {lineno}: multi-node zoneinfo is not supported (node {nid} \
                         after node {first}); capture a single-node machine or boot with numa=off"
                    ));
                }
                Some(_) => {}
            }
            let idx = zone_index(name).ok_or_else(|| {
                format!(
                    "zoneinfo line {lineno}: unknown zone `{name}`; expected one of {} (x86_64)",
                    ZONE_NAMES.join(", ")
                )
            })?;
            if seen[idx] {
                return Err(format!(
                    "zoneinfo line {lineno}: zone {name} of node {nid} appears twice"
                ));
            }
            seen[idx] = true;
            if let Some(p) = cur.take() {
                finish(p, &mut out)?;
            }
            cur = Some(Pending {
                idx,
                header_line: lineno,
                printed: PrintedZone {
                    name: name.to_string(),
                    ..PrintedZone::default()
                },
                start_pfn: None,
                spanned: None,
                present: None,
                managed: None,
                min: None,
                low: None,
                high: None,
                free: None,
                protection: false,
            });
            section = Section::Head;
            continue;
        }

        let Some(p) = cur.as_mut() else {
            return Err(format!(
                "zoneinfo line {lineno}: expected `Node <nid>, zone <name>` first, found `{line}`"
            ));
        };
        let mut toks = line.split_whitespace();
        let key = toks.next().unwrap_or("");
        match section {
            Section::Head => {
                if key == "pages" {
                    let what = toks.next();
                    if what != Some("free") {
                        return Err(format!(
                            "zoneinfo line {lineno}: expected `pages free <n>`, found `{line}`"
                        ));
                    }
                    p.free = Some(parse_num(toks.next(), lineno, "pages free")?);
                    section = Section::Sizes;
                }
                // Anything else here is a per-node stat item or `per-node stats`: skipped.
            }
            Section::Sizes => match key {
                "boost" => p.printed.boost = parse_num(toks.next(), lineno, key)?,
                "min" => p.min = Some(parse_num(toks.next(), lineno, key)?),
                "low" => p.low = Some(parse_num(toks.next(), lineno, key)?),
                "high" => p.high = Some(parse_num(toks.next(), lineno, key)?),
                "promo" => p.printed.promo = Some(parse_num(toks.next(), lineno, key)?),
                "spanned" => p.spanned = Some(parse_num(toks.next(), lineno, key)?),
                "present" => p.present = Some(parse_num(toks.next(), lineno, key)?),
                "managed" => p.managed = Some(parse_num(toks.next(), lineno, key)?),
                "protection:" => {
                    let rest = line["protection:".len()..].trim();
                    let inner = rest
                        .strip_prefix('(')
                        .and_then(|r| r.strip_suffix(')'))
                        .ok_or_else(|| {
                            format!(
                                "zoneinfo line {lineno}: expected `protection: (<n>, <n>, ...)`, found `{line}`"
                            )
                        })?;
                    let mut prot = Vec::with_capacity(MAX_NR_ZONES);
                    for t in inner.split(',') {
                        prot.push(parse_num(Some(t.trim()), lineno, "protection:")?);
                    }
                    p.printed.protection = prot;
                    p.protection = true;
                    section = Section::Tail;
                }
                // `cma` and any field a newer kernel adds: skipped.
                _ => {}
            },
            Section::Tail => {
                if key == "start_pfn:" {
                    p.start_pfn = Some(parse_num(toks.next(), lineno, key)?);
                }
            }
        }
    }
    match cur.take() {
        Some(p) => finish(p, &mut out)?,
        None => {
            return Err(
                "zoneinfo: no `Node <nid>, zone <name>` line found; is this /proc/zoneinfo?"
                    .to_string(),
            )
        }
    }
    Ok(out)
}

/// QEMU machine type: decides how much RAM sits below 4 GiB (DMA32) versus above (Normal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineType {
    /// q35: guests with more than 2.75 GiB get 2 GiB below 4 GiB.
    Q35,
    /// i440fx (`pc`): guests with 3.5 GiB or more get 3 GiB below 4 GiB.
    I440fx,
}

impl MachineType {
    pub const NAMES: &'static [&'static str] = &["q35", "i440fx"];
    pub fn name(self) -> &'static str {
        match self {
            MachineType::Q35 => "q35",
            MachineType::I440fx => "i440fx",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "q35" => Some(MachineType::Q35),
            "i440fx" => Some(MachineType::I440fx),
            _ => None,
        }
    }
}

/// How a machine's RAM is laid out in physical memory: its size, and how much sits below
/// 4 GiB (given, or by the QEMU machine type's rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RamLayout {
    pub ram_bytes: u64,
    pub machine: MachineType,
    /// RAM below 4 GiB (DMA + DMA32), overriding the machine type's rule.
    pub lowmem_bytes: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dma_constants() {
        assert_eq!(DMA_BIOS_HOLE_PAGES, 97);
        assert_eq!(DMA_PRESENT_PAGES, 3998);
        assert_eq!(DMA_MANAGED_PAGES, 3840);
        assert_eq!(DMA32_END_PFN, 1_048_576);
        assert_eq!(memmap_pages(520_192), 8128);
    }

    #[test]
    fn parse_errors_name_the_line() {
        let e = parse_zoneinfo("hello").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        let e = parse_zoneinfo("Node 0, zone DMA\n  pages free x\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("`pages free`"), "{e}");
        let e = parse_zoneinfo("Node 0, zone HighMem\n").unwrap_err();
        assert!(e.contains("unknown zone `HighMem`"), "{e}");
        let e = parse_zoneinfo("Node 0, zone DMA\n  pages free 1\n").unwrap_err();
        assert!(e.contains("line 1") && e.contains("`min`"), "{e}");
        let e = parse_zoneinfo("").unwrap_err();
        assert!(e.contains("no `Node"), "{e}");
    }

    #[test]
    fn parse_rejects_multi_node() {
        let zone = |nid: u32, name: &str| {
            format!(
                "Node {nid}, zone {name:>8}\n  pages free     0\n        min      0\n        low      0\n        high     0\n        spanned  0\n        present  0\n        managed  0\n        protection: (0, 0, 0, 0, 0)\n"
            )
        };
        let text = format!("{}{}", zone(0, "Movable"), zone(1, "Movable"));
        let e = parse_zoneinfo(&text).unwrap_err();
        assert!(e.contains("multi-node zoneinfo is not supported"), "{e}");
        assert!(e.contains("line 10"), "{e}");
        let ok = parse_zoneinfo(&zone(0, "Movable")).unwrap();
        assert_eq!(ok.printed.len(), 1);
        assert_eq!(ok.layout, ZoneLayout::default());
    }
}
