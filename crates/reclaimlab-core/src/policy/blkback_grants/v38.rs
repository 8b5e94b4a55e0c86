//! v3.8 persistent grants (seed 003's patch): at most `RING_SIZE × 11 = 352` grants per device
//! stay mapped, with no purge (they go at disconnect); a fresh gref beyond the cap is mapped
//! and unmapped for its request, the patch's defence against a guest flooding fresh grefs.

use crate::machine::xen::PersistentGrants;
use crate::machine::xen::{BlkbackParams, BLKIF_MAX_SEGMENTS_PER_REQUEST, XEN_BLKIF_REQS_PER_PAGE};

#[derive(Debug)]
pub struct FixedCap;

impl PersistentGrants for FixedCap {
    fn max_grants(&self, _params: &BlkbackParams) -> u32 {
        XEN_BLKIF_REQS_PER_PAGE * BLKIF_MAX_SEGMENTS_PER_REQUEST
    }
}
