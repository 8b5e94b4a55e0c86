//! ftrace text output of the reclaim events (core-mm §8): the 6.1 `trace` file format with its
//! header, or a compatibility form that the kernel's `trace-vmscan-postprocess.pl` parses with
//! its default regexes (core-mm §8.6).
//!
//! Tracing is off unless a run asks for it; when off, each emission site costs one test of a
//! flag, at most once per 32-page reclaim batch.

use std::fmt::Write;

use crate::engine::ActorId;
use crate::machine::gfp::{show_gfp_flags, Gfp};
use crate::machine::tracepoint::{ShrinkInactive, Tracepoint};
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

    pub fn kswapd_sleep(&mut self, who: &TaskId, ts: u64, nid: usize) {
        self.start(who, ts, "mm_vmscan_kswapd_sleep");
        let _ = writeln!(self.body, "nid={nid}");
    }

    pub fn kswapd_wake(&mut self, who: &TaskId, ts: u64, nid: usize, order: u32) {
        self.start(who, ts, "mm_vmscan_kswapd_wake");
        let _ = writeln!(self.body, "nid={nid} order={order}");
    }

    pub fn wakeup_kswapd(
        &mut self,
        who: &TaskId,
        ts: u64,
        nid: usize,
        zid: usize,
        order: u32,
        gfp: Gfp,
    ) {
        self.start(who, ts, "mm_vmscan_wakeup_kswapd");
        let g = show_gfp_flags(gfp);
        let _ = match self.format {
            TraceFormat::Kernel => writeln!(self.body, "nid={nid} order={order} gfp_flags={g}"),
            TraceFormat::Postprocess => {
                writeln!(self.body, "nid={nid} zid={zid} order={order} gfp_flags={g}")
            }
        };
    }

    pub fn direct_reclaim_begin(
        &mut self,
        who: &TaskId,
        ts: u64,
        order: u32,
        gfp: Gfp,
        may_writepage: bool,
    ) {
        self.start(who, ts, "mm_vmscan_direct_reclaim_begin");
        let g = show_gfp_flags(gfp);
        let _ = match self.format {
            TraceFormat::Kernel => writeln!(self.body, "order={order} gfp_flags={g}"),
            TraceFormat::Postprocess => writeln!(
                self.body,
                "order={order} may_writepage={} gfp_flags={g}",
                may_writepage as u32
            ),
        };
    }

    pub fn direct_reclaim_end(&mut self, who: &TaskId, ts: u64, nr_reclaimed: u64) {
        self.start(who, ts, "mm_vmscan_direct_reclaim_end");
        let _ = writeln!(self.body, "nr_reclaimed={nr_reclaimed}");
    }

    #[allow(clippy::too_many_arguments)]
    pub fn lru_isolate(
        &mut self,
        who: &TaskId,
        ts: u64,
        classzone: usize,
        order: u32,
        nr_requested: u64,
        nr_scanned: u64,
        nr_skipped: u64,
        nr_taken: u64,
        lru: usize,
        may_unmap: bool,
    ) {
        self.start(who, ts, "mm_vmscan_lru_isolate");
        let name = LRU_NAMES[lru];
        let _ = match self.format {
            TraceFormat::Kernel => writeln!(
                self.body,
                "isolate_mode={} classzone={classzone} order={order} nr_requested={nr_requested} nr_scanned={nr_scanned} nr_skipped={nr_skipped} nr_taken={nr_taken} lru={name}",
                if may_unmap { 0 } else { 2 }
            ),
            TraceFormat::Postprocess => writeln!(
                self.body,
                "isolate_mode={} classzone_idx={classzone} order={order} nr_requested={nr_requested} nr_scanned={nr_scanned} nr_skipped={nr_skipped} nr_taken={nr_taken} lru={name}",
                if lru == 1 || lru == 3 { 2 } else { 1 }
            ),
        };
    }

    pub fn write_folio(&mut self, who: &TaskId, ts: u64, pfn: u32, file: bool) {
        // `%p` prints a hashed pointer: a stable function of the pfn stands in for it.
        let page = (pfn as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 16;
        let flags = reclaim_flags(file);
        match self.format {
            TraceFormat::Kernel => {
                self.start(who, ts, "mm_vmscan_write_folio");
                let _ = writeln!(self.body, "page={page:016x} pfn=0x{pfn:x} flags={flags}");
            }
            TraceFormat::Postprocess => {
                self.start(who, ts, "mm_vmscan_writepage");
                let _ = writeln!(self.body, "page={page:016x} pfn={pfn} flags={flags}");
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn lru_shrink_inactive(
        &mut self,
        who: &TaskId,
        ts: u64,
        nid: usize,
        s: &ShrinkInactive,
        priority: i32,
        file: bool,
    ) {
        self.start(who, ts, "mm_vmscan_lru_shrink_inactive");
        let _ = writeln!(
            self.body,
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
        );
    }

    #[allow(clippy::too_many_arguments)]
    pub fn lru_shrink_active(
        &mut self,
        who: &TaskId,
        ts: u64,
        nid: usize,
        nr_taken: u64,
        nr_active: u64,
        nr_deactivated: u64,
        priority: i32,
        file: bool,
    ) {
        self.start(who, ts, "mm_vmscan_lru_shrink_active");
        let _ = writeln!(
            self.body,
            "nid={nid} nr_taken={nr_taken} nr_active={nr_active} nr_deactivated={nr_deactivated} nr_referenced=0 priority={priority} flags={}",
            reclaim_flags(file)
        );
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
        t.kswapd_wake(&k, 870_431_263_000, 0, 0);
        let w = TaskId::new("stress-ng-vm", 2417, 1);
        t.wakeup_kswapd(&w, 870_430_998_000, 0, 3, 0, GFP_HIGHUSER_MOVABLE);
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
    fn postprocess_form_has_the_fields_the_script_expects() {
        let mut t = Tracer::new(TraceFormat::Postprocess, 1);
        let w = TaskId::new("hog/anon", 1000, 0);
        assert_eq!(w.comm, "hog-anon");
        t.direct_reclaim_begin(&w, 5, 0, GFP_HIGHUSER_MOVABLE, true);
        t.lru_isolate(&w, 6, 3, 0, 32, 32, 0, 32, 2, true);
        t.write_folio(&w, 7, 4660, false);
        let out = t.finish();
        assert!(out.contains("mm_vmscan_direct_reclaim_begin: order=0 may_writepage=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"));
        assert!(out.contains("isolate_mode=1 classzone_idx=3 order=0 nr_requested=32"));
        assert!(out.contains("mm_vmscan_writepage: page="));
        assert!(out.contains(" pfn=4660 flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC\n"));
    }
}

impl Tracer {
    /// Print one tracepoint as `who`.
    pub fn emit(&mut self, who: &TaskId, ts: u64, tp: &Tracepoint) {
        match *tp {
            Tracepoint::KswapdSleep { nid } => self.kswapd_sleep(who, ts, nid),
            Tracepoint::KswapdWake { nid, order } => self.kswapd_wake(who, ts, nid, order),
            Tracepoint::WakeupKswapd {
                nid,
                zid,
                order,
                gfp,
            } => self.wakeup_kswapd(who, ts, nid, zid, order, gfp),
            Tracepoint::DirectReclaimBegin {
                order,
                gfp,
                may_writepage,
            } => self.direct_reclaim_begin(who, ts, order, gfp, may_writepage),
            Tracepoint::DirectReclaimEnd { nr_reclaimed } => {
                self.direct_reclaim_end(who, ts, nr_reclaimed)
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
            } => self.lru_isolate(
                who,
                ts,
                classzone,
                order,
                nr_requested,
                nr_scanned,
                nr_skipped,
                nr_taken,
                lru,
                may_unmap,
            ),
            Tracepoint::WriteFolio { pfn, file } => self.write_folio(who, ts, pfn, file),
            Tracepoint::LruShrinkInactive {
                nid,
                ref stat,
                priority,
                file,
            } => self.lru_shrink_inactive(who, ts, nid, stat, priority, file),
            Tracepoint::LruShrinkActive {
                nid,
                nr_taken,
                nr_active,
                nr_deactivated,
                priority,
                file,
            } => self.lru_shrink_active(
                who,
                ts,
                nid,
                nr_taken,
                nr_active,
                nr_deactivated,
                priority,
                file,
            ),
        }
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
