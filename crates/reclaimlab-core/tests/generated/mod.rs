//! The generated scenarios: random valid hosts whose workloads are sized against their RAM
//! (issue 36), so that most cases reach reclaim and the paths behind it.
//!
//! A case is one of four kinds (drawn 4 : 5 : 9 : 6):
//! - a host alone: anonymous, file and high-order mixes;
//! - a host with an XFS filesystem (`[fs]`): fsmark, simoops and drop_caches besides them;
//! - a KVM host whose guest overcommits it: the guest's RAM is most of the host's, its
//!   program writes most of it and exits (what the hinting variants report), while the
//!   host's own workloads press on what is left; D2's arrays (half the guests) report only
//!   from a guest aged finely enough that its frees stay a thousand separate blocks;
//! - a Xen host: dom0's workloads press on its RAM while a domU keeps its block rings busy
//!   (mostly with B2/B3, the pools dom0's shrinkers squeeze).
//!
//! The working set (anonymous and file sizes together) is 0.5x-3x of the host's RAM, split
//! among one to three workloads; swap is none (a third of the cases) or a quarter to twice
//! the RAM. High-order streams start anywhere in the first 80 % of the run, most of them
//! once the working set has filled and fragmented the host (a stream at the start is served
//! from free memory and never compacts). Each case runs long enough for its working set to be touched as many times as it
//! asks (an estimate per page from the cost model's defaults), scaled by a drawn factor.
//!
//! Each case is a scenario *file* ([`Gen::toml`]): proptest shrinks a failing case through
//! these fields (fewer workloads, smaller sizes, shorter runs, no guest or filesystem).

pub mod coverage;

use std::fmt::Write as _;

use proptest::prelude::*;

use reclaimlab_core::policy;

/// What a workload does with its share of the working set.
#[derive(Debug, Clone)]
pub enum Work {
    Anon {
        /// Share of the working set, in parts (of the sum of all workloads' parts).
        parts: u64,
        pattern: &'static str,
        passes: u64,
        write_pct: u64,
    },
    File {
        parts: u64,
        write: bool,
        passes: u64,
    },
    /// Takes no share: its blocks come and go.
    HighOrder {
        order: u64,
        rate: u64,
        count: u64,
        gfp: &'static str,
        exponential: bool,
        lifetime_ms: u64,
        /// Starts this far into the run, in percent of its length: a stream that starts at
        /// once is mostly served from the free memory of a fresh host, before anything
        /// fragments it; a later one meets a full, fragmented host and must compact.
        start_pct: u64,
    },
}

/// The filesystem and its workloads (`Kind::Fs`).
#[derive(Debug, Clone)]
pub struct GenFs {
    pub ags: u64,
    /// fsmark: threads, files each, share created GFP_NOFS.
    pub fsmark: Option<(u64, u64, u64)>,
    /// simoops: threads, files, file size (KiB), allocation per unit (KiB), units kept.
    pub simoops: Option<(u64, u64, u64, u64, u64)>,
    /// drop_caches: value, after (ms).
    pub drop_caches: Option<(u64, u64)>,
}

/// A KVM guest on the host: its RAM relative to the host's, how much of it its program
/// writes, its hinting variant.
#[derive(Debug, Clone)]
pub struct GenGuest {
    /// Guest RAM in percent of the host's (at least 64 MiB).
    pub ram_pct: u64,
    pub boot_mib: u64,
    pub hinting: &'static str,
    pub stride: Option<u64>,
    /// The program's size in percent of the guest's RAM.
    pub program_pct: u64,
    pub start_ms: u64,
    pub reporting_order: u64,
    pub vcpus: u64,
}

impl GenGuest {
    /// D2's capture arrays (the seed's version or the stored code).
    pub fn d2(&self) -> bool {
        matches!(self.hinting, "D2" | "D2stored")
    }
}

/// A Xen host's blkback and its domU's block I/O.
#[derive(Debug, Clone)]
pub struct GenXen {
    pub vbds: u64,
    pub backend: &'static str,
    pub persistent: bool,
    pub pattern: &'static str,
    pub iodepth: u64,
    pub ios: u64,
    pub repeat: u64,
    pub max_buffer_pages: u64,
    pub squeeze_ms: u64,
    pub indirect: u64,
    /// B2 or B3 (the pools that squeeze under pressure) 5 times in 6; B0/B1 too.
    pub pool: &'static str,
    pub backing: &'static str,
}

