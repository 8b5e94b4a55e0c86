//! A streaming zstd decoder over `ruzstd`'s frame decoder that, unlike `ruzstd`'s own
//! `StreamingDecoder`, reads every frame of a multi-frame file, skips skippable frames and checks
//! each frame's content checksum when it has one.

use std::io::{self, BufRead, Read};

use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

/// Largest window accepted: 2 GiB (`zstd --long=31`). The decoder allocates the window a frame
/// asks for, so this bounds memory; traces are the user's own files.
const MAX_WINDOW: u64 = 1 << 31;

pub(crate) struct ZstdReader<R: BufRead> {
    src: R,
    dec: FrameDecoder,
    in_frame: bool,
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

impl<R: BufRead> ZstdReader<R> {
    pub(crate) fn new(src: R) -> Self {
        let mut dec = FrameDecoder::new();
        dec.set_max_window_size(MAX_WINDOW);
        ZstdReader {
            src,
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
                Err(e) => return Err(invalid(format!("zstd: bad frame header: {e}"))),
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
                    .map_err(|e| invalid(format!("zstd: {e}")))?;
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
