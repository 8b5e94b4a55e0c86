//! Tests of the scenario schema, the parser and the printer.

mod cgroup;
mod defaults;
mod parse;
mod schema;
mod schema_fs;
mod schema_xen;
mod show;