#[derive(Debug, Clone)]
pub enum Extra {
    None,
    Fs(GenFs),
    Guest(GenGuest),
    Xen(GenGuest, GenXen),
}

#[derive(Debug, Clone)]
pub struct Gen {
    pub seed: u64,
    pub ram_mib: u64,
    /// RAM below 4 GiB, as a part of RAM in 1/8ths (8 = all of it: no Normal zone).
    pub lowmem_eighths: Option<u64>,
    pub machine: &'static str,
    pub cpus: u64,
    pub thp: bool,
    pub contention: bool,
    pub pcp: bool,
    pub drift: bool,
    pub page_tables: bool,
    /// Swap in percent of RAM (0: none).
    pub swap_pct: u64,
    pub rotational: bool,
    pub swappiness: u64,
    pub wsf: u64,
    pub boost: u64,
    pub oom_allowed: bool,
    pub policies: Vec<(&'static str, &'static str)>,
    /// The working set in percent of RAM.
    pub pressure_pct: u64,
    /// The run's length in percent of the time the working set needs.
    pub length_pct: u64,
    pub works: Vec<Work>,
    pub extra: Extra,
}

fn work() -> impl Strategy<Value = Work> {
    prop_oneof![
        4 => (
            1u64..=4,
            prop::sample::select(vec!["sequential", "random", "zipf"]),
            1u64..=3,
            0u64..=100
        )
            .prop_map(|(parts, pattern, passes, write_pct)| Work::Anon {
                parts,
                pattern,
                passes,
                write_pct
            }),
        2 => (1u64..=4, any::<bool>(), 1u64..=2).prop_map(|(parts, write, passes)| Work::File {
            parts,
            write,
            passes
        }),
        // High-order streams that fragment and ask for blocks compaction must make: orders
        // 2-9 (mostly 4 and up), kernel requests (which reclaim and compact) most of the time.
        4 => (
            prop::sample::select(vec![2u64, 3, 4, 4, 5, 6, 9, 9]),
            1000u64..=50_000,
            10u64..=400,
            prop::sample::select(vec!["atomic", "kernel", "kernel", "kernel", "transhuge"]),
            any::<bool>(),
            1u64..=50,
            prop::sample::select(vec![0u64, 20, 40, 60, 60, 80, 80]),
        )
            .prop_map(
                |(order, rate, count, gfp, exponential, lifetime_ms, start_pct)| Work::HighOrder {
                    order,
                    rate,
                    count,
                    gfp,
                    exponential,
                    lifetime_ms,
                    start_pct,
                }
            ),
    ]
}

/// One variant of each switch, or the default (None).
fn policies() -> impl Strategy<Value = Vec<(&'static str, &'static str)>> {
    let per_switch: Vec<_> = policy::switches()
        .into_iter()
        // Hinting is a guest's switch, the Xen pool and backing a Xen case's (`GenXen`); the
        // userspace memory controller needs cgroups, which no generated case has (the memcg
        // tests draw their own: tests/memcg*.rs).
        .filter(|s| {
            !matches!(
                s.name(),
                "hinting" | "blkback_pool" | "blkback_backing" | "memcg_controller"
            )
        })
        .map(|s| {
            let names: Vec<&'static str> = s.variants().iter().map(|v| v.name).collect();
            let name = s.name();
            prop::option::weighted(0.4, prop::sample::select(names))
                .prop_map(move |v| v.map(|v| (name, v)))
        })
        .collect();
    per_switch.prop_map(|v| v.into_iter().flatten().collect())
}

fn fs() -> impl Strategy<Value = GenFs> {
    (
        1u64..=4,
        prop::option::weighted(0.7, (1u64..=2, 2_000u64..=20_000, 0u64..=100)),
        prop::option::weighted(
            0.5,
            (
                1u64..=4,
                100u64..=2_000,
                prop::sample::select(vec![4u64, 16, 64]),
                prop::sample::select(vec![256u64, 1024]),
                4u64..=32,
            ),
        ),
        prop::option::weighted(0.4, (1u64..=3, 0u64..=50)),
    )
        .prop_map(|(ags, fsmark, simoops, drop_caches)| GenFs {
            ags,
            // Something on the filesystem: fsmark when nothing else was drawn.
            fsmark: fsmark.or(if simoops.is_none() {
                Some((1, 5_000, 50))
            } else {
                None
            }),
            simoops,
            drop_caches,
        })
}

