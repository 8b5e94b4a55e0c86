//! Unpopulated pool pages (`machine/xen/unpopulated_alloc.rs`): not dom0 RAM.

use crate::machine::memory::{Access, TaskCtx};
use crate::machine::xen::grant_table::NO_FRAME;
use crate::machine::xen::GnttabBacking;
use crate::machine::Machine;

#[derive(Debug)]
pub struct Unpopulated;

impl GnttabBacking for Unpopulated {
    fn alloc(&self, m: &mut Machine, t: &mut TaskCtx) -> Result<u32, Access> {
        m.unpopulated_alloc_page(t)?;
        Ok(NO_FRAME)
    }

    fn free(&self, m: &mut Machine, _page: u32, _now: u64) -> Option<u64> {
        m.unpopulated_free_page();
        None
    }
}
