//! The congestion-avoidance state machine, in one place: when the sender enters and leaves
//! fast recovery, RTO recovery (Loss), an ECN or loss-probe reduction, and when a reduction
//! is undone — as Linux's `tcp_fastretrans_alert()`, `tcp_enter_loss()`,
//! `tcp_process_loss()`, `tcp_try_undo_*()` and `tcp_enter_cwr()` do over `tcp_sock`.
//!
//! Only this file moves [`Tcb::ca`]. It calls the configured recovery variant
//! ([`RecoveryOps`], `recovery/`) for the decisions that differ between RFC 5681 Reno, RFC
//! 6582 NewReno, RFC 6675 SACK and RFC 8985 RACK — is this a loss, how far to reduce, what
//! to resend — and the mechanisms (PRR, TLP, undo, D-SACK) for theirs. A rule about *when*
//! the state changes belongs here; a rule about what a variant does in a state belongs in
//! its file.
//!
//! | from      | event                                              | to       |
//! |-----------|----------------------------------------------------|----------|
//! | Open      | `RecoveryOps::dupack_starts_recovery` / `detect`   | Recovery |
//! | Recovery  | `RecoveryOps::recovery_point_reached`              | Open     |
//! | Recovery  | undo: D-SACKs or an old TSecr (`try_undo_*`)       | Open     |
//! | any       | retransmission timeout ([`enter_loss`])            | Loss     |
//! | Loss      | F-RTO / undo shows the RTO spurious ([`undo_loss`])| Open     |
//! | Loss      | RACK finds a resend of go-back-N lost              | Recovery |
//!
//! ECN (RFC 3168 §6.1.2) and a loss probe that repaired a loss (RFC 8985 §7.4.2) reduce the
//! window without a state change here (Linux passes through CWR).

use crate::engine::SimTime;
use crate::tcp::cc::CongestionOps;
use crate::tcp::recovery::prr::ReductionBound;
use crate::tcp::recovery::undo::{LossAck, LossStep};
use crate::tcp::recovery::{AnyRecovery, Ctx, RecoveryOps};
use crate::tcp::tcb::{CaState, Tcb, TxSeg};

/// The state Linux would report (`tcpi_ca_state`): Recovery, Loss while the RTO episode is
/// going on, Disorder with SACKed segments or duplicate ACKs, else Open. (CWR is not
/// reported: the ECN window is not kept as a state.)
pub fn reported(t: &Tcb) -> CaState {
    if t.in_recovery() {
        CaState::Recovery
    } else if t.in_loss() {
        CaState::Loss
    } else if t.outstanding.sacked_segments() > 0 || t.dupacks > 0 {
        CaState::Disorder
    } else {
        CaState::Open
    }
}

/// A loss was detected: for records, HyStart (RFC 9406 §4.2: loss ends it) and the IW
/// policy (loss in the initial/restart window).
fn note_loss(c: &mut Ctx) {
    let t = &mut *c.t;
    t.any_loss = true;
    c.cc.on_congestion();
    if let Some((start, end)) = t.window_probe {
        if t.snd_una < end && t.iw_loss.is_none() {
            t.iw_loss = Some(t.snd_max.min(end) - start);
            t.iw_loss_new = true;
        }
    }
}

/// Open → Recovery: RecoveryPoint = snd.max (RFC 6582 `recover`, RFC 6675 RecoveryPoint).
fn enter_recovery(c: &mut Ctx) {
    let t = &mut *c.t;
    t.ca = CaState::Recovery;
    t.recover = t.snd_max;
    t.outstanding.set_high_rxt(t.snd_una);
    t.partial_acks = 0;
    t.stats.fast_retransmits += 1;
    note_loss(c);
}

/// Recovery → Open at the recovery point, and the controller is told.
fn exit_recovery(c: &mut Ctx, now: SimTime) {
    if c.m.prr.end() {
        // RFC 6937: recovery ends with cwnd at ssthresh (Linux tcp_end_cwnd_reduction()).
        c.t.w.cwnd = c.t.w.ssthresh;
    }
    c.t.ca = CaState::Open;
    c.t.dupacks = 0;
    c.cc.on_recovery_exit(&mut c.t.w, now);
}

/// Recovery → Open after an undo, without the `cwnd = ssthresh` of
/// `tcp_end_cwnd_reduction()` (the undo restored the window), as `tcp_try_keep_open()` leaves
/// it: no recovery point pending.
fn leave_recovery_undone(c: &mut Ctx) {
    c.t.ca = CaState::Open;
    c.m.prr.end();
    c.t.dupacks = 0;
    c.t.recover = c.t.snd_una;
}

/// Fast recovery starts: what an undo would restore (`tcp_enter_recovery()`), the state and
/// RecoveryPoint, the variant's reduction, and — unless the caller sends it later — the
/// first retransmission.
fn start_recovery(rec: &mut AnyRecovery, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>, retransmit_now: bool) {
    if rec.undoable() {
        c.m.undo.on_enter_recovery(c.t);
    }
    enter_recovery(c);
    rec.on_enter(c, now);
    if retransmit_now {
        rec.fast_retransmit(c, now, out);
    }
}

