//! The machine sections: `[host]`, `[sysctl]`, `[swap]`, `[disk]`, `[writeback]`, `[cost]`,
//! `[oom]`. Each is a `static` [`Section`](crate::scenario::schema::Section) that does not know
//! where it sits, so a later machine table (`[[guest]]`) can embed the same declarations.

use crate::machine::cost::{parse_latency_samples, LatencySamples};
use crate::scenario::computed;
use crate::scenario::schema::{section, Conv, Fix, Rule, Ty, Val};
use crate::scenario::units::format_size;
use crate::scenario::{
    CostModel, DiskDevice, HostConfig, MachineType, OomConfig, SwapDevice, Sysctl, ThpDefrag,
    WritebackConfig, DEFAULT_FRAGMENT_STRIDE, GIB, KIB, MIB, NS_PER_MS, NS_PER_US,
};

/// Most RAM a machine may have: the frame table numbers frames in 28 bits (`PTE_PFN_MASK`), so
/// 2^28 pages of 4 KiB. The zones' reserved pages leave room for their alignment below it.
pub const MAX_RAM_BYTES: u64 = 1024 * GIB;

/// Zones an aged (fragmented) zone can be: the ones a host has.
const FRAGMENTABLE_ZONES: &[&str] = &["DMA", "DMA32", "Normal"];

/// A latency spread: a fraction in [0, 1) (1 would allow zero-latency requests).
const JITTER: Ty = Ty::Float {
    min: 0.0,
    max: 1.0,
    min_open: false,
    max_open: true,
};
const LATENCY: Ty = Ty::Duration { min: 0 };
const PERCENT: Ty = Ty::UInt { min: 0, max: 100 };

