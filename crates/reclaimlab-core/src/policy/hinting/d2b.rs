//! D2b (mechanisms.md §D2b, Alexander Duyck's 2019 RFC): a synchronous `KVM_HC_UNUSED_PAGE_HINT`
//! hypercall from the free path whenever a free leaves a block of order 9
//! (`HUGETLB_PAGE_ORDER`) or more, merged or freed whole; the host drops the range. Nothing is
//! isolated: the hint is made with the zone lock held, and the freeing vCPU waits for it.

use crate::machine::page_reporting::FreePageHinting;
use crate::machine::{Machine, PAGEBLOCK_ORDER};

#[derive(Debug)]
pub struct MergeHypercall;

impl FreePageHinting for MergeHypercall {
    fn merged_min_order(&self, _reporting_order: u32) -> usize {
        PAGEBLOCK_ORDER as usize
    }
    fn on_merged(&mut self, m: &mut Machine, pfn: u32, order: u32) {
        let ns = m.guest_mut().cost.hypercall_ns;
        m.report_to_host(&[(pfn, order as u8)], ns, false);
    }
}
