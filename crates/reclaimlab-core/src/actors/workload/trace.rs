//! Trace replay: the state of a `[workload.trace]` thread.
//!
//! Object ids become pages in two steps. [`TraceReplay::scan`] reads the whole trace once, at
//! the start of the run: it gives every distinct object a dense index (in order of first
//! appearance) and records whether it is anonymous or file memory and how many pages it needs
//! (oracleGeneral: `ceil(size / 4 KiB)` at its largest, or 1 with `object_size = "ignore"`;
//! CSV: the page of its largest offset, plus one). Objects are then laid out back to back, the
//! anonymous ones in one anonymous region of the process and the file ones in a file region
//! (each object a file of its own: read-ahead stops at its end). The replay streams the file
//! again, once per pass, looking each object up in the id table.
//!
//! Memory: the id table ([`IdMap`], 16-byte entries at most half full) plus 8 bytes of placement
//! per distinct object, about 40–70 bytes per object; records are never held.

use std::path::Path;

use super::spec::{ObjectSize, TraceKind, TraceSpec, TraceTime};
use crate::engine::Rng;
use crate::machine::PAGE_SIZE;
use crate::trace::idmap::IdMap;
use crate::trace::{Record, TraceError, TraceFormat, TraceReader};

/// High bit of `Place::pages`: the object is file memory.
const FILE_BIT: u32 = 0x8000_0000;
/// Most pages one object may span (and one region may hold): vpages are 31-bit.
pub const MAX_TRACE_PAGES: u64 = (1 << 31) - 1;

/// Where an object lives: its first vpage (an offset in its region until the regions exist)
/// and its page count, with [`FILE_BIT`] for file objects.
#[derive(Debug, Clone, Copy)]
struct Place {
    base: u32,
    pages: u32,
}

/// The page access the thread is working through: pages `vp..end` of one record.
#[derive(Debug, Clone, Copy)]
pub struct Current {
    pub vp: u32,
    pub end: u32,
    /// End of the object's pages (bounds read-ahead for file objects).
    pub object_end: u32,
    pub file: bool,
    pub write: bool,
    /// The record's timestamp, in trace units.
    pub time: u64,
}

#[derive(Debug)]
pub struct TraceReplay {
    spec: TraceSpec,
    ids: IdMap,
    places: Vec<Place>,
    /// Pages of the anonymous and of the file region.
    pub anon_pages: u64,
    pub file_pages: u64,
    /// Requests in one pass (records not skipped, up to `max_records`).
    pub records_per_pass: u64,
    reader: Option<TraceReader>,
    /// Records taken in the current pass.
    taken: u64,
    /// (first timestamp of the pass, simulated time it maps to), once the pass has started.
    time_base: Option<(u64, u64)>,
    /// The record being replayed.
    pub cur: Option<Current>,
    /// Records replayed, over all passes.
    pub records_replayed: u64,
}

/// Records read between two calls of the scan's poll (a few milliseconds of reading).
pub const SCAN_POLL_RECORDS: u64 = 1 << 16;

impl TraceReplay {
    fn open(spec: &TraceSpec) -> Result<TraceReader, TraceError> {
        TraceReader::open(Path::new(&spec.path), spec.format, spec.compression)
    }

    /// Is this record's object file memory?
    #[inline]
    fn is_file(spec: &TraceSpec, r: &Record) -> bool {
        match r.kind {
            Some(k) => k.is_file(),
            None => spec.kind == TraceKind::File,
        }
    }

    /// Pages this record touches, from the object's first page.
    #[inline]
    fn pages_of(spec: &TraceSpec, r: &Record) -> u64 {
        match spec.format {
            TraceFormat::Csv => r.offset / PAGE_SIZE + 1,
            TraceFormat::Oracle => match spec.object_size {
                ObjectSize::Pages => (r.size as u64).div_ceil(PAGE_SIZE).max(1),
                ObjectSize::Ignore => 1,
            },
        }
    }

    /// The first pass: validate the whole trace and place its objects.
    pub fn scan(spec: &TraceSpec) -> Result<TraceReplay, TraceError> {
        Self::scan_polled(spec, &mut || true)
            .map(|r| r.expect("a scan whose poll always says go on is never stopped"))
    }

