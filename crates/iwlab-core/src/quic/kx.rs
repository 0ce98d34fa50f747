//! The X25519 key exchange (RFC 7748, TLS 1.3's key share, RFC 8446 §4.2.8) with private keys
//! drawn from the connection's seeded stream: rustls' ring group draws them from the system's
//! randomness, and then the bytes of every handshake, and so of a run's pcap and key log,
//! would differ between runs. The curve is x25519-dalek's.

use super::crypto::SEEDED_RANDOM;
use rustls::crypto::{ActiveKeyExchange, SecureRandom, SharedSecret, SupportedKxGroup};
use rustls::{Error, NamedGroup, PeerMisbehaved};
use x25519_dalek::{PublicKey, StaticSecret};

/// The only group the simulated endpoints offer and accept.
#[derive(Debug)]
pub(super) struct SeededX25519;

impl SupportedKxGroup for SeededX25519 {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let mut key = [0u8; 32];
        SEEDED_RANDOM.fill(&mut key).map_err(|_| Error::FailedToGetRandomBytes)?;
        // RFC 7748 §5: any 32 bytes are a private key (x25519-dalek clamps them).
        let secret = StaticSecret::from(key);
        let public = PublicKey::from(&secret);
        Ok(Box::new(KeyShare { secret, public }))
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

/// One side's key share of one handshake.
struct KeyShare {
    secret: StaticSecret,
    public: PublicKey,
}

impl ActiveKeyExchange for KeyShare {
    fn complete(self: Box<Self>, peer: &[u8]) -> Result<SharedSecret, Error> {
        // RFC 8446 §4.2.8.2: an X25519 key share is 32 bytes.
        let peer: [u8; 32] = peer.try_into().map_err(|_| PeerMisbehaved::InvalidKeyShare)?;
        let shared = self.secret.diffie_hellman(&PublicKey::from(peer));
        // RFC 8446 §7.4.2 (RFC 7748 §6.1): an all-zero shared secret is refused, as ring does.
        if !shared.was_contributory() {
            return Err(PeerMisbehaved::InvalidKeyShare.into());
        }
        Ok(SharedSecret::from(&shared.as_bytes()[..]))
    }

    fn pub_key(&self) -> &[u8] {
        self.public.as_bytes()
    }

    fn group(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

#[cfg(test)]
mod tests {
    use super::super::crypto::with_rng;
    use super::*;
    use crate::engine::SimRng;
    use rand::SeedableRng;

    fn share(seed: u64) -> Box<dyn ActiveKeyExchange> {
        with_rng(&mut Some(SimRng::seed_from_u64(seed)), || SeededX25519.start().unwrap())
    }

    #[test]
    fn a_key_share_is_a_function_of_the_seed() {
        assert_eq!(share(1).pub_key(), share(1).pub_key());
        assert_ne!(share(1).pub_key(), share(2).pub_key());
        assert_eq!(share(1).pub_key().len(), 32);
    }

    #[test]
    fn both_sides_agree_and_ring_agrees_with_them() {
        let (a, b) = (share(1), share(2));
        let (pa, pb) = (a.pub_key().to_vec(), b.pub_key().to_vec());
        assert_eq!(a.complete(&pb).unwrap().secret_bytes(), b.complete(&pa).unwrap().secret_bytes());
        // rustls' own (ring) X25519 on the other side: the wire format is the standard one.
        let ring = rustls::crypto::ring::kx_group::X25519.start().unwrap();
        let pr = ring.pub_key().to_vec();
        let ours = share(3);
        let po = ours.pub_key().to_vec();
        assert_eq!(ours.complete(&pr).unwrap().secret_bytes(), ring.complete(&po).unwrap().secret_bytes());
    }

    #[test]
    fn a_share_of_the_wrong_length_or_of_low_order_is_refused() {
        let bad = Error::PeerMisbehaved(PeerMisbehaved::InvalidKeyShare);
        assert_eq!(share(1).complete(&[9u8; 31]).err(), Some(bad.clone()));
        // The point of order 1 (u = 0) makes the shared secret all zeros.
        assert_eq!(share(1).complete(&[0u8; 32]).err(), Some(bad));
    }
}