fn guest() -> impl Strategy<Value = GenGuest> {
    // Every variant; the ones that report (D2's arrays, D2b, D3, D4) more often than those
    // that never do (D1, and D3cmma, which only marks frames for the host's reclaim). D2 and
    // D2stored share one weight: the same arrays, a different inline scan.
    let hinting: Vec<&'static str> = policy::hinting::SWITCH
        .variants
        .iter()
        .flat_map(|v| {
            let n = match v.name {
                "D1" | "D3cmma" => 1,
                // The arrays report only in a guest aged for them (below): half the guests.
                "D2" | "D2stored" => 5,
                _ => 2,
            };
            std::iter::repeat_n(v.name, n)
        })
        .collect();
    (
        50u64..=150,
        0u64..=16,
        prop::sample::select(hinting),
        prop::option::of(prop::sample::select(vec![64u64, 512, 1024])),
        prop::sample::select(vec![2u64, 2, 4, 8]),
        30u64..=95,
        0u64..=10,
        prop::sample::select(vec![0u64, 3, 3, 6, 9]),
        1u64..=2,
    )
        .prop_map(
            |(ram_pct, boot_mib, hinting, stride, small, program_pct, start_ms, order, vcpus)| {
                GenGuest {
                    ram_pct,
                    boot_mib,
                    hinting,
                    // D2's kthread runs only once an array holds 1,000 distinct free blocks
                    // (mechanisms.md §D2): in a fresh guest a program's exit frees pages that
                    // merge into a few large blocks and the array never fills. A D2 guest is
                    // aged finely (a pinned page every 2-8 pages), so that a few MiB of frees
                    // stay over a thousand separate blocks (with a stride of 2 every free page
                    // is a block of its own; the arrays fill after a thousand frees).
                    stride: if matches!(hinting, "D2" | "D2stored") {
                        Some(small)
                    } else {
                        stride
                    },
                    program_pct,
                    start_ms,
                    reporting_order: order,
                    vcpus,
                }
            },
        )
}

fn xen() -> impl Strategy<Value = GenXen> {
    (
        (
            1u64..=3,
            prop::sample::select(vec!["ramdisk", "network", "ssd"]),
            prop::bool::weighted(0.2),
            prop::sample::select(vec!["sequential", "random", "fresh_grefs"]),
            4u64..=32,
            100u64..=1_000,
            3u64..=5,
        ),
        (
            prop::sample::select(vec![16u64, 256, 1024]),
            // A squeeze lasts `buffer_squeeze_duration_ms` after dom0's shrinkers ran: 0 ms
            // (a deadline already past) almost never squeezes, so it is drawn rarely.
            prop::sample::select(vec![0u64, 1, 10, 10, 10, 100, 100, 100]),
            prop::sample::select(vec![0u64, 32, 256]),
            prop::sample::select(vec![
                "B0", "B1", "B2", "B2", "B2", "B2", "B2", "B3", "B3", "B3", "B3", "B3",
            ]),
            prop::sample::select(vec!["balloon", "unpopulated"]),
        ),
    )
        .prop_map(
            |(
                (vbds, backend, persistent, pattern, iodepth, ios, repeat),
                (max_buffer_pages, squeeze_ms, indirect, pool, backing),
            )| GenXen {
                vbds,
                backend,
                persistent,
                pattern,
                iodepth,
                ios,
                repeat,
                max_buffer_pages,
                squeeze_ms,
                indirect,
                pool,
                backing,
            },
        )
}

fn extra() -> impl Strategy<Value = Extra> {
    prop_oneof![
        4 => Just(Extra::None),
        5 => fs().prop_map(Extra::Fs),
        9 => guest().prop_map(Extra::Guest),
        // A domU reports nothing to its host (the hinting variants are virtio-balloon's, a
        // KVM guest's): D1, so that no Xen case runs D4's 2 s for nothing.
        6 => (guest(), xen()).prop_map(|(g, x)| Extra::Xen(GenGuest { hinting: "D1", ..g }, x)),
    ]
}

