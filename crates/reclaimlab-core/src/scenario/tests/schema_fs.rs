//! The filesystem tables' declarations (`[fs]`, `[workload.fsmark]`, `[workload.simoops]`,
//! `[workload.stat]`, `[workload.drop_caches]`): complete, their defaults the declared ones.

use super::schema::{check_complete, check_declared_defaults};
use crate::scenario::sections::*;
use crate::scenario::*;

#[test]
fn every_fs_field_is_reachable_from_exactly_one_key() {
    check_complete(&FS, &FsConfig::default(), &[], &[]);
    check_complete(&FSMARK, &FsmarkSpec::default(), &[], &[]);
    check_complete(&SIMOOPS, &SimoopsSpec::default(), &[], &[]);
    check_complete(&STAT, &StatSpec::default(), &[], &[]);
    check_complete(&DROP_CACHES, &DropCachesSpec::default(), &[], &[]);
}

#[test]
fn fs_defaults_match_the_declarations() {
    check_declared_defaults(&FS);
    check_declared_defaults(&FSMARK);
    check_declared_defaults(&SIMOOPS);
    check_declared_defaults(&STAT);
    check_declared_defaults(&DROP_CACHES);
}
