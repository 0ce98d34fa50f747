//! What a loss-recovery variant is (ns-3 `TcpRecoveryOps`, Linux's per-variant branches of
//! `tcp_fastretrans_alert()`): the [`RecoveryOps`] hooks the CA state machine (`ca_state.rs`)
//! calls, over the control block (`tcb.rs`), and the mechanisms every variant shares — PRR,
//! TLP, undo, D-SACK — each in its own file with its own state, gathered in [`Mechanisms`].
//!
//! A variant decides (is this a loss? how far to reduce? what to resend?); the state machine
//! moves the CA state. A transmission goes through [`Ctx::retransmit`] / [`Ctx::send_new`],
//! which add what the mechanisms count (PRR's prr_out, undo's retransmissions, the TLP
//! timer) to the control block's own bookkeeping.

use super::dsack::Dsack;
use super::prr::PrrState;
use super::tlp::Tlp;
use super::undo::Undo;
use crate::engine::SimTime;
use crate::tcp::cc::{Congestion, CongestionOps};
use crate::tcp::tcb::{Tcb, TxSeg};

/// The recovery mechanisms a sender runs besides its variant, each owning its state.
pub struct Mechanisms {
    /// RFC 6937 PRR (`prr.rs`), with `tcp.prr`.
    pub prr: PrrState,
    /// RFC 8985 §7 TLP (`tlp.rs`), with `tcp.tlp`.
    pub tlp: Option<Tlp>,
    /// Undo of spurious reductions and F-RTO (`undo.rs`).
    pub(crate) undo: Undo,
    /// D-SACK reading and RACK's reordering-window adaptation (`dsack.rs`).
    pub(crate) dsack: Dsack,
}

/// What a policy works on: the control block, congestion control, the mechanisms.
pub struct Ctx<'a> {
    pub t: &'a mut Tcb,
    pub cc: &'a mut Congestion,
    pub m: &'a mut Mechanisms,
}

impl Ctx<'_> {
    /// Queues a retransmission of the outstanding segment starting at `seq`.
    pub fn retransmit(&mut self, now: SimTime, seq: u64, out: &mut Vec<TxSeg>) {
        let Some(tx) = self.t.put_retransmit(now, seq) else { return };
        self.m.undo.on_retransmit(now);
        self.m.prr.on_sent(tx.len as u64 + tx.fin as u64);
        out.push(tx);
    }

    /// Sends one new segment if `edge` (and the pacing clock) allow; false if nothing was sent.
    pub fn send_new(&mut self, now: SimTime, edge: u64, out: &mut Vec<TxSeg>) -> bool {
        let Some((len, fin)) = self.t.next_new(now, edge) else { return false };
        if let (0, Some(last)) = (self.t.flight_size(), self.t.last_send) {
            self.cc.on_tx_start(now, last); // Linux CA_EVENT_TX_START (tcp_event_data_sent())
        }
        let tx = self.t.put_new(now, len, fin);
        self.m.prr.on_sent(len as u64 + fin as u64);
        // RFC 8985 §7.2: (re)start the PTO after sending new data (not the probe itself).
        if let Some(tlp) = &mut self.m.tlp {
            tlp.schedule(self.t, now);
        }
        out.push(tx);
        true
    }

    /// The reduction on a loss: ssthresh from the controller, on the flight size.
    pub fn ssthresh_on_loss(&mut self, now: SimTime) -> u64 {
        let flight = self.t.flight_size();
        self.cc.ssthresh_on_loss(&self.t.w, flight, now)
    }
}

/// One loss-recovery variant. The state machine (`ca_state.rs`) calls these hooks; a variant
/// reads and changes the control block and queues transmissions, and never moves the CA
/// state itself.
pub trait RecoveryOps {
    /// Records what an undo restores when recovery starts and tries the undo when it ends
    /// (Linux `tcp_enter_recovery()`, `tcp_try_undo_recovery()`).
    fn undoable(&self) -> bool {
        false
    }
    /// Outside recovery, a duplicate ACK arrived (`t.dupacks` counts it): does fast recovery
    /// start?
    fn dupack_starts_recovery(&mut self, _c: &mut Ctx) -> bool {
        false
    }
    /// In recovery, a duplicate ACK arrived.
    fn on_dupack_in_recovery(&mut self, _c: &mut Ctx) {}
    /// Recovery began (state Recovery, RecoveryPoint set): reduce the window.
    fn on_enter(&mut self, c: &mut Ctx, now: SimTime);
    /// The episode's first retransmission(s), right after `on_enter` or (with Linux's PRR
    /// order) after the ACK's PRR share.
    fn fast_retransmit(&mut self, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>);
    /// An ACK of new data in recovery: does it end recovery?
    fn recovery_point_reached(&self, t: &Tcb) -> bool {
        t.snd_una >= t.recover
    }
    /// Recovery ends without an undo (before `ca_state` leaves it).
    fn on_exit(&mut self, _c: &mut Ctx) {}
    /// An ACK of new data in recovery that does not end it.
    fn on_partial_ack(&mut self, _c: &mut Ctx, _now: SimTime, _acked: u64, _out: &mut Vec<TxSeg>) {}
    /// Does an ACK of new data in recovery restart the retransmission timer?
    fn rearms_rto_in_recovery(&self, _t: &Tcb) -> bool {
        true
    }
    /// The pipe PRR compares with ssthresh.
    fn pipe(&self, t: &Tcb) -> u64 {
        t.outstanding.pipe()
    }
    /// In recovery, sends what the variant chooses; false: the sender's window rule applies.
    fn send_in_recovery(&mut self, _c: &mut Ctx, _now: SimTime, _out: &mut Vec<TxSeg>) -> bool {
        false
    }
    /// Detects losses by time after every ACK and on its own timer (RACK).
    fn detects_by_time(&self) -> bool {
        false
    }
    /// Time-based detection after an ACK (`on_ack`) or on the timer: marks losses, arms the
    /// timer, reacts to a lost retransmission in recovery; true if recovery is to start.
    fn detect(&mut self, _c: &mut Ctx, _now: SimTime, _on_ack: bool) -> bool {
        false
    }
}
