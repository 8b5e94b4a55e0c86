//! A streaming zstd decoder over `ruzstd`'s frame decoder that, unlike `ruzstd`'s own
//! `StreamingDecoder`, reads every frame of a multi-frame file, skips skippable frames and checks
//! each frame's content checksum when it has one.

use std::io::{self, BufRead, Read};

use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

/// Largest window accepted: 128 MiB, the limit of `zstd -d` itself without `--long`
/// (`ZSTD_WINDOWLOG_LIMIT_DEFAULT`, 2^27). The decoder reserves the whole window a frame header
/// asks for before any data, so a larger limit lets a few bytes of header take gigabytes
/// (fuzzing trace_zstd found a 66-byte input that asked for 2 GiB under the old 2^31 limit).
const MAX_WINDOW: u64 = 1 << 27;

pub(crate) struct ZstdReader<R: BufRead> {
    src: Counted<R>,
    dec: FrameDecoder,
    in_frame: bool,
}

/// A `BufRead` that counts the bytes consumed from it: where in the compressed file an error
/// is (the decoder holds up to a window of decompressed data it cannot hand out yet, so the
/// decompressed offset of a truncation says little).
struct Counted<R> {
    inner: R,
    consumed: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.consumed += amt as u64;
        self.inner.consume(amt)
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// A decoder error as a sentence for the user. `ruzstd`'s messages embed the debug form of
/// nested errors (`BlockContentReadError(Error { kind: UnexpectedEof, .. })`); an input that
/// simply stops is the common case (a truncated download, a file still being written) and gets
/// its own message, anything else is reported as corrupt data with the decoder's first clause.
fn decode_error(what: &str, at: u64, e: impl std::fmt::Display + std::fmt::Debug) -> io::Error {
    let debug = format!("{e:?}");
    if debug.contains("UnexpectedEof") || debug.contains("NotEnoughBytes") {
        return invalid(format!(
            "zstd: the compressed data stops at byte {at} of the file, in the middle of a \
             {what}: the file is truncated (an interrupted download or copy, or a file still \
             being written)"
        ));
    }
    if debug.contains("BadMagicNumber") {
        // The frame header is read whole before its magic number is checked.
        let at = at.saturating_sub(4);
        return invalid(if at == 0 {
            "zstd: the file is not zstd-compressed (it does not start with the zstd magic \
             number); if it is plain, drop the .zst from its name or say compression = \"none\""
                .to_string()
        } else {
            format!(
                "zstd: no zstd frame starts at byte {at} of the file (after the frames before \
                 it): the file has trailing data that is not zstd"
            )
        });
    }
    let shown = e.to_string();
    let clause = shown
        .split([':', '('])
        .next()
        .unwrap_or("")
        .trim()
        .trim_end_matches('.');
    invalid(format!(
        "zstd: the compressed data is corrupt ({}) in a {what} before byte {at} of the file",
        if clause.is_empty() {
            "undecodable"
        } else {
            clause
        }
    ))
}

impl<R: BufRead> ZstdReader<R> {
    pub(crate) fn new(src: R) -> Self {
        let mut dec = FrameDecoder::new();
        dec.set_max_window_size(MAX_WINDOW);
        ZstdReader {
            src: Counted {
                inner: src,
                consumed: 0,
            },
            dec,
            in_frame: false,
        }
    }

    /// Start the next frame. `Ok(false)` at the end of the input.
    fn next_frame(&mut self) -> io::Result<bool> {
        loop {
            if self.src.fill_buf()?.is_empty() {
                return Ok(false);
            }
            match self.dec.reset(&mut self.src) {
                Ok(()) => {
                    self.in_frame = true;
                    return Ok(true);
                }
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    let skipped =
                        io::copy(&mut (&mut self.src).take(length as u64), &mut io::sink())?;
                    if skipped != length as u64 {
                        return Err(invalid(format!(
                            "zstd: the input ends inside a skippable frame ({skipped} of {length} bytes)"
                        )));
                    }
                }
                Err(FrameDecoderError::WindowSizeTooBig { requested, max }) => {
                    return Err(invalid(format!(
                        "zstd: the frame before byte {} of the file needs a {} MiB window, more \
                         than the {} MiB this reader (like `zstd -d` without --long) allows; \
                         recompress the trace without --long (zstd -dc FILE | zstd -o NEW)",
                        self.src.consumed,
                        requested.div_ceil(1 << 20),
                        max >> 20
                    )))
                }
                Err(e) => return Err(decode_error("frame header", self.src.consumed, e)),
            }
        }
    }
}

impl<R: BufRead> Read for ZstdReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if !self.in_frame && !self.next_frame()? {
                return Ok(0);
            }
            while self.dec.can_collect() == 0 && !self.dec.is_finished() {
                self.dec
                    .decode_blocks(&mut self.src, BlockDecodingStrategy::UptoBlocks(1))
                    .map_err(|e| decode_error("block", self.src.consumed, e))?;
            }
            let n = self.dec.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            // The frame is finished and drained.
            if let (Some(stored), Some(computed)) = (
                self.dec.get_checksum_from_data(),
                self.dec.get_calculated_checksum(),
            ) {
                if stored != computed {
                    return Err(invalid(format!(
                        "zstd: frame checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the file is corrupt"
                    )));
                }
            }
            self.in_frame = false;
        }
    }
}
