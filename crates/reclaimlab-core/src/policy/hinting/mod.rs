//! `[guest.policy] hinting`: how a guest tells its host which of its memory is free, so the
//! host can drop it (mechanisms.md §D). A guest that says nothing keeps everything it ever
//! touched resident on the host; the variants differ in what they report (any order, or only
//! large merged blocks), when (on the free path, in a kthread, in a delayed work item) and who
//! waits (the freeing vCPU, or a worker).

mod d1;
mod d2;
mod d2_stored;
mod d2b;
mod d3;
mod d3cmma;
mod d4;

use super::{Switch, Variant};
use crate::machine::page_reporting::FreePageHinting;

pub static SWITCH: Switch<dyn FreePageHinting> = Switch {
    name: "hinting",
    spec: "mechanisms.md §D",
    summary: "how a guest reports free memory to its host (set it in [guest.policy])",
    default: "D1",
    preset: None,
    variants: &[
        Variant {
            name: "D1",
            kernel: "any (no virtio-balloon reporting)",
            summary: "no hinting: host RSS never shrinks while the VM runs",
            make: || Box::new(d1::NoHinting),
        },
        Variant {
            name: "D2",
            kernel: "RFC v8 (2019, not merged)",
            summary: "per-CPU capture arrays of 1,000 frees, scanned inline, reported by a kthread; frees lost while an array is full",
            make: || Box::new(d2::CaptureArrays::default()),
        },
        Variant {
            name: "D2stored",
            kernel: "RFC v7/v8 stored code",
            summary: "D2 whose inline scan keeps entries whose page is in use again (the kthread skips them) instead of dropping them",
            make: || Box::new(d2_stored::make()),
        },
        Variant {
            name: "D2b",
            kernel: "Duyck RFC (2019, not merged)",
            summary: "synchronous hypercall from the free path for each block that reaches order 9",
            make: || Box::new(d2b::MergeHypercall),
        },
        Variant {
            name: "D3",
            kernel: "s390-like proposal (seed 001)",
            summary: "per-vCPU buffer of the last 512 frees (their merged blocks); when full, the freeing vCPU reports those >= page_reporting_order synchronously",
            make: || Box::new(d3::SyncBuffer::default()),
        },
        Variant {
            name: "D3cmma",
            kernel: "s390 CMMA (6.1)",
            summary: "frees mark frames unused; the host drops unused frames when it reclaims, without swap",
            make: || Box::new(d3cmma::Cmma),
        },
        Variant {
            name: "D4",
            kernel: "5.7 - 6.1",
            summary: "free page reporting: blocks >= page_reporting_order, 2 s delayed worker, 32 per report, budget 1/16 of each list per pass, reported blocks at the tail",
            make: || Box::new(d4::FreePageReporting),
        },
    ],
};
