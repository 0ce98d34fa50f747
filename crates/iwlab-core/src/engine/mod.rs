//! The discrete-event machinery: integer time, the event queue, seeded random streams.

pub mod rng;
pub mod scheduler;
pub mod time;

pub use rng::{RngStreams, SimRng, StreamKind};
pub use scheduler::Scheduler;
pub use time::{SimDuration, SimTime};
