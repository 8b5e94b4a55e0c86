//! The actors: each one type in a file of its own, implementing `world::Actor`. Kernel threads
//! (kswapd, kcompactd, the flusher, the oom_reaper), device completion handlers and the
//! workload threads.

pub mod blkdev_io;
pub mod flusher;
pub mod kcompactd;
pub mod kswapd;
pub mod oom_reaper;
pub mod workload;
pub mod xfs_reclaim_worker;
pub mod xfsaild;