section! {
    HostConfig => pub static HOST = "host",
        "The machine: RAM and how it splits into zones, CPUs, transparent huge pages." {
        ram_bytes: 4 * GIB => Key::new(
            "ram",
            // Below 64 MiB the kernel's own reserves leave nothing usable. Above, the limit is
            // the frame table's: 2^28 frames (1 TiB), checked here so it is a parse error.
            Ty::Size { min: 64 * MIB, max: MAX_RAM_BYTES },
            "RAM of the machine",
        )
        .only_if(
            |h| h.zoneinfo.is_none(),
            "`zoneinfo` unset",
            "`ram` cannot be given together with `zoneinfo`: the zones and their sizes come \
             from the zoneinfo file",
            "remove `ram` (or `zoneinfo`)",
        );
        cpus: 2 => Key::new("cpus", Ty::UInt { min: 1, max: 1024 }, "CPUs");
        thp: true => Key::new(
            "thp",
            Ty::Bool,
            "transparent huge pages enabled (raises the default min_free_kbytes)",
        );
        thp_defrag: ThpDefrag::Madvise => Key::new(
            "thp_defrag",
            Ty::Choice { names: ThpDefrag::NAMES, what: "THP defrag setting" },
            "/sys/kernel/mm/transparent_hugepage/defrag: how hard a THP fault (a \"transhuge\" highorder stream, in a madvised region) tries: \"madvise\" and \"always\" reclaim and compact, \"never\" takes a free huge page or falls back",
        );
        machine: MachineType::Q35 => Key::new(
            "machine",
            Ty::Choice { names: MachineType::NAMES, what: "machine type" },
            "QEMU machine type, decides the RAM below 4GiB",
        );
        lowmem_bytes: None => Key::new(
            "lowmem",
            // At least 64 MiB, as for `ram`: the zones below 4 GiB hold the kernel's reserves.
            Ty::Size { min: 64 * MIB, max: 4 * GIB },
            "RAM below 4GiB (DMA + DMA32), at most ram; overrides the machine type",
        )
        .unset("decided by the machine type")
        .check(lowmem_within_ram)
        .only_if(
            |h| h.zoneinfo.is_none(),
            "`zoneinfo` unset",
            "`lowmem` cannot be given together with `zoneinfo`: the zones and their sizes come \
             from the zoneinfo file",
            "remove `lowmem` (or `zoneinfo`)",
        );
        zoneinfo: None => Key::new(
            "zoneinfo",
            Ty::Path { what: "zoneinfo", expected: "a path to a captured /proc/zoneinfo" },
            "captured /proc/zoneinfo giving the zones and their sizes",
        )
        .unset("zones built from ram, lowmem and machine")
        .check(zoneinfo_file);
        fragmented_zone: None => Key::new(
            "fragmented_zone",
            Ty::Choice { names: FRAGMENTABLE_ZONES, what: "zone" },
            "aged zone: one unmovable page pinned in every fragment_stride pages",
        )
        .unset("none")
        .access(
            |h: &HostConfig| h.fragmented_zone.map(|z| Val::S(crate::machine::ZONE_NAMES[z].into())),
            |h: &mut HostConfig, v| {
                if let Val::S(name) = v {
                    h.fragmented_zone = crate::machine::ZONE_NAMES.iter().position(|z| **z == name);
                }
            },
        );
        fragment_stride: DEFAULT_FRAGMENT_STRIDE => Key::new(
            "fragment_stride",
            Ty::UInt { min: 2, max: 1024 },
            "pages per pinned page in fragmented_zone, a power of two",
        )
        .unit("pages")
        .check(power_of_two);
        kernel_used_bytes: 0 => Key::new(
            "kernel_used",
            Ty::Size { min: 0, max: MAX_RAM_BYTES },
            "memory the booted kernel already holds when the run starts (slab, page tables, \
             initramfs): unmovable kernel pages, never freed; MemTotal - MemFree of an idle machine",
        )
        .check(kernel_used_fits);
        page_tables: false => Key::new(
            "page_tables",
            Ty::Bool,
            "anonymous memory has page-table pages: one unmovable kernel page per 2MiB touched, \
             charged to the task's memory cgroup and freed at exit, which keeps the blocks \
             around it from merging until then (off: the calibrated host model of the \
             reproductions; `validate` turns it on for the guests it mirrors)",
        );
        pcp_lists: false => Key::new(
            "pcp_lists",
            Ty::Bool,
            "model the per-CPU page lists (order-0 pages cached per CPU, unseen by the watermark \
             checks); off: frees go straight to the buddy (faster; see docs/MODEL.md)",
        );
        vmstat_drift: false => Key::new(
            "vmstat_drift",
            Ty::Bool,
            "NR_FREE_PAGES as 6.1 counts it: each CPU's changes reach the zone counter the \
             watermark checks read only past the zone's vmstat threshold, or at the once-a-second \
             fold; kswapd's checks read the exact count below percpu_drift_mark (off: exact)",
        );
        cpu_contention: false => Key::new(
            "cpu_contention",
            Ty::Bool,
            "threads share their CPU as 6.1's fair scheduler does: a thread waits while another \
             has the CPU, until a tick ends that one's slice or a woken thread preempts it \
             (false: every actor runs when due, as on a machine with a CPU per busy thread; busy \
             time is accounted either way)",
        );
        cpu_migration: true => Key::new(
            "cpu_migration",
            Ty::Bool,
            "with cpu_contention, a thread whose CPU is taken runs on an idle one: at wake-up, \
             or when that CPU goes idle while it waits (false: each thread stays on its home CPU)",
        );
    }
    children: [],
    rules: [],
    derived: None,
}

/// The kernel's own pages must leave room for the workloads.
fn kernel_used_fits(h: &HostConfig, v: &Val) -> Result<(), Fix> {
    match v {
        Val::U(n) if h.zoneinfo.is_none() && *n >= h.ram_bytes / 2 => Err(Fix::new(
            format!(
                "kernel_used ({}) must be less than half of ram ({})",
                format_size(*n),
                format_size(h.ram_bytes)
            ),
            "give what the idle machine's kernel holds (MemTotal - MemFree), or raise ram",
        )),
        _ => Ok(()),
    }
}

/// lowmem is the part of RAM below 4 GiB (DMA + DMA32): it cannot exceed RAM either.
fn lowmem_within_ram(h: &HostConfig, v: &Val) -> Result<(), Fix> {
    match v {
        Val::U(low) if *low > h.ram_bytes => Err(Fix::new(
            format!(
                "lowmem (RAM below 4GiB) must be at most ram ({}), found {}",
                format_size(h.ram_bytes),
                format_size(*low)
            ),
            "lower lowmem, or raise ram",
        )),
        _ => Ok(()),
    }
}

