//! Balloon-backed pool pages (`drivers/xen/balloon.c`, mechanisms.md §B.2, balloon mode): a
//! page blkback takes is a dom0 page given back to Xen, so dom0 loses one page of RAM for each
//! pool or mapped page. A freed page goes on the balloon list and comes back to dom0 when the
//! balloon worker repopulates it, `[xen.blkback] balloon_delay` later (an estimate; 0 is the
//! spec's acceptable default).

use std::collections::VecDeque;

use super::super::gfp::GFP_USER;
use super::super::memory::{Access, TaskCtx};
use super::super::Machine;

#[derive(Debug, Clone, Default)]
pub struct Balloon {
    /// Dom0 frames given to Xen for blkback (pool, mapped, and on the balloon list).
    pub out: u64,
    /// Freed pages waiting for the balloon worker: (when it repopulates them, frame).
    pub list: VecDeque<(u64, u32)>,
    /// `decrease_reservation` and `increase_reservation` pages, in total.
    pub decreased: u64,
    pub increased: u64,
}

impl Machine {
    /// `xen_alloc_ballooned_pages(1)`: a page already on the balloon list, or a fresh dom0
    /// page (`alloc_page(GFP_USER)`, which may reclaim) handed to Xen.
    pub fn balloon_alloc_page(&mut self, t: &mut TaskCtx) -> Result<u32, Access> {
        let x = self.xen.as_mut().expect("a Xen dom0");
        if let Some((_, pfn)) = x.balloon.list.pop_back() {
            return Ok(pfn);
        }
        let pfn = self.alloc_pages(GFP_USER, 0, t)?;
        self.mark_kernel_pages(pfn, 0);
        let b = &mut self.xen.as_mut().expect("a Xen dom0").balloon;
        b.out += 1;
        b.decreased += 1;
        Ok(pfn)
    }

    /// `xen_free_ballooned_pages`: the page goes on the balloon list; with no delay it is
    /// repopulated at once. Returns when the balloon worker must run, if later.
    pub fn balloon_free_page(&mut self, pfn: u32, now: u64) -> Option<u64> {
        let x = self.xen.as_mut().expect("a Xen dom0");
        let at = now + x.params.balloon_delay_ns;
        x.balloon.list.push_front((at, pfn));
        if at <= now {
            self.balloon_process(now);
            return None;
        }
        Some(at)
    }

    /// `balloon_process`: repopulate the pages whose time has come (their frames go back to
    /// dom0's free memory). Returns when it must run next.
    pub fn balloon_process(&mut self, now: u64) -> Option<u64> {
        loop {
            let x = self.xen.as_mut().expect("a Xen dom0");
            match x.balloon.list.back() {
                Some(&(at, pfn)) if at <= now => {
                    x.balloon.list.pop_back();
                    x.balloon.out -= 1;
                    x.balloon.increased += 1;
                    self.free_pages(pfn, 0);
                }
                Some(&(at, _)) => return Some(at),
                None => return None,
            }
        }
    }
}
