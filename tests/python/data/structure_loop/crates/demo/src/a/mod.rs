pub mod x;
pub mod y;

pub fn uses_b() -> super::b::B {
    super::b::B
}
