//! `[fs]`: the machine's XFS filesystem, for the fsmark and simoops workloads (mechanisms
//! §A.5, §A.6). Every figure is a [recon] parameter of the model except where the doc says
//! [6.1]; the defaults are mechanisms §A.6's suggestions.

use crate::scenario::schema::{section, Ty};
use crate::scenario::{FsConfig, NS_PER_MS, NS_PER_US};

const POSITIVE: Ty = Ty::Duration { min: 1 };
const COST: Ty = Ty::Duration { min: 0 };

section! {
    FsConfig => pub static FS = "fs",
        "An XFS filesystem: its dentry and inode caches (slab memory, pruned by the superblock \
         shrinker), its log, AIL and inode cluster writeback, and XFS inode reclaim." {
        ags: 4 => Key::new("ags", Ty::UInt { min: 1, max: 1024 }, "allocation groups (each with its reclaim lock and cursor)");
        inode_size: 1024 => Key::new("inode_size", Ty::UInt { min: 64, max: 4096 }, "bytes of one xfs_inode slab object")
            .unit("bytes");
        dentry_size: 192 => Key::new("dentry_size", Ty::UInt { min: 64, max: 4096 }, "bytes of one dentry slab object")
            .unit("bytes");
        slab_fragmentation: 25 => Key::new(
            "slab_fragmentation",
            Ty::UInt { min: 0, max: 90 },
            "percent of a slab page's room that freed objects leave as holes: a page is freed only when the live objects fit in fewer pages at this much less than full",
        )
        .unit("%");
        log_inodes: 200_000 => Key::new(
            "log_inodes",
            Ty::UInt { min: 1, max: u64::MAX >> 1 },
            "log capacity in logged inodes: creates wait for log space when it is full",
        );
        cil_interval_ns: 30 * NS_PER_MS => Key::new("cil_interval", POSITIVE, "CIL checkpoint interval: pinned inodes become dirty in the AIL");
        cluster_inodes: 32 => Key::new("cluster_inodes", Ty::UInt { min: 1, max: 256 }, "inodes per cluster buffer (one write cleans the cluster)");
        io_latency_ns: 5 * NS_PER_MS => Key::new("io_latency", POSITIVE, "latency of one inode cluster write or read (5 ms HDD, 0.2 ms SSD)");
        io_queue_depth: 4 => Key::new("io_queue_depth", Ty::UInt { min: 1, max: 1024 }, "inode cluster I/Os in flight at once");
        logforce_latency_ns: 2 * NS_PER_MS => Key::new("logforce_latency", COST, "time a log force (xfs_iunpin_wait) waits");
        xfssyncd_centisecs: 3000 => Key::new(
            "xfssyncd_centisecs",
            Ty::UInt { min: 100, max: 720_000 },
            "fs.xfs.xfssyncd_centisecs [6.1]: the background reclaim worker runs every centisecs / 6 * 10 ms",
        );
        aild_period_ns: 20 * NS_PER_MS => Key::new("aild_period", POSITIVE, "xfsaild's pause between pushes and its idle poll");
        flush_cluster_ns: 20 * NS_PER_US => Key::new("flush_cluster_cost", COST, "xfsaild CPU per cluster it flushes");
        shrinker_batch: 1024 => Key::new("shrinker_batch", Ty::UInt { min: 0, max: 1 << 20 }, "superblock shrinker batch [6.1: 1024]; 0 means SHRINK_BATCH (128)");
        shrinker_seeks: 2 => Key::new("shrinker_seeks", Ty::UInt { min: 0, max: 64 }, "superblock shrinker seeks [6.1: DEFAULT_SEEKS = 2]; 0: objects cost no I/O to recreate");
        dentry_scan_ns: 200 => Key::new("dentry_scan_cost", COST, "shrinker CPU per dentry looked at");
        inode_scan_ns: 500 => Key::new("inode_scan_cost", COST, "shrinker CPU per inode looked at");
        free_object_ns: NS_PER_US => Key::new("free_object_cost", COST, "CPU per dentry or inode freed");
        create_ns: 20 * NS_PER_US => Key::new("create_cost", COST, "CPU of one create besides its allocations (transaction, directory update)");
    }
    children: [],
    rules: [],
    derived: None,
}
