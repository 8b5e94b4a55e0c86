//! D3 (mechanisms.md §D3, the synchronous model proposed in seed 001): each vCPU keeps a
//! 512-entry buffer (one page of 8-byte entries). Every free that reaches the buddy adds one
//! entry, the block it merged into ("the page after merging"), so the buffer fills on every
//! 512th free, as the proposal says. The freeing vCPU then isolates, from the blocks its entries
//! lie in now, those still free and of at least `page_reporting_order` (the proposal's
//! granularity knob), reports them in one round trip, waits for the host to zap them, and puts
//! them back: no kthread and no allocation-path blocking, but a stall on every 512th free. A
//! buffer whose blocks are all smaller (a fragmented guest) or in use again costs no round trip.
//!
//! At most 511 frees stay unreported when a vCPU stops freeing, and their blocks mostly lie in
//! blocks already reported by earlier fills, so almost all of a large free is returned.

use crate::machine::page_reporting::FreePageHinting;
use crate::machine::Machine;

/// Entries per vCPU buffer.
pub const BUFFER_ENTRIES: usize = 512;

#[derive(Debug, Default)]
pub struct SyncBuffer {
    /// Per vCPU: the blocks its frees merged into (pfn, order).
    buffers: Vec<Vec<(u32, u8)>>,
}

impl FreePageHinting for SyncBuffer {
    /// Every free: the buffer counts frees, whatever they merge into.
    fn merged_min_order(&self, _reporting_order: u32) -> usize {
        0
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
        // Each entry's block as it is now (it may have merged further, or been allocated).
        m.report_free_blocks_of(&entries, min);
        // The buffer (its allocation) is used again.
        let mut entries = entries;
        entries.clear();
        self.buffers[cpu] = entries;
    }
}