pub fn scenario() -> impl Strategy<Value = Gen> {
    let host = (
        any::<u64>(),
        prop::sample::select(vec![64u64, 96, 128]),
        prop::option::of(2u64..=8),
        prop::sample::select(vec!["q35", "i440fx"]),
        1u64..=4,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.3),
    );
    let vm = (
        prop::sample::select(vec![0u64, 0, 25, 50, 100, 200]),
        prop::bool::weighted(0.2),
        0u64..=200,
        1u64..=1000,
        prop::sample::select(vec![0u64, 15000]),
        any::<bool>(),
    );
    (
        host,
        vm,
        policies(),
        // A fifth of the cases at 0.5x-1x of RAM, the rest beyond it.
        (
            prop_oneof![1 => 50u64..=100, 4 => 100u64..=300],
            60u64..=150,
        ),
        prop::collection::vec(work(), 1..=3),
        extra(),
    )
        .prop_map(
            |(
                (seed, ram_mib, lowmem_eighths, machine, cpus, thp, contention, pcp, drift, pt),
                (swap_pct, rotational, swappiness, wsf, boost, oom_allowed),
                policies,
                (pressure_pct, length_pct),
                works,
                extra,
            )| Gen {
                seed,
                ram_mib,
                lowmem_eighths,
                machine,
                cpus,
                thp,
                contention,
                pcp,
                drift,
                page_tables: pt,
                swap_pct,
                rotational,
                swappiness,
                wsf,
                boost,
                oom_allowed,
                policies,
                pressure_pct,
                length_pct,
                // Something to press with: a working set besides any high-order stream.
                works: if works.iter().any(|w| !matches!(w, Work::HighOrder { .. })) {
                    works
                } else {
                    let mut w = works;
                    w.push(Work::Anon {
                        parts: 1,
                        pattern: "sequential",
                        passes: 2,
                        write_pct: 100,
                    });
                    w
                },
                extra,
            },
        )
}

/// Simulated time per page access the length estimate allows: a fault, its share of
/// reclaim, and a swap or disk transfer at the default 1 GiB/s.
const NS_PER_PAGE: u64 = 6_000;