    /// [`scan`](Self::scan), calling `poll` every [`SCAN_POLL_RECORDS`] records (a large trace
    /// takes seconds to read); `Ok(None)` when `poll` returned false (Ctrl-C).
    pub fn scan_polled(
        spec: &TraceSpec,
        poll: &mut dyn FnMut() -> bool,
    ) -> Result<Option<TraceReplay>, TraceError> {
        let mut reader = Self::open(spec)?;
        let mut ids = IdMap::with_capacity(1024);
        let mut places: Vec<Place> = Vec::new();
        let mut n = 0u64;
        let mut next_poll = SCAN_POLL_RECORDS;
        while spec.max_records.is_none_or(|m| n < m) {
            if reader.records() >= next_poll {
                next_poll = reader.records() + SCAN_POLL_RECORDS;
                if !poll() {
                    return Ok(None);
                }
            }
            let Some(r) = reader.next_record()? else {
                break;
            };
            n += 1;
            let file = Self::is_file(spec, &r);
            let pages = Self::pages_of(spec, &r);
            if pages > MAX_TRACE_PAGES {
                return Err(reader.error_at_last(format!(
                    "object {} would span {pages} pages, more than the simulator's {MAX_TRACE_PAGES}",
                    r.object
                )));
            }
            let pages = pages as u32;
            match ids.find(r.object) {
                Ok(i) => {
                    let p = &mut places[i as usize];
                    let was_file = p.pages & FILE_BIT != 0;
                    if was_file != file {
                        let kind = |f: bool| if f { "a file" } else { "anonymous memory" };
                        return Err(reader.error_at_last(format!(
                            "object {} is {} here but was {} earlier in the trace; \
                             an object is either anonymous memory or a file",
                            r.object,
                            kind(file),
                            kind(was_file)
                        )));
                    }
                    if pages > p.pages & !FILE_BIT {
                        p.pages = pages | (p.pages & FILE_BIT);
                    }
                }
                Err(slot) => {
                    if places.len() >= (u32::MAX - 1) as usize {
                        return Err(reader.error_at_last("more than 2^32 - 2 distinct objects"));
                    }
                    ids.insert_at(slot, r.object, places.len() as u32);
                    places.push(Place {
                        base: 0,
                        pages: pages | if file { FILE_BIT } else { 0 },
                    });
                }
            }
        }
        if n == 0 {
            let what = if reader.skipped() > 0 {
                format!(
                    "the trace has no records to replay (all {} have size 0, which libCacheSim skips too)",
                    reader.skipped()
                )
            } else {
                "the trace has no records".to_string()
            };
            return Err(TraceError::file(reader.path(), what));
        }
        let (mut anon, mut file) = (0u64, 0u64);
        for p in &mut places {
            let pages = (p.pages & !FILE_BIT) as u64;
            let next = if p.pages & FILE_BIT != 0 {
                &mut file
            } else {
                &mut anon
            };
            p.base = (*next).min(u32::MAX as u64) as u32;
            *next += pages;
        }
        for (total, what) in [(anon, "anonymous"), (file, "file")] {
            if total > MAX_TRACE_PAGES {
                return Err(TraceError::file(
                    reader.path(),
                    format!(
                        "the trace's {what} objects need {total} pages, more than the simulator's \
                         {MAX_TRACE_PAGES}"
                    ),
                ));
            }
        }
        Ok(Some(TraceReplay {
            spec: spec.clone(),
            ids,
            places,
            anon_pages: anon,
            file_pages: file,
            records_per_pass: n,
            reader: None,
            taken: 0,
            time_base: None,
            cur: None,
            records_replayed: 0,
        }))
    }

    /// Distinct objects in the trace.
    pub fn objects(&self) -> usize {
        self.places.len()
    }

    /// Turn region offsets into vpages, once the regions exist.
    pub fn place(&mut self, anon_base: u32, file_base: u32) {
        for p in &mut self.places {
            p.base += if p.pages & FILE_BIT != 0 {
                file_base
            } else {
                anon_base
            };
        }
    }

    /// Load the next record into `cur`. `Ok(false)` at the end of the pass (the next call
    /// starts the next pass from the beginning of the file).
    pub fn fetch(&mut self, rng: &mut Rng) -> Result<bool, TraceError> {
        if self.spec.max_records.is_some_and(|m| self.taken >= m) {
            self.end_pass();
            return Ok(false);
        }
        if self.reader.is_none() {
            self.reader = Some(Self::open(&self.spec)?);
        }
        let reader = self.reader.as_mut().expect("opened above");
        let Some(r) = reader.next_record()? else {
            self.end_pass();
            return Ok(false);
        };
        let changed = |reader: &TraceReader| {
            reader.error_at_last(format!(
                "object {} does not match the first reading of the trace; \
                 was the file changed during the run?",
                r.object
            ))
        };
        let Some(i) = self.ids.get(r.object) else {
            return Err(changed(reader));
        };
        let p = self.places[i as usize];
        let file = Self::is_file(&self.spec, &r);
        let pages = Self::pages_of(&self.spec, &r);
        let object_pages = (p.pages & !FILE_BIT) as u64;
        if file != (p.pages & FILE_BIT != 0) || pages > object_pages {
            return Err(changed(reader));
        }
        let write = match r.kind {
            Some(k) => k.is_write(),
            None => {
                let wf = self.spec.write_fraction;
                wf >= 1.0 || (wf > 0.0 && rng.next_f64() < wf)
            }
        };
        self.taken += 1;
        self.records_replayed += 1;
        self.cur = Some(Current {
            vp: p.base,
            end: p.base + pages as u32,
            object_end: p.base + object_pages as u32,
            file,
            write,
            time: r.time,
        });
        Ok(true)
    }

    fn end_pass(&mut self) {
        self.reader = None;
        self.taken = 0;
        self.time_base = None;
    }

    /// When the current record arrives, for `time = "trace"`: the first record of a pass
    /// arrives at `now`, later ones their timestamp difference later. `None` for `"ignore"`.
    #[inline]
    pub fn arrival(&mut self, now: u64) -> Option<u64> {
        let TraceTime::Trace { unit_ns } = self.spec.time else {
            return None;
        };
        let t = self.cur.as_ref()?.time;
        let (t0, sim0) = *self.time_base.get_or_insert((t, now));
        let delta = (t.saturating_sub(t0) as u128) * unit_ns as u128;
        Some(u64::try_from(sim0 as u128 + delta).unwrap_or(u64::MAX))
    }

    /// The current record's page was accessed: move to the next one.
    #[inline]
    pub fn advance(&mut self) {
        if let Some(c) = &mut self.cur {
            c.vp += 1;
            if c.vp >= c.end {
                self.cur = None;
            }
        }
    }
}
