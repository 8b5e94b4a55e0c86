//! Reclaim (under construction)
