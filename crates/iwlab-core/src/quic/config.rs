//! A QUIC stack's settings as a scenario gives them ([`QuicConfig`], plain data) and the
//! quinn-proto configuration built from them once per application ([`QuicStack`]).

use super::crypto;
use quinn_proto::congestion::{BbrConfig, ControllerFactory, CubicConfig, NewRenoConfig};
use quinn_proto::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn_proto::{ClientConfig, EndpointConfig, MtuDiscoveryConfig, ServerConfig, TransportConfig};
use std::sync::Arc;

/// The congestion controllers quinn-proto has (each takes an initial window in bytes).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QuicCc {
    NewReno,
    Cubic,
    Bbr,
}

impl QuicCc {
    pub fn name(self) -> &'static str {
        match self {
            QuicCc::NewReno => "reno",
            QuicCc::Cubic => "cubic",
            QuicCc::Bbr => "bbr",
        }
    }
}

/// Named stack defaults.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QuicProfile {
    /// quinn-proto 0.11 as shipped: CUBIC, IW from RFC 9002 §7.2, 1 200-byte datagrams.
    Quinn,
    /// RFC 9002 as written: its NewReno controller (§7.3, Appendix B) and its IW (§7.2).
    Rfc9002,
}

impl QuicProfile {
    pub fn name(self) -> &'static str {
        match self {
            QuicProfile::Quinn => "quinn",
            QuicProfile::Rfc9002 => "rfc9002",
        }
    }
    pub fn cc(self) -> QuicCc {
        match self {
            QuicProfile::Quinn => QuicCc::Cubic,
            QuicProfile::Rfc9002 => QuicCc::NewReno,
        }
    }
}

/// RFC 9002 §7.2: min(10 × max_datagram_size, max(14 720, 2 × max_datagram_size)).
pub fn rfc9002_initial_window(max_datagram_size: u16) -> u64 {
    let m = max_datagram_size as u64;
    (10 * m).min(14_720u64.max(2 * m))
}

/// The smallest UDP payload a QUIC endpoint must support (RFC 9000 §14).
pub const MIN_DATAGRAM: u16 = 1200;

/// A QUIC stack's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct QuicConfig {
    pub profile: QuicProfile,
    /// Congestion window before any ACK, bytes (RFC 9002 §7.2).
    pub initial_window: u64,
    /// UDP payload bytes per datagram (quinn-proto's initial and minimum MTU; PMTU discovery off).
    pub max_datagram_size: u16,
    /// DER bytes of the server's certificate chain (one Ed25519 certificate padded to size).
    pub certificate_chain: u32,
    pub cc: QuicCc,
}

impl QuicConfig {
    /// A profile's defaults.
    pub fn profile(profile: QuicProfile) -> Self {
        QuicConfig {
            profile,
            initial_window: rfc9002_initial_window(MIN_DATAGRAM),
            max_datagram_size: MIN_DATAGRAM,
            certificate_chain: crypto::DEFAULT_CHAIN_BYTES,
            cc: profile.cc(),
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.max_datagram_size < MIN_DATAGRAM {
            return Err(format!(
                "max_datagram_size = {} is not allowed; expected >= {MIN_DATAGRAM} (RFC 9000 §14)",
                self.max_datagram_size
            ));
        }
        if self.initial_window < 2 * self.max_datagram_size as u64 {
            return Err(format!(
                "initial_window = {} is not allowed; expected >= 2 x max_datagram_size = {} (RFC 9002 §7.2 minimum window)",
                self.initial_window,
                2 * self.max_datagram_size as u64
            ));
        }
        let min = crypto::min_chain_bytes();
        if (self.certificate_chain as usize) < min || self.certificate_chain > crypto::MAX_CHAIN_BYTES {
            return Err(format!(
                "certificate_chain = {} is not allowed; expected {min}..={} bytes",
                self.certificate_chain,
                crypto::MAX_CHAIN_BYTES
            ));
        }
        Ok(())
    }
}

/// quinn-proto configuration for one [`QuicConfig`], shared by the connections using it.
pub struct QuicStack {
    pub config: QuicConfig,
    pub(crate) client: ClientConfig,
    pub(crate) server: Arc<ServerConfig>,
    pub(crate) endpoint: EndpointConfig,
    /// Bytes of the server's certificate chain as built.
    pub chain_bytes: usize,
}

impl std::fmt::Debug for QuicStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuicStack").field("config", &self.config).finish_non_exhaustive()
    }
}

