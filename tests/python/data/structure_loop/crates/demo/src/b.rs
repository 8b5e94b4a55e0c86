pub struct B;

pub fn g() {
    let _ = crate::a::x::X;
}