/// A duplicate ACK (RFC 5681 §2; `t.dupacks` already counts it).
pub(crate) fn on_dupack(rec: &mut AnyRecovery, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) {
    if c.t.in_recovery() {
        rec.on_dupack_in_recovery(c);
    } else if rec.dupack_starts_recovery(c) {
        start_recovery(rec, c, now, out, true);
    }
}

/// New data was acknowledged in recovery (`t.snd_una` already advanced by `acked`): at the
/// recovery point, undo the reduction if it was spurious (Linux `tcp_try_undo_recovery()`,
/// SACK and RACK) or leave recovery; else the variant's partial-ACK rule.
pub(crate) fn on_ack_in_recovery(
    rec: &mut AnyRecovery,
    c: &mut Ctx,
    now: SimTime,
    acked: u64,
    out: &mut Vec<TxSeg>,
) {
    if rec.recovery_point_reached(c.t) {
        if rec.undoable() && try_undo_recovery(c, now) {
            return;
        }
        rec.on_exit(c);
        exit_recovery(c, now);
    } else {
        rec.on_partial_ack(c, now, acked, out);
    }
}

/// After every ACK, for a variant that detects losses by time (RACK): detection, recovery
/// entry, and the ACK's PRR share in recovery.
pub(crate) fn after_ack(rec: &mut AnyRecovery, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) {
    if !rec.detects_by_time() {
        return;
    }
    let enter = rec.detect(c, now, true);
    // Linux computes the ACK's PRR share before the fast retransmission leaves
    // (tcp_fastretrans_alert(): tcp_enter_recovery(), tcp_cwnd_reduction(), then
    // tcp_xmit_recovery()), so the retransmission is part of sndcnt, not on top of it.
    let prr_first = c.m.prr.bound() == Some(ReductionBound::Linux);
    if enter {
        start_recovery(rec, c, now, out, !prr_first);
    }
    if c.t.in_recovery() {
        c.m.prr.on_ack(c.t, |t| rec.pipe(t)); // RFC 6937, with `tcp.prr`
    }
    if enter && prr_first {
        rec.fast_retransmit(c, now, out);
    }
}

/// RACK's reordering timer expired (RFC 8985 §6.3): detect again, maybe enter recovery.
/// The sender then sends what recovery allows.
pub(crate) fn on_rack_timer(rec: &mut AnyRecovery, c: &mut Ctx, now: SimTime, out: &mut Vec<TxSeg>) {
    if !rec.detect(c, now, false) {
        return;
    }
    let prr_first = c.m.prr.bound() == Some(ReductionBound::Linux);
    start_recovery(rec, c, now, out, !prr_first);
    if prr_first {
        // Linux tcp_rack_reo_timeout(): tcp_enter_recovery(), then tcp_cwnd_reduction(sk, 1, 0,
        // 0) — PRR's first step as for an ACK that delivered one segment and did not advance
        // snd.una (not a safe ACK) — then tcp_xmit_retransmit_queue() sends what it allows.
        let (delivered, advanced) = (c.t.delivered, c.t.ack_advanced);
        (c.t.delivered, c.t.ack_advanced) = (c.t.w.mss, false);
        c.m.prr.on_ack(c.t, |t| rec.pipe(t));
        (c.t.delivered, c.t.ack_advanced) = (delivered, advanced);
        rec.fast_retransmit(c, now, out);
    }
}

/// `tcp_try_undo_dsack()`: in Open, Disorder or Recovery, every retransmission of the episode
/// was D-SACKed. Called after the ACK's SACK blocks were read; true if undone.
pub(crate) fn try_undo_dsack(c: &mut Ctx, now: SimTime) -> bool {
    if !c.m.undo.dsack_undo_due(c.t) {
        return false;
    }
    // RACK keeps a widened reordering window one recovery longer (tcp_try_undo_dsack()).
    c.m.dsack.persist_one_more();
    c.m.undo.undo_cwnd_reduction(c.t, c.cc, now);
    if c.t.in_recovery() {
        leave_recovery_undone(c);
    }
    true
}

/// Fast recovery reached its recovery point: `tcp_try_undo_recovery()`. True if the
/// reduction was undone (recovery then ended here); false: recovery ends as usual.
fn try_undo_recovery(c: &mut Ctx, now: SimTime) -> bool {
    if !c.m.undo.enabled {
        return false;
    }
    if c.m.undo.may_undo() {
        c.m.undo.undo_cwnd_reduction(c.t, c.cc, now);
        leave_recovery_undone(c);
        return true;
    }
    // A recovery that was not spurious counts down RACK's widened window (reo_wnd_persist).
    c.m.dsack.recovery_ended();
    false
}

