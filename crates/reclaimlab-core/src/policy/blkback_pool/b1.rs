//! B1 (3.11 - 5.5, the seed's "before"): a pool per ring, grown one page at a time in the I/O
//! path and shrunk to `max_buffer_pages` after every pass or 100 ms idle. Nothing reacts to
//! dom0's memory pressure: the trait's defaults.

use crate::machine::xen::BlkbackPool;

#[derive(Debug)]
pub struct Capped;

impl BlkbackPool for Capped {}
