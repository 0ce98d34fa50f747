//! Congestion control: how cwnd grows on ACKs and what ssthresh becomes on a loss.
//!
//! The window state lives in [`Window`]; a controller reads it and updates cwnd on ACKs, and
//! returns the new ssthresh on congestion events. Loss *recovery* (which segments to resend,
//! cwnd during recovery) is `tcp::recovery`'s job, and the *initial* window is `tcp::iw`'s.

pub mod cubic;
pub mod cubic_linux;
pub mod hystart;
pub mod reno;

use crate::engine::{SimDuration, SimTime};
pub use cubic::{Cubic, CubicArithmetic, CubicConfig};
pub use cubic_linux::CubicLinux;
pub use reno::Reno;

/// The sender's window arithmetic, in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Sender maximum segment size (SMSS).
    pub mss: u64,
    /// Appropriate Byte Counting limit L (RFC 3465), in segments; `None` counts ACKs
    /// (cwnd grows by at most one SMSS per ACK in slow start, RFC 5681 (2)).
    pub abc_l: Option<u32>,
    /// Bytes acknowledged since cwnd last grew in congestion avoidance (RFC 3465 §2.1).
    pub bytes_acked: u64,
}

impl Window {
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// What an ACK of new data tells a controller.
#[derive(Copy, Clone, Debug)]
pub struct AckInfo {
    pub now: SimTime,
    /// Bytes newly acknowledged.
    pub acked: u64,
    /// Bytes in flight before this ACK.
    pub flight_before: u64,
    pub srtt: Option<SimDuration>,
    pub min_rtt: Option<SimDuration>,
}

/// A congestion controller. Hooks are named after the event that triggers them.
pub trait CongestionControl {
    /// New data was acknowledged outside loss recovery: grow cwnd.
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo);
    /// Loss detected by duplicate ACKs, or an ECN echo: the new ssthresh.
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u64, now: SimTime) -> u64;
    /// Retransmission timeout: the new ssthresh (cwnd becomes the loss window elsewhere).
    fn ssthresh_on_rto(&mut self, w: &Window, flight: u64, now: SimTime) -> u64 {
        self.ssthresh_on_loss(w, flight, now)
    }
    /// Loss recovery finished (cwnd was set to ssthresh).
    fn on_recovery_exit(&mut self, _w: &mut Window, _now: SimTime) {}
    /// The connection restarts after idle (RFC 5681 §4.1).
    fn on_idle_restart(&mut self, _w: &mut Window, _now: SimTime) {}
    /// Data leaves while nothing is in flight (Linux `CA_EVENT_TX_START`); data last left at
    /// `last_send`.
    fn on_tx_start(&mut self, _now: SimTime, _last_send: SimTime) {}
}

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

impl CongestionControl for AnyCc {
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
