//! Deterministic key material and TLS 1.3 settings for simulated QUIC connections: a fixed
//! Ed25519 certificate padded to the configured chain size (Ed25519 signatures have one
//! length, so handshake sizes never vary), fixed reset/token keys, TLS randoms and X25519 key
//! shares drawn from the engine's seeded stream, no session tickets or resumption (repeated
//! connections stay alike).

use crate::engine::SimRng;
use rand::{RngCore, SeedableRng};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, GetRandomFailed, SecureRandom};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

/// A single certificate without padding is about 300 bytes; typical web chains are 3–5 kB.
pub const DEFAULT_CHAIN_BYTES: u32 = 4_000;
/// TLS allows 2^24 − 1 bytes of certificates; larger chains than this are not web-like.
pub const MAX_CHAIN_BYTES: u32 = 65_536;

/// PKCS#8 v1 (RFC 8410) of a fixed Ed25519 seed: the server's test key.
fn test_key_pkcs8() -> Vec<u8> {
    let mut der = vec![0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];
    der.extend((0u8..32).map(|i| i.wrapping_mul(37).wrapping_add(11)));
    der
}

/// Private-use OID (under 1.3.6.1.4.1, an unassigned enterprise number) of the padding extension.
const PAD_OID: &[u64] = &[1, 3, 6, 1, 4, 1, 99999, 1];

fn certificate(pad: Option<usize>) -> Result<CertificateDer<'static>, String> {
    let key = rcgen::KeyPair::try_from(test_key_pkcs8().as_slice()).map_err(|e| format!("test key: {e}"))?;
    let mut params =
        rcgen::CertificateParams::new(vec!["iwlab.test".to_string()]).map_err(|e| format!("certificate: {e}"))?;
    params.serial_number = Some(rcgen::SerialNumber::from(vec![1u8]));
    params.not_before = rcgen::date_time_ymd(2025, 1, 1);
    params.not_after = rcgen::date_time_ymd(2035, 1, 1);
    if let Some(p) = pad {
        params.custom_extensions.push(rcgen::CustomExtension::from_oid_content(PAD_OID, vec![0; p]));
    }
    Ok(params.self_signed(&key).map_err(|e| format!("certificate: {e}"))?.der().clone())
}

/// Bytes of the smallest chain (the certificate without padding).
pub fn min_chain_bytes() -> usize {
    static MIN: OnceLock<usize> = OnceLock::new();
    *MIN.get_or_init(|| certificate(None).map(|c| c.len()).unwrap_or(usize::MAX))
}

/// The server's chain and key.
pub struct Chain {
    pub certs: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

/// A chain of exactly `bytes` DER bytes: the certificate, padded by a private extension. The
/// padding's DER length fields grow at 128 and 256 bytes, so a few sizes just above the bare
/// certificate cannot be hit; those get a second, small certificate instead.
pub fn certificate_chain(bytes: usize) -> Result<Chain, String> {
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(test_key_pkcs8()));
    let bare = certificate(None)?;
    if bytes == bare.len() {
        return Ok(Chain { certs: vec![bare], key });
    }
    let exact = |total: usize| -> Result<Option<CertificateDer<'static>>, String> {
        // The length of a padded certificate grows by one per padding byte, with jumps of at
        // most 8 where a length field gains a byte: step towards the target from below.
        let mut pad = total.saturating_sub(bare.len() + 64);
        let mut tried = Vec::new();
        while !tried.contains(&pad) {
            tried.push(pad);
            let c = certificate(Some(pad))?;
            match c.len().cmp(&total) {
                std::cmp::Ordering::Equal => return Ok(Some(c)),
                std::cmp::Ordering::Less => pad += total - c.len(),
                std::cmp::Ordering::Greater if pad >= c.len() - total => pad -= c.len() - total,
                std::cmp::Ordering::Greater => return Ok(None),
            }
        }
        Ok(None)
    };
    if let Some(c) = exact(bytes)? {
        return Ok(Chain { certs: vec![c], key });
    }
    // Leaf padded to (bytes − k) plus a bare certificate of k bytes as the second in chain
    // (never verified: clients here accept any chain, see `AcceptAnyServer`).
    let k = bare.len();
    if bytes > 2 * k + 32 {
        if let Some(c) = exact(bytes - k)? {
            return Ok(Chain { certs: vec![c, bare], key });
        }
    }
    Err(format!("certificate_chain = {bytes} bytes cannot be built exactly; try a size a few bytes larger"))
}

thread_local! {
    /// The stream TLS randoms and key shares are drawn from while a connection is being driven.
    static TLS_RNG: RefCell<Option<SimRng>> = const { RefCell::new(None) };
}

