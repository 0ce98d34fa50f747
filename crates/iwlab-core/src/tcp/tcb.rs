//! The sender's control block (Linux `struct tcp_sock`, ns-3 `TcpSocketState`): windows,
//! sequence state, the RTT estimator, timer deadlines, the congestion-avoidance state and the
//! counters — plain data that the policies read and change. It names no policy: congestion
//! control (`cc/`), loss recovery (`recovery/`) and the CA state machine (`ca_state.rs`) work
//! on it; the sender (`sender.rs`) owns it.
//!
//! Besides the data, only what every policy needs to ask it lives here: the window edge,
//! flight size, and the bookkeeping of a segment leaving (scoreboard, counters, pacing clock,
//! RFC 6298 timer) — what the policies add to a transmission (PRR's prr_out, undo's count, the
//! TLP timer) is theirs (`recovery/ops.rs`).

use super::pacing::{PaceState, Pacer};
use super::persist::Persist;
use super::reordering::Reordering;
use super::rto::{RtoRule, RttEstimator};
use super::scoreboard::{DeliveryCtx, Outstanding, Scoreboard};
use super::segment::Segment;
use crate::engine::SimTime;

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

/// Linux's congestion-avoidance states (`enum tcp_ca_state`). The control block stores Open,
/// Recovery and Loss, and only `ca_state.rs` moves it; Disorder (duplicate ACKs or SACKed
/// segments, no reduction yet) and CWR (an ECN reduction's window) are read from the rest of
/// the block (`ca_state::reported`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum CaState {
    #[default]
    Open,
    Disorder,
    Cwr,
    /// Fast recovery (RFC 5681 §3.2, RFC 6582, RFC 6675, RFC 8985).
    Recovery,
    /// After a retransmission timeout. The episode lasts while snd.una < `recover`
    /// ([`Tcb::in_loss`]); the state itself is kept until the next recovery or an undo.
    Loss,
}

/// Per-connection sender counters, for flow records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub data_segments_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub ecn_reductions: u64,
    pub max_cwnd: u64,
    /// Tail loss probes sent (RFC 8985 §7.3).
    pub tlp_probes: u64,
    /// Probes that repaired a loss (RFC 8985 §7.4.2).
    pub tlp_repairs: u64,
}

/// One transmission the endpoint should put on the wire.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TxSeg {
    pub seq: u64,
    pub len: u32,
    pub fin: bool,
    pub retransmit: bool,
}

/// Linux `tcp_cwnd_validate()`'s record of how much of cwnd the flow used: the strongest
/// signal seen in the last window of data (is_cwnd_limited, max_packets_out, cwnd_usage_seq).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CwndUse {
    /// A transmission left the flight at or above cwnd.
    pub limited: bool,
    /// The most segments outstanding after a transmission in this window.
    pub max_out: u64,
    /// The window ends when snd_una reaches this (snd_nxt when it was recorded).
    pub until: u64,
}

