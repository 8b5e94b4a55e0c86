//! A table of fixed-width integer rows that lives on disk once it outgrows a small buffer.
//!
//! The time series is sampled at a fixed simulated interval, so its size grows with the
//! simulated duration: a 10-day run sampled every second is 864,000 rows of ~40 values, and
//! holding that (and its Python copies) in memory took gigabytes. Rows are appended to an
//! in-memory tail of at most [`TAIL_ROWS`] rows; a full tail is written to an anonymous temporary
//! file (created in the system's temporary directory and unlinked at once, so nothing is left
//! behind however the process ends). Memory stays bounded whatever the duration; readers take
//! the rows back in ranges.
//!
//! If the temporary file cannot be created or written (a full or read-only temp directory), the
//! rows stay in memory instead: the run is still correct, only unbounded, and
//! [`RowSpool::spill_error`] says why.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Rows kept in memory before they are written out (a few hundred KiB at ~40 columns).
pub const TAIL_ROWS: usize = 1024;

/// Append-only rows of `width` signed 64-bit values.
#[derive(Clone)]
pub struct RowSpool {
    width: usize,
    /// Rows already in `file`, in order, little-endian, row-major.
    spilled: u64,
    file: Option<Arc<File>>,
    /// Rows not yet written out, row-major.
    tail: Vec<i64>,
    spill_error: Option<String>,
}

impl std::fmt::Debug for RowSpool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowSpool")
            .field("width", &self.width)
            .field("rows", &self.len())
            .field("on_disk", &self.spilled)
            .finish()
    }
}

/// An unlinked, read-write temporary file.
fn anonymous_file() -> std::io::Result<File> {
    static SERIAL: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    loop {
        let n = SERIAL.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(
            ".reclaimlab-rows-{}-{n}-{nanos}",
            std::process::id()
        ));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                // The open descriptor keeps the data; the name is not needed.
                std::fs::remove_file(&path)?;
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

impl RowSpool {
    pub fn new(width: usize) -> RowSpool {
        RowSpool {
            width,
            spilled: 0,
            file: None,
            tail: Vec::with_capacity(width * TAIL_ROWS),
            spill_error: None,
        }
    }

    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows appended so far.
    pub fn len(&self) -> usize {
        self.spilled as usize + self.tail.len() / self.width.max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rows held in memory right now (the bound this type exists for).
    pub fn rows_in_memory(&self) -> usize {
        self.tail.len() / self.width.max(1)
    }

    /// Why rows could not be written out, if they could not (they are then all in memory).
    pub fn spill_error(&self) -> Option<&str> {
        self.spill_error.as_deref()
    }

    /// Append one row (`row.len()` must be the width).
    pub fn push(&mut self, row: &[i64]) {
        debug_assert_eq!(row.len(), self.width);
        self.tail.extend_from_slice(row);
        if self.spill_error.is_none() && self.tail.len() >= self.width * TAIL_ROWS {
            if let Err(e) = self.spill() {
                self.spill_error = Some(e.to_string());
            }
        }
    }

    fn spill(&mut self) -> std::io::Result<()> {
        let file = match &self.file {
            Some(f) => f.clone(),
            None => {
                let f = Arc::new(anonymous_file()?);
                self.file = Some(f.clone());
                f
            }
        };
        let bytes: Vec<u8> = self.tail.iter().flat_map(|v| v.to_le_bytes()).collect();
        let at = self.spilled * self.width as u64 * 8;
        file.write_all_at(&bytes, at)?;
        (&*file).flush()?;
        self.spilled += (self.tail.len() / self.width) as u64;
        self.tail.clear();
        Ok(())
    }

    /// The last row appended.
    pub fn last(&self) -> Option<Vec<i64>> {
        let n = self.len();
        (n > 0).then(|| self.rows(n - 1, 1))
    }

    /// Rows `start..start + count` (clipped to the rows there are), row-major.
    pub fn rows(&self, start: usize, count: usize) -> Vec<i64> {
        let end = (start + count).min(self.len());
        let mut out = Vec::with_capacity(end.saturating_sub(start) * self.width);
        if start >= end {
            return out;
        }
        let spilled = self.spilled as usize;
        if start < spilled {
            let upto = end.min(spilled);
            let mut bytes = vec![0u8; (upto - start) * self.width * 8];
            let file = self.file.as_ref().expect("spilled rows have a file");
            // A read error here means the temporary file vanished under us: nothing sensible
            // can be returned, and the rows cannot be recomputed.
            file.read_exact_at(&mut bytes, (start * self.width * 8) as u64)
                .unwrap_or_else(|e| panic!("cannot read back the spooled time series: {e}"));
            out.extend(
                bytes
                    .chunks_exact(8)
                    .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes"))),
            );
        }
        if end > spilled {
            let from = start.max(spilled) - spilled;
            let to = end - spilled;
            out.extend_from_slice(&self.tail[from * self.width..to * self.width]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_back_in_order_across_the_spill_boundary() {
        let mut s = RowSpool::new(3);
        let n = TAIL_ROWS * 3 + 17;
        for i in 0..n as i64 {
            s.push(&[i, -i, i * 1_000_000_007]);
        }
        assert_eq!(s.len(), n);
        assert!(s.spill_error().is_none());
        assert!(s.rows_in_memory() < TAIL_ROWS, "{}", s.rows_in_memory());
        let all = s.rows(0, n);
        assert_eq!(all.len(), n * 3);
        for i in 0..n {
            let v = i as i64;
            assert_eq!(&all[i * 3..i * 3 + 3], &[v, -v, v * 1_000_000_007]);
        }
        // A range straddling the file and the tail, and one past the end.
        let mid = s.rows(TAIL_ROWS * 3 - 2, 5);
        assert_eq!(mid[0], (TAIL_ROWS * 3 - 2) as i64);
        assert_eq!(mid.len(), 15);
        assert_eq!(
            s.rows(n - 1, 10),
            vec![
                (n - 1) as i64,
                -((n - 1) as i64),
                (n as i64 - 1) * 1_000_000_007
            ]
        );
        assert_eq!(s.last(), Some(s.rows(n - 1, 1)));
        assert!(s.rows(n, 1).is_empty());
    }

    #[test]
    fn memory_stays_bounded_for_a_long_series() {
        let mut s = RowSpool::new(40);
        for i in 0..200_000i64 {
            s.push(&[i; 40]);
        }
        assert!(s.rows_in_memory() <= TAIL_ROWS);
        assert_eq!(s.rows(123_456, 1), vec![123_456; 40]);
    }
}
