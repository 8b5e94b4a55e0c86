//! Page-access traces: readers for libCacheSim's `oracleGeneral` binary format and a plain CSV,
//! either of them optionally zstd-compressed.
//!
//! Formats:
//! - **oracleGeneral** (libCacheSim): a headerless sequence of 24-byte little-endian records
//!   `{ clock_time: u32, obj_id: u64, obj_size: u32, next_access_vtime: i64 }`. Records whose
//!   `obj_size` is 0 are skipped, as libCacheSim's reader does by default
//!   (`ignore_size_zero_req`); they still count in record numbers. The format says nothing about
//!   reads, writes or the kind of memory: the consumer decides.
//! - **CSV**: one access per line, `time_ns,object,offset,kind`. `object` is an unsigned integer
//!   id, or any other text (hashed to a 64-bit id with FNV-1a); `offset` is a byte offset in the
//!   object; `kind` is `anon_read`, `anon_write`, `file_read` or `file_write` (`-` may stand for
//!   `_`). An optional header line with exactly those four names, blank lines and lines starting
//!   with `#` are allowed.
//! - **zstd**: a file whose name ends in `.zst` (or given as zstd explicitly) is decompressed on
//!   the fly with `ruzstd`, a pure-Rust decoder: no C library or compiler is needed to build
//!   reclaimlab, and traces are only ever read. Multi-frame files (concatenated `.zst`) and
//!   skippable frames are handled; frame checksums are verified.
//!
//! Readers stream: they hold one buffer (1 MiB), never the trace. Errors name the file, the
//! 1-based record number and the byte offset (the *decompressed* offset for zstd input; the line
//! number too for CSV), and never panic on bad input.

pub mod idmap;
mod reader;
mod zstd;

use std::fmt;
use std::path::Path;

pub use reader::TraceReader;

/// Bytes in one oracleGeneral record.
pub const ORACLE_RECORD_BYTES: usize = 24;

/// The zstd frame magic number, as the first four bytes of a file.
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// libCacheSim's oracleGeneral binary records.
    Oracle,
    /// `time_ns,object,offset,kind` text.
    Csv,
}

impl TraceFormat {
    pub const NAMES: &'static [&'static str] = &["oracle", "csv"];
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Oracle => "oracle",
            TraceFormat::Csv => "csv",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "oracle" => Some(TraceFormat::Oracle),
            "csv" => Some(TraceFormat::Csv),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Zstd,
}

impl Compression {
    pub const NAMES: &'static [&'static str] = &["none", "zstd"];
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Zstd => "zstd",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "none" => Some(Compression::None),
            "zstd" => Some(Compression::Zstd),
            _ => None,
        }
    }
}

/// What a file name says about a trace: `.zst`/`.zstd` means zstd; under that, a name ending in
/// `.csv` is CSV, and one ending in `.bin` or `.oracle` or containing `oracleGeneral` is
/// oracleGeneral. The format is `None` when the name does not tell.
pub fn detect(path: &Path) -> (Option<TraceFormat>, Compression) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let (inner, compression) = match name
        .strip_suffix(".zst")
        .or_else(|| name.strip_suffix(".zstd"))
    {
        Some(inner) => (inner.to_string(), Compression::Zstd),
        None => (name, Compression::None),
    };
    let format = if inner.ends_with(".csv") {
        Some(TraceFormat::Csv)
    } else if inner.ends_with(".bin")
        || inner.ends_with(".oracle")
        || inner.contains("oraclegeneral")
    {
        Some(TraceFormat::Oracle)
    } else {
        None
    };
    (format, compression)
}

/// The kind of one CSV access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    AnonRead,
    AnonWrite,
    FileRead,
    FileWrite,
}

impl AccessKind {
    pub const NAMES: &'static [&'static str] =
        &["anon_read", "anon_write", "file_read", "file_write"];

    #[inline]
    pub fn is_file(self) -> bool {
        matches!(self, AccessKind::FileRead | AccessKind::FileWrite)
    }
    #[inline]
    pub fn is_write(self) -> bool {
        matches!(self, AccessKind::AnonWrite | AccessKind::FileWrite)
    }
    /// `anon_read` etc.; a `-` may stand for the `_`.
    pub fn parse(s: &[u8]) -> Option<Self> {
        let (mem, op) = match s.len() {
            9 | 10 if s[4] == b'_' || s[4] == b'-' => (&s[..4], &s[5..]),
            _ => return None,
        };
        let file = match mem {
            b"anon" => false,
            b"file" => true,
            _ => return None,
        };
        let write = match op {
            b"read" => false,
            b"write" => true,
            _ => return None,
        };
        Some(match (file, write) {
            (false, false) => AccessKind::AnonRead,
            (false, true) => AccessKind::AnonWrite,
            (true, false) => AccessKind::FileRead,
            (true, true) => AccessKind::FileWrite,
        })
    }
}

/// One trace record, whatever the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Timestamp in the trace's own unit (oracleGeneral: usually seconds; CSV: nanoseconds).
    pub time: u64,
    pub object: u64,
    /// Byte offset inside the object (CSV); 0 for oracleGeneral.
    pub offset: u64,
    /// Object size in bytes (oracleGeneral, never 0: such records are skipped); 0 for CSV.
    pub size: u32,
    /// The access kind (CSV); `None` for oracleGeneral, which does not say.
    pub kind: Option<AccessKind>,
}

/// A trace that cannot be read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// The file, as given.
    pub path: String,
    /// 1-based number of the record the error is about (counting every record in the file,
    /// skipped ones included); `None` when it is about the file as a whole.
    pub record: Option<u64>,
    /// 1-based line (CSV only).
    pub line: Option<u64>,
    /// Offset of the record's first byte in the (decompressed) stream.
    pub byte_offset: Option<u64>,
    /// True when `byte_offset` counts decompressed bytes.
    pub decompressed: bool,
    pub message: String,
}

impl TraceError {
    /// An error about the file as a whole.
    pub fn file(path: &str, message: impl Into<String>) -> Self {
        TraceError {
            path: path.to_string(),
            record: None,
            line: None,
            byte_offset: None,
            decompressed: false,
            message: message.into(),
        }
    }
}

impl fmt::Display for TraceError {
    /// `PATH: record N (byte offset B): MESSAGE` (or `(line L)` for CSV, or just `PATH: MESSAGE`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path)?;
        if let Some(r) = self.record {
            write!(f, "record {r}")?;
            match (self.line, self.byte_offset) {
                (Some(l), _) => write!(f, " (line {l})")?,
                (None, Some(b)) if self.decompressed => {
                    write!(f, " (decompressed byte offset {b})")?
                }
                (None, Some(b)) => write!(f, " (byte offset {b})")?,
                (None, None) => {}
            }
            f.write_str(": ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for TraceError {}

/// FNV-1a over bytes: the id of a CSV object written as text. Stable across platforms.
pub fn text_object_id(s: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in s {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Encode one oracleGeneral record (for tests and tools that write traces).
pub fn oracle_record(time: u32, object: u64, size: u32, next_access: i64) -> [u8; 24] {
    let mut r = [0u8; 24];
    r[0..4].copy_from_slice(&time.to_le_bytes());
    r[4..12].copy_from_slice(&object.to_le_bytes());
    r[12..16].copy_from_slice(&size.to_le_bytes());
    r[16..24].copy_from_slice(&next_access.to_le_bytes());
    r
}

#[cfg(test)]
mod tests;
