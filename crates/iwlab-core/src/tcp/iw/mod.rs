//! Initial-window policies: how many bytes a new connection may send in its first round trip.
//!
//! A policy sees an [`IwContext`] for each new connection (MSS, destination, the size the
//! application declared, time) and learns from [`IwEvent`]s (loss in the initial window,
//! connection closed), so caching and adaptive policies fit the same trait. A connection
//! holds the index of its policy in the simulation's table, so one policy instance (and its
//! cache) can serve a client, a server, or one connection.
//! Adding a policy = one file + one arm in [`AnyIw`] + one in [`IwConfig`].

pub mod aimd;
pub mod fallback_cache;
pub mod fixed;
pub mod learned;
pub mod policy;
pub mod rfc3390;
pub mod rfc6928;
pub mod routed;
pub mod size_based;

use crate::engine::{SimDuration, SimTime};
pub use aimd::Aimd;
pub use fallback_cache::Rfc6928Fallback;
pub use fixed::Fixed;
pub use learned::Learned;
pub use policy::{is_iw_loss_evidence, DstKey, IwContext, IwEvent, IwEventKind, IwPolicy};
pub use rfc3390::Rfc3390;
pub use rfc6928::Rfc6928;
pub use routed::{RouteTable, Routed};
pub use size_based::SizeBased;

/// IW policies as a scenario names them.
#[derive(Clone, Debug, PartialEq)]
pub enum IwConfig {
    /// A fixed number of segments (Linux `initcwnd N`).
    Fixed { segments: u32 },
    /// RFC 3390: min(4*MSS, max(2*MSS, 4380)).
    Rfc3390,
    /// RFC 6928: min(10*MSS, max(2*MSS, 14600)).
    Rfc6928,
    /// RFC 6928 with a per-destination cache of loss evidence; cached destinations get the
    /// RFC 3390 window until `expiry` has passed.
    Rfc6928Fallback { expiry: SimDuration, max_entries: u32 },
    /// IW(s) = V if s <= θ, else floor((θ/s)·V + (1 − θ/s)·MinIW) segments (Barik & Divakaran).
    SizeBased { theta_bytes: u64, v: u32, min_iw: u32 },
    /// Per-destination AIMD on the IW (segments): +`step` after `raise_after` clean closes,
    /// halved on RFC 6928 §4 evidence, within [`min`, `max`], starting at `initial`.
    Aimd { initial: u32, min: u32, max: u32, step: u32, raise_after: u32 },
    /// Per-destination IW learned from the cwnd at close of the last `samples` connections
    /// that tested their window: the `percentile` (nearest rank) in segments, in [`min`, `max`].
    Learned { initial: u32, min: u32, max: u32, samples: u32, percentile: u32 },
}

impl IwConfig {
    pub const NAMES: &'static [&'static str] =
        &["fixed", "rfc3390", "rfc6928", "rfc6928-fallback", "size-based", "aimd", "learned"];

    /// The kinds whose decisions depend only on IW-loss events: their `learn` ignores
    /// [`IwEventKind::Closed`], so the clean closes of their routes may be summed per prefix
    /// (`iwlab-bpf evidence --prefix KEY=sum`, the watcher's `evidence_bpf.SUMMARY_KINDS`)
    /// without changing a decision. `aimd` counts consecutive clean closes and `learned` keeps
    /// each close's window: their routes keep a line per connection, as a new kind does until
    /// it is listed here (the test below checks the list against each policy's `learn`).
    pub const SUMMARY_KINDS: &'static [&'static str] = &["fixed", "rfc3390", "rfc6928", "rfc6928-fallback", "size-based"];

    pub fn build(&self) -> AnyIw {
        let imp = match *self {
            IwConfig::Fixed { segments } => IwImpl::Fixed(Fixed::new(segments)),
            IwConfig::Rfc3390 => IwImpl::Rfc3390(Rfc3390),
            IwConfig::Rfc6928 => IwImpl::Rfc6928(Rfc6928),
            IwConfig::Rfc6928Fallback { expiry, max_entries } => {
                IwImpl::Rfc6928Fallback(Rfc6928Fallback::with_capacity(expiry, max_entries as usize))
            }
            IwConfig::SizeBased { theta_bytes, v, min_iw } => IwImpl::SizeBased(SizeBased::new(theta_bytes, v, min_iw)),
            IwConfig::Aimd { initial, min, max, step, raise_after } => {
                IwImpl::Aimd(Aimd::new(initial, min, max, step, raise_after))
            }
            IwConfig::Learned { initial, min, max, samples, percentile } => {
                IwImpl::Learned(Learned::new(initial, min, max, samples, percentile))
            }
        };
        AnyIw { imp, log: None }
    }
}

/// The policy implementations.
pub enum IwImpl {
    Fixed(Fixed),
    Rfc3390(Rfc3390),
    Rfc6928(Rfc6928),
    Rfc6928Fallback(Rfc6928Fallback),
    SizeBased(SizeBased),
    Aimd(Aimd),
    Learned(Learned),
    /// A host's policies by destination route (`routed.rs`); built from `[[iw.routes]]`.
    Routed(Box<Routed<AnyIw>>),
}

