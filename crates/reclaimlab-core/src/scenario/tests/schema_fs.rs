//! The filesystem tables' declarations (`[fs]`, `[workload.fsmark]`, `[workload.simoops]`,
//! `[workload.stat]`, `[workload.drop_caches]`): complete, their defaults the declared ones.

use super::schema::{check_complete, check_declared_defaults, fields};
use crate::scenario::sections::*;
use crate::scenario::*;

fn fs_fields(s: &FsConfig) -> Vec<(&'static str, String)> {
    fields!(
        s,
        FsConfig {
            fs_type,
            ags,
            inode_size,
            ext4_inode_size,
            dentry_size,
            disk_inode_size,
            dirents_per_block,
            ili_size,
            xfs_buf_size,
            buffer_head_size,
            journal_head_size,
            jbd2_inode_size,
            journal_commit_ns,
            slab_fragmentation,
            log_inodes,
            cil_interval_ns,
            cluster_inodes,
            io_latency_ns,
            io_queue_depth,
            logforce_latency_ns,
            xfssyncd_centisecs,
            aild_period_ns,
            flush_cluster_ns,
            shrinker_batch,
            shrinker_seeks,
            dentry_scan_ns,
            inode_scan_ns,
            free_object_ns,
            create_ns
        }
    )
}
fn fsmark_fields(s: &FsmarkSpec) -> Vec<(&'static str, String)> {
    fields!(
        s,
        FsmarkSpec {
            threads,
            files,
            files_per_dir,
            file_size_bytes,
            nofs_fraction,
            think_ns,
            rss_bytes
        }
    )
}
fn simoops_fields(s: &SimoopsSpec) -> Vec<(&'static str, String)> {
    fields!(
        s,
        SimoopsSpec {
            threads,
            files,
            file_size_bytes,
            reads_per_unit,
            alloc_bytes,
            keep_units,
            think_ns
        }
    )
}
fn stat_fields(s: &StatSpec) -> Vec<(&'static str, String)> {
    fields!(
        s,
        StatSpec {
            threads,
            passes,
            hit_ns,
            think_ns
        }
    )
}
fn drop_caches_fields(s: &DropCachesSpec) -> Vec<(&'static str, String)> {
    fields!(s, DropCachesSpec { value, after_ns })
}

#[test]
fn every_fs_field_is_reachable_from_exactly_one_key() {
    check_complete(&FS, &FsConfig::default(), fs_fields, &[], &[]);
    check_complete(&FSMARK, &FsmarkSpec::default(), fsmark_fields, &[], &[]);
    check_complete(&SIMOOPS, &SimoopsSpec::default(), simoops_fields, &[], &[]);
    check_complete(&STAT, &StatSpec::default(), stat_fields, &[], &[]);
    check_complete(
        &DROP_CACHES,
        &DropCachesSpec::default(),
        drop_caches_fields,
        &[],
        &[],
    );
}

#[test]
fn fs_defaults_match_the_declarations() {
    check_declared_defaults(&FS);
    check_declared_defaults(&FSMARK);
    check_declared_defaults(&SIMOOPS);
    check_declared_defaults(&STAT);
    check_declared_defaults(&DROP_CACHES);
}
