//! Balloon-backed pool pages: each one a dom0 frame handed to Xen (`machine/xen/balloon.rs`).

use crate::machine::memory::{Access, TaskCtx};
use crate::machine::xen::GnttabBacking;
use crate::machine::Machine;

#[derive(Debug)]
pub struct Ballooned;

impl GnttabBacking for Ballooned {
    fn alloc(&self, m: &mut Machine, t: &mut TaskCtx) -> Result<u32, Access> {
        m.balloon_alloc_page(t)
    }

    fn free(&self, m: &mut Machine, page: u32, now: u64) -> Option<u64> {
        m.balloon_free_page(page, now)
    }
}