/// The control block of one data sender.
pub struct Tcb {
    pub w: Window,
    pub rtt: RttEstimator,
    pub(crate) dupthresh: u32,
    /// Linux's degree of reordering learned from SACKs (`reordering.rs`).
    pub(crate) reordering: Reordering,
    pub(crate) limited_transmit: bool,
    pub(crate) sack: bool,
    pub(crate) timestamps: bool,
    /// Oldest unacknowledged sequence number.
    pub snd_una: u64,
    /// Next sequence number to send (moves back to snd_una after an RTO: go-back-N).
    pub snd_nxt: u64,
    /// One past the highest sequence number ever sent.
    pub snd_max: u64,
    /// One past the last byte the application has written.
    pub(crate) data_end: u64,
    pub(crate) fin_requested: bool,
    /// Peer's advertised window.
    pub peer_wnd: u64,
    pub(crate) mss: u32,
    /// Outstanding segments and the SACK scoreboard (`scoreboard.rs`).
    pub(crate) outstanding: Scoreboard,
    pub dupacks: u32,
    /// Open, Recovery or Loss; moved by `ca_state.rs` only.
    pub(crate) ca: CaState,
    /// NewReno `recover` / RFC 6675 RecoveryPoint: snd_max when recovery (or an RTO) began.
    pub recover: u64,
    /// RFC 6582 §3.2 (5): the timer is reset only on the first partial ACK ("Impatient").
    pub(crate) partial_acks: u32,
    pub(crate) rto_at: Option<SimTime>,
    /// RACK's reordering timer (RFC 8985 §6.3), with `recovery = "rack"`.
    pub(crate) rack_at: Option<SimTime>,
    /// The persist timer and its zero-window probes (`persist.rs`).
    pub(crate) persist: Persist,
    /// Last time new or retransmitted data left (RFC 5681 §4.1 idle detection).
    pub(crate) last_send: Option<SimTime>,
    /// RFC 3168 §6.1.2: react to ECE at most once per window of data.
    pub(crate) ecn_recover: u64,
    /// Set CWR on the next new data segment.
    pub cwr_pending: bool,
    /// Sequence range of the current initial/restart window and whether loss hit it.
    pub(crate) window_probe: Option<(u64, u64)>,
    /// Loss detected in the initial/restart window: bytes sent in it (for the IW policy).
    pub(crate) iw_loss: Option<u64>,
    /// Set when `iw_loss` was newly found; the endpoint drains it to the policy.
    pub(crate) iw_loss_new: bool,
    pub any_loss: bool,
    pub stats: SenderStats,
    /// Departure spacing (`pacing.rs`); never holds a segment when pacing is off.
    pub(crate) pacer: Pacer,
    /// RFC 6937 DeliveredData of the ACK being processed: change in snd.una + change in
    /// SACKed bytes.
    pub(crate) delivered: u64,
    /// Bytes newly SACKed by the ACK being processed.
    pub(crate) newly_sacked: u64,
    /// The ACK being processed advanced snd.una (for PRR's safe-ACK test).
    pub(crate) ack_advanced: bool,
    /// This ACK newly SACKed a FIN of its own (zero octets, one packet to Linux).
    pub(crate) fin_newly_sacked: bool,
    /// `TcpConfig::rto_keeps_reduced_ssthresh`.
    pub(crate) rto_keeps_reduced_ssthresh: bool,
    /// Linux's cwnd-use tracking (`TcpConfig::grow_only_cwnd_limited`), None when off.
    pub(crate) cwnd_use: Option<CwndUse>,
    /// `TcpConfig::restart_halves_per_rto`.
    pub(crate) restart_halves_per_rto: bool,
    /// `TcpConfig::fin_after_write`: a FIN of its own needs room in cwnd, and is one
    /// delivered packet for PRR when SACKed.
    pub(crate) fin_needs_cwnd: bool,
    /// `TcpConfig::rto_window_in_flight`.
    pub(crate) rto_window_in_flight: bool,
    /// New data sent by F-RTO's second step after an RTO: go-back-N does not resend it.
    pub(crate) frto_new: Option<(u64, u64)>,
}