fn power_of_two(_: &HostConfig, v: &Val) -> Result<(), Fix> {
    match v {
        Val::U(n) if !n.is_power_of_two() => Err(Fix::new(
            format!("fragment_stride must be a power of two, not {n}"),
            "use 8 to forbid order-3 blocks, 512 to forbid huge pages",
        )),
        _ => Ok(()),
    }
}

/// The zoneinfo is read here, so a bad file is reported at its key rather than at run time.
fn zoneinfo_file(_: &HostConfig, v: &Val) -> Result<(), Fix> {
    let Val::S(path) = v else { return Ok(()) };
    let text = std::fs::read_to_string(path).map_err(|e| {
        let msg = if e.kind() == std::io::ErrorKind::NotFound {
            format!("zoneinfo file \"{path}\" does not exist")
        } else {
            format!("cannot read zoneinfo file \"{path}\": {e}")
        };
        Fix::new(msg, "")
    })?;
    crate::machine::layout::parse_zoneinfo(&text).map_err(|e| {
        Fix::new(
            format!("\"{path}\" is not a valid /proc/zoneinfo: {e}"),
            "give a file captured with `cat /proc/zoneinfo` on the machine to model",
        )
    })?;
    Ok(())
}

section! {
    Sysctl => pub static SYSCTL = "sysctl",
        "`vm.*` sysctls. The per-zone watermarks and protection they lead to are printed as \
         comments by `--show-defaults`." {
        min_free_kbytes: None => Key::new(
            "min_free_kbytes",
            Ty::UInt { min: computed::MIN_FREE_KBYTES_RANGE.0, max: computed::MIN_FREE_KBYTES_RANGE.1 },
            "vm.min_free_kbytes",
        )
        .unit("KiB")
        .why("the range the kernel clamps its computed min_free_kbytes to")
        .rule("from the zones' managed pages, by the [policy] watermarks variant, as the \
               kernel does at boot")
        .computed(computed::min_free_kbytes);
        watermark_scale_factor: 10 => Key::new(
            "watermark_scale_factor",
            Ty::UInt { min: 1, max: 3000 },
            "vm.watermark_scale_factor: distance between the watermarks",
        )
        .unit("1/10000 of a zone");
        watermark_boost_factor: crate::machine::watermark::DEFAULT_WATERMARK_BOOST_FACTOR => Key::new(
            "watermark_boost_factor",
            Ty::UInt { min: 0, max: 1_000_000 },
            "vm.watermark_boost_factor: how far an external fragmentation event may raise a zone's watermarks (with [policy] watermark_boost = \"v6.1\"); 0 disables boosting",
        )
        .unit("1/10000 of the high watermark");
        compaction_proactiveness: 20 => Key::new(
            "compaction_proactiveness",
            Ty::UInt { min: 0, max: 100 },
            "vm.compaction_proactiveness: every 500 ms kcompactd, with [policy] kcompactd = \"v6.1\", compacts a node whose free memory is fragmented beyond the band this sets (score above 110 - this, down to 100 - this; never below 15 and 5); 0 turns proactive compaction off",
        );
        lowmem_reserve_ratio: crate::machine::watermark::DEFAULT_LOWMEM_RESERVE_RATIO => Key::new(
            "lowmem_reserve_ratio",
            Ty::UIntList { labels: &["DMA", "DMA32", "Normal", "Movable"] },
            "vm.lowmem_reserve_ratio for DMA, DMA32, Normal, Movable; with [host] zoneinfo and this default, the protection the captured kernel printed is used instead",
        );
        swappiness: 60 => Key::new("swappiness", Ty::UInt { min: 0, max: 200 }, "vm.swappiness");
        page_cluster: 3 => Key::new(
            "page_cluster",
            Ty::UInt { min: 0, max: 31 },
            "vm.page-cluster: swap readahead window of up to 2^page_cluster pages (at most 32); 0 disables it",
        );
        vfs_cache_pressure: 100 => Key::new(
            "vfs_cache_pressure",
            Ty::UInt { min: 0, max: 100_000 },
            "vm.vfs_cache_pressure: percent weight of dentries and inodes in the superblock shrinker's count",
        )
        .unit("%");
        lru_gen_enabled: 0x0007 => Key::new(
            "lru_gen_enabled",
            Ty::UInt { min: 0, max: u32::MAX as u64 },
            "/sys/kernel/mm/lru_gen/enabled with [policy] lru = \"mglru\": capability bits, 0x0001 the multi-generational LRU itself (0: the two-list LRU of the same kernel), 0x0002 aging walks the page tables, 0x0004 the walk skips page tables whose non-leaf accessed bit is clear (unsupported in a Xen PV guest); bits beyond these are ignored; unread with lru = \"classic\"",
        );
        lru_gen_min_ttl_ms: 0 => Key::new(
            "lru_gen_min_ttl_ms",
            Ty::UInt { min: 0, max: u32::MAX as u64 },
            "/sys/kernel/mm/lru_gen/min_ttl_ms with [policy] lru = \"mglru\": kswapd OOM-kills when every generation of the working set is younger than this (thrashing protection); rounded up to a jiffy; 0 turns it off",
        )
        .unit("ms");
    }
    children: [],
    rules: [],
    derived: Some(computed::zone_lines),
}

