use std::path::{Path, PathBuf};

use super::*;

/// A fresh directory for one test (removed when the guard drops).
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let d =
            std::env::temp_dir().join(format!("reclaimlab-trace-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn oracle_bytes(recs: &[(u32, u64, u32)]) -> Vec<u8> {
    recs.iter()
        .flat_map(|&(t, o, s)| oracle_record(t, o, s, -1))
        .collect()
}

fn read_all(p: &Path, f: TraceFormat, c: Compression) -> Result<Vec<Record>, TraceError> {
    let mut r = TraceReader::open(p, f, c)?;
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok(out)
}

fn zstd(data: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
}

#[test]
fn oracle_records_and_zero_size_skipping() {
    let d = TempDir::new("oracle");
    let p = d.write(
        "t.oracleGeneral",
        &oracle_bytes(&[(5, 10, 4096), (6, u64::MAX, 0), (7, 12, 1)]),
    );
    let mut r = TraceReader::open(&p, TraceFormat::Oracle, Compression::None).unwrap();
    let a = r.next_record().unwrap().unwrap();
    assert_eq!(
        a,
        Record {
            time: 5,
            object: 10,
            offset: 0,
            size: 4096,
            kind: None
        }
    );
    let b = r.next_record().unwrap().unwrap();
    assert_eq!((b.time, b.object, b.size), (7, 12, 1));
    assert_eq!(r.next_record().unwrap(), None);
    assert_eq!((r.records(), r.skipped()), (3, 1));

    let mut r = TraceReader::open(&p, TraceFormat::Oracle, Compression::None).unwrap();
    let mut ids = Vec::new();
    assert_eq!(r.for_each_object(|id| ids.push(id)).unwrap(), 2);
    assert_eq!(ids, vec![10, 12]);
    assert_eq!(r.skipped(), 1);
}

#[test]
fn oracle_truncated_gives_record_number_and_offset() {
    let d = TempDir::new("trunc");
    let mut bytes = oracle_bytes(&[(1, 1, 1), (2, 2, 1), (3, 3, 1)]);
    bytes.extend_from_slice(&[7; 10]);
    let p = d.write("t.oracleGeneral", &bytes);
    let e = read_all(&p, TraceFormat::Oracle, Compression::None).unwrap_err();
    assert_eq!((e.record, e.byte_offset), (Some(4), Some(72)));
    assert!(e.message.contains("truncated record"), "{e}");
    assert!(e.message.contains("82"), "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "{}: record 4 (byte offset 72): truncated record: the file ends 10 bytes into this \
             24-byte oracleGeneral record (its length, 82, is not a multiple of 24)",
            p.display()
        )
    );
    // The fast path says the same.
    let mut r = TraceReader::open(&p, TraceFormat::Oracle, Compression::None).unwrap();
    let e2 = r.for_each_object(|_| {}).unwrap_err();
    assert_eq!(e2, e);
}

#[test]
fn large_traces_cross_buffer_boundaries() {
    let d = TempDir::new("large");
    // 100k records: 2.4 MB, so several buffer refills with records split across them.
    let recs: Vec<(u32, u64, u32)> = (0..100_000u64)
        .map(|i| (i as u32, i * 31 % 1000, 1 + (i % 3) as u32))
        .collect();
    let bytes = oracle_bytes(&recs);
    let p = d.write("big.oracleGeneral", &bytes);
    let got = read_all(&p, TraceFormat::Oracle, Compression::None).unwrap();
    assert_eq!(got.len(), recs.len());
    assert!(got
        .iter()
        .zip(&recs)
        .all(|(g, r)| (g.time as u32, g.object, g.size) == *r));
    let pz = d.write("big.oracleGeneral.zst", &zstd(&bytes));
    let gz = read_all(&pz, TraceFormat::Oracle, Compression::Zstd).unwrap();
    assert_eq!(gz, got);

    // CSV with lines split across refills.
    let mut text = String::from("time_ns,object,offset,kind\n");
    for i in 0..60_000u64 {
        text.push_str(&format!("{},{},{},file_read\n", i * 1000, i % 77, i * 4096));
    }
    let pc = d.write("big.csv", text.as_bytes());
    let gc = read_all(&pc, TraceFormat::Csv, Compression::None).unwrap();
    assert_eq!(gc.len(), 60_000);
    assert_eq!(gc[59_999].offset, 59_999 * 4096);
    assert_eq!(gc[59_999].object, 59_999 % 77);
}

