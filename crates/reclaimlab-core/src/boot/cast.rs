//! The world's members as the builder files hand them back, in registration order, instead of
//! each file registering its own: `boot/mod.rs` registers the whole cast in one place. The
//! world numbers its members as they come, from 0, so a member's id is its place in the cast:
//! a builder that must name an actor before the world exists (kswapd for the summary, dom0's
//! rings and the guests' blkio jobs for each other) takes it from the length of the cast.

use crate::world::{Actor, MachineId, Observer};

/// One member of the world: an actor on its machine, or an observer.
pub(crate) enum Member {
    Actor(MachineId, Box<dyn Actor>),
    Observer(Box<dyn Observer>),
}

/// A member and when it is first scheduled (`None`: it starts idle).
pub(crate) struct Add {
    pub member: Member,
    pub start: Option<u64>,
}

/// The world's members in registration order.
pub(crate) type Cast = Vec<Add>;
