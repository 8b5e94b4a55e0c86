//! D3cmma (mechanisms.md §D3, s390's collaborative memory management as 6.1 has it): every
//! freed 4 KiB page is marked unused (`ESSA SET_UNUSED`, no exit) and every allocated one stable
//! again. Nothing is reported and host RSS does not drop on a free; instead the host's reclaim,
//! when it reaches a page the guest marked unused, drops it without writing it to swap, and a
//! later guest touch faults in a zero page.

use crate::machine::page_reporting::FreePageHinting;
use crate::machine::page_reporting::SlotEvent;
use crate::machine::Machine;

#[derive(Debug)]
pub struct Cmma;

impl FreePageHinting for Cmma {
    fn on_free(&mut self, m: &mut Machine, pfn: u32, order: u32) {
        m.guest_mut()
            .events
            .push(SlotEvent::Unused(pfn, order as u8));
    }
    fn on_alloc(&mut self, m: &mut Machine, pfn: u32, order: u32) {
        m.guest_mut()
            .events
            .push(SlotEvent::Stable(pfn, order as u8));
    }
}
