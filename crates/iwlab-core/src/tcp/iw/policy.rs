//! What an initial-window policy is: the trait, what it is told about a connection, and what
//! it learns back. The policies (one per file) and their enum (`mod.rs`) build on it.

use crate::engine::SimTime;
use crate::net::packet::NodeId;

/// RFC 6928 §4: fall back only when "more than 4 KB of data was sent" in the lost window.
pub const FALLBACK_MIN_BYTES: u64 = 4096;

/// A destination as policies key their per-destination state: opaque to them. In the
/// simulator it is the peer's node; on real hosts (the PyO3 `PolicyEngine`) an interned
/// route prefix.
pub type DstKey = NodeId;

/// What a policy knows when a connection asks for its initial window.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IwContext {
    /// Sender maximum segment size, bytes.
    pub mss: u64,
    /// The peer this connection sends to.
    pub dst: DstKey,
    /// Bytes the application said it will send on this connection, if it said.
    pub declared_size: Option<u64>,
    pub now: SimTime,
}

/// What a connection reports back to its policy.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IwEvent {
    pub dst: DstKey,
    pub now: SimTime,
    pub kind: IwEventKind,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IwEventKind {
    /// Loss was detected while the initial window (or a restart window) was the first
    /// unacknowledged flight; `bytes_sent` is what had been sent in that window.
    LossInInitialWindow { bytes_sent: u64 },
    /// The connection closed. `loss` says whether any loss was detected during it. Every
    /// field is one Linux reports in `tcp_info` at close, so a watcher on a real host can
    /// send the same event: `bytes_sent` ≈ tcpi_bytes_sent, `loss` ⇔ tcpi_total_retrans > 0,
    /// `cwnd` = tcpi_snd_cwnd × tcpi_snd_mss (bytes), `bytes_acked` = tcpi_bytes_acked,
    /// `retrans` = tcpi_total_retrans (segments).
    Closed { bytes_sent: u64, loss: bool, cwnd: u64, bytes_acked: u64, retrans: u64 },
}

/// An initial-window policy. Windows are in bytes.
pub trait IwPolicy {
    /// The initial window for a new connection (RFC 5681 IW, before any SYN-loss rule).
    fn initial_window(&mut self, ctx: &IwContext) -> u64;
    /// The restart window's IW after an idle period (RFC 5681 §4.1: RW = min(IW, cwnd)).
    /// `iw_loss_bytes` is `Some(bytes sent)` when this connection lost data in its IW or a
    /// restart window (RFC 6928 §4 falls back to RFC 3390 then).
    fn restart_window(&mut self, ctx: &IwContext, iw_loss_bytes: Option<u64>) -> u64 {
        let _ = iw_loss_bytes;
        self.initial_window(ctx)
    }
    /// Learn from what happened to a connection.
    fn learn(&mut self, _ev: &IwEvent) {}
    /// Short name, for records.
    fn name(&self) -> &'static str;
    /// What the policy holds about `dst` at `now`, JSON-able, for status displays: the IW
    /// it would give (segments), the evidence, since when and why. Stateless policies: null.
    fn describe(&self, _dst: DstKey, _now: SimTime) -> serde_json::Value {
        serde_json::Value::Null
    }
    /// The learned per-destination state, for persistence (`import_state` reads it back).
    fn export_state(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    /// Restores what `export_state` wrote (a policy of the same kind). Err: what is wrong.
    fn import_state(&mut self, v: &serde_json::Value) -> Result<(), String> {
        if v.is_null() {
            Ok(())
        } else {
            Err(format!("policy {:?} keeps no state, got {v}", self.name()))
        }
    }
}

/// The RFC 6928 §4 evidence test: loss in the initial (or a restart) window after more than
/// 4 KB had been sent in it.
pub fn is_iw_loss_evidence(ev: &IwEvent) -> Option<u64> {
    match ev.kind {
        IwEventKind::LossInInitialWindow { bytes_sent } if bytes_sent > FALLBACK_MIN_BYTES => {
            Some(bytes_sent)
        }
        _ => None,
    }
}

