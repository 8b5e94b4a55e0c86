//! `[xen]`: the host is a Xen host. The scenario's machine (`[host]`, `[sysctl]`, `[swap]`,
//! its `[[workload]]`s) is dom0; every `[[guest]]` is a domU with its own reservation, its
//! virtual block devices (`[[guest.vbd]]`) served by blkback in dom0, and I/O jobs
//! (`[guest.workload.blkio]`). The module parameters of blkback are `[xen.blkback]`, the
//! costs of the grant and I/O path `[xen.cost]`; the debated behaviours are the
//! `blkback_pool`, `blkback_backing` and `blkback_grants` switches of `[policy]`.

use crate::machine::xen::{BlkbackParams, XenCost};
use crate::scenario::schema::{section, Embedded, Fix, Rule, Ty, Val};
use crate::scenario::units::format_size;
use crate::scenario::{BlkioSpec, Scenario, Vbd, XenConfig, GIB, MIB, NS_PER_MS, NS_PER_US};

const COST: Ty = Ty::Duration { min: 0 };

section! {
    BlkbackParams => pub static BLKBACK = "blkback",
        "xen-blkback's module parameters (`/sys/module/xen_blkback/parameters/`), mechanisms.md \
         §B.1, and the balloon worker's delay." {
        max_buffer_pages: 1024 => Key::new(
            "max_buffer_pages",
            Ty::UInt { min: 0, max: 1 << 24 },
            "pages each ring's pool keeps after housekeeping outside a squeeze",
        );
        buffer_squeeze_duration_ms: 10 => Key::new(
            "buffer_squeeze_duration_ms",
            Ty::UInt { min: 0, max: 3_600_000 },
            "how long a detected memory pressure keeps pools squeezed to 0, in ms (B2: \
             aggressive_shrinking_duration); rounded up to jiffies",
        )
        .unit("ms");
        max_persistent_grants: 1056 => Key::new(
            "max_persistent_grants",
            Ty::UInt { min: 0, max: 1 << 20 },
            "persistent grants a ring keeps (blkback_grants = \"v61\"; v3.8 has a fixed 352)",
        );
        persistent_grant_unused_seconds: 60 => Key::new(
            "persistent_grant_unused_seconds",
            Ty::UInt { min: 0, max: 1 << 20 },
            "the purge drops idle grants unused this long; 0 disables that pass",
        )
        .unit("s");
        max_queues: 0 => Key::new(
            "max_queues",
            Ty::UInt { min: 0, max: 1024 },
            "rings per device the backend offers; 0: dom0's CPUs",
        );
        feature_persistent: true => Key::new(
            "feature_persistent",
            Ty::Bool,
            "the backend offers persistent grants (used when the frontend does too)",
        );
        log_stats: false => Key::new(
            "log_stats",
            Ty::Bool,
            "each ring prints its request statistics every 10 s (and resets them)",
        );
        reqs: 64 => Key::new(
            "reqs",
            Ty::UInt { min: 1, max: 65536 },
            "blkback_pool = \"B0\": requests of the global pending array (11 pages each)",
        );
        balloon_delay_ns: 0 => Key::new(
            "balloon_delay",
            Ty::Duration { min: 0 },
            "balloon backing: time from a pool page's free to its frame being back in dom0 \
             (an estimate; the balloon worker's timing is not sourced)",
        );
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    XenCost => pub static XEN_COST = "cost",
        "What the grant and I/O path costs (mechanisms.md §C.6): the shape is sourced, the \
         numbers are estimates from §C.6's worked example, not measurements \
         (`reproduce persistent-grants` fits `guest_request` and `flush_contention` on seed \
         003's 1- and 5-guest points and predicts the rest)." {
        request_ns: 1_500 => Key::new("request", COST, "blkback's own work per request (ring copy, bio, response)");
        map_ns: NS_PER_US => Key::new("map", COST, "one GNTTABOP_map_grant_ref hypercall");
        map_op_ns: 150 => Key::new("map_op", COST, "each map operation in it");
        unmap_ns: NS_PER_US => Key::new("unmap", COST, "one unmap hypercall");
        unmap_op_ns: 150 => Key::new("unmap_op", COST, "each unmap operation in it");
        flush_ns: 300 => Key::new("flush", COST, "a TLB flush of dom0's CPU mask under Xen's flush lock: fixed part");
        flush_cpu_ns: 20 => Key::new("flush_cpu", COST, "and per dom0 vCPU in the mask");
        flush_contention_ns: 200 => Key::new(
            "flush_contention",
            COST,
            "added to a flush's hold time per flusher spinning on the lock (the lock's cache line \
             moving between waiters)",
        );
        ipi_ns: 100 => Key::new("ipi", COST, "what one flush IPI costs each other dom0 CPU");
        lookup_ns: 50 => Key::new("lookup", COST, "one persistent-grant tree lookup");
        pool_alloc_ns: 500 => Key::new("pool_page", COST, "growing a pool by a page, or freeing a batch of 10 (besides dom0's allocation)");
        evtchn_ns: 2 * NS_PER_US => Key::new("evtchn", COST, "an event-channel notification until the other end runs");
        guest_request_ns: 7 * NS_PER_US => Key::new("guest_request", COST, "guest: blkfront and its block layer per request");
        guest_grant_ns: 400 => Key::new("guest_grant", COST, "guest: granting a page and ending foreign access (non-persistent)");
        guest_copy_ns: 450 => Key::new("guest_copy", COST, "guest: copying a 4KiB segment to or from the persistent buffer");
        ramdisk_page_ns: 400 => Key::new("ramdisk_page", COST, "a ramdisk backend copying 4KiB with the CPU");
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    XenConfig => pub static XEN = "xen",
        "A Xen host: the hypervisor owns the machine's memory; the scenario's machine is dom0 \
         (its [host] ram is dom0's reservation) and every [[guest]] is a domU." {
        ram_bytes: 64 * GIB => Key::new(
            "ram",
            Ty::Size { min: 64 * MIB, max: 1 << 40 },
            "physical memory the hypervisor owns: dom0's and every domU's reservation must fit",
        );
        blkback: BlkbackParams::default();
        cost: XenCost::default();
    }
    children: [
        Embedded::<XenConfig, BlkbackParams> {
            section: &BLKBACK,
            get: |x| &x.blkback,
            get_mut: |x| &mut x.blkback,
        },
        Embedded::<XenConfig, XenCost> {
            section: &XEN_COST,
            get: |x| &x.cost,
            get_mut: |x| &mut x.cost,
        },
    ],
    rules: [],
    derived: None,
}

section! {
    Vbd => pub static VBD = "vbd",
        "A virtual block device of a Xen domU: blkfront in the guest, blkback in dom0 with a ring \
         per queue, and the backend device behind it." {
        name: String::new() => Key::new("name", Ty::Text { what: "device name" }, "unique in the guest (\"xvda\")")
            .required("name = \"xvda\"");
        backend: "ramdisk".to_string() => Key::new(
            "backend",
            Ty::Choice { names: Vbd::BACKENDS, what: "backend device" },
            "ramdisk (copies with dom0's CPU), network (a network-backed volume), ssd (a local SSD)",
        );
        latency_ns: None => Key::new("latency", Ty::Duration { min: 0 }, "the device's latency per request")
            .unset("ramdisk 0, network 1ms, ssd 80us");
        bandwidth: None => Key::new("bandwidth", Ty::Bandwidth, "the device's bandwidth")
            .unset("ramdisk unlimited (dom0's CPU copies), network 40MiB/s, ssd 500MiB/s");
        queues: None => Key::new("queues", Ty::UInt { min: 1, max: 64 }, "rings (blk-mq queues) of the device")
            .unset("min(4, the guest's vcpus, the backend's max_queues), as 6.1's blkfront negotiates");
        persistent: true => Key::new("persistent", Ty::Bool, "the frontend offers persistent grants (feature_persistent)");
        max_indirect_segments: 32 => Key::new(
            "max_indirect_segments",
            Ty::UInt { min: 0, max: 256 },
            "segments per indirect request blkfront uses; 0: direct requests of 11 segments only",
        );
    }
    children: [],
    rules: [],
    derived: None,
}

impl Vbd {
    pub const BACKENDS: &'static [&'static str] = &["ramdisk", "network", "ssd"];

    /// The backend device as blkback sees it.
    pub fn device(&self) -> crate::machine::xen::BackendDevice {
        let (ramdisk, lat, bw) = match self.backend.as_str() {
            "network" => (false, NS_PER_MS, 40 * MIB),
            "ssd" => (false, 80 * NS_PER_US, 500 * MIB),
            _ => (true, 0, 0),
        };
        crate::machine::xen::BackendDevice {
            ramdisk,
            latency_ns: self.latency_ns.unwrap_or(lat),
            bandwidth: self.bandwidth.unwrap_or(bw),
        }
    }

    /// Segments of the largest request blkfront sends.
    pub fn max_segments(&self) -> u32 {
        if self.max_indirect_segments == 0 {
            crate::machine::xen::BLKIF_MAX_SEGMENTS_PER_REQUEST
        } else {
            self.max_indirect_segments
        }
    }
}

section! {
    BlkioSpec => pub static BLKIO = "blkio",
        "A block I/O job in a Xen domU on one of its VBDs: dd-like sequential I/O, fio-like random \
         I/O at a queue depth, or a malicious guest granting a fresh page for every segment." {
        vbd: String::new() => Key::new("vbd", Ty::Text { what: "VBD name" }, "the guest's [[guest.vbd]] it uses")
            .required("vbd = \"xvda\"");
        pattern: "sequential".to_string() => Key::new(
            "pattern",
            Ty::Choice { names: BlkioSpec::PATTERNS, what: "I/O pattern" },
            "sequential (merged into the largest requests, as dd through the page cache), random \
             (one request per I/O, as fio), fresh_grefs (random, every segment a new grant)",
        );
        write: true => Key::new("write", Ty::Bool, "writes; false: reads");
        bs_bytes: 4096 => Key::new("bs", Ty::Size { min: 512, max: 4 * MIB }, "bytes per I/O (dd's bs, fio's bs)")
            .check(bs_in_pages);
        count: None => Key::new("count", Ty::UInt { min: 1, max: u64::MAX >> 1 }, "I/Os to do (dd's count)")
            .unset("I/O until the workload's duration");
        iodepth: 32 => Key::new("iodepth", Ty::UInt { min: 1, max: 4096 }, "requests in flight at most (fio's iodepth; the ring holds 32)");
        think_ns: 0 => Key::new(
            "think",
            Ty::Duration { min: 0 },
            "the program's own CPU per I/O in the guest (dd's syscall and page-cache copy for \
             each bs): what bounds a job on a fast backend",
        );
        repeat: 1 => Key::new("repeat", Ty::UInt { min: 1, max: 1 << 20 }, "runs of `count` I/Os (the seed's `for i in {1..5}; do dd ...; done`)")
            .check(repeat_needs_count);
        pause_ns: 0 => Key::new("pause", Ty::Duration { min: 0 }, "idle time between two runs");
    }
    children: [],
    rules: [],
    derived: None,
}

impl BlkioSpec {
    pub const PATTERNS: &'static [&'static str] = &["sequential", "random", "fresh_grefs"];
}

