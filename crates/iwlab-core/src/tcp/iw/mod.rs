//! Initial-window policies: how many bytes a new connection may send in its first round trip.
//!
//! A policy sees an [`IwContext`] for each new connection (MSS, destination, the size the
//! application declared, time) and learns from [`IwEvent`]s (loss in the initial window,
//! connection closed), so caching and adaptive policies fit the same trait. A connection
//! holds the index of its policy in the simulation's table, so one policy instance (and its
//! cache) can serve a client, a server, or one connection.
//! Adding a policy = one file + one arm in [`AnyIw`] + one in [`IwConfig`].

pub mod fallback_cache;
pub mod fixed;
pub mod rfc3390;
pub mod rfc6928;
pub mod size_based;

use crate::engine::{SimDuration, SimTime};
use crate::net::packet::NodeId;
pub use fallback_cache::Rfc6928Fallback;
pub use fixed::Fixed;
pub use rfc3390::Rfc3390;
pub use rfc6928::Rfc6928;
pub use size_based::SizeBased;

/// What a policy knows when a connection asks for its initial window.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IwContext {
    /// Sender maximum segment size, bytes.
    pub mss: u64,
    /// The peer this connection sends to.
    pub dst: NodeId,
    /// Bytes the application said it will send on this connection, if it said.
    pub declared_size: Option<u64>,
    pub now: SimTime,
}

/// What a connection reports back to its policy.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IwEvent {
    pub dst: NodeId,
    pub now: SimTime,
    pub kind: IwEventKind,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IwEventKind {
    /// Loss was detected while the initial window (or a restart window) was the first
    /// unacknowledged flight; `bytes_sent` is what had been sent in that window.
    LossInInitialWindow { bytes_sent: u64 },
    /// The connection closed. `loss` says whether any loss was detected during it.
    Closed { bytes_sent: u64, loss: bool },
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
}

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
    Rfc6928Fallback { expiry: SimDuration },
    /// IW(s) = V if s <= θ, else floor((θ/s)·V + (1 − θ/s)·MinIW) segments (Barik & Divakaran).
    SizeBased { theta_bytes: u64, v: u32, min_iw: u32 },
}

impl IwConfig {
    pub const NAMES: &'static [&'static str] = &["fixed", "rfc3390", "rfc6928", "rfc6928-fallback", "size-based"];

    pub fn build(&self) -> AnyIw {
        match *self {
            IwConfig::Fixed { segments } => AnyIw::Fixed(Fixed::new(segments)),
            IwConfig::Rfc3390 => AnyIw::Rfc3390(Rfc3390),
            IwConfig::Rfc6928 => AnyIw::Rfc6928(Rfc6928),
            IwConfig::Rfc6928Fallback { expiry } => AnyIw::Rfc6928Fallback(Rfc6928Fallback::new(expiry)),
            IwConfig::SizeBased { theta_bytes, v, min_iw } => AnyIw::SizeBased(SizeBased::new(theta_bytes, v, min_iw)),
        }
    }
}

pub enum AnyIw {
    Fixed(Fixed),
    Rfc3390(Rfc3390),
    Rfc6928(Rfc6928),
    Rfc6928Fallback(Rfc6928Fallback),
    SizeBased(SizeBased),
}

macro_rules! each_iw {
    ($self:ident, $p:ident => $e:expr) => {
        match $self {
            AnyIw::Fixed($p) => $e,
            AnyIw::Rfc3390($p) => $e,
            AnyIw::Rfc6928($p) => $e,
            AnyIw::Rfc6928Fallback($p) => $e,
            AnyIw::SizeBased($p) => $e,
        }
    };
}

impl IwPolicy for AnyIw {
    fn initial_window(&mut self, ctx: &IwContext) -> u64 {
        each_iw!(self, p => p.initial_window(ctx))
    }
    fn restart_window(&mut self, ctx: &IwContext, iw_loss_bytes: Option<u64>) -> u64 {
        each_iw!(self, p => p.restart_window(ctx, iw_loss_bytes))
    }
    fn learn(&mut self, ev: &IwEvent) {
        each_iw!(self, p => p.learn(ev))
    }
    fn name(&self) -> &'static str {
        each_iw!(self, p => p.name())
    }
}