impl QuicStack {
    /// "quic-<profile>/<cc>", e.g. "quic-rfc9002/reno".
    pub fn label(&self) -> &'static str {
        const NAMES: [[&str; 3]; 2] = [
            ["quic-quinn/reno", "quic-quinn/cubic", "quic-quinn/bbr"],
            ["quic-rfc9002/reno", "quic-rfc9002/cubic", "quic-rfc9002/bbr"],
        ];
        NAMES[self.config.profile as usize][self.config.cc as usize]
    }

    pub fn new(config: QuicConfig) -> Result<Self, String> {
        config.validate()?;
        let chain = crypto::certificate_chain(config.certificate_chain as usize)?;
        let chain_bytes = chain.certs.iter().map(|c| c.len()).sum();
        let transport = Arc::new(transport(&config));
        let server_tls = crypto::server_tls(chain)?;
        let server_crypto = QuicServerConfig::try_from(server_tls).map_err(|e| format!("quic server TLS: {e}"))?;
        let mut server = ServerConfig::new(Arc::new(server_crypto), crypto::token_key());
        server.transport_config(transport.clone());
        server.time_source(Arc::new(crypto::FixedClock));
        let client_crypto =
            QuicClientConfig::try_from(crypto::client_tls()).map_err(|e| format!("quic client TLS: {e}"))?;
        let mut client = ClientConfig::new(Arc::new(client_crypto));
        client.transport_config(transport);
        client.initial_dst_cid_provider(Arc::new(crypto::initial_dst_cid));
        let mut endpoint = EndpointConfig::new(crypto::reset_key());
        endpoint.max_udp_payload_size(config.max_datagram_size.max(MIN_DATAGRAM)).map_err(|e| format!("{e}"))?;
        Ok(QuicStack { config, client, server: Arc::new(server), endpoint, chain_bytes })
    }

    /// The client, server and endpoint configurations, for an endpoint outside the engine
    /// (crates/iwlab-quic-peer runs them with quinn on the kernel's UDP).
    pub fn quinn_configs(&self) -> (ClientConfig, Arc<ServerConfig>, EndpointConfig) {
        (self.client.clone(), self.server.clone(), self.endpoint.clone())
    }
}

fn transport(c: &QuicConfig) -> TransportConfig {
    let mut t = TransportConfig::default();
    // A fixed datagram size: PMTU discovery would probe larger sizes mid-flow.
    t.initial_mtu(c.max_datagram_size).min_mtu(c.max_datagram_size).mtu_discovery_config(None::<MtuDiscoveryConfig>);
    let cc: Arc<dyn ControllerFactory + Send + Sync> = match c.cc {
        QuicCc::NewReno => Arc::new({
            let mut r = NewRenoConfig::default();
            r.initial_window(c.initial_window);
            r
        }),
        QuicCc::Cubic => Arc::new({
            let mut r = CubicConfig::default();
            r.initial_window(c.initial_window);
            r
        }),
        QuicCc::Bbr => Arc::new({
            let mut r = BbrConfig::default();
            r.initial_window(c.initial_window);
            r
        }),
    };
    t.congestion_controller_factory(cc);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc9002_iw_formula() {
        assert_eq!(rfc9002_initial_window(1200), 12_000);
        assert_eq!(rfc9002_initial_window(1472), 14_720);
        assert_eq!(rfc9002_initial_window(1500), 14_720);
        assert_eq!(rfc9002_initial_window(9000), 18_000);
    }
}
