//! iwlab-link: a user-space link emulator for running iwlab scenarios on real Linux TCP stacks
//! in network namespaces, where the kernel has no `netem`.
//!
//! A router namespace steers forwarded packets of each direction into a TUN device (policy
//! routing); the relay reads them, passes them through the link model of [`link`] — loss →
//! queue discipline (iwlab-core's drop-tail, RED or CoDel, fed wall-clock time as `SimTime`) →
//! serialisation at the rate → propagation delay — and writes each back to the same TUN at its
//! release time, whence the kernel forwards it on. See the README for the routing recipe.
//!
//! Modules, one concept each: [`spec`] parses rates, durations and queue specs; [`config`] the
//! command line and JSON config; [`link`] is the clock-free link model; [`pool`] the
//! preallocated buffers; [`ip`] ECN marking; [`clock`] monotonic time; [`tun`] TUN devices; [`sched`] real-time priority and pinning;
//! [`relay`] the event loop; [`stats`] the lateness histogram and JSON report.

pub mod clock;
pub mod config;
pub mod ip;
pub mod link;
pub mod pool;
pub mod relay;
pub mod sched;
pub mod spec;
pub mod stats;
pub mod tun;
