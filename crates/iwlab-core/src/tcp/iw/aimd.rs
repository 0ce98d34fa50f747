//! AIMD on a per-destination initial window. References: Chiu & Jain,
//! "Analysis of the increase and decrease algorithms for congestion avoidance" (1989) for
//! additive increase / multiplicative decrease; RFC 6928 §4 for the evidence (loss in the
//! initial or a restart window after more than 4 KB was sent) and §10's advice to keep such
//! evidence per destination.
//!
//! Per destination, the IW (segments) starts at `initial`, and:
//! - on evidence (an `IwEventKind::LossInInitialWindow` with `bytes_sent` > 4096):
//!   IW ← max(`min`, ⌊IW / 2⌋), and the count of clean connections restarts at 0;
//! - on a clean close (`Closed` with `loss == false`): the count grows by one; when it
//!   reaches `raise_after`, IW ← min(`max`, IW + `step`) and the count restarts at 0;
//! - on a close with loss (not necessarily in the IW): the count restarts at 0 (clean
//!   connections must be consecutive), the IW is unchanged.
//!
//! The window is IW × MSS bytes. Restart windows follow the same per-destination IW (already
//! halved when the connection's own IW loss was reported).

use super::policy::{is_iw_loss_evidence, DstKey, IwContext, IwEvent, IwEventKind, IwPolicy};
use crate::engine::SimTime;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Why a destination's IW is what it is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Why {
    /// Not changed since the first connection.
    Initial,
    /// Raised after `raise_after` clean connections.
    Raised,
    /// Halved on loss in the IW after `bytes_sent` bytes.
    Halved { bytes_sent: u64 },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Dst {
    iw: u32,
    clean: u32,
    since: SimTime,
    why: Why,
}

#[derive(Clone, Debug)]
pub struct Aimd {
    initial: u32,
    min: u32,
    max: u32,
    step: u32,
    raise_after: u32,
    dsts: BTreeMap<DstKey, Dst>,
}

impl Aimd {
    pub fn new(initial: u32, min: u32, max: u32, step: u32, raise_after: u32) -> Self {
        assert!(
            1 <= min && min <= initial && initial <= max && step >= 1 && raise_after >= 1,
            "validated by the scenario"
        );
        Aimd { initial, min, max, step, raise_after, dsts: BTreeMap::new() }
    }

    /// The IW towards `dst`, segments.
    pub fn segments(&self, dst: DstKey) -> u32 {
        self.dsts.get(&dst).map_or(self.initial, |d| d.iw)
    }

    fn entry(&mut self, dst: DstKey, now: SimTime) -> &mut Dst {
        let initial = self.initial;
        self.dsts.entry(dst).or_insert(Dst { iw: initial, clean: 0, since: now, why: Why::Initial })
    }
}

