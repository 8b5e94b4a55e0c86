mod z;
pub use z::make;

pub struct Y;
