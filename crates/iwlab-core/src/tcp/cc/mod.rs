//! Congestion control: how cwnd grows on ACKs and what ssthresh becomes on a loss.
//!
//! The window state lives in [`Window`]; a controller reads it and updates cwnd on ACKs, and
//! returns the new ssthresh on congestion events. Loss *recovery* (which segments to resend,
//! cwnd during recovery) is `tcp::recovery`'s job, and the *initial* window is `tcp::iw`'s.

pub mod cubic;
pub mod cubic_linux;
pub mod hystart;
pub mod ops;
pub mod reno;

use crate::engine::{SimDuration, SimTime};
pub use cubic::{Cubic, CubicArithmetic, CubicConfig};
pub use cubic_linux::CubicLinux;
use hystart::HyStart;
pub use ops::{AckInfo, CongestionOps, Window};
pub use reno::Reno;

/// Congestion controllers by name.
#[derive(Clone, Debug, PartialEq)]
pub enum CcConfig {
    Reno,
    Cubic(CubicConfig),
}

impl CcConfig {
    pub const NAMES: &'static [&'static str] = &["reno", "newreno", "cubic"];

    /// `reno` and `newreno` are the same controller (RFC 5681); recovery is chosen apart.
    pub fn by_name(name: &str) -> Result<CcConfig, String> {
        match name {
            "reno" | "newreno" => Ok(CcConfig::Reno),
            "cubic" => Ok(CcConfig::Cubic(CubicConfig::default())),
            _ => Err(format!("unknown congestion control {name:?}; expected one of {:?}", Self::NAMES)),
        }
    }
    pub fn build(&self) -> AnyCc {
        match self {
            CcConfig::Reno => AnyCc::Reno(Reno),
            CcConfig::Cubic(c) if c.arithmetic == CubicArithmetic::Linux => AnyCc::CubicLinux(CubicLinux::new(c)),
            CcConfig::Cubic(c) => AnyCc::Cubic(Cubic::new(c.clone())),
        }
    }
}

pub enum AnyCc {
    Reno(Reno),
    Cubic(Cubic),
    CubicLinux(CubicLinux),
}

macro_rules! each_cc {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            AnyCc::Reno($c) => $e,
            AnyCc::Cubic($c) => $e,
            AnyCc::CubicLinux($c) => $e,
        }
    };
}

impl CongestionOps for AnyCc {
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        each_cc!(self, c => c.on_ack(w, ack))
    }
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u64, now: SimTime) -> u64 {
        each_cc!(self, c => c.ssthresh_on_loss(w, flight, now))
    }
    fn ssthresh_on_rto(&mut self, w: &Window, flight: u64, now: SimTime) -> u64 {
        each_cc!(self, c => c.ssthresh_on_rto(w, flight, now))
    }
    fn on_recovery_exit(&mut self, w: &mut Window, now: SimTime) {
        each_cc!(self, c => c.on_recovery_exit(w, now))
    }
    fn on_idle_restart(&mut self, w: &mut Window, now: SimTime) {
        each_cc!(self, c => c.on_idle_restart(w, now))
    }
    fn on_tx_start(&mut self, now: SimTime, last_send: SimTime) {
        each_cc!(self, c => c.on_tx_start(now, last_send))
    }
}

/// The sender's congestion control: the controller, and with it slow-start exit on RTT rise
/// (RFC 9406 HyStart++ / Linux HyStart), which takes slow start's growth while active.
pub struct Congestion {
    pub ops: AnyCc,
    pub hystart: Option<HyStart>,
}

impl Congestion {
    pub fn new(cc: &CcConfig, hystart: Option<hystart::HyStartKind>) -> Self {
        Congestion { ops: cc.build(), hystart: hystart.map(HyStart::new) }
    }

    /// A loss or an ECN echo: RFC 9406 §4.2 ends HyStart++.
    pub fn on_congestion(&mut self) {
        if let Some(h) = &mut self.hystart {
            h.on_congestion();
        }
    }

    /// Grows cwnd on an ACK outside recovery by `ack.acked` bytes: HyStart's slow start while
    /// it is active (`ack_seq`, `snd_nxt`: its round tracking; `rtt`: the ACK's RTT sample),
    /// else the controller.
    pub fn grow(&mut self, w: &mut Window, ack: &AckInfo, ack_seq: u64, snd_nxt: u64, rtt: Option<SimDuration>) {
        let grown = match &mut self.hystart {
            Some(h) if h.active(w) => h.on_ack(w, ack.acked, ack_seq, snd_nxt, rtt),
            _ => false,
        };
        if !grown {
            self.ops.on_ack(w, ack);
        }
    }
}

impl CongestionOps for Congestion {
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        self.ops.on_ack(w, ack)
    }
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u64, now: SimTime) -> u64 {
        self.ops.ssthresh_on_loss(w, flight, now)
    }
    fn ssthresh_on_rto(&mut self, w: &Window, flight: u64, now: SimTime) -> u64 {
        self.ops.ssthresh_on_rto(w, flight, now)
    }
    fn on_recovery_exit(&mut self, w: &mut Window, now: SimTime) {
        self.ops.on_recovery_exit(w, now)
    }
    fn on_idle_restart(&mut self, w: &mut Window, now: SimTime) {
        self.ops.on_idle_restart(w, now)
    }
    fn on_tx_start(&mut self, now: SimTime, last_send: SimTime) {
        self.ops.on_tx_start(now, last_send)
    }
}
