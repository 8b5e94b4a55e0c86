use super::super::x::X;

pub fn make() -> X {
    X
}
