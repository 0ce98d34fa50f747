//! Undoing a congestion response shown spurious, as Linux does (net/ipv4/tcp_input.c), with
//! F-RTO after an RTO (RFC 5682, SACK-enhanced: Linux `net.ipv4.tcp_frto = 2`).
//!
//! A reduction — fast recovery (`tcp_enter_recovery()`) or an RTO (`tcp_enter_loss()`) —
//! records what it replaced: cwnd (`prior_cwnd`), ssthresh (`prior_ssthresh`, from
//! `tcp_current_ssthresh()`: at least 3/4 of cwnd), snd.una (`undo_marker`), and then counts
//! its retransmissions (`undo_retrans`). It is undone — cwnd = max(cwnd, prior_cwnd),
//! ssthresh = max(ssthresh, prior_ssthresh) (`tcp_undo_cwnd_reduction()` with
//! `tcp_reno_undo_cwnd()`, which CUBIC uses too) — when
//! - every retransmission of the episode was reported as a duplicate by a D-SACK (RFC 2883;
//!   `recovery/dsack.rs` counts them down): `tcp_try_undo_dsack()` on any ACK in Open,
//!   Disorder or Recovery, `tcp_try_undo_recovery()` when recovery ends, and
//!   `tcp_try_undo_loss()` on an ACK that advances snd.una after an RTO;
//! - with timestamps, at those last two points, when the ACK echoes a TSval older than the
//!   episode's first retransmission: the original was delivered (`tcp_packet_delayed()`,
//!   RFC 3522 Eifel detection);
//! - F-RTO: after an RTO, when an ACK (cumulative or SACK) covers data sent before the RTO
//!   and never retransmitted (`tcp_process_loss()`: FLAG_ORIG_SACK_ACKED →
//!   `tcp_try_undo_loss(sk, true)`), which also ends the RTO's go-back-N.
//!
//! F-RTO's sending rule (`tcp_process_loss()` → REXMIT_NEW, RFC 5682 §3.1 step 2b): on the
//! first ACK after the RTO that advances snd.una without reaching the recovery point, the
//! sender sends new data, if it has some and the receive window allows, instead of further
//! retransmissions; if a later ACK is a duplicate or SACKs data while that new data is out,
//! the timeout was genuine and go-back-N resumes (`tp->frto = 0`).
//!
//! Not modelled: `tcp_try_undo_partial()` (an old timestamp echo on a partial ACK in recovery);
//! an ECN reduction is never undone (Linux `tcp_enter_cwr()` clears the marker too).

use crate::engine::SimTime;
use crate::tcp::cc::CongestionOps;
use crate::tcp::segment::ts_value;
use crate::tcp::tcb::Tcb;

/// Linux's undo bookkeeping (`undo_marker`, `undo_retrans`, `prior_cwnd`, `prior_ssthresh`,
/// `retrans_stamp`, `frto`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Undo {
    /// `tcp.undo`: undo reductions shown spurious.
    pub enabled: bool,
    /// `tcp.frto`: F-RTO after an RTO.
    pub frto_enabled: bool,
    /// `undo_marker`: snd.una when the reduction began; None: nothing to undo.
    marker: Option<u64>,
    /// `undo_retrans`: retransmissions of the episode not shown needless (None: none sent
    /// yet, Linux's −1).
    retrans: Option<u64>,
    prior_cwnd: u64,
    /// 0: the reduction restores no ssthresh (and no cwnd), as Linux's `prior_ssthresh = 0`.
    prior_ssthresh: u64,
    /// `retrans_stamp`: TSval of the episode's first retransmission.
    retrans_stamp: Option<u32>,
    /// `tp->frto`: F-RTO runs for the current RTO episode.
    pub frto: bool,
    /// The TSecr of the ACK being processed (0: none).
    ecr: u32,
    /// Reductions undone, for tests and records.
    pub undone: u64,
}

/// What the ACK processed in RTO recovery showed (Linux's ACK flags).
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct LossAck {
    /// snd.una before the ACK was below the recovery point (state Loss).
    pub in_loss: bool,
    /// FLAG_SND_UNA_ADVANCED.
    pub advanced: bool,
    /// FLAG_ORIG_SACK_ACKED: data sent before the RTO and never retransmitted was ACKed or
    /// SACKed.
    pub orig_acked: bool,
    /// FLAG_DATA_SACKED or a duplicate ACK.
    pub sacked_or_dup: bool,
}

/// What `tcp_process_loss()` decided for an ACK in RTO recovery.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum LossStep {
    /// Go on (go-back-N, or F-RTO waits).
    Continue,
    /// `tcp_try_undo_loss()`: the RTO was spurious (`ca_state::undo_loss`).
    Undo,
    /// F-RTO step 2b (REXMIT_NEW): send new data instead of retransmissions.
    SendNew,
}

/// Linux `tcp_current_ssthresh()` outside a reduction: ssthresh, or 3/4 of cwnd if more
/// (whole segments, as Linux counts them).
fn current_ssthresh(t: &Tcb) -> u64 {
    let segs = t.w.cwnd / t.w.mss;
    t.w.ssthresh.max(((segs >> 1) + (segs >> 2)) * t.w.mss)
}

impl Undo {
    pub fn new(enabled: bool, frto: bool) -> Self {
        Undo { enabled, frto_enabled: frto, ..Undo::default() }
    }

    /// `tcp_init_undo()` with the values the reduction is about to replace.
    fn init(&mut self, t: &Tcb) {
        self.marker = Some(t.snd_una);
        self.retrans = None;
        self.prior_cwnd = t.w.cwnd;
        self.prior_ssthresh = current_ssthresh(t);
        self.retrans_stamp = None;
    }