/// Request slots of a block device: at least one; 2^16 guards against typos.
const NR_REQUESTS: Ty = Ty::UInt {
    min: 1,
    max: 1 << 16,
};

section! {
    SwapDevice => pub static SWAP = "swap",
        "The swap device: latency + bandwidth model, FIFO queue. Size 0 means no swap." {
        size_bytes: 0 => Key::new("size", Ty::Size { min: 0, max: u64::MAX }, "swap device size: 0 (no swap) or at least 4KiB")
            .check(swap_size);
        read_latency_ns: 80 * NS_PER_US => Key::new("read_latency", LATENCY, "latency of one swap-in request");
        write_latency_ns: 40 * NS_PER_US => Key::new("write_latency", LATENCY, "latency of one swap-out request");
        bandwidth_bytes_per_sec: GIB => Key::new("bandwidth", Ty::Bandwidth, "shared by reads and writes");
        latency_jitter: 0.1 => Key::new(
            "latency_jitter",
            JITTER,
            "per-request latency spread: latency * (1 + jitter * u), u in [-1, 1)",
        );
        nr_requests: 256 => Key::new(
            "nr_requests",
            NR_REQUESTS,
            "request slots (queue/nr_requests) of 32 pages each; a swap-out waits while all are busy",
        );
        max_request_bytes: 0 => Key::new(
            "max_request",
            Ty::Size { min: 0, max: u64::MAX },
            "largest request the device takes (queue/max_sectors_kb): a reclaim pass holds its swap-outs in its block plug until they fill a request this large or the pass ends (6.1's blk_start_plug in shrink_lruvec), so a page stays under writeback that long before its write is issued; 0 issues each swap-out at once (no plug)",
        )
        .check(max_request);
        rotational: false => Key::new(
            "rotational",
            Ty::Bool,
            "a rotational device (a disk; a virtio disk is one to its guest): 6.1 then reads ahead the 2^page_cluster slots around the faulting one (swap_cluster_readahead) instead of the pages around the faulting address",
        );
    }
    children: [],
    rules: [],
    derived: None,
}

/// 0 means "no plug"; anything else must hold at least one page.
fn max_request(_: &SwapDevice, v: &Val) -> Result<(), Fix> {
    zero_or_a_page(
        v,
        "max_request",
        "no plug",
        "write max_request = 0 to issue each swap-out at once, or a size like \"1MiB\"",
    )
}

/// 0 means "no swap"; anything else must hold at least one page.
fn swap_size(_: &SwapDevice, v: &Val) -> Result<(), Fix> {
    zero_or_a_page(
        v,
        "swap size",
        "no swap",
        "write size = 0 for no swap, or a size like \"1GiB\"",
    )
}

/// A size that is 0 (`zero_means`) or at least one page.
fn zero_or_a_page(v: &Val, what: &str, zero_means: &str, fix: &str) -> Result<(), Fix> {
    match v {
        Val::U(n) if *n != 0 && *n < 4 * KIB => Err(Fix::new(
            format!(
                "{what} must be 0 ({zero_means}) or at least 4KiB, found {}",
                crate::scenario::source::describe_size(*n)
            ),
            fix,
        )),
        _ => Ok(()),
    }
}

