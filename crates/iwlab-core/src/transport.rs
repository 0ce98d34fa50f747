//! Transports behind one interface. Applications open a connection on their [`Transport`]
//! ([`Transport::open`]), then act on it and hear from it through the same core calls
//! whatever carries it: `Core::write`, `Core::write_and_close`, `Core::close` and
//! [`crate::tcp::endpoint::AppEvent`]s (`Established`, `Delivered { total }`, `PeerClosed`,
//! `Closed`, `Failed`). The core dispatches on the connection's state: the TCP endpoints of
//! `sim::core`, or a QUIC connection of [`crate::quic`] (quinn-proto), whose bytes travel on
//! one bidirectional stream.
//!
//! | call | TCP | QUIC |
//! |---|---|---|
//! | open | SYN | client Initial (TLS 1.3 ClientHello) |
//! | write | data segments | STREAM frames on the request/response stream |
//! | write_and_close | data + FIN | STREAM frames + FIN bit |
//! | close | FIN | stream FIN; once both directions ended, CONNECTION_CLOSE |
//! | Established | SYN-ACK / ACK of it | handshake complete (quinn-proto `Connected`) |

use crate::sim::{ConnId, ConnSpec, Core};
#[cfg(feature = "quic")]
use std::sync::Arc;

/// What carries an application's connections.
#[derive(Clone, Debug, Default)]
pub enum Transport {
    /// The engine's TCP (`crate::tcp`).
    #[default]
    Tcp,
    /// QUIC on quinn-proto, with the stack configuration every connection shares.
    #[cfg(feature = "quic")]
    Quic(Arc<crate::quic::QuicStack>),
}

impl Transport {
    /// Opens a connection as `spec` describes (the TCP settings in it serve TCP only).
    pub fn open(&self, core: &mut Core, spec: &ConnSpec) -> ConnId {
        match self {
            Transport::Tcp => core.open(spec),
            #[cfg(feature = "quic")]
            Transport::Quic(stack) => core.open_quic(spec, stack),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            #[cfg(feature = "quic")]
            Transport::Quic(_) => "quic",
        }
    }
}
