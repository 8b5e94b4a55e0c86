//! 6.1 persistent grants: up to `max_persistent_grants` per ring (default 1056, the frontend's
//! whole grant buffer), and a purge every 100 ms (`persistent_gnt.rs`).

use crate::machine::xen::BlkbackParams;
use crate::machine::xen::PersistentGrants;

#[derive(Debug)]
pub struct Purged;

impl PersistentGrants for Purged {
    fn max_grants(&self, params: &BlkbackParams) -> u32 {
        params.max_persistent_grants
    }

    fn purges(&self) -> bool {
        true
    }
}
