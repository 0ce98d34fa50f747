//! iwlab-core: a deterministic packet-level discrete-event simulator of TCP, built to study
//! the initial congestion window. Pure Rust, no global state: every `Simulation` owns its
//! clock, event queue and random streams, so several can run at once on different threads.

pub mod engine;
pub mod metrics;
pub mod net;
#[cfg(feature = "quic")]
pub mod quic;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod trace;
pub mod traffic;
pub mod transport;
