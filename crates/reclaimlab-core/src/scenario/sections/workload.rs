//! `[[workload]]` and its thread tables: `[workload.anon]`, `[workload.file]`,
//! `[workload.trace]`, `[workload.highorder]`.

use std::path::Path;

use crate::scenario::schema::{section, Fix, Optional, Rule, Ty, Val};
use crate::scenario::Scenario;
use crate::scenario::{
    AccessPattern, AnonSpec, Compression, DropCachesSpec, FileOp, FileSpec, FsmarkSpec,
    HighOrderGfp, HighOrderSpec, Lifetimes, LruGenSpec, MemoryReclaimSpec, ObjectSize, SimoopsSpec,
    StatSpec, TraceFormat, TraceKind, TraceSpec, TraceTime, Workload, KIB, MIB, NS_PER_MS,
    NS_PER_US,
};

const DURATION: Ty = Ty::Duration { min: 0 };
const POSITIVE: Ty = Ty::Duration { min: 1 };
const PASSES: Ty = Ty::UInt {
    min: 1,
    max: u64::MAX,
};
const FRACTION: Ty = Ty::Float {
    min: 0.0,
    max: 1.0,
    min_open: false,
    max_open: false,
};
/// One page: the smallest region that can be mapped.
const REGION: Ty = Ty::Size {
    min: 4 * KIB,
    max: u64::MAX,
};

