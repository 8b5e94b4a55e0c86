//! Engine (under construction)
