//! ftrace text output of the reclaim events (core-mm §8): the 6.1 `trace` file format with its
//! header, or a compatibility form that the kernel's `trace-vmscan-postprocess.pl` parses with
//! its default regexes (core-mm §8.6).
//!
//! Tracing is off unless a run asks for it; when off, each emission site costs one test of a
//! flag, at most once per 32-page reclaim batch.

use std::fmt::Write;

use crate::engine::ActorId;
use crate::machine::gfp::show_gfp_flags;
use crate::machine::tracepoint::{TraceStyle, Tracepoint};
use crate::world::{MachineId, TraceSink};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// 6.1's exact `TP_printk` strings.
    Kernel,
    /// The changes the 6.1 post-processing script's default regexes need (core-mm §8.6):
    /// `may_writepage` and `zid` fields, `classzone_idx=`, isolate_mode 1/2 for inactive/active
    /// lists, and `mm_vmscan_writepage` with a decimal pfn.
    Postprocess,
}

impl TraceFormat {
    pub const NAMES: &'static [&'static str] = &["kernel", "postprocess"];
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "kernel" => Some(TraceFormat::Kernel),
            "postprocess" => Some(TraceFormat::Postprocess),
            _ => None,
        }
    }
}

/// `%p` of a registered shrinker: a stable function of its registration number stands in for
/// the hashed pointer.
fn shrinker_ptr(id: usize) -> u64 {
    ((id as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 24) & 0xffff_ffff
}

/// A VMA's pointer: a stable function of the region's number in the kernel's direct map (a
/// fault's lookup has one; shmem's, which the model does not make, has none).
fn vma_ptr(region: u32) -> u64 {
    0xffff_8880_0000_0000 | (((region as u64 + 1).wrapping_mul(0x9E37_79B9) & 0xfff_ffff) << 8)
}

/// Who an event is emitted by (`current`): comm, pid and CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskId {
    pub comm: String,
    pub pid: u32,
    pub cpu: u32,
}

impl TaskId {
    /// A task with a comm the post-processing script can read: only `[A-Za-z0-9-]`, at most
    /// 15 characters (TASK_COMM_LEN - 1).
    pub fn new(name: &str, pid: u32, cpu: u32) -> TaskId {
        let comm: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .take(15)
            .collect();
        TaskId { comm, pid, cpu }
    }
}

/// The per-list name printed by `mm_vmscan_lru_isolate` (`lru=%s`).
pub const LRU_NAMES: [&str; 5] = [
    "inactive_anon",
    "active_anon",
    "inactive_file",
    "active_file",
    "unevictable",
];

#[derive(Debug, Clone)]
pub struct Tracer {
    pub format: TraceFormat,
    cpus: u32,
    body: String,
    entries: u64,
}

fn reclaim_flags(file: bool) -> &'static str {
    if file {
        "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
    } else {
        "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC"
    }
}

impl Tracer {
    pub fn new(format: TraceFormat, cpus: u32) -> Tracer {
        Tracer {
            format,
            cpus,
            body: String::with_capacity(1 << 20),
            entries: 0,
        }
    }

    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Start one line: `%16s-%-7d [%03d] ..... %5lu.%06lu: name: `. Timestamps are shifted by
    /// one microsecond-free second so no event sits at 0.000000, which the script reads as
    /// "not awake".
    fn start(&mut self, who: &TaskId, ts_ns: u64, event: &str) {
        let t = ts_ns + 1_000_000_000;
        let _ = write!(
            self.body,
            "{:>16}-{:<7} [{:03}] ..... {:>5}.{:06}: {}: ",
            who.comm,
            who.pid,
            who.cpu,
            t / 1_000_000_000,
            (t % 1_000_000_000) / 1000,
            event
        );
        self.entries += 1;
    }