    /// An ECN reduction (`tcp_enter_cwr()`): nothing before it may be undone any more.
    pub fn forget(&mut self) {
        self.marker = None;
        self.prior_ssthresh = 0;
    }

    /// `tcp_may_undo()`: every retransmission reported as a duplicate, or the ACK's timestamp
    /// echo older than the first retransmission (`tcp_packet_delayed()`).
    pub fn may_undo(&self) -> bool {
        self.marker.is_some() && (self.retrans == Some(0) || self.packet_delayed())
    }

    fn packet_delayed(&self) -> bool {
        self.ecr != 0 && self.retrans_stamp.is_some_and(|t| (self.ecr.wrapping_sub(t) as i32) < 0)
    }

    /// D-SACKs reported `n` retransmitted segments as duplicates (`tcp_check_dsack()`,
    /// `tcp_sacktag_one()`); `end` is where the reported range ends.
    pub fn duplicates(&mut self, n: u64, end: u64) {
        if let (Some(m), Some(r)) = (self.marker, self.retrans) {
            if r > 0 && end > m {
                self.retrans = Some(r.saturating_sub(n));
            }
        }
    }

    /// Fast recovery begins (before the reduction): `tcp_enter_recovery()` →
    /// `tcp_init_undo()`, prior_ssthresh = `tcp_current_ssthresh()`, prior_cwnd = cwnd.
    pub fn on_enter_recovery(&mut self, t: &Tcb) {
        if self.enabled {
            self.init(t);
        }
    }

    /// The RTO fired (before the reduction). `reduced`: ssthresh was already reduced for this
    /// window (the timer fired in fast recovery, or again in the same RTO episode), and
    /// `tcp_enter_loss()` then keeps the undo state it has. F-RTO runs for this episode unless
    /// the RTO interrupted fast recovery on its first expiry (`new_recovery ||
    /// icsk_retransmits`).
    pub fn on_enter_loss(&mut self, t: &Tcb, reduced: bool) {
        // F-RTO's undo needs the values too, also without the D-SACK and timestamp undos.
        if (self.enabled || self.frto_enabled) && !reduced {
            self.init(t);
        }
        let new_recovery = !t.in_recovery() && !t.in_loss();
        self.frto = self.frto_enabled && (new_recovery || t.rtt.backoff() > 0);
    }

    /// A segment is retransmitted (`tcp_retransmit_skb()`: undo_retrans += 1, retrans_stamp).
    pub fn on_retransmit(&mut self, now: SimTime) {
        if self.enabled {
            self.retrans = Some(self.retrans.unwrap_or(0) + 1);
            self.retrans_stamp.get_or_insert(ts_value(now));
        }
    }

    /// The TSecr of the ACK about to be processed (for `tcp_packet_delayed()`).
    pub fn on_ack_start(&mut self, t: &Tcb, ecr: Option<u32>) {
        self.ecr = if t.timestamps { ecr.unwrap_or(0) } else { 0 };
    }

    /// `tcp_undo_cwnd_reduction()`: cwnd and ssthresh back to their values before the
    /// reduction.
    pub fn undo_cwnd_reduction(&mut self, t: &mut Tcb, cc: &mut impl CongestionOps, now: SimTime) {
        if self.prior_ssthresh > 0 {
            t.w.cwnd = t.w.cwnd.max(self.prior_cwnd);
            t.w.ssthresh = t.w.ssthresh.max(self.prior_ssthresh);
        }
        self.marker = None;
        self.undone += 1;
        t.w.bytes_acked = 0;
        t.stats.max_cwnd = t.stats.max_cwnd.max(t.w.cwnd);
        // CUBIC restarts its curve from the restored window (Linux: bictcp_reset() at the loss
        // left epoch_start = 0, so the next congestion-avoidance ACK starts a new epoch).
        cc.on_recovery_exit(&mut t.w, now);
    }

    /// `tcp_try_undo_dsack()`'s test: outside an RTO episode, every retransmission of the
    /// episode was D-SACKed.
    pub fn dsack_undo_due(&self, t: &Tcb) -> bool {
        self.enabled && !t.in_loss() && self.marker.is_some() && self.retrans == Some(0)
    }

    /// `tcp_process_loss()` for an ACK in RTO recovery (after cumulative and selective
    /// acknowledgment were applied, before cwnd grows).
    pub fn process_loss(&mut self, t: &Tcb, a: LossAck) -> LossStep {
        if !a.in_loss || !(self.enabled || self.frto) {
            return LossStep::Continue;
        }
        let recovered = t.snd_una >= t.recover;
        // tcp_try_undo_loss(sk, false): all retransmissions D-SACKed, or a timestamp echo
        // older than the first of them.
        if a.advanced && self.enabled && self.may_undo() {
            return LossStep::Undo;
        }
        if self.frto {
            // RFC 5682 §3.1 step 3b (Linux: FLAG_ORIG_SACK_ACKED): the RTO was spurious.
            if a.orig_acked {
                return LossStep::Undo;
            }
            if t.snd_max > t.recover {
                // New data went out on F-RTO's second step: a duplicate ACK or a SACK now means
                // the timeout was genuine (step 3a).
                if a.sacked_or_dup {
                    self.frto = false;
                }
            } else if a.advanced && !recovered {
                // Step 2: the retransmission was ACKed; send new data if allowed, else give up.
                if t.has_new_data() && t.snd_una + t.peer_wnd > t.snd_max {
                    return LossStep::SendNew;
                }
                self.frto = false;
            }
        }
        LossStep::Continue
    }

    #[cfg(test)]
    pub fn marker(&self) -> Option<u64> {
        self.marker
    }
    #[cfg(test)]
    pub fn retrans(&self) -> Option<u64> {
        self.retrans
    }
}
