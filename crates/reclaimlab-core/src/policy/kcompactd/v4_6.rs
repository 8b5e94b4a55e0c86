//! 4.6 to 5.8: before its nap kswapd calls `wakeup_kcompactd` with the order and classzone it
//! was asked for; kcompactd compacts one pass per wake and does nothing on its own.

use crate::actors::kcompactd::KcompactdPolicy;

#[derive(Debug)]
pub struct WokenByKswapd;

impl KcompactdPolicy for WokenByKswapd {
    fn woken_by_kswapd(&self) -> bool {
        true
    }
    fn proactive(&self) -> bool {
        false
    }
}
