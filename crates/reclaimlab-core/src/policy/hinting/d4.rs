//! D4 (mechanisms.md §D4, 6.1's `mm/page_reporting.c` with virtio-balloon): a free that merges
//! into a block of `page_reporting_order` or more asks for a pass; the pass runs 2 s later in a
//! work item and reports blocks in lists of 32, waiting for the host's ack each time, at most
//! about 1/16 of each free list per pass. The mechanism itself is the guest kernel's and lives
//! in `machine/page_reporting.rs`; this variant switches it on.

use crate::machine::page_reporting::FreePageHinting;
use crate::machine::page_reporting::WorkStep;
use crate::machine::Machine;

#[derive(Debug)]
pub struct FreePageReporting;

impl FreePageHinting for FreePageReporting {
    fn merged_min_order(&self, reporting_order: u32) -> usize {
        reporting_order as usize
    }
    fn tracks_reported(&self) -> bool {
        true
    }
    /// `page_reporting_register` requests an initial pass.
    fn on_start(&mut self, m: &mut Machine) {
        m.page_reporting_notify();
    }
    fn on_merged(&mut self, m: &mut Machine, _pfn: u32, _order: u32) {
        m.page_reporting_notify();
    }
    fn work(&mut self, m: &mut Machine, _now: u64) -> WorkStep {
        m.page_reporting_work()
    }
}