/// Runs `$e` with `$p` bound to the implementation inside `$imp` (`&self.imp` or `&mut self.imp`).
macro_rules! each_iw {
    ($imp:expr, $p:ident => $e:expr) => {
        match $imp {
            IwImpl::Fixed($p) => $e,
            IwImpl::Rfc3390($p) => $e,
            IwImpl::Rfc6928($p) => $e,
            IwImpl::Rfc6928Fallback($p) => $e,
            IwImpl::SizeBased($p) => $e,
            IwImpl::Aimd($p) => $e,
            IwImpl::Learned($p) => $e,
            IwImpl::Routed($p) => $e,
        }
    };
}

/// A policy as the simulation holds it: the implementation, and optionally a record of every
/// decision and event (for `iw_events` tables and for replaying a run into the same policy
/// code elsewhere). Recording changes no answer.
pub struct AnyIw {
    pub imp: IwImpl,
    log: Option<Vec<IwRecord>>,
}

/// What a policy was asked or told, in order: one row per decision (`Iw`, `Restart`) or event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IwRecord {
    pub now: SimTime,
    pub dst: DstKey,
    pub what: IwRecordKind,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IwRecordKind {
    /// `initial_window` answered `window` bytes.
    Iw { mss: u64, declared_size: Option<u64>, window: u64 },
    /// `restart_window` answered `window` bytes.
    Restart { mss: u64, iw_loss_bytes: Option<u64>, window: u64 },
    /// `learn` was given this event.
    Event(IwEventKind),
}

impl AnyIw {
    /// A host's policy by destination route.
    pub fn routed(r: Routed<AnyIw>) -> Self {
        AnyIw { imp: IwImpl::Routed(Box::new(r)), log: None }
    }
    /// Starts recording every decision and event.
    pub fn record(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }
    /// The name of the route policy that decides for `dst` when this is a host's policy by
    /// destination route and a route covers `dst`; None otherwise (this policy decides).
    pub fn route_policy(&self, dst: DstKey) -> Option<&str> {
        match &self.imp {
            IwImpl::Routed(r) => r.route_policy(dst),
            _ => None,
        }
    }
    /// What was recorded (empty unless `record` was called).
    pub fn records(&self) -> &[IwRecord] {
        self.log.as_deref().unwrap_or(&[])
    }
}

impl IwPolicy for AnyIw {
    fn initial_window(&mut self, ctx: &IwContext) -> u64 {
        let window = each_iw!(&mut self.imp, p => p.initial_window(ctx));
        if let Some(log) = &mut self.log {
            let what = IwRecordKind::Iw { mss: ctx.mss, declared_size: ctx.declared_size, window };
            log.push(IwRecord { now: ctx.now, dst: ctx.dst, what });
        }
        window
    }
    fn restart_window(&mut self, ctx: &IwContext, iw_loss_bytes: Option<u64>) -> u64 {
        let window = each_iw!(&mut self.imp, p => p.restart_window(ctx, iw_loss_bytes));
        if let Some(log) = &mut self.log {
            let what = IwRecordKind::Restart { mss: ctx.mss, iw_loss_bytes, window };
            log.push(IwRecord { now: ctx.now, dst: ctx.dst, what });
        }
        window
    }
    fn learn(&mut self, ev: &IwEvent) {
        if let Some(log) = &mut self.log {
            log.push(IwRecord { now: ev.now, dst: ev.dst, what: IwRecordKind::Event(ev.kind) });
        }
        each_iw!(&mut self.imp, p => p.learn(ev))
    }
    fn name(&self) -> &'static str {
        each_iw!(&self.imp, p => p.name())
    }
    fn describe(&self, dst: DstKey, now: SimTime) -> serde_json::Value {
        each_iw!(&self.imp, p => p.describe(dst, now))
    }
    fn export_state(&self) -> serde_json::Value {
        each_iw!(&self.imp, p => p.export_state())
    }
    fn import_state(&mut self, v: &serde_json::Value) -> Result<(), String> {
        each_iw!(&mut self.imp, p => p.import_state(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind with its scenario defaults (`fixed` needs its segments).
    fn policy(kind: &str) -> AnyIw {
        let spec = if kind == "fixed" { r#"{"kind": "fixed", "segments": 7}"#.into() } else { format!(r#"{{"kind": "{kind}"}}"#) };
        let spec: crate::scenario::model::IwSpec = serde_json::from_str(&spec).unwrap();
        spec.config().build()
    }

    #[test]
    fn the_summary_kinds_are_exactly_those_whose_decisions_no_close_changes() {
        for &kind in IwConfig::NAMES {
            let (mut told, mut untold) = (policy(kind), policy(kind));
            let ctx = |ms: u64, size| IwContext {
                mss: 1000,
                dst: 1,
                declared_size: size,
                now: SimTime::ZERO + SimDuration::from_millis(ms),
            };
            let mut same = true;
            for i in 0..40u64 {
                let now = SimTime::ZERO + SimDuration::from_millis(i * 10);
                // Clean and lossy closes with windows above and below the IW.
                let kind = IwEventKind::Closed {
                    bytes_sent: 50_000,
                    loss: i % 7 == 6,
                    cwnd: 2_000 + 3_000 * (i % 20),
                    bytes_acked: 50_000,
                    retrans: u64::from(i % 7 == 6),
                };
                told.learn(&IwEvent { dst: 1, now, kind });
                for size in [None, Some(1_000_000)] {
                    same &= told.initial_window(&ctx(i * 10 + 1, size)) == untold.initial_window(&ctx(i * 10 + 1, size));
                }
                same &= told.export_state() == untold.export_state();
            }
            assert_eq!(same, IwConfig::SUMMARY_KINDS.contains(&kind), "{kind}: decisions unchanged by closes = {same}");
        }
    }
}