section! {
    Workload => pub static WORKLOAD = "workload",
        "One process. It has an anonymous-memory thread, a file-I/O thread, a trace-replay \
         thread and a high-order allocation stream, in any combination (at least one)." {
        name: String::new() => Key::new(
            "name",
            Ty::Text { what: "workload name" },
            "unique name; labels counters and OOM kills",
        )
        .required("name = \"hog\"");
        start_ns: 0 => Key::new("start", DURATION, "simulated time at which it starts");
        duration_ns: None => Key::new("duration", POSITIVE, "exits this long after its start even if not done")
            .unset("when its passes and hold are done");
        oom_score_adj: 0 => Key::new(
            "oom_score_adj",
            Ty::Int { min: -1000, max: 1000 },
            "OOM killer bias; -1000 is never killed",
        );
        cgroup: None => Key::new(
            "cgroup",
            Ty::Text { what: "cgroup name" },
            "the memory cgroup (a [[cgroup]] name) its process runs in and charges its memory to",
        )
        .unset("the root cgroup");
        anon: None;
        file: None;
        trace: None;
        highorder: None;
        fsmark: None;
        simoops: None;
        drop_caches: None;
        memory_reclaim: None;
        lru_gen: None;
        stat: None;
        blkio: None;
    }
    children: [
        Optional::<Workload, AnonSpec> {
            section: &ANON,
            get: |w| w.anon.as_ref(),
            put: |w, c| w.anon = Some(c),
        },
        Optional::<Workload, FileSpec> {
            section: &FILE,
            get: |w| w.file.as_ref(),
            put: |w, c| w.file = Some(c),
        },
        Optional::<Workload, TraceSpec> {
            section: &TRACE,
            get: |w| w.trace.as_ref(),
            put: |w, c| w.trace = Some(c),
        },
        Optional::<Workload, HighOrderSpec> {
            section: &HIGHORDER,
            get: |w| w.highorder.as_ref(),
            put: |w, c| w.highorder = Some(c),
        },
        Optional::<Workload, FsmarkSpec> {
            section: &FSMARK,
            get: |w| w.fsmark.as_ref(),
            put: |w, c| w.fsmark = Some(c),
        },
        Optional::<Workload, SimoopsSpec> {
            section: &SIMOOPS,
            get: |w| w.simoops.as_ref(),
            put: |w, c| w.simoops = Some(c),
        },
        Optional::<Workload, DropCachesSpec> {
            section: &DROP_CACHES,
            get: |w| w.drop_caches.as_ref(),
            put: |w, c| w.drop_caches = Some(c),
        },
        Optional::<Workload, MemoryReclaimSpec> {
            section: &MEMORY_RECLAIM,
            get: |w| w.memory_reclaim.as_ref(),
            put: |w, c| w.memory_reclaim = Some(c),
        },
        Optional::<Workload, LruGenSpec> {
            section: &LRU_GEN,
            get: |w| w.lru_gen.as_ref(),
            put: |w, c| w.lru_gen = Some(c),
        },
        Optional::<Workload, StatSpec> {
            section: &STAT,
            get: |w| w.stat.as_ref(),
            put: |w, c| w.stat = Some(c),
        },
        Optional::<Workload, crate::scenario::BlkioSpec> {
            section: &super::xen::BLKIO,
            get: |w| w.blkio.as_ref(),
            put: |w, c| w.blkio = Some(c),
        },
    ],
    rules: [
        Rule {
            name: "a high-order stream ends",
            doc: "a `[workload.highorder]` table needs `count` or the workload's `duration`",
            check: |w, _| match &w.highorder {
                Some(h) if h.count.is_none() && w.duration_ns.is_none() => Err(Fix::new(
                    "a high-order workload needs an end",
                    "give it count = N allocations, or the workload a duration",
                )
                .at("highorder")),
                _ => Ok(()),
            },
        },
        Rule {
            name: "repeated memory.reclaim writes end",
            doc: "a `[workload.memory_reclaim]` table with `every` needs the workload's `duration`",
            check: |w, _| match &w.memory_reclaim {
                Some(r) if r.every_ns.is_some() && w.duration_ns.is_none() => Err(Fix::new(
                    "memory.reclaim writes repeated `every` interval need an end",
                    "give the workload a duration, or leave `every` out for one write",
                )
                .at("memory_reclaim.every")),
                _ => Ok(()),
            },
        },
        Rule {
            name: "repeated lru_gen writes end",
            doc: "a `[workload.lru_gen]` table with `every` needs the workload's `duration`",
            check: |w, _| match &w.lru_gen {
                Some(r) if r.every_ns.is_some() && w.duration_ns.is_none() => Err(Fix::new(
                    "lru_gen writes repeated `every` interval need an end",
                    "give the workload a duration, or leave `every` out for one write",
                )
                .at("lru_gen.every")),
                _ => Ok(()),
            },
        },
        Rule {
            name: "a workload does something",
            doc: "a workload needs at least one of the anon, file, trace, highorder, fsmark, \
                  simoops, drop_caches, memory_reclaim, lru_gen, stat and blkio tables",
            check: |w, _| {
                if w.anon.is_none()
                    && w.file.is_none()
                    && w.trace.is_none()
                    && w.highorder.is_none()
                    && w.fsmark.is_none()
                    && w.simoops.is_none()
                    && w.drop_caches.is_none()
                    && w.memory_reclaim.is_none()
                    && w.lru_gen.is_none()
                    && w.stat.is_none()
                    && w.blkio.is_none()
                {
                    return Err(Fix::new(
                        format!(
                            "workload \"{}\" does nothing: it has no anon, file, trace, highorder, \
                             fsmark, simoops, drop_caches, memory_reclaim, lru_gen, stat or blkio table",
                            w.name
                        ),
                        "add a [workload.anon] table (size = \"1GiB\"), a [workload.file] table \
                         and/or a [workload.trace] table (path = \"my.oracleGeneral.zst\")",
                    ));
                }
                Ok(())
            },
        },
    ],
    derived: None,
}

