//! The host side of a free page report (QEMU's `virtio_balloon_handle_report`, mechanisms.md
//! §D.0): each reported range of guest RAM is discarded (`ram_block_discard_range`, which is
//! `MADV_DONTNEED` for anonymous RAM), unless discards are inhibited (device assignment,
//! postcopy), in which case the report is acked and nothing is dropped. The guest's worker
//! waits for the ack, so the discards' time is the guest's.

use crate::machine::pte::pte_present;
use crate::machine::Machine;

/// Host pages per transparent huge page (2 MiB).
const HPAGE_PAGES: u32 = 512;

/// What discarding one reported range did on the host.
#[derive(Debug, Clone, Copy, Default)]
pub struct Discarded {
    /// Resident pages dropped.
    pub pages: u64,
    /// The range was smaller than a huge page and cut into a fully resident 2 MiB range: with
    /// THP-backed guest RAM the host would split that huge page.
    pub thp_split: bool,
}

/// Discard `n` pages of the VM process `task` from host page `vp` on.
pub fn discard_range(
    host: &mut Machine,
    task: usize,
    vp: u32,
    n: u32,
    inhibited: bool,
    host_thp: bool,
) -> Discarded {
    if inhibited {
        return Discarded::default();
    }
    let mut thp_split = false;
    if n < HPAGE_PAGES && host_thp {
        let start = vp & !(HPAGE_PAGES - 1);
        let end = (start + HPAGE_PAGES).min(host.pte.len() as u32);
        thp_split = (start..end).all(|p| pte_present(host.pte[p as usize]));
    }
    let pages = host.zap_anon_range(task, vp, n);
    Discarded { pages, thp_split }
}
