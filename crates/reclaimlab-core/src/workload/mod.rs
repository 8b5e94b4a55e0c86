//! Workloads (under construction)
