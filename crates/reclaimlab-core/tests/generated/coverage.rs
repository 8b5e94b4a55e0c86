//! Which of the model's hard paths a case reached, read from its machines' vmstat counters and
//! the figures its summary reports (a guest's hinting reports, blkback's squeezes), and the
//! shares over a run of cases with their floors.

use reclaimlab_core::machine::vmstat::VmEvent;
use reclaimlab_core::world::World;

/// The paths counted, in the table's order: (name, what reaching it means).
pub const PATHS: [(&str, &str); 11] = [
    (
        "some reclaim",
        "pgscan_kswapd or pgscan_direct > 0, or an allocstall, on any machine",
    ),
    ("kswapd reclaim", "pgscan_kswapd > 0"),
    ("direct reclaim", "pgscan_direct > 0"),
    ("swap-out", "pswpout > 0"),
    ("swap-in", "pswpin > 0"),
    (
        "compaction",
        "compact_stall, compact_daemon_migrate_scanned or pgmigrate_success > 0",
    ),
    ("OOM kill", "oom_kill > 0"),
    ("shrinker scan", "slabs_scanned > 0"),
    (
        "free page report",
        "a guest's hinting reported at least once",
    ),
    (
        "blkback squeeze",
        "a blkback pool squeezed below max_buffer_pages",
    ),
    (
        "D2 arrays report",
        "a guest with D2 or D2stored hinting reported at least once (its kthread ran)",
    ),
];

/// The bit of `PATHS` for a report of D2's capture arrays.
const D2_REPORT: usize = 10;

/// Adds the paths only the scenario tells apart: a guest's report (bit 8) was D2's
/// (`hinting` is the KVM guest's variant, if the case has one).
pub fn with_hinting(bits: u16, hinting: Option<&str>) -> u16 {
    let d2 = matches!(hinting, Some("D2" | "D2stored"));
    if d2 && bits & (1 << 8) != 0 {
        bits | 1 << D2_REPORT
    } else {
        bits
    }
}

/// Floors, in percent of the cases: some reclaim, then every other path.
pub const FLOOR_SOME_RECLAIM_PCT: u64 = 80;
pub const FLOOR_PATH_PCT: u64 = 10;

/// The paths one case reached, one bit each in `PATHS` order.
pub fn reached(world: &World) -> u16 {
    let mut bits = 0u16;
    let mut set = |i: usize, on: bool| {
        if on {
            bits |= 1 << i;
        }
    };
    for m in &world.machines {
        let e = |x| m.vm.get(x);
        // Entering direct reclaim counts even when it found nothing to scan (anonymous
        // memory without swap): the reclaim path ran, and the OOM killer usually follows.
        let stalls: u64 = (0..5).map(|z| e(VmEvent::allocstall(z))).sum();
        set(
            0,
            e(VmEvent::PgscanKswapd) + e(VmEvent::PgscanDirect) + stalls > 0,
        );
        set(1, e(VmEvent::PgscanKswapd) > 0);
        set(2, e(VmEvent::PgscanDirect) > 0);
        set(3, e(VmEvent::Pswpout) > 0);
        set(4, e(VmEvent::Pswpin) > 0);
        set(
            5,
            e(VmEvent::CompactStall)
                + e(VmEvent::CompactDaemonMigrateScanned)
                + e(VmEvent::PgmigrateSuccess)
                > 0,
        );
        set(6, e(VmEvent::OomKill) > 0);
        set(7, e(VmEvent::SlabsScanned) > 0);
        if let Some(g) = &m.guest {
            set(8, g.stats.reports > 0);
        }
        if let Some(x) = &m.xen {
            set(9, x.counters.squeezes > 0);
        }
    }
    bits
}

/// Cases counted, and how many reached each path.
#[derive(Debug, Default, Clone)]
pub struct Coverage {
    pub cases: u64,
    pub hits: [u64; PATHS.len()],
}

impl Coverage {
    pub fn add(&mut self, bits: u16) {
        self.cases += 1;
        for (i, h) in self.hits.iter_mut().enumerate() {
            if bits & (1 << i) != 0 {
                *h += 1;
            }
        }
    }

    pub fn pct(&self, i: usize) -> f64 {
        100.0 * self.hits[i] as f64 / self.cases.max(1) as f64
    }

    /// The table printed after the run (Markdown, as BENCHMARKS.md keeps it).
    pub fn table(&self) -> String {
        let mut s = format!(
            "| path ({} cases) | cases | share | floor |\n|---|---:|---:|---:|\n",
            self.cases
        );
        for (i, (name, _)) in PATHS.iter().enumerate() {
            let floor = if i == 0 {
                FLOOR_SOME_RECLAIM_PCT
            } else {
                FLOOR_PATH_PCT
            };
            s += &format!(
                "| {name} | {} | {:.1} % | {floor} % |\n",
                self.hits[i],
                self.pct(i)
            );
        }
        s
    }

    /// The paths below their floors, as sentences.
    pub fn below_floors(&self) -> Vec<String> {
        PATHS
            .iter()
            .enumerate()
            .filter_map(|(i, (name, means))| {
                let floor = if i == 0 {
                    FLOOR_SOME_RECLAIM_PCT
                } else {
                    FLOOR_PATH_PCT
                };
                (self.pct(i) < floor as f64).then(|| {
                    format!(
                        "{name} ({means}): {} of {} cases, {:.1} % < {floor} %",
                        self.hits[i],
                        self.cases,
                        self.pct(i)
                    )
                })
            })
            .collect()
    }
}