#[test]
fn csv_records_header_comments_and_text_objects() {
    let d = TempDir::new("csv");
    let text = "# a comment\r\n\r\n TIME_NS , object,offset ,Kind\r\n\
                100,7,0,anon_read\n\
                200, 7 ,4096,anon-write\n\
                # another comment\n\
                300,/var/lib/db/file1,8192,file_read\n\
                400,18446744073709551615,0,file-write";
    let p = d.write("t.csv", text.as_bytes());
    let recs = read_all(&p, TraceFormat::Csv, Compression::None).unwrap();
    assert_eq!(recs.len(), 4);
    assert_eq!(
        recs[0],
        Record {
            time: 100,
            object: 7,
            offset: 0,
            size: 0,
            kind: Some(AccessKind::AnonRead)
        }
    );
    assert_eq!(recs[1].kind, Some(AccessKind::AnonWrite));
    assert_eq!(recs[1].offset, 4096);
    assert_eq!(recs[2].object, text_object_id(b"/var/lib/db/file1"));
    assert_eq!(recs[2].kind, Some(AccessKind::FileRead));
    assert_eq!(
        (recs[3].object, recs[3].kind),
        (u64::MAX, Some(AccessKind::FileWrite))
    );
    // No header at all is fine too.
    let p = d.write("n.csv", b"1,2,3,anon_read\n");
    assert_eq!(
        read_all(&p, TraceFormat::Csv, Compression::None)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn csv_errors_name_record_and_line() {
    let d = TempDir::new("csverr");
    let cases: &[(&str, u64, u64, &str)] = &[
        (
            "time_ns,object,offset,kind\n1,2,3,anon_read\n\n2,3,4\n",
            2,
            4,
            "expected 4 comma-separated fields",
        ),
        (
            "1,2,3,anon_read\n2,3,4,anon_peek\n",
            2,
            2,
            "unknown kind \"anon_peek\"",
        ),
        (
            "1,2,3,anon_read\n-5,3,4,anon_read\n",
            2,
            2,
            "time_ns must be",
        ),
        ("1,2,3,anon_read\n5,3,x,anon_read\n", 2, 2, "offset must be"),
        (
            "1,99999999999999999999,3,anon_read\n",
            1,
            1,
            "does not fit in 64 bits",
        ),
        ("1,,3,anon_read\n", 1, 1, "object field is empty"),
        ("1,2,3,anon_read,extra\n", 1, 1, "found 5"),
    ];
    for (i, (text, record, line, msg)) in cases.iter().enumerate() {
        let p = d.write(&format!("{i}.csv"), text.as_bytes());
        let e = read_all(&p, TraceFormat::Csv, Compression::None).unwrap_err();
        assert_eq!((e.record, e.line), (Some(*record), Some(*line)), "{e}");
        assert!(e.message.contains(msg), "{e}");
        assert!(
            e.to_string()
                .contains(&format!("record {record} (line {line}): ")),
            "{e}"
        );
    }
    // A field of binary junk is quoted as one printable line: control characters, quotes and
    // backslashes escaped (fuzzing, trace_csv: a NUL, DEL and " kind: " in the time field).
    let p = d.write(
        "bin.csv",
        b"0\x932\x80\x00\x00     kind:   \x7f\x00 \"a\\b\t,2,3,anon_read\n",
    );
    let e = read_all(&p, TraceFormat::Csv, Compression::None).unwrap_err();
    assert_eq!(
        e.message,
        "time_ns must be a non-negative integer (nanoseconds), found \"0\u{fffd}2\u{fffd}\\u{0}\\u{0}     \
         kind:   \\u{7f}\\u{0} \\\"a\\\\b\""
    );
    assert!(!e.to_string().chars().any(char::is_control), "{e}");
    let p = d.write("h.csv", b"time,obj,off,kind\n1,2,3,anon_read\n");
    let e = read_all(&p, TraceFormat::Csv, Compression::None).unwrap_err();
    assert!(e.message.contains("neither a record nor the header"), "{e}");
    assert_eq!(e.line, Some(1));
}

#[test]
fn zstd_multi_frame_and_skippable_frames() {
    let d = TempDir::new("zstd");
    let a = oracle_bytes(&[(1, 1, 1), (2, 2, 1)]);
    let b = oracle_bytes(&[(3, 3, 1)]);
    let mut bytes = zstd(&a);
    // A skippable frame between two data frames.
    bytes.extend_from_slice(&0x184D_2A50u32.to_le_bytes());
    bytes.extend_from_slice(&5u32.to_le_bytes());
    bytes.extend_from_slice(b"hello");
    bytes.extend_from_slice(&zstd(&b));
    let p = d.write("t.oracleGeneral.zst", &bytes);
    let recs = read_all(&p, TraceFormat::Oracle, Compression::Zstd).unwrap();
    let objects: Vec<u64> = recs.iter().map(|r| r.object).collect();
    assert_eq!(objects, vec![1, 2, 3]);
}

#[test]
fn damaged_zstd_is_an_error_never_a_panic() {
    let d = TempDir::new("zstdbad");
    let recs: Vec<(u32, u64, u32)> = (0..3000u64).map(|i| (i as u32, i * 7 % 501, 1)).collect();
    let raw = oracle_bytes(&recs);
    let good = zstd(&raw);
    // Every truncation point in the first 200 bytes, then a spread over the rest.
    let cuts: Vec<usize> = (0..200.min(good.len()))
        .chain((200..good.len()).step_by(97))
        .collect();
    for cut in cuts {
        let p = d.write("cut.oracleGeneral.zst", &good[..cut]);
        match read_all(&p, TraceFormat::Oracle, Compression::Zstd) {
            Ok(v) => assert!(
                cut == 0 && v.is_empty(),
                "cut {cut} read {} records",
                v.len()
            ),
            // Where the data ends: a record, or (the decoder's own error) the very byte of
            // the compressed file where it was cut; never the decoder's debug text.
            Err(e) => {
                let text = e.to_string();
                assert!(
                    e.record.is_some()
                        || cut == 0
                        || text.contains(&format!("at byte {cut} of the file")),
                    "cut {cut}: {e}"
                );
                assert!(!text.contains("Error {") && !text.contains("kind:"), "{e}");
            }
        }
    }
    // Flipped bytes: an error (bad block, or the checksum) or, at worst, different records; never
    // a panic.
    for at in (4..good.len()).step_by(13) {
        let mut bad = good.clone();
        bad[at] ^= 0x5a;
        let p = d.write("flip.oracleGeneral.zst", &bad);
        let _ = read_all(&p, TraceFormat::Oracle, Compression::Zstd);
    }
    // A frame header that asks for a 2 GiB window (window descriptor 0xa8: 2^31) is refused
    // before the decoder reserves it; 128 MiB (0x88: 2^27) is the most it takes. Each frame
    // holds one empty raw block.
    let frame = |window_descriptor: u8| {
        let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, window_descriptor];
        f.extend_from_slice(&[0x01, 0x00, 0x00]);
        f
    };
    let p = d.write("huge-window.oracleGeneral.zst", &frame(0xa8));
    let e = read_all(&p, TraceFormat::Oracle, Compression::Zstd).unwrap_err();
    assert!(
        e.message
            .contains("needs a 2048 MiB window, more than the 128 MiB")
            && e.message.contains("recompress the trace without --long"),
        "{e}"
    );
    let p = d.write("big-window.oracleGeneral.zst", &frame(0x88));
    assert!(read_all(&p, TraceFormat::Oracle, Compression::Zstd)
        .unwrap()
        .is_empty());
    // Not zstd at all.
    let p = d.write("plain.oracleGeneral.zst", &raw);
    let e = read_all(&p, TraceFormat::Oracle, Compression::Zstd).unwrap_err();
    // About the file, not a record: nothing was decompressed.
    assert_eq!(e.record, None, "{e}");
    assert!(
        e.message.contains("zstd: the file is not zstd-compressed"),
        "{e}"
    );
    assert!(!e.message.contains("kind:"), "{e}");
    // zstd read as plain.
    let p = d.write("z.oracleGeneral", &good);
    let e = read_all(&p, TraceFormat::Oracle, Compression::None).unwrap_err();
    assert!(e.message.contains("zstd magic number"), "{e}");
}

#[test]
fn missing_file_and_directory() {
    let d = TempDir::new("missing");
    let e =
        TraceReader::open(&d.0.join("nope.csv"), TraceFormat::Csv, Compression::None).unwrap_err();
    assert_eq!(e.record, None);
    assert!(
        e.to_string().contains("nope.csv: cannot open the trace"),
        "{e}"
    );
    let e = TraceReader::open(&d.0, TraceFormat::Csv, Compression::None).unwrap_err();
    assert!(e.message.contains("directory"), "{e}");
}

#[test]
fn detect_from_name() {
    let cases = [
        (
            "a.oracleGeneral",
            Some(TraceFormat::Oracle),
            Compression::None,
        ),
        (
            "a.oracleGeneral.zst",
            Some(TraceFormat::Oracle),
            Compression::Zstd,
        ),
        (
            "w82.oracleGeneral.sample10",
            Some(TraceFormat::Oracle),
            Compression::None,
        ),
        ("x.bin.zst", Some(TraceFormat::Oracle), Compression::Zstd),
        ("x.oracle", Some(TraceFormat::Oracle), Compression::None),
        ("x.CSV", Some(TraceFormat::Csv), Compression::None),
        ("x.csv.zstd", Some(TraceFormat::Csv), Compression::Zstd),
        ("x.dat", None, Compression::None),
        ("x.zst", None, Compression::Zstd),
    ];
    for (name, f, c) in cases {
        assert_eq!(detect(Path::new(name)), (f, c), "{name}");
    }
}

#[test]
fn access_kinds() {
    for (i, n) in AccessKind::NAMES.iter().enumerate() {
        let k = AccessKind::parse(n.as_bytes()).unwrap();
        assert_eq!(k.is_file(), i >= 2);
        assert_eq!(k.is_write(), i % 2 == 1);
        assert_eq!(AccessKind::parse(n.replace('_', "-").as_bytes()), Some(k));
    }
    for bad in ["", "anon", "anon_", "anonxread", "file_reads", "FILE_READ"] {
        assert_eq!(AccessKind::parse(bad.as_bytes()), None, "{bad}");
    }
}
