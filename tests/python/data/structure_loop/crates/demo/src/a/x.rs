pub struct X;

pub fn f() -> super::y::Y {
    let _ = crate::VERSION;
    super::y::Y
}
