//! What a congestion controller does (Linux `struct tcp_congestion_ops`, ns-3
//! `TcpCongestionOps`): grow cwnd on ACKs, choose ssthresh on congestion events. It works on
//! the control block's [`Window`] (`tcb.rs`).

use crate::engine::{SimDuration, SimTime};
pub use crate::tcp::tcb::Window;

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
pub trait CongestionOps {
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

