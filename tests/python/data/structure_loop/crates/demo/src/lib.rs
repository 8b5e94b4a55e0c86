pub mod a;
pub mod b;

pub const VERSION: &str = "0";