impl Gen {
    /// The KVM guest's hinting variant, if the case has one (a Xen domU reports nothing).
    pub fn kvm_hinting(&self) -> Option<&'static str> {
        match &self.extra {
            Extra::Guest(g) => Some(g.hinting),
            _ => None,
        }
    }

    fn parts(&self) -> u64 {
        self.works
            .iter()
            .map(|w| match w {
                Work::Anon { parts, .. } | Work::File { parts, .. } => *parts,
                Work::HighOrder { .. } => 0,
            })
            .sum()
    }

    /// MiB of the working set a workload of `parts` gets (at least 1).
    fn share_mib(&self, parts: u64) -> u64 {
        let total = self.ram_mib * self.pressure_pct / 100;
        (total * parts / self.parts().max(1)).max(1)
    }

    fn swap_mib(&self) -> u64 {
        self.ram_mib * self.swap_pct / 100
    }

    fn guest_mib(g: &GenGuest, ram_mib: u64) -> (u64, u64) {
        // A guest's boot reservation takes 40 MiB of its DMA32 zone (`machine/layout.rs`): a
        // 64 MiB guest manages about 7 MiB there, too few separate blocks for D2's arrays to
        // fill however finely it is aged. A D2 guest has at least 96 MiB.
        let min = if g.d2() { 96 } else { 64 };
        let ram = (ram_mib * g.ram_pct / 100).max(min);
        (ram, (ram * g.program_pct / 100).max(1))
    }

    /// Page accesses the case asks for, the guest's included.
    fn accesses(&self) -> u64 {
        let mut pages = 0;
        for w in &self.works {
            match w {
                Work::Anon { parts, passes, .. } | Work::File { parts, passes, .. } => {
                    pages += self.share_mib(*parts) * 256 * passes;
                }
                Work::HighOrder { .. } => {}
            }
        }
        match &self.extra {
            Extra::Guest(g) | Extra::Xen(g, _) => {
                pages += Self::guest_mib(g, self.ram_mib).1 * 256;
            }
            Extra::Fs(_) | Extra::None => {}
        }
        pages
    }

    /// The run's length: the time its accesses need, scaled by `length_pct`; at least 20 ms.
    /// D4 reports from a worker 2 s after the frees: a guest with it runs past that.
    pub fn duration_ms(&self) -> u64 {
        let mut ms = (self.accesses() * NS_PER_PAGE / 1_000_000 * self.length_pct / 100).max(20);
        if let Extra::Guest(g) | Extra::Xen(g, _) = &self.extra {
            ms += g.start_ms;
            if g.hinting == "D4" {
                ms = ms.max(2_100 + g.start_ms);
            }
        }
        ms
    }

    pub fn toml(&self) -> String {
        let mut s = String::new();
        let w = &mut s;
        let _ = writeln!(w, "name = \"generated\"\n\n[sim]");
        // Seeds above 2^63-1 are written as decimal strings (TOML integers stop there).
        if self.seed > i64::MAX as u64 {
            let _ = writeln!(w, "seed = \"{}\"", self.seed);
        } else {
            let _ = writeln!(w, "seed = {}", self.seed);
        }
        let duration = self.duration_ms();
        let _ = writeln!(
            w,
            "duration = \"{duration}ms\"\nsample_interval = \"{}ms\"\n",
            (duration / 10).max(1)
        );
        let _ = writeln!(
            w,
            "[host]\nram = \"{}MiB\"\nmachine = \"{}\"",
            self.ram_mib, self.machine
        );
        if let Some(e) = self.lowmem_eighths {
            // The parser wants at least 64 MiB below 4 GiB.
            let _ = writeln!(w, "lowmem = \"{}MiB\"", (self.ram_mib * e / 8).max(64));
        }
        let _ = writeln!(
            w,
            "cpus = {}\nthp = {}\ncpu_contention = {}\npcp_lists = {}\nvmstat_drift = {}\n\
             page_tables = {}\n",
            self.cpus, self.thp, self.contention, self.pcp, self.drift, self.page_tables
        );
        let _ = writeln!(
            w,
            "[sysctl]\nswappiness = {}\nwatermark_scale_factor = {}\nwatermark_boost_factor = {}\n",
            self.swappiness, self.wsf, self.boost
        );
        let _ = writeln!(
            w,
            "[swap]\nsize = \"{}MiB\"\nrotational = {}\n",
            self.swap_mib(),
            self.rotational
        );
        let _ = writeln!(w, "[oom]\nallowed = {}\n", self.oom_allowed());
        let mut policies = self.policies.clone();
        if let Extra::Xen(_, x) = &self.extra {
            policies.push(("blkback_pool", x.pool));
            policies.push(("blkback_backing", x.backing));
        }
        if !policies.is_empty() {
            let _ = writeln!(w, "[policy]");
            for (k, v) in &policies {
                let _ = writeln!(w, "{k} = \"{v}\"");
            }
            let _ = writeln!(w);
        }
        match &self.extra {
            Extra::None => {}
            Extra::Fs(f) => self.write_fs(w, f),
            Extra::Guest(g) => self.write_guest(w, g, None),
            Extra::Xen(g, x) => {
                let (gram, _) = Self::guest_mib(g, self.ram_mib);
                let _ = writeln!(
                    w,
                    "[xen]\nram = \"{}MiB\"\n[xen.blkback]\nmax_buffer_pages = {}\n\
                     buffer_squeeze_duration_ms = {}\nlog_stats = true\n",
                    self.ram_mib + gram,
                    x.max_buffer_pages,
                    x.squeeze_ms
                );
                self.write_guest(w, g, Some(x));
            }
        }
        // Beside a guest, the host's own workloads go first when the host must kill: the
        // guest then lives to free its memory (and report it).
        let adj = if matches!(self.extra, Extra::Guest(_) | Extra::Xen(..)) {
            1000
        } else {
            0
        };
        for (i, work) in self.works.iter().enumerate() {
            let _ = writeln!(w, "[[workload]]\nname = \"w{i}\"\noom_score_adj = {adj}");
            match work {
                Work::Anon {
                    parts,
                    pattern,
                    passes,
                    write_pct,
                } => {
                    let _ = writeln!(
                        w,
                        "[workload.anon]\nsize = \"{}MiB\"\npattern = \"{pattern}\"\npasses = {passes}\nwrite_fraction = {:.2}",
                        self.share_mib(*parts),
                        *write_pct as f64 / 100.0
                    );
                }
                Work::File {
                    parts,
                    write,
                    passes,
                } => {
                    let op = if *write { "write" } else { "read" };
                    let _ = writeln!(
                        w,
                        "[workload.file]\nsize = \"{}MiB\"\nop = \"{op}\"\npasses = {passes}",
                        self.share_mib(*parts)
                    );
                }
                Work::HighOrder {
                    order,
                    rate,
                    count,
                    gfp,
                    exponential,
                    lifetime_ms,
                    start_pct,
                } => {
                    let lifetimes = if *exponential { "exponential" } else { "fixed" };
                    let start = self.duration_ms() * start_pct / 100;
                    let _ = writeln!(
                        w,
                        "start = \"{start}ms\"\n[workload.highorder]\norder = {order}\nrate = {rate}\ncount = {count}\ngfp = \"{gfp}\"\nlifetimes = \"{lifetimes}\"\nlifetime = \"{lifetime_ms}ms\""
                    );
                }
            }
            let _ = writeln!(w);
        }
        s
    }

    fn write_fs(&self, w: &mut String, f: &GenFs) {
        let _ = writeln!(
            w,
            "[fs]\nags = {}\nio_latency = \"200us\"\nio_queue_depth = 8\n",
            f.ags
        );
        if let Some((threads, files, nofs)) = f.fsmark {
            let _ = writeln!(
                w,
                "[[workload]]\nname = \"fsmark\"\n[workload.fsmark]\nthreads = {threads}\n\
                 files = {files}\nnofs_fraction = {:.2}\nrss = \"1MiB\"\n",
                nofs as f64 / 100.0
            );
        }
        if let Some((threads, files, kib, alloc, keep)) = f.simoops {
            let _ = writeln!(
                w,
                "[[workload]]\nname = \"simoops\"\n[workload.simoops]\nthreads = {threads}\n\
                 files = {files}\nfile_size = \"{kib}KiB\"\nreads_per_unit = 2\n\
                 alloc = \"{alloc}KiB\"\nkeep_units = {keep}\nthink = \"100us\"\n"
            );
        }
        if let Some((value, after)) = f.drop_caches {
            // Within the run, whatever its length.
            let after = after * self.duration_ms() / 100;
            let _ = writeln!(
                w,
                "[[workload]]\nname = \"dropper\"\n[workload.drop_caches]\nvalue = {value}\n\
                 after = \"{after}ms\"\n"
            );
        }
    }

    fn write_guest(&self, w: &mut String, g: &GenGuest, xen: Option<&GenXen>) {
        let (ram, program) = Self::guest_mib(g, self.ram_mib);
        let _ = writeln!(
            w,
            "[[guest]]\nname = \"vm\"\nram = \"{ram}MiB\"\nvcpus = {}\nboot_resident = \"{}MiB\"\n\
             start = \"{}ms\"\npage_reporting_order = {}\npolicy.hinting = \"{}\"",
            g.vcpus, g.boot_mib, g.start_ms, g.reporting_order, g.hinting
        );
        if let Some(st) = g.stride {
            let _ = writeln!(w, "fragment_stride = {st}");
        }
        let _ = writeln!(
            w,
            "[[guest.workload]]\nname = \"program\"\n[guest.workload.anon]\nsize = \"{program}MiB\"\n"
        );
        let Some(x) = xen else {
            return;
        };
        for v in 0..x.vbds {
            let _ = writeln!(
                w,
                "[[guest.vbd]]\nname = \"xvd{v}\"\nbackend = \"{}\"\npersistent = {}\n\
                 max_indirect_segments = {}\n",
                x.backend,
                x.persistent,
                // B0 takes direct requests only (a parse error otherwise).
                if x.pool == "B0" { 0 } else { x.indirect }
            );
            let _ = writeln!(
                w,
                "[[guest.workload]]\nname = \"io{v}\"\n[guest.workload.blkio]\nvbd = \"xvd{v}\"\n\
                 pattern = \"{}\"\niodepth = {}\ncount = {}\nrepeat = {}\n",
                x.pattern, x.iodepth, x.ios, x.repeat
            );
        }
    }

    /// Anonymous memory beyond RAM + swap needs the OOM killer (the parser refuses it
    /// otherwise): allowed then, whatever was drawn.
    fn oom_allowed(&self) -> bool {
        let anon: u64 = self
            .works
            .iter()
            .map(|w| match w {
                Work::Anon { parts, .. } => self.share_mib(*parts),
                _ => 0,
            })
            .sum();
        self.oom_allowed || anon >= self.ram_mib / 2 + self.swap_mib()
    }
}
