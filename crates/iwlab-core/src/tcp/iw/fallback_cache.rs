//! RFC 6928 with per-destination fallback (RFC 6928 §4 "Fallback" and §10 caching advice):
//! loss detected in the initial or a restart window after more than 4 KB was sent marks the
//! destination; new connections to a marked destination use the RFC 3390 IW until the mark
//! expires, and the connection itself uses RFC 3390 for its restart windows.

use super::rfc3390::rfc3390_window;
use super::rfc6928::rfc6928_window;
use super::{IwContext, IwEvent, IwEventKind, IwPolicy};
use crate::engine::{SimDuration, SimTime};
use crate::net::packet::NodeId;
use std::collections::BTreeMap;

/// RFC 6928 §4: fall back only when "more than 4 KB of data was sent" in the lost window.
pub const FALLBACK_MIN_BYTES: u64 = 4096;

#[derive(Clone, Debug)]
pub struct Rfc6928Fallback {
    expiry: SimDuration,
    /// Destination → time its evidence expires. A BTreeMap keeps iteration deterministic.
    cache: BTreeMap<NodeId, SimTime>,
}

impl Rfc6928Fallback {
    pub fn new(expiry: SimDuration) -> Self {
        Rfc6928Fallback { expiry, cache: BTreeMap::new() }
    }
    /// Is there unexpired evidence of trouble towards `dst` at `now`?
    pub fn is_cached(&self, dst: NodeId, now: SimTime) -> bool {
        self.cache.get(&dst).is_some_and(|&until| now < until)
    }
}

impl IwPolicy for Rfc6928Fallback {
    fn initial_window(&mut self, ctx: &IwContext) -> u64 {
        if self.is_cached(ctx.dst, ctx.now) {
            rfc3390_window(ctx.mss)
        } else {
            self.cache.remove(&ctx.dst);
            rfc6928_window(ctx.mss)
        }
    }
    fn restart_window(&mut self, ctx: &IwContext, iw_loss_bytes: Option<u64>) -> u64 {
        match iw_loss_bytes {
            Some(b) if b > FALLBACK_MIN_BYTES => rfc3390_window(ctx.mss),
            _ => self.initial_window(ctx),
        }
    }
    fn learn(&mut self, ev: &IwEvent) {
        if let IwEventKind::LossInInitialWindow { bytes_sent } = ev.kind {
            if bytes_sent > FALLBACK_MIN_BYTES {
                self.cache.insert(ev.dst, ev.now + self.expiry);
            }
        }
    }
    fn name(&self) -> &'static str {
        "rfc6928-fallback"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(dst: NodeId, t_ms: u64) -> IwContext {
        IwContext { mss: 1460, dst, declared_size: None, now: SimTime::ZERO + SimDuration::from_millis(t_ms) }
    }
    fn loss(dst: NodeId, t_ms: u64, bytes_sent: u64) -> IwEvent {
        IwEvent {
            dst,
            now: SimTime::ZERO + SimDuration::from_millis(t_ms),
            kind: IwEventKind::LossInInitialWindow { bytes_sent },
        }
    }

    #[test]
    fn loss_in_a_large_iw_moves_that_destination_to_rfc3390_until_expiry() {
        let mut p = Rfc6928Fallback::new(SimDuration::from_secs(10));
        assert_eq!(p.initial_window(&ctx(7, 0)), 14600);
        p.learn(&loss(7, 100, 14600));
        assert_eq!(p.initial_window(&ctx(7, 200)), 4380, "cached destination falls back");
        assert_eq!(p.initial_window(&ctx(8, 200)), 14600, "other destinations keep IW10");
        assert_eq!(p.initial_window(&ctx(7, 10_099)), 4380, "still cached just before expiry");
        assert_eq!(p.initial_window(&ctx(7, 10_100)), 14600, "expired");
    }

    #[test]
    fn loss_after_4kb_or_less_is_not_evidence() {
        let mut p = Rfc6928Fallback::new(SimDuration::from_secs(10));
        p.learn(&loss(7, 0, 4096));
        assert_eq!(p.initial_window(&ctx(7, 1)), 14600);
    }

    #[test]
    fn the_restart_window_falls_back_after_iw_loss() {
        let mut p = Rfc6928Fallback::new(SimDuration::from_secs(10));
        assert_eq!(p.restart_window(&ctx(7, 0), Some(5000)), 4380);
        assert_eq!(p.restart_window(&ctx(7, 0), None), 14600);
    }
}
