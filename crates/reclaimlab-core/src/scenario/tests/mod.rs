//! Tests of the scenario schema, the parser and the printer.

mod parse;
mod schema;
mod show;
