//! RFC 6928 with per-destination fallback (RFC 6928 §4 "Fallback" and §10 caching advice):
//! loss detected in the initial or a restart window after more than 4 KB was sent marks the
//! destination; new connections to a marked destination use the RFC 3390 IW until the mark
//! expires, and the connection itself uses RFC 3390 for its restart windows.
//!
//! A real cache is bounded (Linux's tcp_metrics reclaims entries too): at most `max_entries`
//! destinations are held; inserting into a full cache first drops expired entries, then the
//! entry that would expire soonest (the oldest evidence; ties: the lowest key). The default
//! bound (16 384) is above the simulator's host limit, so scenarios never evict.

use super::rfc3390::rfc3390_window;
use super::rfc6928::rfc6928_window;
use super::policy::{is_iw_loss_evidence, DstKey, IwContext, IwEvent, IwPolicy};
use crate::engine::{SimDuration, SimTime};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub use super::policy::FALLBACK_MIN_BYTES;

/// Default bound on cached destinations (≥ the simulator's `MAX_HOSTS`).
pub const DEFAULT_MAX_ENTRIES: usize = 16_384;

/// One destination's evidence.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// When the evidence was seen.
    since: SimTime,
    /// When it expires.
    until: SimTime,
    /// Bytes sent in the window that lost data.
    bytes_sent: u64,
}

#[derive(Clone, Debug)]
pub struct Rfc6928Fallback {
    expiry: SimDuration,
    max_entries: usize,
    /// Destination → its evidence. A BTreeMap keeps iteration deterministic.
    cache: BTreeMap<DstKey, Entry>,
}

impl Rfc6928Fallback {
    pub fn new(expiry: SimDuration) -> Self {
        Self::with_capacity(expiry, DEFAULT_MAX_ENTRIES)
    }
    /// A cache holding at most `max_entries` (≥ 1) destinations.
    pub fn with_capacity(expiry: SimDuration, max_entries: usize) -> Self {
        assert!(max_entries > 0, "validated by the scenario");
        Rfc6928Fallback { expiry, max_entries, cache: BTreeMap::new() }
    }
    /// Is there unexpired evidence of trouble towards `dst` at `now`?
    pub fn is_cached(&self, dst: DstKey, now: SimTime) -> bool {
        self.cache.get(&dst).is_some_and(|e| now < e.until)
    }
    /// Destinations held (expired entries included until they are dropped).
    pub fn len(&self) -> usize {
        self.cache.len()
    }
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }

    fn insert(&mut self, dst: DstKey, e: Entry) {
        if !self.cache.contains_key(&dst) && self.cache.len() >= self.max_entries {
            let now = e.since;
            self.cache.retain(|_, x| now < x.until);
            if self.cache.len() >= self.max_entries {
                let oldest = self.cache.iter().min_by_key(|(k, x)| (x.until, **k)).map(|(k, _)| *k);
                if let Some(k) = oldest {
                    self.cache.remove(&k);
                }
            }
        }
        self.cache.insert(dst, e);
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
        if let Some(bytes_sent) = is_iw_loss_evidence(ev) {
            self.insert(ev.dst, Entry { since: ev.now, until: ev.now + self.expiry, bytes_sent });
        }
    }
    fn name(&self) -> &'static str {
        "rfc6928-fallback"
    }
    fn describe(&self, dst: DstKey, now: SimTime) -> Value {
        match self.cache.get(&dst) {
            Some(e) if now < e.until => json!({
                "fallback": true,
                "evidence": { "kind": "loss_in_initial_window", "bytes_sent": e.bytes_sent },
                "since_ns": e.since.as_nanos(),
                "until_ns": e.until.as_nanos(),
                "why": format!("loss in the initial window after {} bytes (> {FALLBACK_MIN_BYTES}): RFC 3390 IW \
                                until the evidence expires (RFC 6928 §4)", e.bytes_sent),
            }),
            _ => json!({ "fallback": false, "evidence": null, "since_ns": null, "until_ns": null,
                         "why": "no unexpired evidence: RFC 6928 IW" }),
        }
    }
    fn export_state(&self) -> Value {
        let entries: Vec<Value> =
            self.cache.iter().map(|(k, e)| json!([k, e.since.as_nanos(), e.until.as_nanos(), e.bytes_sent])).collect();
        json!({ "entries": entries })
    }
    fn import_state(&mut self, v: &Value) -> Result<(), String> {
        let rows: Vec<(DstKey, u64, u64, u64)> =
            serde_json::from_value(v.get("entries").cloned().unwrap_or(Value::Null))
                .map_err(|e| format!("rfc6928-fallback state: {e}"))?;
        self.cache.clear();
        for (k, since, until, bytes_sent) in rows {
            let e = Entry { since: SimTime::from_nanos(since), until: SimTime::from_nanos(until), bytes_sent };
            self.insert(k, e);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::net::packet::NodeId;
    use crate::tcp::iw::IwEventKind;

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

    #[test]
    fn a_full_cache_drops_expired_entries_then_the_oldest_evidence() {
        let mut p = Rfc6928Fallback::with_capacity(SimDuration::from_secs(10), 2);
        p.learn(&loss(1, 0, 5000)); // expires at 10 s
        p.learn(&loss(2, 1000, 5000)); // expires at 11 s
        p.learn(&loss(3, 2000, 5000)); // full: drops 1 (soonest to expire)
        assert_eq!(p.len(), 2);
        assert_eq!(p.initial_window(&ctx(1, 2001)), 14600, "evicted");
        assert_eq!(p.initial_window(&ctx(2, 2001)), 4380);
        assert_eq!(p.initial_window(&ctx(3, 2001)), 4380);
        // At 11.5 s entry 2 has expired: inserting 4 drops it, and 3 stays.
        p.learn(&loss(4, 11_500, 5000));
        assert_eq!(p.len(), 2);
        assert!(p.is_cached(3, SimTime::ZERO + SimDuration::from_millis(11_999)));
        assert!(p.is_cached(4, SimTime::ZERO + SimDuration::from_millis(11_999)));
        // New evidence for a held destination refreshes it without evicting.
        p.learn(&loss(3, 11_600, 5000));
        assert_eq!(p.len(), 2);
        assert!(p.is_cached(3, SimTime::ZERO + SimDuration::from_millis(21_599)));
    }

    #[test]
    fn state_round_trips_and_describes_the_evidence() {
        let mut p = Rfc6928Fallback::new(SimDuration::from_secs(10));
        p.learn(&loss(7, 100, 14600));
        let d = p.describe(7, SimTime::ZERO + SimDuration::from_millis(200));
        assert_eq!(d["fallback"], true);
        assert_eq!(d["since_ns"], 100_000_000u64);
        assert_eq!(d["until_ns"], 10_100_000_000u64);
        assert_eq!(d["evidence"]["bytes_sent"], 14600);
        let mut q = Rfc6928Fallback::new(SimDuration::from_secs(10));
        q.import_state(&p.export_state()).unwrap();
        assert_eq!(q.initial_window(&ctx(7, 10_099)), 4380);
        assert_eq!(q.initial_window(&ctx(7, 10_100)), 14600);
        assert!(q.import_state(&serde_json::json!({"entries": "x"})).is_err());
    }
}