section! {
    DiskDevice => pub static DISK = "disk",
        "The block device behind files (page cache misses and writeback)." {
        read_latency_ns: 100 * NS_PER_US => Key::new("read_latency", LATENCY, "latency of one read request (page cache miss)");
        write_latency_ns: 50 * NS_PER_US => Key::new("write_latency", LATENCY, "latency of one writeback request");
        bandwidth_bytes_per_sec: GIB => Key::new("bandwidth", Ty::Bandwidth, "shared by reads and writes");
        latency_jitter: 0.1 => Key::new("latency_jitter", JITTER, "per-request latency spread, as for swap");
        nr_requests: 256 => Key::new("nr_requests", NR_REQUESTS, "request slots, as for swap; a writer waits while all are busy");
        readahead_pages: 32 => Key::new(
            "readahead_pages",
            // The upper bound (4 GiB per request) only guards against typos.
            Ty::UInt { min: 1, max: 1 << 20 },
            "pages per sequential read-ahead request",
        )
        .unit("pages")
        .why("1 disables read-ahead");
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    WritebackConfig => pub static WRITEBACK = "writeback",
        "Dirty page-cache limits and the flusher. A background ratio at or above dirty_ratio is \
         not an error: the kernel halves it, and so does the simulator." {
        dirty_background_ratio: 10 => Key::new(
            "dirty_background_ratio",
            PERCENT,
            "vm.dirty_background_ratio: the flusher starts above this share of available memory",
        )
        .unit("%");
        dirty_ratio: 20 => Key::new(
            "dirty_ratio",
            PERCENT,
            "vm.dirty_ratio: writers are throttled above this share of available memory",
        )
        .unit("%");
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    CostModel => pub static COST = "cost",
        "Simulated CPU cost of each operation; every figure is an abstraction (core-mm §9)." {
        anon_touch_ns: 20 => Key::new("anon_touch", LATENCY, "user access to a resident anonymous page");
        anon_fault_ns: 1_000 => Key::new("anon_fault", LATENCY, "first-touch anonymous fault: allocate and zero a page");
        swapcache_fault_ns: 1_000 => Key::new("swapcache_fault", LATENCY, "minor fault on a swap-cache hit");
        major_fault_ns: 5_000 => Key::new("major_fault", LATENCY, "kernel path of a swap-in fault, excluding device time");
        file_hit_ns: 300 => Key::new("file_hit", LATENCY, "buffered read of one page that hits the page cache");
        file_write_ns: 300 => Key::new("file_write", LATENCY, "buffered write of one whole page (cached or newly added): the copy, the dirtying and its share of the writeback's CPU work");
        file_miss_ns: 1_000 => Key::new("file_miss", LATENCY, "adding one page to the page cache on a miss, excluding device time");
        readahead_alloc_ns: 0 => Key::new("readahead_alloc", LATENCY, "the part of file_miss spent allocating one read-ahead page and adding it to the page cache while the window fills; a window whose page had to enter the allocator's slow path then lets the other CPUs run between its pages; 0: a window fills at once");
        scan_unmapped_ns: 300 => Key::new("scan_unmapped", LATENCY, "isolating and judging one unmapped LRU page");
        scan_mapped_ns: 1_500 => Key::new("scan_mapped", LATENCY, "isolating and judging one mapped page (the rmap walk that reads and clears its young bits); with unmap = 0 it also stands for the unmap");
        unmap_ns: 0 => Key::new("unmap", LATENCY, "unmapping one mapped page that reclaim goes on to write or free (try_to_unmap: a second rmap walk, the PTE cleared, the TLB flushed), on top of scan_mapped; 0: part of scan_mapped");
        lru_gen_walk_ns: 20 => Key::new("lru_gen_walk", LATENCY, "with [policy] lru = \"mglru\": the aging's page-table walk, per page-table entry it tests, leaf or non-leaf, and per entry of an eviction's look-around window (an abstraction: one cost for reading, testing and clearing an entry and promoting its folio)");
        swapout_submit_ns: 2_000 => Key::new("swapout_submit", LATENCY, "submitting one page for swap-out");
        free_page_ns: 100 => Key::new("free_page", LATENCY, "freeing one page back to the allocator");
        slowpath_ns: 1_000 => Key::new("slowpath", LATENCY, "fixed cost of one allocation slow-path entry");
        compact_scan_ns: 20 => Key::new("compact_scan", LATENCY, "compaction scanners: per page frame looked at");
        migrate_page_ns: 2_000 => Key::new("migrate_page", LATENCY, "migrating one page (copy, rmap and page-table update)");
        balance_start_ns: 0 => Key::new("balance_start", LATENCY, "kswapd from being switched onto its CPU to its first LRU batch (the end of its sleep, balance_pgdat's set-up, the first watermark and LRU-size checks); 0: it scans at once");
        balance_iteration_ns: 1_000 => Key::new("balance_iteration", LATENCY, "one balance_pgdat priority iteration besides its scanning (watermark checks, locks)");
        wakeup_latency_ns: 20_000 => Key::new("wakeup_latency", LATENCY, "from waking kswapd to kswapd running on its CPU (scheduler wake-up latency)");
        wakeup_latency_samples: None => Key::new(
            "wakeup_latency_samples",
            Ty::Path { what: "latency samples", expected: "a path to a JSON file with a `latencies_us` array" },
            "measured kswapd wake-up latencies (JSON, `latencies_us`, as scripts/validate-wakeup.py writes them): each wake-up draws one at random instead of wakeup_latency",
        )
        .unset("every wake-up takes wakeup_latency")
        .check(latency_samples_file);
    }
    children: [],
    rules: [READAHEAD_ALLOC_IN_FILE_MISS],
    derived: None,
}

/// `readahead_alloc` is a part of `file_miss`, charged earlier: it cannot be the larger.
const READAHEAD_ALLOC_IN_FILE_MISS: Rule<CostModel> = Rule {
    name: "readahead_alloc is part of file_miss",
    doc: "`readahead_alloc` must not exceed `file_miss`, the whole cost of a page added on a miss",
    check: |c, _| {
        if c.readahead_alloc_ns <= c.file_miss_ns {
            return Ok(());
        }
        Err(Fix::new(
            format!(
                "readahead_alloc ({} ns) is more than file_miss ({} ns), of which it is a part",
                c.readahead_alloc_ns, c.file_miss_ns
            ),
            "lower readahead_alloc, or raise file_miss to the whole cost of a page read in",
        )
        .at("readahead_alloc"))
    },
};

/// The samples are read here, so a bad file is reported at its key rather than at run time.
fn latency_samples_file(_: &CostModel, v: &Val) -> Result<(), Fix> {
    let Val::S(path) = v else { return Ok(()) };
    read_latency_samples(path)
        .map(|_| ())
        .map_err(|e| Fix::new(e, ""))
}

/// Stored as the resolved path; the key's check has read the file already, so a file that
/// changed since reads as no samples (the constant latency), never a panic.
impl Conv for LatencySamples {
    fn to_val(&self) -> Option<Val> {
        Some(Val::S(self.path.clone()))
    }
    fn from_val(v: Val) -> Self {
        match v {
            Val::S(path) => read_latency_samples(&path).unwrap_or(LatencySamples {
                path,
                ns: Vec::new(),
            }),
            other => panic!("LatencySamples field given {other:?}"),
        }
    }
}

/// Read a JSON file holding `"latencies_us": [...]` (non-negative microseconds, at least one),
/// as `scripts/validate-wakeup.py` writes it.
fn read_latency_samples(path: &str) -> Result<LatencySamples, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("latency samples file \"{path}\" does not exist")
        } else {
            format!("cannot read latency samples file \"{path}\": {e}")
        }
    })?;
    let ns = parse_latency_samples(&text).map_err(|e| format!("\"{path}\": {e}"))?;
    Ok(LatencySamples {
        path: path.to_string(),
        ns,
    })
}

section! {
    OomConfig => pub static OOM = "oom", "The OOM killer." {
        allowed: true => Key::new(
            "allowed",
            Ty::Bool,
            "may the OOM killer kill a workload (false: workloads must fit in RAM + swap)",
        );
        reaper_delay_ns: NS_PER_MS => Key::new(
            "reaper_delay",
            LATENCY,
            "delay between a kill and the oom_reaper freeing the memory",
        );
        stop_on_kill: false => Key::new(
            "stop_on_kill",
            Ty::Bool,
            "end the run at the host's first OOM kill (seed 001's procedure stops when a guest is killed)",
        );
    }
    children: [],
    rules: [],
    derived: None,
}