impl IwPolicy for Aimd {
    fn initial_window(&mut self, ctx: &IwContext) -> u64 {
        self.segments(ctx.dst) as u64 * ctx.mss
    }
    fn learn(&mut self, ev: &IwEvent) {
        let (min, max, step, raise_after) = (self.min, self.max, self.step, self.raise_after);
        if let Some(bytes_sent) = is_iw_loss_evidence(ev) {
            let d = self.entry(ev.dst, ev.now);
            let iw = (d.iw / 2).max(min);
            *d = Dst { iw, clean: 0, since: ev.now, why: Why::Halved { bytes_sent } };
            return;
        }
        if let IwEventKind::Closed { loss, .. } = ev.kind {
            let d = self.entry(ev.dst, ev.now);
            if loss {
                d.clean = 0;
                return;
            }
            d.clean += 1;
            if d.clean >= raise_after {
                d.clean = 0;
                let iw = d.iw.saturating_add(step).min(max);
                if iw != d.iw {
                    *d = Dst { iw, clean: 0, since: ev.now, why: Why::Raised };
                }
            }
        }
    }
    fn name(&self) -> &'static str {
        "aimd"
    }
    fn describe(&self, dst: DstKey, _now: SimTime) -> Value {
        let Some(d) = self.dsts.get(&dst) else {
            return json!({ "iw_segments": self.initial, "clean_connections": 0, "evidence": null,
                           "since_ns": null, "why": "no connection seen yet: the initial IW" });
        };
        let (evidence, why) = match d.why {
            Why::Initial => (Value::Null, "no IW change yet: the initial IW".to_string()),
            Why::Raised => {
                (Value::Null, format!("raised by {} after {} clean connections", self.step, self.raise_after))
            }
            Why::Halved { bytes_sent } => (
                json!({ "kind": "loss_in_initial_window", "bytes_sent": bytes_sent }),
                format!("halved: loss in the initial window after {bytes_sent} bytes (> 4096, RFC 6928 §4)"),
            ),
        };
        json!({ "iw_segments": d.iw, "clean_connections": d.clean, "evidence": evidence,
                "since_ns": d.since.as_nanos(), "why": why })
    }
    fn export_state(&self) -> Value {
        let rows: Vec<Value> = self
            .dsts
            .iter()
            .map(|(k, d)| {
                let (why, b) = match d.why {
                    Why::Initial => ("initial", 0),
                    Why::Raised => ("raised", 0),
                    Why::Halved { bytes_sent } => ("halved", bytes_sent),
                };
                json!([k, d.iw, d.clean, d.since.as_nanos(), why, b])
            })
            .collect();
        json!({ "destinations": rows })
    }
    fn import_state(&mut self, v: &Value) -> Result<(), String> {
        type Row = (DstKey, u32, u32, u64, String, u64);
        let rows: Vec<Row> = serde_json::from_value(v.get("destinations").cloned().unwrap_or(Value::Null))
            .map_err(|e| format!("aimd state: {e}"))?;
        self.dsts.clear();
        for (k, iw, clean, since, why, bytes_sent) in rows {
            let why = match why.as_str() {
                "initial" => Why::Initial,
                "raised" => Why::Raised,
                "halved" => Why::Halved { bytes_sent },
                other => return Err(format!("aimd state: why = {other:?}; expected initial, raised or halved")),
            };
            // Parameters may have changed since the snapshot: keep the IW inside the new bounds.
            let iw = iw.clamp(self.min, self.max);
            self.dsts.insert(k, Dst { iw, clean, since: SimTime::from_nanos(since), why });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;

    fn ctx(dst: DstKey) -> IwContext {
        IwContext { mss: 1000, dst, declared_size: None, now: SimTime::ZERO }
    }
    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }
    fn iw_loss(dst: DstKey, ms: u64, bytes_sent: u64) -> IwEvent {
        IwEvent { dst, now: at(ms), kind: IwEventKind::LossInInitialWindow { bytes_sent } }
    }
    fn closed(dst: DstKey, ms: u64, loss: bool) -> IwEvent {
        let kind = IwEventKind::Closed { bytes_sent: 20_000, loss, cwnd: 20_000, bytes_acked: 20_000, retrans: 0 };
        IwEvent { dst, now: at(ms), kind }
    }

    #[test]
    fn evidence_halves_the_iw_down_to_min() {
        let mut p = Aimd::new(10, 3, 40, 1, 4);
        assert_eq!(p.initial_window(&ctx(1)), 10_000);
        p.learn(&iw_loss(1, 5, 10_000));
        assert_eq!(p.initial_window(&ctx(1)), 5_000, "10 -> 5");
        p.learn(&iw_loss(1, 6, 5_000));
        assert_eq!(p.initial_window(&ctx(1)), 3_000, "5 -> max(3, 2) = 3");
        p.learn(&iw_loss(1, 7, 4_000));
        assert_eq!(p.initial_window(&ctx(1)), 3_000, "at min");
        assert_eq!(p.initial_window(&ctx(2)), 10_000, "other destinations keep theirs");
    }

    #[test]
    fn loss_after_4kb_or_less_is_not_evidence() {
        let mut p = Aimd::new(10, 3, 40, 1, 4);
        p.learn(&iw_loss(1, 0, 4096));
        assert_eq!(p.segments(1), 10);
        p.learn(&iw_loss(1, 0, 4097));
        assert_eq!(p.segments(1), 5);
    }

    #[test]
    fn n_consecutive_clean_connections_raise_by_step_up_to_max() {
        let mut p = Aimd::new(10, 3, 12, 2, 3);
        p.learn(&closed(1, 1, false));
        p.learn(&closed(1, 2, false));
        assert_eq!(p.segments(1), 10, "two clean of three");
        p.learn(&closed(1, 3, true));
        p.learn(&closed(1, 4, false));
        p.learn(&closed(1, 5, false));
        assert_eq!(p.segments(1), 10, "a lossy close restarts the count");
        p.learn(&closed(1, 6, false));
        assert_eq!(p.segments(1), 12, "three clean in a row: +2");
        for t in 7..13 {
            p.learn(&closed(1, t, false));
        }
        assert_eq!(p.segments(1), 12, "capped at max");
        p.learn(&iw_loss(1, 13, 12_000));
        assert_eq!(p.segments(1), 6);
        let d = p.describe(1, at(14));
        assert_eq!(d["iw_segments"], 6);
        assert_eq!(d["since_ns"], 13_000_000u64);
        assert_eq!(d["evidence"]["bytes_sent"], 12_000);
    }

    #[test]
    fn state_round_trips() {
        let mut p = Aimd::new(10, 3, 40, 1, 2);
        p.learn(&iw_loss(1, 1, 9000));
        p.learn(&closed(2, 2, false));
        let mut q = Aimd::new(10, 3, 40, 1, 2);
        q.import_state(&p.export_state()).unwrap();
        assert_eq!(q.segments(1), 5);
        q.learn(&closed(2, 3, false));
        assert_eq!(q.segments(2), 11, "the clean count survived");
        assert_eq!(p.describe(1, at(5)), q.describe(1, at(5)));
    }
}
