//! D3 (mechanisms.md §D3, the synchronous model proposed in seed 001): each vCPU keeps a
//! 512-entry buffer (one page of 8-byte entries) of blocks its frees merged into, of at least
//! `page_reporting_order`. When the buffer fills, the freeing vCPU itself isolates every entry
//! still free, reports them in one round trip, waits for the host to zap them, and puts them
//! back: no kthread and no allocation-path blocking, but a stall on about every 512th such free.

use crate::machine::policy::FreePageHinting;
use crate::machine::Machine;

/// Entries per vCPU buffer.
pub const BUFFER_ENTRIES: usize = 512;

#[derive(Debug, Default)]
pub struct SyncBuffer {
    /// Per vCPU: merged blocks (pfn, order).
    buffers: Vec<Vec<(u32, u8)>>,
}

impl FreePageHinting for SyncBuffer {
    fn merged_min_order(&self, reporting_order: u32) -> usize {
        reporting_order as usize
    }
    fn on_merged(&mut self, m: &mut Machine, pfn: u32, order: u32) {
        let cpu = m.cpu;
        if self.buffers.len() <= cpu {
            self.buffers.resize_with(cpu + 1, Vec::new);
        }
        m.guest_mut().stats.captured += 1;
        let buf = &mut self.buffers[cpu];
        buf.push((pfn, order as u8));
        if buf.len() < BUFFER_ENTRIES {
            return;
        }
        let entries = std::mem::take(buf);
        let min = m.guest_mut().order as usize;
        // Each entry's block, if still free and still large enough.
        m.report_free_blocks_of(&entries, min);
        // The buffer (its allocation) is used again.
        let mut entries = entries;
        entries.clear();
        self.buffers[cpu] = entries;
    }
}
