//! Traffic generation: the random size and time distributions that applications draw from.
pub mod dist;