section! {
    AnonSpec => pub static ANON = "anon", "The anonymous-memory thread: touches a region page by page." {
        size_bytes: 0 => Key::new("size", REGION, "anonymous memory region touched by the workload")
            .why("one page")
            .required("size = \"1GiB\"");
        pattern: AccessPattern::Sequential => Key::new(
            "pattern",
            Ty::Choice { names: AccessPattern::NAMES, what: "pattern" },
            "access order; zipf: page 0 hottest",
        ),
        // The exponent lives inside `AccessPattern::Zipf`, so the key reads and writes it there.
        Key::new(
            "zipf_alpha",
            Ty::Float { min: 0.0, max: f64::INFINITY, min_open: true, max_open: true },
            "Zipf exponent",
        )
        .rule("1.0 (DEFAULT_ZIPF_ALPHA)")
        .only_if(
            |a| matches!(a.pattern, AccessPattern::Zipf { .. }),
            "pattern = \"zipf\"",
            "zipf_alpha only applies to pattern = \"zipf\"",
            "remove zipf_alpha, or set pattern = \"zipf\"",
        )
        .access(
            |a: &AnonSpec| match a.pattern {
                AccessPattern::Zipf { alpha } => Some(Val::F(alpha)),
                _ => None,
            },
            |a: &mut AnonSpec, v| {
                if let (AccessPattern::Zipf { alpha }, Val::F(x)) = (&mut a.pattern, v) {
                    *alpha = x;
                }
            },
        );
        passes: 1 => Key::new("passes", PASSES, "times the whole region is touched, one access per page");
        write_fraction: 1.0 => Key::new(
            "write_fraction",
            FRACTION,
            "fraction of accesses that write (anonymous pages are dirty after first touch anyway)",
        );
        think_ns: 0 => Key::new("think", DURATION, "application CPU time between two accesses");
        hold_ns: 0 => Key::new("hold", DURATION, "sleep holding the memory after the passes, before exiting");
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    FileSpec => pub static FILE = "file", "The file-I/O thread: sequential passes through the page cache." {
        size_bytes: 0 => Key::new("size", REGION, "file size, read or written sequentially through the page cache")
            .why("one page")
            .required("size = \"1GiB\"");
        op: FileOp::Read => Key::new("op", Ty::Choice { names: FileOp::NAMES, what: "file op" }, "read or write the file");
        passes: 1 => Key::new("passes", PASSES, "sequential passes over the file");
        hold_ns: 0 => Key::new("hold", DURATION, "sleep after the passes, before exiting");
    }
    children: [],
    rules: [],
    derived: None,
}

fn is_oracle(t: &TraceSpec) -> bool {
    t.format == TraceFormat::Oracle
}

section! {
    TraceSpec => pub static TRACE = "trace",
        "The trace-replay thread: replays a recorded page-access trace (libCacheSim \
         oracleGeneral or CSV), streaming the file once per pass." {
        path: String::new() => Key::new(
            "path",
            Ty::Path { what: "trace", expected: "a path to a trace file" },
            "trace file (a relative path is resolved against the scenario file's directory)",
        )
        .required("path = \"traces/db.oracleGeneral.zst\"")
        .check(trace_file);
        format: TraceFormat::Oracle => Key::new(
            "format",
            Ty::Choice { names: TraceFormat::NAMES, what: "trace format" },
            "\"oracle\": libCacheSim oracleGeneral, 24-byte records; \"csv\": time_ns,object,offset,kind",
        )
        .rule_fn(
            "from the file name: .oracleGeneral, .bin or .oracle is \"oracle\", .csv is \"csv\" \
             (then optionally .zst)",
            |t| match crate::trace::detect(Path::new(&t.path)).0 {
                Some(f) => Ok(Some(Val::S(f.name().into()))),
                None => Err(Fix::new(
                    format!("cannot tell the trace format from the file name \"{}\"", t.path),
                    "add format = \"oracle\" (libCacheSim oracleGeneral) or format = \"csv\" \
                     (time_ns,object,offset,kind); names ending in .oracleGeneral, .bin or .csv \
                     (then optionally .zst) are recognised",
                )
                .at("path")),
            },
        );
        compression: Compression::None => Key::new(
            "compression",
            Ty::Choice { names: Compression::NAMES, what: "compression" },
            "compression of the trace file",
        )
        .rule_fn("\"zstd\" when the file name ends in .zst, else \"none\"", |t| {
            Ok(Some(Val::S(crate::trace::detect(Path::new(&t.path)).1.name().into())))
        });
        kind: TraceKind::Anon => Key::new(
            "kind",
            Ty::Choice { names: TraceKind::NAMES, what: "trace kind" },
            "what the objects are: anonymous memory, or files (one file each)",
        )
        .only_if(
            is_oracle,
            "format = \"oracle\"",
            "`kind` only applies to format = \"oracle\": each CSV record says its kind \
             (anon_read, anon_write, file_read, file_write) and offset",
            "remove `kind`",
        );
        object_size: ObjectSize::Pages => Key::new(
            "object_size",
            Ty::Choice { names: ObjectSize::NAMES, what: "object_size setting" },
            "\"pages\": an object spans ceil(size/4KiB) pages, all touched per request; \"ignore\": one page",
        )
        .only_if(
            is_oracle,
            "format = \"oracle\"",
            "`object_size` only applies to format = \"oracle\": each CSV record says its kind \
             (anon_read, anon_write, file_read, file_write) and offset",
            "remove `object_size`",
        );
        write_fraction: 0.0 => Key::new(
            "write_fraction",
            FRACTION,
            "fraction of requests that write (the format does not say)",
        )
        .only_if(
            is_oracle,
            "format = \"oracle\"",
            "`write_fraction` only applies to format = \"oracle\": each CSV record says its \
             kind (anon_read, anon_write, file_read, file_write) and offset",
            "remove `write_fraction`",
        );
        passes: 1 => Key::new("passes", PASSES, "times the whole trace is replayed");
        time: TraceTime::Ignore => Key::new(
            "time",
            Ty::Choice { names: TraceTime::NAMES, what: "trace time mode" },
            "\"ignore\": replay as fast as possible; \"trace\": at the recorded timestamps",
        )
        .access(
            |t: &TraceSpec| Some(Val::S(t.time.name().into())),
            // The unit's default depends on the format, declared (and so set) before `time`.
            |t: &mut TraceSpec, v| {
                t.time = match v {
                    Val::S(s) if s == "trace" => TraceTime::Trace {
                        unit_ns: TraceSpec::default_time_unit_ns(t.format),
                    },
                    _ => TraceTime::Ignore,
                }
            },
        ),
        Key::new("time_unit", POSITIVE, "simulated length of one trace time unit")
            .rule("1s for format = \"oracle\", 1ns for \"csv\" (the format's timestamp unit)")
            .only_if(
                |t| matches!(t.time, TraceTime::Trace { .. }),
                "time = \"trace\"",
                "time_unit only applies to time = \"trace\" (timestamps are ignored here)",
                "remove time_unit, or set time = \"trace\"",
            )
            .access(
                |t: &TraceSpec| match t.time {
                    TraceTime::Trace { unit_ns } => Some(Val::U(unit_ns)),
                    TraceTime::Ignore => None,
                },
                |t: &mut TraceSpec, v| {
                    if let (TraceTime::Trace { unit_ns }, Val::U(x)) = (&mut t.time, v) {
                        *unit_ns = x;
                    }
                },
            );
        think_ns: 0 => Key::new("think", DURATION, "application CPU time between two page accesses");
        hold_ns: 0 => Key::new("hold", DURATION, "sleep holding the memory after the passes, before exiting");
        max_records: None => Key::new("max_records", PASSES, "replay only the first N records of each pass")
            .unset("all");
    }
    children: [],
    rules: [],
    derived: None,
}

/// The trace is opened here, so a bad path is reported at its key rather than at run time.
fn trace_file(_: &TraceSpec, v: &Val) -> Result<(), Fix> {
    let Val::S(path) = v else { return Ok(()) };
    let problem = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Some("is a directory, not a trace file".to_string()),
        Ok(_) => std::fs::File::open(path)
            .err()
            .map(|e| format!("cannot be read: {e}")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("does not exist".to_string()),
        Err(e) => Some(format!("cannot be read: {e}")),
    };
    match problem {
        Some(p) => Err(Fix::new(format!("trace file \"{path}\" {p}"), "")),
        None => Ok(()),
    }
}

section! {
    HighOrderSpec => pub static HIGHORDER = "highorder",
        "A high-order allocation stream: 2^order pages at a steady rate, each freed after \
         `lifetime` (network buffers, slab caches with high-order slabs, huge-page faults)." {
        order: 3 => Key::new("order", Ty::UInt { min: 0, max: 10 }, "allocation order (2^order pages each)")
            .why("order 0 with gfp \"kernel\" models long-lived slab pages");
        rate_per_sec: 1000 => Key::new("rate", Ty::UInt { min: 1, max: 100_000_000 }, "allocations per simulated second")
            .unit("allocations/s");
        lifetime_ns: 10 * NS_PER_MS => Key::new(
            "lifetime",
            POSITIVE,
            "each block is freed this long after it was allocated (the mean, if exponential)",
        );
        lifetimes: Lifetimes::Fixed => Key::new(
            "lifetimes",
            Ty::Choice { names: Lifetimes::NAMES, what: "lifetime distribution" },
            "\"fixed\": freed in allocation order; \"exponential\": random order, fragments like slab",
        );
        gfp: HighOrderGfp::Atomic => Key::new(
            "gfp",
            Ty::Choice { names: HighOrderGfp::NAMES, what: "high-order gfp" },
            "\"atomic\": wakes kswapd, fails; \"kernel\": reclaims, compacts, retries; \"transhuge\": a THP fault",
        );
        count: None => Key::new("count", Ty::UInt { min: 1, max: u64::MAX >> 1 }, "allocation attempts before the thread exits")
            .unset("until the workload's duration");
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    FsmarkSpec => pub static FSMARK = "fsmark",
        "An fsmark-like creator on the `[fs]` filesystem: threads creating files as fast as \
         they can, each in its own directories; the inode allocation inside the create \
         transaction is GFP_NOFS for a share of creates (mechanisms §A.6 recipe, seed 002)." {
        threads: 1 => Key::new("threads", Ty::UInt { min: 1, max: 256 }, "creating threads");
        files: 100_000 => Key::new("files", Ty::UInt { min: 1, max: u32::MAX as u64 / 4 }, "files each thread creates");
        files_per_dir: 10_000 => Key::new("files_per_dir", Ty::UInt { min: 1, max: u64::MAX >> 1 }, "files per directory (each directory goes to the next allocation group)");
        file_size_bytes: 0 => Key::new("file_size", Ty::Size { min: 0, max: 16 * MIB }, "data written into each file (0: empty files)");
        nofs_fraction: 1.0 => Key::new("nofs_fraction", FRACTION, "share of creates whose metadata (dentry, inode) is allocated with GFP_NOFS (inside a transaction or a filesystem lock)");
        think_ns: 0 => Key::new("think", DURATION, "application time between two creates");
        rss_bytes: 16 * MIB => Key::new("rss", Ty::Size { min: 0, max: u64::MAX >> 1 }, "anonymous memory the process holds (what the OOM killer sees of it)");
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    SimoopsSpec => pub static SIMOOPS = "simoops",
        "A simoops-like load on the `[fs]` filesystem: per unit of work each thread allocates \
         and touches fresh memory (the timed allocation), opens and reads files of a data set \
         and thinks; it reports allocation latency percentiles, work rate and stall rate." {
        threads: 4 => Key::new("threads", Ty::UInt { min: 1, max: 256 }, "worker threads");
        files: 20_000 => Key::new("files", Ty::UInt { min: 1, max: u32::MAX as u64 / 4 }, "files of the data set (on disk, uncached, at the start)");
        file_size_bytes: 16 * KIB => Key::new("file_size", Ty::Size { min: 0, max: 16 * MIB }, "bytes of each data file");
        reads_per_unit: 8 => Key::new("reads_per_unit", Ty::UInt { min: 0, max: 1 << 20 }, "files opened and read per unit of work");
        alloc_bytes: MIB => Key::new("alloc", REGION, "memory allocated and touched per unit of work (the timed allocation)");
        keep_units: 16 => Key::new("keep_units", Ty::UInt { min: 1, max: 1 << 20 }, "units whose memory a thread keeps before freeing the oldest");
        think_ns: 100 * NS_PER_US => Key::new("think", DURATION, "CPU time of a unit besides its allocation and reads");
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    StatSpec => pub static STAT = "stat",
        "A metadata walker on the `[fs]` filesystem: passes of path lookup and `stat` over the \
         files of its namespace (what the fsmark workloads created), in creation order. A \
         cached dentry is a hit; a pruned one is allocated again (GFP_KERNEL) and its inode is \
         found in memory (XFS: recycled from XFS reclaim) or read back at the filesystem's \
         io_latency and allocated again (ext4 reads the directory block of the entry and the \
         inode's block only when they are not in the block device's page cache)." {
        threads: 1 => Key::new("threads", Ty::UInt { min: 1, max: 256 }, "walking threads (thread k looks up files k, k + threads, ...)");
        passes: 1 => Key::new("passes", PASSES, "passes over the files present when each pass starts");
        hit_ns: NS_PER_US => Key::new("hit_cost", DURATION, "CPU of a lookup and stat whose dentry is cached [recon]");
        think_ns: 0 => Key::new("think", DURATION, "application time between two lookups");
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    DropCachesSpec => pub static DROP_CACHES = "drop_caches",
        "Write `vm.drop_caches` once, at the workload's start plus `after`." {
        value: 3 => Key::new("value", Ty::UInt { min: 1, max: 3 }, "1: page cache, 2: slab (dentries and inodes), 3: both");
        after_ns: 0 => Key::new("after", DURATION, "delay after the workload's start");
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    MemoryReclaimSpec => pub static MEMORY_RECLAIM = "memory_reclaim",
        "Write `memory.reclaim` of a cgroup (proactive reclaim from its subtree, 6.1's \
         `memory_reclaim`): once at the workload's start plus `after`, or every `every` from \
         then until the workload's end. Not a memory stall of the writer." {
        amount_bytes: MIB => Key::new("amount", Ty::Size { min: 0, max: u64::MAX >> 1 }, "bytes each write asks for (a partial page is dropped, as the kernel's page count is)");
        after_ns: 0 => Key::new("after", DURATION, "delay of the first write after the workload's start");
        every_ns: None => Key::new("every", POSITIVE, "time between two writes")
            .unset("one write");
        target: None => Key::new("cgroup", Ty::Text { what: "cgroup name" }, "the cgroup whose memory.reclaim is written (a [[cgroup]] name)")
            .unset("the workload's own cgroup");
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    LruGenSpec => pub static LRU_GEN = "lru_gen",
        "Write `/sys/kernel/debug/lru_gen`, the multi-generational LRU's command interface \
         (6.1; needs `[policy] lru = \"mglru\"` and the core bit of `[sysctl] lru_gen_enabled`): \
         once at the workload's start plus `after`, or every `every` from then until the \
         workload's end. `+ memcg_id node_id seq [can_swap [force_scan]]` ages the memcg's \
         lruvec by one generation when `seq` is its `max_seq`; `- memcg_id node_id seq \
         [swappiness [nr_to_reclaim]]` evicts its oldest generations up to `seq`. Memcg ids \
         are the `lru_gen` file's (the root 1, each `[[cgroup]]` the next, parents first); the \
         node is 0; `seq` may be `max_seq` or `max_seq-N`, read from the file just before the \
         write. A command the kernel refuses at that moment (`seq` out of range: EINVAL; a \
         fifth generation without `force_scan`: ERANGE) ends that write, counted in \
         summary.json's `lru_gen_writes`. The writer's reclaim is direct reclaim in its own \
         CPU time, not a memory stall." {
        commands: String::new() => Key::new(
            "commands",
            Ty::Text { what: "lru_gen commands" },
            "the text each write writes: commands separated by newlines, `,` or `;`",
        )
        .required("commands = \"+ 1 0 max_seq; - 1 0 max_seq-2\"")
        .check(lru_gen_commands_read);
        after_ns: 0 => Key::new("after", DURATION, "delay of the first write after the workload's start");
        every_ns: None => Key::new("every", POSITIVE, "time between two writes")
            .unset("one write");
    }
    children: [],
    rules: [],
    derived: None,
}

/// The commands read, on a machine with any number of memcgs (the ids are checked against the
/// cgroups once every table is read: `LRU_GEN_WRITES`).
fn lru_gen_commands_read(_: &LruGenSpec, v: &Val) -> Result<(), Fix> {
    use crate::actors::workload::lru_gen_write::check_commands;
    match v {
        Val::S(text) => check_commands(text, u16::MAX as usize).map_err(|(m, h)| Fix::new(m, h)),
        _ => Ok(()),
    }
}

/// A `[workload.lru_gen]` writer needs the multi-generational LRU on its machine, and its
/// commands' memcg ids must be that machine's (the host's cgroups; a guest has only the root).
pub const LRU_GEN_WRITES: Rule<Scenario> = Rule {
    name: "lru_gen writers have the multi-generational LRU",
    doc: "a `[workload.lru_gen]` table needs `[policy] lru = \"mglru\"` and `[sysctl] \
          lru_gen_enabled` with its core bit on the machine it runs on, and memcg ids that \
          machine's `lru_gen` file shows",
    check: |s, _| {
        let host = s.workloads.iter().enumerate().map(|(i, w)| {
            (
                w,
                format!("workload[{i}]"),
                &s.policy,
                &s.sysctl,
                1 + s.cgroups.len(),
                "",
            )
        });
        let guests = s.guests.iter().enumerate().flat_map(|(g, guest)| {
            guest.workloads.iter().enumerate().map(move |(i, w)| {
                (
                    w,
                    format!("guest[{g}].workload[{i}]"),
                    &guest.policy,
                    &guest.sysctl,
                    1,
                    "guest.",
                )
            })
        });
        for (w, at, policy, sysctl, nr_memcgs, prefix) in host.chain(guests) {
            let Some(spec) = &w.lru_gen else { continue };
            if policy.choices.get("lru") != "mglru" {
                return Err(Fix::new(
                    format!(
                        "workload \"{}\" writes /sys/kernel/debug/lru_gen, which a kernel without the multi-generational LRU does not have",
                        w.name
                    ),
                    format!("set [{prefix}policy] lru = \"mglru\", or remove [workload.lru_gen]"),
                )
                .at(format!("{at}.lru_gen")));
            }
            if sysctl.lru_gen_enabled & 1 == 0 {
                return Err(Fix::new(
                    format!(
                        "workload \"{}\" writes lru_gen while lru_gen_enabled has the multi-generational LRU off",
                        w.name
                    ),
                    format!("set [{prefix}sysctl] lru_gen_enabled = 0x0007 (or any value with bit 0x0001)"),
                )
                .at(format!("{at}.lru_gen")));
            }
            use crate::actors::workload::lru_gen_write::check_commands;
            check_commands(&spec.commands, nr_memcgs)
                .map_err(|(m, h)| Fix::new(m, h).at(format!("{at}.lru_gen.commands")))?;
        }
        Ok(())
    },
};
