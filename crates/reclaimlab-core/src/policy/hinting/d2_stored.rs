//! D2 as the stored v7/v8 `page_hinting.c` has it (mechanisms.md §D2): the same capture arrays,
//! but the inline scan keeps an entry whose page is in use again instead of dropping it (the
//! seed's prose drops it); the kthread skips such entries when it runs. Kept entries count
//! toward the 1,000 that wake the kthread, so a churning guest wakes it sooner.

use super::d2::CaptureArrays;

pub fn make() -> CaptureArrays {
    let mut d2 = CaptureArrays::default();
    d2.keep_allocated = true;
    d2
}
