//! No persistent grants (≤ 3.7): blkback maps every segment for its request and unmaps it at
//! completion, so each request costs an unmap hypercall and a TLB flush of dom0's CPUs.

use crate::machine::xen::BlkbackParams;
use crate::machine::xen::PersistentGrants;

#[derive(Debug)]
pub struct MapUnmap;

impl PersistentGrants for MapUnmap {
    fn enabled(&self) -> bool {
        false
    }

    fn max_grants(&self, _params: &BlkbackParams) -> u32 {
        0
    }
}