/// Runs `f` with TLS randoms drawn from `rng` (a connection's seeded stream).
pub fn with_rng<R>(rng: &mut Option<SimRng>, f: impl FnOnce() -> R) -> R {
    TLS_RNG.with(|t| std::mem::swap(&mut *t.borrow_mut(), rng));
    let r = f();
    TLS_RNG.with(|t| std::mem::swap(&mut *t.borrow_mut(), rng));
    r
}

/// rustls' `secure_random` (client/server randoms) and the X25519 private keys (kx.rs) drawn
/// from the connection's seeded stream. Outside a connection (building configurations) a fixed
/// stream is used.
#[derive(Debug)]
pub(super) struct SeededRandom;

impl SecureRandom for SeededRandom {
    fn fill(&self, buf: &mut [u8]) -> Result<(), GetRandomFailed> {
        TLS_RNG.with(|t| {
            let mut t = t.borrow_mut();
            t.get_or_insert_with(|| SimRng::seed_from_u64(0x1d1a_b5ee_d000_0001)).fill_bytes(buf)
        });
        Ok(())
    }
}

pub(super) static SEEDED_RANDOM: SeededRandom = SeededRandom;

/// ring's TLS 1.3 primitives with the seeded random source and the seeded X25519 key exchange,
/// the one group offered (an X25519 key share has one size, 32 bytes).
fn provider() -> Arc<CryptoProvider> {
    Arc::new(CryptoProvider {
        secure_random: &SEEDED_RANDOM,
        kx_groups: vec![&super::kx::SeededX25519],
        ..rustls::crypto::ring::default_provider()
    })
}

const ALPN: &[u8] = b"h3";

pub fn server_tls(chain: Chain) -> Result<rustls::ServerConfig, String> {
    let mut c = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("server TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain.certs, chain.key)
        .map_err(|e| format!("server TLS: {e}"))?;
    c.send_tls13_tickets = 0;
    c.alpn_protocols = vec![ALPN.to_vec()];
    Ok(c)
}

pub fn client_tls() -> rustls::ClientConfig {
    let mut c = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("ring supports TLS 1.3")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AcceptAnyServer))
        .with_no_client_auth();
    c.resumption = rustls::client::Resumption::disabled();
    c.alpn_protocols = vec![ALPN.to_vec()];
    // Writes only inside `with_key_log` (keylog.rs); the server's secrets are the same.
    c.key_log = Arc::new(super::keylog::EngineKeyLog);
    c
}

/// The simulated client checks no signature: the bytes on the wire are those of a verifying
/// client, and the verification's CPU (not simulated time) is saved.
#[derive(Debug)]
struct AcceptAnyServer;

impl ServerCertVerifier for AcceptAnyServer {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        // Never called (TLS 1.3 only); the same answer as 1.3's.
        self.verify_tls13_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        vec![SignatureScheme::ED25519]
    }
}

/// Stateless-reset key (fixed: runs are reproducible, nothing here is secret).
pub fn reset_key() -> Arc<dyn quinn_proto::crypto::HmacKey> {
    Arc::new(ring::hmac::Key::new(ring::hmac::HMAC_SHA256, b"iwlab simulated stateless reset key"))
}

/// Address-validation token key (fixed, as above).
pub fn token_key() -> Arc<dyn quinn_proto::crypto::HandshakeTokenKey> {
    Arc::new(ring::hkdf::Salt::new(ring::hkdf::HKDF_SHA256, &[]).extract(b"iwlab simulated token key"))
}

/// Wall-clock time for tokens: a fixed instant (tokens are never redeemed in a run).
pub struct FixedClock;

impl quinn_proto::TimeSource for FixedClock {
    fn now(&self) -> std::time::SystemTime {
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_750_000_000)
    }
}

/// The client's first Destination Connection ID (RFC 9000 §7.2: unpredictable, at least 8
/// bytes) from the connection's seeded stream, 20 bytes as quinn's default, which draws them
/// from the system's randomness. They key the Initial packets (RFC 9001 §5.2).
pub fn initial_dst_cid() -> quinn_proto::ConnectionId {
    let mut b = [0u8; 20];
    let _ = SEEDED_RANDOM.fill(&mut b);
    quinn_proto::ConnectionId::new(&b)
}

/// Connection IDs from a seeded stream (quinn's default generators use system randomness).
pub struct SeededCids {
    rng: SimRng,
}

impl SeededCids {
    pub fn new(seed: u64) -> Self {
        SeededCids { rng: SimRng::seed_from_u64(seed) }
    }
}

impl quinn_proto::ConnectionIdGenerator for SeededCids {
    fn generate_cid(&mut self) -> quinn_proto::ConnectionId {
        let mut b = [0u8; 8];
        self.rng.fill_bytes(&mut b);
        quinn_proto::ConnectionId::new(&b)
    }
    fn cid_len(&self) -> usize {
        8
    }
    fn cid_lifetime(&self) -> Option<std::time::Duration> {
        None
    }
}
