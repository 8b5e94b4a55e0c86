//! Facts a machine raises for the world: "kswapd should wake", "a write was queued on the swap
//! device", "this process was chosen for an OOM kill". The machine does not know who acts on
//! them; the world hands each to the actors that subscribed to it, right after the step that
//! raised it.
//!
//! Pending signals are a set, taken in a fixed order (the declaration order below), so the
//! wake-ups they cause are scheduled in the same order whatever order they were raised in.

/// A fact raised by a machine operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signal {
    /// `wakeup_kswapd` found kswapd waiting and wants it running.
    KswapdWake,
    /// `wakeup_kcompactd` recorded a compaction request.
    KcompactdWake,
    /// A write was queued on the swap device: its completion must be delivered.
    SwapIo,
    /// A write was queued on the file disk.
    DiskIo,
    /// The OOM killer chose this task (process index) as its victim.
    OomKill(usize),
    /// A page-cache page was dirtied: the flusher has work.
    Dirtied,
    /// The OOM killer found nothing to kill: the kernel panics and the run ends.
    Panic,
    /// A guest's hinting variant wants its worker to run (`GuestSide::work_due`).
    HintingWork,
}

impl Signal {
    /// Number of kinds of signal.
    pub const KINDS: usize = 8;

    /// The kind's index, in declaration order (the order pending signals are taken in).
    pub fn kind(self) -> usize {
        match self {
            Signal::KswapdWake => 0,
            Signal::KcompactdWake => 1,
            Signal::SwapIo => 2,
            Signal::DiskIo => 3,
            Signal::OomKill(_) => 4,
            Signal::Dirtied => 5,
            Signal::Panic => 6,
            Signal::HintingWork => 7,
        }
    }

    /// The signal of kind `k`; `victim` is the task of an OOM kill.
    pub fn of_kind(k: usize, victim: usize) -> Signal {
        match k {
            0 => Signal::KswapdWake,
            1 => Signal::KcompactdWake,
            2 => Signal::SwapIo,
            3 => Signal::DiskIo,
            4 => Signal::OomKill(victim),
            5 => Signal::Dirtied,
            6 => Signal::Panic,
            _ => Signal::HintingWork,
        }
    }
}

/// `Signal::OomKill`'s kind.
const OOM_KIND: u32 = 4;

/// The signals raised since the world last looked.
#[derive(Debug, Clone, Default)]
pub struct Outbox {
    pending: u8,
    /// The victims of the pending OOM kills, oldest first (one but for a memcg's
    /// `memory.oom.group` kill, which kills several tasks at once).
    oom_victims: std::collections::VecDeque<usize>,
}

impl Outbox {
    #[inline]
    pub fn raise(&mut self, s: Signal) {
        self.pending |= 1 << s.kind();
        if let Signal::OomKill(task) = s {
            self.oom_victims.push_back(task);
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pending == 0
    }

    /// The next pending signal, in declaration order.
    #[inline]
    pub fn take(&mut self) -> Option<Signal> {
        if self.pending == 0 {
            return None;
        }
        let i = self.pending.trailing_zeros();
        let mut victim = 0;
        if i == OOM_KIND {
            victim = self.oom_victims.pop_front().unwrap_or(0);
            // More victims: the signal stays pending for the next one.
            if !self.oom_victims.is_empty() {
                return Some(Signal::of_kind(i as usize, victim));
            }
        }
        self.pending &= !(1 << i);
        Some(Signal::of_kind(i as usize, victim))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taken_in_declaration_order_once_each() {
        let mut o = Outbox::default();
        o.raise(Signal::Dirtied);
        o.raise(Signal::OomKill(3));
        o.raise(Signal::KswapdWake);
        o.raise(Signal::Dirtied);
        assert_eq!(o.take(), Some(Signal::KswapdWake));
        assert_eq!(o.take(), Some(Signal::OomKill(3)));
        assert_eq!(o.take(), Some(Signal::Dirtied));
        assert_eq!(o.take(), None);
        assert!(o.is_empty());
    }
}
