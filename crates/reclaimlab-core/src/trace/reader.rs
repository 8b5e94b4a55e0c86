//! The streaming trace reader.

use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::Path;

use super::zstd::ZstdReader;
use super::{
    text_object_id, AccessKind, Compression, Record, TraceError, TraceFormat, ORACLE_RECORD_BYTES,
    ZSTD_MAGIC,
};

/// Size of the read buffer; also the longest CSV line accepted.
const BUF_BYTES: usize = 1 << 20;
const CSV_HEADER: [&str; 4] = ["time_ns", "object", "offset", "kind"];

/// Reads one trace file record by record, holding only a 1 MiB buffer.
pub struct TraceReader {
    path: String,
    format: TraceFormat,
    src: Box<dyn Read + Send>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    /// Offset in the (decompressed) stream of `buf[start]`.
    offset: u64,
    /// Records consumed, skipped ones included.
    records: u64,
    /// oracleGeneral records skipped because their size is 0.
    skipped: u64,
    /// CSV lines consumed.
    line: u64,
    decompressed: bool,
    /// CSV: no record or header seen yet, so the next line may be the header.
    header_allowed: bool,
    /// Where the record last returned by `next_record` starts: (byte offset, CSV line).
    last_at: (u64, Option<u64>),
    /// A read error met while filling the buffer, reported once the records read before it
    /// are consumed, so that it names the place where the good data ends.
    pending: Option<std::io::Error>,
}

impl std::fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceReader")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("records", &self.records)
            .finish_non_exhaustive()
    }
}

impl TraceReader {
    /// Open a trace. Nothing but the first few bytes is read until records are asked for.
    pub fn open(
        path: &Path,
        format: TraceFormat,
        compression: Compression,
    ) -> Result<TraceReader, TraceError> {
        let shown = path.display().to_string();
        // Looked at before opening: opening a FIFO blocks until a writer comes.
        let meta = std::fs::metadata(path).map_err(|e| {
            TraceError::file(&shown, format!("cannot open the trace: {}", io_reason(&e)))
        })?;
        if meta.is_dir() {
            return Err(TraceError::file(&shown, "is a directory, not a trace file"));
        }
        // A device, pipe or socket may never end (/dev/zero is an endless run of size-0
        // records): reading is bounded only for a regular file.
        if !meta.is_file() {
            return Err(TraceError::file(
                &shown,
                "is not a regular file (a device, pipe or socket); give a trace file",
            ));
        }
        let file = File::open(path).map_err(|e| {
            TraceError::file(&shown, format!("cannot open the trace: {}", io_reason(&e)))
        })?;
        TraceReader::from_read(&shown, Box::new(file), format, compression)
    }

    /// A trace read from any byte stream (`name` is what errors call it): what [`open`]
    /// does after opening the file, and the way the fuzz targets feed the reader.
    ///
    /// [`open`]: TraceReader::open
    pub fn from_read(
        name: &str,
        src: Box<dyn Read + Send>,
        format: TraceFormat,
        compression: Compression,
    ) -> Result<TraceReader, TraceError> {
        let shown = name.to_string();
        let mut file = BufReader::with_capacity(1 << 16, src);
        let src: Box<dyn Read + Send> = match compression {
            Compression::Zstd => Box::new(ZstdReader::new(file)),
            Compression::None => {
                let head = file
                    .fill_buf()
                    .map_err(|e| TraceError::file(&shown, format!("cannot read the trace: {e}")))?;
                if head.starts_with(&ZSTD_MAGIC) {
                    return Err(TraceError::file(
                        &shown,
                        "the file starts with the zstd magic number but is being read uncompressed; \
                         name it *.zst or say compression = \"zstd\" (--compression zstd)",
                    ));
                }
                Box::new(file)
            }
        };
        Ok(TraceReader {
            path: shown,
            format,
            src,
            buf: vec![0; BUF_BYTES],
            start: 0,
            end: 0,
            eof: false,
            offset: 0,
            records: 0,
            skipped: 0,
            line: 0,
            decompressed: compression == Compression::Zstd,
            header_allowed: true,
            last_at: (0, None),
            pending: None,
        })
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// Records read so far, skipped ones included.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// oracleGeneral records skipped so far because their object size is 0.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// An error about the record `next_record` returned last (for consumers that find
    /// something wrong with a well-formed record).
    pub fn error_at_last(&self, message: impl Into<String>) -> TraceError {
        TraceError {
            path: self.path.clone(),
            record: Some(self.records),
            line: self.last_at.1,
            byte_offset: Some(self.last_at.0),
            decompressed: self.decompressed,
            message: message.into(),
        }
    }

    /// The next record, `Ok(None)` at the end of the trace.
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        match self.format {
            TraceFormat::Oracle => self.next_oracle(),
            TraceFormat::Csv => self.next_csv(),
        }
    }

