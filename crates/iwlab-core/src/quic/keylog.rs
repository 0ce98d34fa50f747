//! TLS secrets of the engine's QUIC connections in the SSLKEYLOGFILE format
//! (`LABEL <client random> <secret>`, hex), so Wireshark decrypts a run's pcap. The simulated
//! clients carry a rustls [`KeyLog`] that writes only while a run is wrapped in
//! [`with_key_log`]: otherwise nothing is kept and runs are what they were.

use rustls::KeyLog;
use std::cell::RefCell;
use std::fmt::Write;

thread_local! {
    /// The key log of the run being driven on this thread, if one was asked for.
    static SINK: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f` (a simulation) and returns its result with the key log of every QUIC connection it
/// drove on this thread: five lines per connection (`CLIENT_HANDSHAKE_TRAFFIC_SECRET`,
/// `SERVER_HANDSHAKE_TRAFFIC_SECRET`, `CLIENT_TRAFFIC_SECRET_0`, `SERVER_TRAFFIC_SECRET_0`,
/// `EXPORTER_SECRET`), in the order the handshakes reached them.
pub fn with_key_log<R>(f: impl FnOnce() -> R) -> (R, String) {
    let outer = SINK.with(|s| s.borrow_mut().replace(String::new()));
    let r = f();
    let log = SINK.with(|s| std::mem::replace(&mut *s.borrow_mut(), outer)).unwrap_or_default();
    (r, log)
}

/// Bytes as lower-case hex digits.
struct Hex<'a>(&'a [u8]);

impl std::fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// The simulated client's [`KeyLog`] (crypto.rs `client_tls`).
#[derive(Debug)]
pub(crate) struct EngineKeyLog;

impl KeyLog for EngineKeyLog {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        SINK.with(|s| {
            if let Some(out) = s.borrow_mut().as_mut() {
                let _ = writeln!(out, "{label} {} {}", Hex(client_random), Hex(secret));
            }
        });
    }

    fn will_log(&self, _label: &str) -> bool {
        SINK.with(|s| s.borrow().is_some())
    }
}
