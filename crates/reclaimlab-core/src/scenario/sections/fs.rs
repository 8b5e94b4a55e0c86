//! `[fs]`: the machine's filesystem (XFS or ext4), for the fsmark, simoops and stat workloads
//! (mechanisms §A.5, §A.6). Every figure is a [recon] parameter of the model except where the
//! doc says [6.1]; the defaults are mechanisms §A.6's suggestions, and the object sizes are
//! 6.1's structure sizes on x86_64 as SLUB rounds them (slabinfo's `objsize`).

use crate::machine::fs::FsType;
use crate::scenario::schema::{named_conv, section, Ty};
use crate::scenario::{FsConfig, NS_PER_MS, NS_PER_SEC, NS_PER_US};

named_conv!(FsType);

const POSITIVE: Ty = Ty::Duration { min: 1 };
const COST: Ty = Ty::Duration { min: 0 };

section! {
    FsConfig => pub static FS = "fs",
        "A filesystem (XFS or ext4): its dentry and inode caches (slab memory, pruned by the \
         superblock shrinker), its other kernel memory (log items, metadata buffers, directory \
         blocks, the ext4 journal), and for XFS its log, AIL, inode cluster writeback and XFS \
         inode reclaim." {
        fs_type: FsType::Xfs => Key::new(
            "type",
            Ty::Choice { names: FsType::NAMES, what: "filesystem type" },
            "\"xfs\": evicted inodes go to XFS inode reclaim (xfsaild, the reclaim worker, [policy] xfs_reclaim); \"ext4\": the VFS inode and dentry caches only, an evicted inode is freed at once, metadata in buffer heads and the jbd2 journal",
        );
        ags: 4 => Key::new("ags", Ty::UInt { min: 1, max: 1024 }, "allocation groups (each with its reclaim lock and cursor); ext4: block groups the directories spread over");
        inode_size: 1024 => Key::new("inode_size", Ty::UInt { min: 64, max: 4096 }, "bytes of one xfs_inode slab object (XFS)")
            .unit("bytes");
        ext4_inode_size: 1176 => Key::new("ext4_inode_size", Ty::UInt { min: 64, max: 4096 }, "bytes of one ext4_inode_cache slab object (ext4; sizeof(struct ext4_inode_info) [6.1 x86_64 ≈ 1176])")
            .unit("bytes");
        dentry_size: 192 => Key::new("dentry_size", Ty::UInt { min: 64, max: 4096 }, "bytes of one dentry slab object [6.1: 192]")
            .unit("bytes");
        disk_inode_size: None => Key::new(
            "disk_inode_size",
            Ty::UInt { min: 128, max: 4096 },
            "bytes of one on-disk inode: an XFS inode cluster buffer holds cluster_inodes of them, an ext4 inode-table block 4096 / disk_inode_size",
        )
        .unit("bytes")
        .unset("512 on XFS (v5 default), 256 on ext4 (mke2fs default)");
        dirents_per_block: 64 => Key::new(
            "dirents_per_block",
            Ty::UInt { min: 1, max: 4096 },
            "directory entries per 4 KiB directory block [recon: fs_mark's ~40-character names take ~64 bytes an entry]; a directory gets a new block (a buffer and a page) every this many creates",
        );
        ili_size: 192 => Key::new("ili_size", Ty::UInt { min: 8, max: 4096 }, "bytes of one xfs_ili (struct xfs_inode_log_item, reclaimable slab [6.1 ≈ 192]): allocated when an inode is first logged, freed when XFS reclaims the inode")
            .unit("bytes");
        xfs_buf_size: 384 => Key::new("xfs_buf_size", Ty::UInt { min: 8, max: 4096 }, "bytes of one xfs_buf (struct xfs_buf, reclaimable slab [6.1 ≈ 384]): one per inode cluster buffer and per directory block")
            .unit("bytes");
        buffer_head_size: 104 => Key::new("buffer_head_size", Ty::UInt { min: 8, max: 4096 }, "bytes of one buffer_head (reclaimable slab [6.1: 104]): one per ext4 inode-table block and directory block")
            .unit("bytes");
        journal_head_size: 112 => Key::new("journal_head_size", Ty::UInt { min: 8, max: 4096 }, "bytes of one jbd2_journal_head (SLAB_TEMPORARY, i.e. reclaimable [6.1 ≈ 112]): one per metadata block a running ext4 transaction dirtied, freed at its commit")
            .unit("bytes");
        jbd2_inode_size: 64 => Key::new("jbd2_inode_size", Ty::UInt { min: 8, max: 4096 }, "bytes of one jbd2_inode (unreclaimable slab [6.1: 64]): one per ext4 inode with data written in ordered mode, freed when the inode is evicted")
            .unit("bytes");
        journal_commit_ns: 5 * NS_PER_SEC => Key::new("journal_commit_interval", POSITIVE, "ext4's journal commit interval (mount option commit=, [6.1 default: 5 s]); the transaction's journal heads are freed at its commit");
        slab_fragmentation: 25 => Key::new(
            "slab_fragmentation",
            Ty::UInt { min: 0, max: 90 },
            "percent of a slab page's room that freed objects leave as holes: a page is freed only when the live objects fit in fewer pages at this much less than full",
        )
        .unit("%");
        log_inodes: 200_000 => Key::new(
            "log_inodes",
            Ty::UInt { min: 1, max: u64::MAX >> 1 },
            "log capacity in logged inodes: creates wait for log space when it is full, and the CIL is checkpointed when it holds an eighth of it (6.1's XLOG_CIL_SPACE_LIMIT, log size / 8)",
        );
        cluster_inodes: 32 => Key::new("cluster_inodes", Ty::UInt { min: 1, max: 256 }, "inodes per cluster buffer (one write cleans the cluster)");
        io_latency_ns: 5 * NS_PER_MS => Key::new("io_latency", POSITIVE, "latency of one inode cluster write or read, or of an ext4 metadata block read (5 ms HDD, 0.2 ms SSD)");
        io_queue_depth: 4 => Key::new("io_queue_depth", Ty::UInt { min: 1, max: 1024 }, "inode cluster I/Os (ext4: metadata block reads) in flight at once");
        logforce_latency_ns: 2 * NS_PER_MS => Key::new("logforce_latency", COST, "time a log force (xfs_iunpin_wait) waits");
        xfssyncd_centisecs: 3000 => Key::new(
            "xfssyncd_centisecs",
            Ty::UInt { min: 100, max: 720_000 },
            "fs.xfs.xfssyncd_centisecs [6.1]: the log worker forces the log (a CIL checkpoint) and pushes the AIL every centisecs * 10 ms, the background reclaim worker runs every centisecs / 6 * 10 ms",
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