impl Tcb {
    /// In fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.ca == CaState::Recovery
    }
    /// An RTO episode is going on: state Loss and snd.una below its recovery point.
    pub fn in_loss(&self) -> bool {
        self.ca == CaState::Loss && self.snd_una < self.recover
    }

    /// RFC 5681 FlightSize: data sent and not yet acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_nxt.max(self.snd_una) - self.snd_una
    }

    pub(crate) fn has_new_data(&self) -> bool {
        self.snd_max < self.data_end || (self.fin_requested && self.snd_max == self.data_end)
    }

    /// The receive window's right edge (no cwnd).
    pub(crate) fn rwnd_edge(&self) -> u64 {
        self.snd_una + self.peer_wnd.min(u64::MAX - self.snd_una)
    }

    /// The usable window's right edge: snd_una + min(cwnd (+ Limited Transmit), rwnd).
    pub(crate) fn window_edge(&self) -> u64 {
        let mut cwnd = self.w.cwnd;
        if self.limited_transmit && !self.in_recovery() && self.dupacks > 0 && self.dupacks < self.dupthresh {
            // RFC 3042: on the first two dup ACKs one new segment each, cwnd unchanged.
            cwnd += self.dupacks.min(2) as u64 * self.w.mss;
        }
        self.snd_una + cwnd.min(self.peer_wnd)
    }

    pub(crate) fn arm_rto(&mut self, now: SimTime) {
        self.rto_at = Some(self.rtt.clock().rto(now, self.rtt.rto()));
    }

    /// Without SACK, Linux counts each duplicate ACK as a SACKed segment (`tcp_add_reno_sack()`),
    /// leaving at least one hole (`tcp_limit_reno_sacked()`); with SACK, or outside the Linux
    /// growth rule (`cwnd_use`), none. Exact outside recovery, where `dupacks` counts since the
    /// last cumulative ACK.
    pub(crate) fn reno_sacked(&self) -> u64 {
        if self.sack || self.cwnd_use.is_none() || self.in_recovery() {
            return 0;
        }
        (self.dupacks as u64).min(self.outstanding.len().saturating_sub(1) as u64)
    }

    /// Does the sender wait on the peer's window alone: data to send, nothing in flight, and
    /// no room for the next segment? The persist timer's condition (`persist.rs`; Linux
    /// `tcp_check_probe_timer()` after `tcp_write_xmit()` sent nothing).
    pub(crate) fn window_blocks(&self) -> bool {
        if self.snd_una != self.snd_max || !self.has_new_data() {
            return false;
        }
        let next = (self.data_end - self.snd_nxt).min(self.mss as u64).max(1);
        self.snd_nxt + next > self.rwnd_edge()
    }

    /// The first unacknowledged segment, for retransmission.
    pub(crate) fn first_unacked(&self) -> Option<TxSeg> {
        self.outstanding.front().map(|o| TxSeg { seq: o.seq, len: o.len(), fin: o.fin(), retransmit: true })
    }

    /// What RACK needs to know about the ACK that delivers segments (RFC 8985 §6.2 step 2).
    pub(crate) fn delivery_ctx(&self, now: SimTime, seg: &Segment) -> DeliveryCtx {
        let ts_ecr = if self.timestamps { seg.ts.map(|(_, ecr)| ecr).filter(|&e| e != 0) } else { None };
        DeliveryCtx { now, min_rtt: self.rtt.min_rtt(), ts_ecr }
    }

    /// Is a FIN sent in a segment of its own SACKed?
    pub(crate) fn lone_fin_sacked(&self) -> bool {
        if !self.fin_requested || self.snd_max <= self.data_end {
            return false;
        }
        let i = self.outstanding.partition_point(|o| o.seq < self.data_end);
        self.outstanding.get(i).is_some_and(|o| o.fin() && o.len() == 0 && o.sacked())
    }

    /// The next new segment if `edge` and the pacing clock allow it: (length, FIN).
    pub(crate) fn next_new(&mut self, now: SimTime, edge: u64) -> Option<(u32, bool)> {
        if self.snd_nxt < self.data_end {
            let len = (self.data_end - self.snd_nxt).min(self.mss as u64);
            if self.snd_nxt + len > edge || !self.pacer.ready(now) {
                return None;
            }
            // A FIN rides on the segment carrying the last byte when the app already closed.
            let fin = self.fin_requested && self.snd_nxt + len == self.data_end;
            Some((len as u32, fin))
        } else if self.fin_requested && self.snd_nxt == self.data_end && self.pacer.ready(now) {
            // Linux tcp_write_xmit(): a FIN of its own passes tcp_cwnd_test() like any skb —
            // it waits while the packets in flight fill cwnd.
            if self.fin_needs_cwnd && self.snd_nxt + 1 > edge {
                return None;
            }
            Some((0, true))
        } else {
            None
        }
    }

    /// A new segment leaves: scoreboard, sequence state, counters, pacing clock, and the
    /// RFC 6298 (5.1) timer if it is not running.
    pub(crate) fn put_new(&mut self, now: SimTime, len: u32, fin: bool) -> TxSeg {
        let seq = self.snd_nxt;
        self.outstanding.push(Outstanding::new(seq, len, fin, now));
        self.snd_nxt += len as u64 + fin as u64;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        self.stats.data_segments_sent += (len > 0) as u64;
        self.last_send = Some(now);
        self.paced(now, seq, len);
        if self.rto_at.is_none() {
            self.arm_rto(now);
        }
        TxSeg { seq, len, fin, retransmit: false }
    }

    /// The outstanding segment starting at `seq` leaves again (None: no such segment):
    /// scoreboard and HighRxt, counters, pacing clock, RTO timer.
    pub(crate) fn put_retransmit(&mut self, now: SimTime, seq: u64) -> Option<TxSeg> {
        let i = self.outstanding.index_of(seq);
        if i >= self.outstanding.len() {
            return None;
        }
        let o = self.outstanding.on_retransmit(i, now);
        let tx = TxSeg { seq: o.seq, len: o.len(), fin: o.fin(), retransmit: true };
        let end = o.end();
        let high_rxt = self.outstanding.high_rxt().max(end);
        self.outstanding.set_high_rxt(high_rxt);
        self.stats.retransmits += 1;
        self.stats.data_segments_sent += (tx.len > 0) as u64;
        self.last_send = Some(now);
        self.paced(now, tx.seq, tx.len);
        // RFC 6298 (5.1) starts a stopped timer. Linux also restarts a running one when the
        // resent segment is the head, unless RACK's reordering timer holds the timer slot
        // (tcp_xmit_retransmit_queue(): skb == rtx_head → tcp_reset_xmit_timer(icsk_rto)), so
        // a head whose resends keep being lost is resent by RACK, not by the RTO.
        let restart = self.rtt.rule() == RtoRule::Linux && seq == self.snd_una && self.rack_at.is_none();
        if self.rto_at.is_none() || restart {
            self.arm_rto(now);
        }
        Some(tx)
    }

    /// A segment left: move the pacing clock (nothing to do when pacing is off).
    fn paced(&mut self, now: SimTime, seq: u64, len: u32) {
        if self.pacer.is_off() {
            return;
        }
        let (cwnd, ssthresh, flight, srtt) = (self.w.cwnd, self.w.ssthresh, self.flight_size(), self.rtt.srtt());
        let (mss, min_rtt) = (self.w.mss, self.rtt.min_rtt());
        self.pacer.on_send(now, seq, len, &PaceState { cwnd, ssthresh, flight, srtt, mss, min_rtt });
    }
}