fn bs_in_pages(_: &BlkioSpec, v: &Val) -> Result<(), Fix> {
    match v {
        Val::U(b) if b % 512 != 0 => Err(Fix::new(
            format!(
                "bs must be a multiple of 512 bytes, not {}",
                format_size(*b)
            ),
            "use a sector multiple such as \"4KiB\"",
        )),
        _ => Ok(()),
    }
}

fn repeat_needs_count(b: &BlkioSpec, v: &Val) -> Result<(), Fix> {
    match v {
        Val::U(n) if *n > 1 && b.count.is_none() => Err(Fix::new(
            "repeat needs count: a run without a count never ends",
            "give the job count = N I/Os per run",
        )),
        _ => Ok(()),
    }
}

/// Everything a Xen scenario's parts must agree on.
pub(super) const XEN_HOST: Rule<Scenario> = Rule {
    name: "a Xen host holds its domains",
    doc: "with `[xen]`, dom0's ram plus every guest's ram must fit in `[xen] ram`; \
          `[[guest.vbd]]` and `[guest.workload.blkio]` need `[xen]`, and a blkio job's `vbd` \
          must name a VBD of its guest; the host's own workloads have no blkio table; \
          `blkback_pool = \"B0\"` takes direct requests only (`max_indirect_segments = 0`)",
    check: |s, _| {
        if let Some(i) = s.workloads.iter().position(|w| w.blkio.is_some()) {
            return Err(Fix::new(
                format!(
                    "workload \"{}\" has a blkio table, but dom0 has no blkfront",
                    s.workloads[i].name
                ),
                "move the job into a guest: [[guest.workload]] with a [guest.workload.blkio] table",
            )
            .at(format!("workload[{i}].blkio")));
        }
        let Some(x) = &s.xen else {
            for (i, g) in s.guests.iter().enumerate() {
                if !g.vbds.is_empty() {
                    return Err(Fix::new(
                        format!(
                            "guest \"{}\" has virtual block devices but the host is not a Xen host",
                            g.name
                        ),
                        "add a [xen] table (block devices are modelled for Xen domUs)",
                    )
                    .at(format!("guest[{i}].vbd")));
                }
            }
            return Ok(());
        };
        let need = s.host.ram_bytes + s.guests.iter().map(|g| g.ram_bytes).sum::<u64>();
        if need > x.ram_bytes {
            return Err(Fix::new(
                format!(
                    "dom0 ({}) and the guests ({} in all) need {} but the Xen host has {}",
                    format_size(s.host.ram_bytes),
                    s.guests.len(),
                    format_size(need),
                    format_size(x.ram_bytes)
                ),
                "raise [xen] ram, or lower dom0's [host] ram or the guests' ram",
            )
            .at("xen.ram"));
        }
        // B0's global array gives a request 11 pages: it predates indirect requests (3.11), and
        // so did the frontends of its day.
        if s.policy.choices.get("blkback_pool") == "B0" {
            for (i, g) in s.guests.iter().enumerate() {
                if let Some(j) = g.vbds.iter().position(|v| v.max_indirect_segments > 0) {
                    return Err(Fix::new(
                        format!(
                            "guest \"{}\" VBD \"{}\" sends indirect requests of {} segments, \
                             but blkback_pool \"B0\" (its global array of 11-page requests) \
                             predates indirect requests",
                            g.name, g.vbds[j].name, g.vbds[j].max_indirect_segments
                        ),
                        "set max_indirect_segments = 0 on the guest's VBDs (that era's frontends \
                         sent direct requests only), or choose blkback_pool B1 or later",
                    )
                    .at(format!("guest[{i}].vbd[{j}]")));
                }
            }
        }
        for (i, g) in s.guests.iter().enumerate() {
            for (j, w) in g.workloads.iter().enumerate() {
                if let Some(b) = &w.blkio {
                    if !g.vbds.iter().any(|v| v.name == b.vbd) {
                        return Err(Fix::new(
                            format!("guest \"{}\" has no VBD named \"{}\"", g.name, b.vbd),
                            "name one of the guest's [[guest.vbd]] tables, or add it",
                        )
                        .at(format!("guest[{i}].workload[{j}].blkio.vbd")));
                    }
                }
            }
        }
        Ok(())
    },
};
