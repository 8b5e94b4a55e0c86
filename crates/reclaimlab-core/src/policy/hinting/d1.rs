//! D1 (mechanisms.md §D1): no hinting. The guest's frees only update its own buddy; the host
//! keeps every frame the guest ever touched until the VM exits or the host reclaims it.

use crate::machine::page_reporting::FreePageHinting;

#[derive(Debug)]
pub struct NoHinting;

impl FreePageHinting for NoHinting {}