    /// Call `f` with the object id of every remaining (not skipped) record; returns how many.
    /// The fast path of `reclaimlab lru`: oracleGeneral records are decoded straight from the
    /// buffer, with no per-record branching beyond the size-0 test.
    pub fn for_each_object(&mut self, mut f: impl FnMut(u64)) -> Result<u64, TraceError> {
        let mut n = 0u64;
        match self.format {
            TraceFormat::Oracle => loop {
                let whole = (self.end - self.start) / ORACLE_RECORD_BYTES * ORACLE_RECORD_BYTES;
                if whole == 0 {
                    if !self.eof {
                        self.fill()?;
                        continue;
                    }
                    self.pending_error()?;
                    if self.end == self.start {
                        return Ok(n);
                    }
                    return Err(self.truncated());
                }
                let mut skipped = 0u64;
                let mut used = 0u64;
                for r in self.buf[self.start..self.start + whole].chunks_exact(ORACLE_RECORD_BYTES)
                {
                    let size = u32::from_le_bytes([r[12], r[13], r[14], r[15]]);
                    if size == 0 {
                        skipped += 1;
                        continue;
                    }
                    used += 1;
                    f(u64::from_le_bytes([
                        r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11],
                    ]));
                }
                n += used;
                self.skipped += skipped;
                self.records += (whole / ORACLE_RECORD_BYTES) as u64;
                self.start += whole;
                self.offset += whole as u64;
            },
            TraceFormat::Csv => {
                while let Some(r) = self.next_csv()? {
                    n += 1;
                    f(r.object);
                }
                Ok(n)
            }
        }
    }

    /// Move the unread bytes to the front and read until the buffer is full or the input ends.
    fn fill(&mut self) -> Result<(), TraceError> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        while self.end < self.buf.len() {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    // The error is about the data after the bytes already buffered: those are
                    // consumed first, and the error reported where they end.
                    self.pending = Some(e);
                    self.eof = true;
                    break;
                }
            }
        }
        Ok(())
    }

    /// At the end of the buffered data: the read error that ended it, if one did.
    fn pending_error(&mut self) -> Result<(), TraceError> {
        match self.pending.take() {
            Some(e) => {
                let mut err = self.error_here(format!("cannot read the trace: {e}"));
                if self.decompressed {
                    // The message says where in the compressed file; the decompressed position
                    // is only where the decoder's output stopped, which can be far before.
                    err.record = None;
                    err.byte_offset = None;
                } else if self.format == TraceFormat::Csv {
                    err.line = Some(self.line + 1);
                }
                Err(err)
            }
            None => Ok(()),
        }
    }

    /// An error about the next record.
    fn error_here(&self, message: String) -> TraceError {
        TraceError {
            path: self.path.clone(),
            record: Some(self.records + 1),
            line: None,
            byte_offset: Some(self.offset),
            decompressed: self.decompressed,
            message,
        }
    }

    fn truncated(&self) -> TraceError {
        let have = self.end - self.start;
        let what = if self.decompressed {
            "decompressed stream"
        } else {
            "file"
        };
        self.error_here(format!(
            "truncated record: the {what} ends {have} bytes into this {ORACLE_RECORD_BYTES}-byte \
             oracleGeneral record (its length, {}, is not a multiple of {ORACLE_RECORD_BYTES})",
            self.offset + have as u64
        ))
    }

    fn next_oracle(&mut self) -> Result<Option<Record>, TraceError> {
        loop {
            if self.end - self.start < ORACLE_RECORD_BYTES {
                if !self.eof {
                    self.fill()?;
                    continue;
                }
                self.pending_error()?;
                if self.end == self.start {
                    return Ok(None);
                }
                return Err(self.truncated());
            }
            let r = &self.buf[self.start..self.start + ORACLE_RECORD_BYTES];
            let time = u32::from_le_bytes([r[0], r[1], r[2], r[3]]) as u64;
            let object = u64::from_le_bytes([r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]]);
            let size = u32::from_le_bytes([r[12], r[13], r[14], r[15]]);
            self.last_at = (self.offset, None);
            self.start += ORACLE_RECORD_BYTES;
            self.offset += ORACLE_RECORD_BYTES as u64;
            self.records += 1;
            if size == 0 {
                self.skipped += 1;
                continue;
            }
            return Ok(Some(Record {
                time,
                object,
                offset: 0,
                size,
                kind: None,
            }));
        }
    }

    fn next_csv(&mut self) -> Result<Option<Record>, TraceError> {
        loop {
            let avail = &self.buf[self.start..self.end];
            let (len, consumed) = match avail.iter().position(|&b| b == b'\n') {
                Some(i) => (i, i + 1),
                None if !self.eof => {
                    if self.start == 0 && self.end == self.buf.len() {
                        return Err(TraceError {
                            line: Some(self.line + 1),
                            ..self.error_here(format!(
                                "line longer than {} bytes (is this really a CSV trace?)",
                                BUF_BYTES
                            ))
                        });
                    }
                    self.fill()?;
                    continue;
                }
                None if avail.is_empty() || self.pending.is_some() => {
                    // A last line cut short by a read error is not a record.
                    self.pending_error()?;
                    return Ok(None);
                }
                None => (avail.len(), avail.len()),
            };
            let at = self.offset;
            let s = self.start;
            self.start += consumed;
            self.offset += consumed as u64;
            self.line += 1;
            let text = trim(&self.buf[s..s + len]);
            if text.is_empty() || text[0] == b'#' {
                continue;
            }
            if std::mem::take(&mut self.header_allowed) && !text[0].is_ascii_digit() {
                if is_header(text) {
                    continue;
                }
                return Err(TraceError {
                    record: None,
                    line: Some(self.line),
                    byte_offset: Some(at),
                    ..self.error_here(format!(
                        "line {}: \"{}\" is neither a record nor the header `{}`",
                        self.line,
                        show(text),
                        CSV_HEADER.join(",")
                    ))
                });
            }
            self.records += 1;
            self.last_at = (at, Some(self.line));
            let parsed = parse_csv_record(text);
            return match parsed {
                Ok(r) => Ok(Some(r)),
                Err(message) => Err(TraceError {
                    path: self.path.clone(),
                    record: Some(self.records),
                    line: Some(self.line),
                    byte_offset: Some(at),
                    decompressed: self.decompressed,
                    message,
                }),
            };
        }
    }
}

