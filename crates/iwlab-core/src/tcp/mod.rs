//! TCP, split the way the RFCs are: segment format, endpoint state machine (RFC 793/9293),
//! receiver and delayed ACKs (RFC 5681 §4.2, RFC 2018 SACK, RFC 2883 D-SACK), RTO (RFC 6298),
//! congestion control (RFC 5681, RFC 3465, RFC 9438 CUBIC), loss recovery (RFC 5681 Reno, RFC
//! 6582 NewReno, RFC 6675 SACK, RFC 3042 Limited Transmit, RFC 6937 PRR, RFC 8985 RACK-TLP,
//! RFC 5682 F-RTO, RFC 3522-style undo as Linux does it), slow-start exit (RFC 9406
//! HyStart++), ECN (RFC 3168) and initial-window
//! policies (RFC 3390, RFC 6928, size-based). The crate README maps each rule to its file
//! and test.
//!
//! The sender (`sender.rs`) owns one control block (`tcb.rs`); congestion control (`cc/`,
//! `CongestionOps`) and loss recovery (`recovery/`, `RecoveryOps`; PRR, TLP, undo, D-SACK
//! each in its file) work on it, and the CA state machine — when recovery starts and ends,
//! RTO, undo — is `ca_state.rs` alone. The initial window is decided by `iw/` (trait in
//! `iw/policy.rs`) and applied by `endpoint.rs`. No file here reaches itself through its
//! imports (`tests/tcp_layers.rs`).

pub mod ca_state;
pub mod cc;
pub mod config;
pub mod endpoint;
pub mod info;
pub mod iw;
pub mod pacing;
mod persist;
pub mod receiver;
pub mod recovery;
pub mod reordering;
#[cfg(test)]
mod recovery_tests;
pub mod rto;
mod rtt_sample;
pub mod scoreboard;
pub mod segment;
pub mod sender;
pub mod tcb;
pub mod timers;
