//! QUIC flows on a real QUIC stack: quinn-proto (RFC 9000 transport, RFC 9001 TLS, RFC 9002
//! recovery and congestion control, with the anti-amplification limit, PTO and pacing) driven
//! by the engine's clock, its datagrams carried as engine packets over the same links and
//! queues as TCP. See docs/quic.md.

pub mod config;
pub mod conn;
mod crypto;
mod keylog;
mod kx;

pub mod engine;
mod trace_events;

pub use config::{rfc9002_initial_window, QuicCc, QuicConfig, QuicProfile, QuicStack};
pub use conn::{QuicConn, QuicOut, QuicStats};
pub use crypto::{min_chain_bytes, MAX_CHAIN_BYTES};
pub use keylog::with_key_log;

/// IPv4 (20) + UDP (8) header bytes around each datagram.
pub const UDP_IP_HEADERS: u32 = 28;