/// An I/O error as the user needs it: the reason, and the fix for the common ones, without
/// Rust's "(os error N)".
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::NotFound => "no such file; check the path".to_string(),
        ErrorKind::PermissionDenied => "permission denied; make the file readable".to_string(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(i) => text[..i].to_string(),
                None => text,
            }
        }
    }
}

fn trim(s: &[u8]) -> &[u8] {
    let a = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let b = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(a, |i| i + 1);
    &s[a..b.max(a)]
}

/// Up to 40 characters of `s`, for messages, with control characters, quotes and backslashes
/// escaped (`\u{0}`, `\t`, `\"`): a field of a binary file quoted in a message stays one
/// printable line, and the quotes around it say where it ends.
fn show(s: &[u8]) -> String {
    let text = String::from_utf8_lossy(s);
    let mut out = String::new();
    for c in text.chars().take(40) {
        if c.is_control() || c == '"' || c == '\\' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if text.chars().nth(40).is_some() {
        out.push_str("...");
    }
    out
}

fn is_header(line: &[u8]) -> bool {
    let fields: Vec<&[u8]> = line.split(|&b| b == b',').map(trim).collect();
    fields.len() == CSV_HEADER.len()
        && fields
            .iter()
            .zip(CSV_HEADER)
            .all(|(f, h)| f.eq_ignore_ascii_case(h.as_bytes()))
}

/// A decimal u64: `None` if empty, not all digits, or too large.
fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
    }
    Some(v)
}

fn parse_csv_record(line: &[u8]) -> Result<Record, String> {
    let mut fields = [&b""[..]; 4];
    let mut n = 0;
    for f in line.split(|&b| b == b',') {
        if n < 4 {
            fields[n] = trim(f);
        }
        n += 1;
    }
    if n != 4 {
        return Err(format!(
            "expected 4 comma-separated fields ({}), found {n}",
            CSV_HEADER.join(",")
        ));
    }
    let [t, o, off, k] = fields;
    let time = parse_u64(t).ok_or_else(|| {
        format!(
            "time_ns must be a non-negative integer (nanoseconds), found \"{}\"",
            show(t)
        )
    })?;
    let object = if o.is_empty() {
        return Err("the object field is empty".to_string());
    } else if o.iter().all(u8::is_ascii_digit) {
        parse_u64(o).ok_or_else(|| format!("object id {} does not fit in 64 bits", show(o)))?
    } else {
        text_object_id(o)
    };
    let offset = parse_u64(off).ok_or_else(|| {
        format!(
            "offset must be a non-negative integer (bytes into the object), found \"{}\"",
            show(off)
        )
    })?;
    let kind = AccessKind::parse(k).ok_or_else(|| {
        format!(
            "unknown kind \"{}\"; expected one of {}",
            show(k),
            AccessKind::NAMES.join(", ")
        )
    })?;
    Ok(Record {
        time,
        object,
        offset,
        size: 0,
        kind: Some(kind),
    })
}
