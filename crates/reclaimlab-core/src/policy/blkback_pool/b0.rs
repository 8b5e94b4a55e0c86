//! B0 (≤ 3.10, mechanisms.md §B.4): no dynamic pool. Non-persistent grants are mapped into
//! the pages of a global array of `reqs` pending requests (11 pages each), allocated at module
//! init and never freed; the array caps requests in flight across every device.

use crate::machine::xen::BlkbackPool;

#[derive(Debug)]
pub struct GlobalArray;

impl BlkbackPool for GlobalArray {
    fn fixed_array(&self) -> bool {
        true
    }
}
