//! The actors: each one type in a file of its own, implementing `world::Actor`. Kernel threads
//! (kswapd, kcompactd, the flusher, the oom_reaper, a guest's hinting worker), device
//! completion handlers, a VM's lifecycle, a guest's background activity, the workload threads,
//! and on a Xen host blkback's ring kthreads, the balloon worker and the guests' blkfront I/O
//! jobs.

pub mod blkdev_io;
pub mod blkfront;
pub mod flusher;
pub mod guest_background;
pub mod hinting_worker;
pub mod kcompactd;
pub mod kswapd;
pub mod memcg_controller;
pub mod oom_reaper;
pub mod vm;
pub mod workload;
pub mod xen_balloon;
pub mod xen_blkback;
pub mod xfs_reclaim_worker;
pub mod xfsaild;