/// `tcp_process_loss()` for an ACK in RTO recovery (after cumulative and selective
/// acknowledgment were applied, before cwnd grows). True when F-RTO wants new data sent
/// instead of retransmissions on this ACK (REXMIT_NEW).
pub(crate) fn process_loss(c: &mut Ctx, now: SimTime, a: LossAck) -> bool {
    match c.m.undo.process_loss(c.t, a) {
        LossStep::Continue => false,
        LossStep::Undo => {
            undo_loss(c, now);
            false
        }
        LossStep::SendNew => true,
    }
}

/// Loss → Open: `tcp_try_undo_loss()` succeeded — cwnd and ssthresh restored, the loss marks
/// forgotten (`tcp_undo_cwnd_reduction(sk, true)`), so go-back-N stops.
fn undo_loss(c: &mut Ctx, now: SimTime) {
    c.m.undo.undo_cwnd_reduction(c.t, c.cc, now);
    c.m.undo.frto = false;
    let t = &mut *c.t;
    t.ca = CaState::Open;
    t.recover = t.snd_una;
    t.snd_nxt = t.snd_max;
    t.outstanding.rack_relink_after_undo();
}

/// RFC 6298 (5.4)–(5.6) and RFC 5681 §3.1: the retransmission timer expired with data
/// outstanding — any state → Loss (Linux `tcp_enter_loss()`). The sender then resends from
/// snd.una (go-back-N).
pub(crate) fn enter_loss(c: &mut Ctx, now: SimTime) {
    c.t.stats.timeouts += 1;
    note_loss(c);
    let t = &mut *c.t;
    let flight = t.flight_size();
    // Linux tcp_enter_loss(): ssthresh is reduced only if it was not already reduced for
    // this window — not in fast recovery, and not on a repeated expiry of the same RTO
    // episode (icsk_retransmits > 0, here: the timer backed off with no new RTT sample).
    let reduced =
        (t.in_recovery() || (t.ca == CaState::Loss && t.rtt.backoff() > 0)) && t.snd_una < t.recover;
    // Linux tcp_enter_loss(): what an undo would restore, and whether F-RTO runs.
    c.m.undo.on_enter_loss(t, reduced);
    let open_or_disorder = matches!(reported(t), CaState::Open | CaState::Disorder);
    t.reordering.on_rto(open_or_disorder, t.outstanding.sacked_segments());
    t.frto_new = None;
    if !(t.rto_keeps_reduced_ssthresh && reduced) {
        // RFC 5681 (4): ssthresh = max(FlightSize/2, 2*SMSS).
        t.w.ssthresh = c.cc.ssthresh_on_rto(&t.w, flight, now);
    }
    // cwnd = LW = 1 SMSS.
    t.w.cwnd = t.w.mss;
    t.ca = CaState::Loss;
    t.w.bytes_acked = 0;
    c.m.prr.end();
    t.dupacks = 0;
    // RFC 6582 §4: remember the highest sequence sent so that dup ACKs caused by the
    // go-back-N retransmissions do not trigger another fast retransmit.
    t.recover = t.snd_max;
    t.outstanding.set_high_rxt(t.snd_una);
    t.outstanding.rack_reset_on_rto();
    t.rack_at = None;
    // RFC 8985 §7.1: RTO recovery ends any TLP episode.
    if let Some(tlp) = &mut c.m.tlp {
        tlp.reset();
    }
    t.rtt.on_timeout();
    // Go back N: resend from the first unacknowledged segment.
    t.snd_nxt = t.snd_una;
    t.arm_rto(now);
}

/// RFC 8985 §7.4.2: the loss probe repaired a loss — the controller's reduction, cwnd =
/// ssthresh, as a completed fast recovery (Linux `tcp_process_tlp_ack()`: CWR entered and
/// ended at once).
pub(crate) fn on_tlp_repair(c: &mut Ctx, now: SimTime) {
    c.t.w.ssthresh = c.ssthresh_on_loss(now);
    c.t.w.cwnd = c.t.w.ssthresh.max(c.t.w.mss);
    c.t.stats.tlp_repairs += 1;
    note_loss(c);
}

/// An ECN echo (RFC 3168 §6.1.2): at most one reduction per window, none while recovering;
/// true if cwnd was reduced (Linux `tcp_enter_cwr()`).
pub(crate) fn on_ece(c: &mut Ctx, now: SimTime) -> bool {
    if c.t.in_recovery() || c.t.snd_una < c.t.ecn_recover {
        return false;
    }
    c.cc.on_congestion(); // RFC 9406 §4.2: an ECN echo ends HyStart++
    c.m.undo.forget(); // Linux tcp_enter_cwr(): an ECN reduction is not undone
    c.t.w.ssthresh = c.ssthresh_on_loss(now);
    let t = &mut *c.t;
    t.w.cwnd = t.w.ssthresh.max(t.w.mss);
    t.ecn_recover = t.snd_max;
    t.cwr_pending = true;
    t.stats.ecn_reductions += 1;
    true
}