    /// Print one tracepoint as `who`: 6.1's `TP_printk` text, or the fields the post-processing
    /// script's regexes want (core-mm §8.6).
    pub fn emit(&mut self, who: &TaskId, ts: u64, tp: &Tracepoint) {
        let post = self.format == TraceFormat::Postprocess;
        let name = match tp {
            Tracepoint::KswapdSleep { .. } => "mm_vmscan_kswapd_sleep",
            Tracepoint::KswapdWake { .. } => "mm_vmscan_kswapd_wake",
            Tracepoint::WakeupKswapd { .. } => "mm_vmscan_wakeup_kswapd",
            Tracepoint::DirectReclaimBegin { .. } => "mm_vmscan_direct_reclaim_begin",
            Tracepoint::DirectReclaimEnd { .. } => "mm_vmscan_direct_reclaim_end",
            Tracepoint::LruIsolate { .. } => "mm_vmscan_lru_isolate",
            Tracepoint::WriteFolio { .. } if post => "mm_vmscan_writepage",
            Tracepoint::WriteFolio { .. } => "mm_vmscan_write_folio",
            Tracepoint::LruShrinkInactive { .. } => "mm_vmscan_lru_shrink_inactive",
            Tracepoint::LruShrinkActive { .. } => "mm_vmscan_lru_shrink_active",
            Tracepoint::Throttled { .. } => "mm_vmscan_throttled",
            Tracepoint::ShrinkSlabStart { .. } => "mm_shrink_slab_start",
            Tracepoint::ShrinkSlabEnd { .. } => "mm_shrink_slab_end",
            Tracepoint::Marker { .. } => "tracing_mark_write",
            Tracepoint::SwapinLookup { .. } => "swapin_lookup",
            Tracepoint::SwapinCluster { .. } => "swapin_cluster",
            Tracepoint::SwapinRead { .. } => "swapin_read",
        };
        self.start(who, ts, name);
        let b = &mut self.body;
        let _ = match *tp {
            Tracepoint::Marker { ref text } => writeln!(b, "{text}"),
            // The kprobe events print the probed function (its size as in the guest's 6.1
            // build) and the fetched arguments in their probe types: x64 in hex, s32 and u64
            // in decimal. The swap entry of device 0 is its slot.
            Tracepoint::SwapinLookup {
                slot,
                vpage,
                region,
                hits,
            } => writeln!(
                b,
                "(swap_cache_get_folio+0x0/0x2c0) entry={slot:#x} vma={:#x} addr={:#x} hits={hits} vma_ra=0x0",
                vma_ptr(region),
                (vpage as u64) << 12
            ),
            Tracepoint::SwapinCluster {
                slot,
                hits,
                prev,
                last,
            } => writeln!(
                b,
                "(swap_cluster_readahead+0x0/0x450) entry={slot:#x} hits={hits} prev={prev} last={last}"
            ),
            Tracepoint::SwapinRead { slot, sync } => writeln!(
                b,
                "(swap_readpage+0x0/0x2f0) entry={slot:#x} sync={}",
                sync as u8
            ),
            Tracepoint::KswapdSleep { nid } => writeln!(b, "nid={nid}"),
            Tracepoint::KswapdWake { nid, order } => writeln!(b, "nid={nid} order={order}"),
            Tracepoint::WakeupKswapd {
                nid,
                zid,
                order,
                gfp,
            } => {
                let g = show_gfp_flags(gfp);
                if post {
                    writeln!(b, "nid={nid} zid={zid} order={order} gfp_flags={g}")
                } else {
                    writeln!(b, "nid={nid} order={order} gfp_flags={g}")
                }
            }
            Tracepoint::DirectReclaimBegin {
                order,
                gfp,
                may_writepage,
            } => {
                let g = show_gfp_flags(gfp);
                if post {
                    let w = may_writepage as u32;
                    writeln!(b, "order={order} may_writepage={w} gfp_flags={g}")
                } else {
                    writeln!(b, "order={order} gfp_flags={g}")
                }
            }
            Tracepoint::DirectReclaimEnd { nr_reclaimed } => {
                writeln!(b, "nr_reclaimed={nr_reclaimed}")
            }
            Tracepoint::LruIsolate {
                classzone,
                order,
                nr_requested,
                nr_scanned,
                nr_skipped,
                nr_taken,
                lru,
                may_unmap,
            } => {
                let name = LRU_NAMES[lru];
                // 6.1 prints the isolate mode (0, or 2 for ISOLATE_UNMAPPED); the script reads
                // 1 and 2 as "inactive" and "active" list scans.
                let (mode, cz) = if post {
                    (if lru == 1 || lru == 3 { 2 } else { 1 }, "classzone_idx")
                } else {
                    (if may_unmap { 0 } else { 2 }, "classzone")
                };
                writeln!(
                    b,
                    "isolate_mode={mode} {cz}={classzone} order={order} nr_requested={nr_requested} nr_scanned={nr_scanned} nr_skipped={nr_skipped} nr_taken={nr_taken} lru={name}"
                )
            }
            Tracepoint::WriteFolio { pfn, file } => {
                // `%p` prints a hashed pointer: a stable function of the pfn stands in for it.
                let page = (pfn as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16;
                let flags = reclaim_flags(file);
                if post {
                    writeln!(b, "page={page:016x} pfn={pfn} flags={flags}")
                } else {
                    writeln!(b, "page={page:016x} pfn=0x{pfn:x} flags={flags}")
                }
            }
            Tracepoint::LruShrinkInactive {
                nid,
                stat: ref s,
                priority,
                file,
            } => writeln!(
                b,
                "nid={nid} nr_scanned={} nr_reclaimed={} nr_dirty={} nr_writeback={} nr_congested={} nr_immediate={} nr_activate_anon={} nr_activate_file={} nr_ref_keep={} nr_unmap_fail={} priority={priority} flags={}",
                s.nr_scanned,
                s.nr_reclaimed,
                s.nr_dirty,
                s.nr_writeback,
                s.nr_congested,
                s.nr_immediate,
                s.nr_activate_anon,
                s.nr_activate_file,
                s.nr_ref_keep,
                s.nr_unmap_fail,
                reclaim_flags(file)
            ),
            Tracepoint::LruShrinkActive {
                nid,
                nr_taken,
                nr_active,
                nr_deactivated,
                priority,
                file,
            } => writeln!(
                b,
                "nid={nid} nr_taken={nr_taken} nr_active={nr_active} nr_deactivated={nr_deactivated} nr_referenced=0 priority={priority} flags={}",
                reclaim_flags(file)
            ),
            // "usect_delayed" is the kernel's own spelling.
            Tracepoint::Throttled {
                nid,
                usec_timeout,
                usec_delayed,
                reason,
            } => writeln!(
                b,
                "nid={nid} usec_timeout={usec_timeout} usect_delayed={usec_delayed} reason={}",
                reason.name()
            ),
            Tracepoint::ShrinkSlabStart {
                symbol,
                id,
                gfp,
                priority,
                ref out,
                style,
            } => {
                let g = show_gfp_flags(gfp);
                let ptr = shrinker_ptr(id);
                match style {
                    TraceStyle::V61 => writeln!(
                        b,
                        "{symbol} {ptr:016x}: nid: 0 objects to shrink {} gfp_flags {g} cache items {} delta {} total_scan {} priority {priority}",
                        out.nr, out.freeable, out.delta, out.total_scan
                    ),
                    TraceStyle::Chinner => writeln!(
                        b,
                        "{symbol} {ptr:016x}: nid: 0 objects to scan {} freeable items {} deferred count {} priority {priority} gfp_flags {g}",
                        out.total_scan, out.freeable, out.nr
                    ),
                }
            }
            Tracepoint::ShrinkSlabEnd {
                symbol,
                id,
                ref out,
                style,
            } => {
                let ptr = shrinker_ptr(id);
                match style {
                    TraceStyle::V61 => writeln!(
                        b,
                        "{symbol} {ptr:016x}: nid: 0 unused scan count {} new scan count {} total_scan {} last shrinker return val {}",
                        out.nr, out.new_nr, out.remaining, out.freed
                    ),
                    // The seed patch passes the old count where it prints "new deferred
                    // count" and the new one where it prints "old" (mechanisms §A.2 (d)); we
                    // print what it printed.
                    TraceStyle::Chinner => writeln!(
                        b,
                        "{symbol} {ptr:016x}: nid: 0 freed objects {} unused scan count {} new deferred count {} old deferred count {}",
                        out.freed, out.remaining, out.nr, out.new_nr
                    ),
                }
            }
        };
    }

    /// The whole `trace` file: the nop-tracer header, then the events.
    pub fn finish(&self) -> String {
        let mut s = String::with_capacity(self.body.len() + 1024);
        s.push_str("# tracer: nop\n#\n");
        let _ = writeln!(
            s,
            "# entries-in-buffer/entries-written: {}/{}   #P:{}",
            self.entries, self.entries, self.cpus
        );
        s.push_str(concat!(
            "#\n",
            "#                                _-----=> irqs-off/BH-disabled\n",
            "#                               / _----=> need-resched\n",
            "#                              | / _---=> hardirq/softirq\n",
            "#                              || / _--=> preempt-depth\n",
            "#                              ||| / _-=> migrate-disable\n",
            "#                              |||| /     delay\n",
            "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n",
            "#              | |         |   |||||     |         |\n",
        ));
        s.push_str(&self.body);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::gfp::GFP_HIGHUSER_MOVABLE;

    #[test]
    fn line_layout_matches_the_kernel() {
        let mut t = Tracer::new(TraceFormat::Kernel, 2);
        let k = TaskId::new("kswapd0", 46, 2);
        t.emit(
            &k,
            870_431_263_000,
            &Tracepoint::KswapdWake { nid: 0, order: 0 },
        );
        let w = TaskId::new("stress-ng-vm", 2417, 1);
        let gfp = GFP_HIGHUSER_MOVABLE;
        let tp = Tracepoint::WakeupKswapd {
            nid: 0,
            zid: 3,
            order: 0,
            gfp,
        };
        t.emit(&w, 870_430_998_000, &tp);
        let out = t.finish();
        assert!(
            out.starts_with("# tracer: nop\n#\n# entries-in-buffer/entries-written: 2/2   #P:2\n")
        );
        assert!(out.contains(
            "         kswapd0-46      [002] .....   871.431263: mm_vmscan_kswapd_wake: nid=0 order=0\n"
        ));
        assert!(out.contains(
            "    stress-ng-vm-2417    [001] .....   871.430998: mm_vmscan_wakeup_kswapd: nid=0 order=0 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
        ));
    }

    #[test]
    fn swapin_events_read_as_the_guests_kprobe_lines() {
        let mut t = Tracer::new(TraceFormat::Kernel, 2);
        let app = TaskId::new("app/anon", 1000, 1);
        let lookup = Tracepoint::SwapinLookup {
            slot: 250,
            vpage: 0x1da6,
            region: 0,
            hits: 3,
        };
        t.emit(&app, 7_691_426_000, &lookup);
        let cluster = Tracepoint::SwapinCluster {
            slot: 250,
            hits: 3,
            prev: 74,
            last: 4,
        };
        t.emit(&app, 7_691_426_000, &cluster);
        let read = Tracepoint::SwapinRead {
            slot: 251,
            sync: false,
        };
        t.emit(&app, 7_691_426_000, &read);
        let out = t.finish();
        let vma = format!("{:#x}", vma_ptr(0));
        assert!(vma.starts_with("0xffff888") && vma_ptr(0) != vma_ptr(1));
        assert!(out.contains(&format!(
            "        app-anon-1000    [001] .....     8.691426: swapin_lookup: (swap_cache_get_folio+0x0/0x2c0) entry=0xfa vma={vma} addr=0x1da6000 hits=3 vma_ra=0x0\n"
        )));
        assert!(out.contains(
            ": swapin_cluster: (swap_cluster_readahead+0x0/0x450) entry=0xfa hits=3 prev=74 last=4\n"
        ));
        assert!(out.contains(": swapin_read: (swap_readpage+0x0/0x2f0) entry=0xfb sync=0\n"));
    }

    #[test]
    fn postprocess_form_has_the_fields_the_script_expects() {
        let mut t = Tracer::new(TraceFormat::Postprocess, 1);
        let w = TaskId::new("hog/anon", 1000, 0);
        assert_eq!(w.comm, "hog-anon");
        let begin = Tracepoint::DirectReclaimBegin {
            order: 0,
            gfp: GFP_HIGHUSER_MOVABLE,
            may_writepage: true,
        };
        t.emit(&w, 5, &begin);
        let isolate = Tracepoint::LruIsolate {
            classzone: 3,
            order: 0,
            nr_requested: 32,
            nr_scanned: 32,
            nr_skipped: 0,
            nr_taken: 32,
            lru: 2,
            may_unmap: true,
        };
        t.emit(&w, 6, &isolate);
        t.emit(
            &w,
            7,
            &Tracepoint::WriteFolio {
                pfn: 4660,
                file: false,
            },
        );
        let out = t.finish();
        assert!(out.contains("mm_vmscan_direct_reclaim_begin: order=0 may_writepage=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"));
        assert!(out.contains("isolate_mode=1 classzone_idx=3 order=0 nr_requested=32"));
        assert!(out.contains("mm_vmscan_writepage: page="));
        assert!(out.contains(" pfn=4660 flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC\n"));
    }
}

/// The world's trace sink: the tracer plus who each actor is in the trace.
#[derive(Debug, Clone)]
pub struct TaskTracer {
    pub tracer: Tracer,
    /// Trace identity of each actor that has one, by actor id.
    tasks: Vec<Option<TaskId>>,
    /// Events recorded by actors without an identity are shown as this task (kswapd0: the
    /// kernel helpers that have none emit no reclaim events of their own).
    fallback: TaskId,
}

impl TaskTracer {
    pub fn new(tracer: Tracer, fallback: TaskId) -> TaskTracer {
        TaskTracer {
            tracer,
            tasks: Vec::new(),
            fallback,
        }
    }

    pub fn set_task(&mut self, actor: ActorId, who: TaskId) {
        let i = actor as usize;
        if self.tasks.len() <= i {
            self.tasks.resize(i + 1, None);
        }
        self.tasks[i] = Some(who);
    }
}

impl TraceSink for TaskTracer {
    fn record(&mut self, _machine: MachineId, actor: ActorId, ts: u64, tp: &Tracepoint) {
        let who = self
            .tasks
            .get(actor as usize)
            .and_then(|t| t.as_ref())
            .unwrap_or(&self.fallback);
        self.tracer.emit(who, ts, tp);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
