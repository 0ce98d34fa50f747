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
use crate::tcp::cc::CongestionControl;
use crate::tcp::sender::{ts_value, Sender, TxSeg};

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

impl Undo {
    pub fn new(enabled: bool, frto: bool) -> Self {
        Undo { enabled, frto_enabled: frto, ..Undo::default() }
    }

    /// `tcp_init_undo()` with the values the reduction is about to replace.
    fn init(&mut self, una: u64, cwnd: u64, ssthresh: u64) {
        self.marker = Some(una);
        self.retrans = None;
        self.prior_cwnd = cwnd;
        self.prior_ssthresh = ssthresh;
        self.retrans_stamp = None;
    }

    /// An ECN reduction (`tcp_enter_cwr()`): nothing before it may be undone any more.
    pub fn forget(&mut self) {
        self.marker = None;
        self.prior_ssthresh = 0;
    }

    /// `tcp_may_undo()`: every retransmission reported as a duplicate, or the ACK's timestamp
    /// echo older than the first retransmission (`tcp_packet_delayed()`).
    fn may_undo(&self) -> bool {
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

    #[cfg(test)]
    pub fn marker(&self) -> Option<u64> {
        self.marker
    }
    #[cfg(test)]
    pub fn retrans(&self) -> Option<u64> {
        self.retrans
    }
}

/// Linux `tcp_current_ssthresh()` outside a reduction: ssthresh, or 3/4 of cwnd if more
/// (whole segments, as Linux counts them).
fn current_ssthresh(s: &Sender) -> u64 {
    let segs = s.w.cwnd / s.w.mss;
    s.w.ssthresh.max(((segs >> 1) + (segs >> 2)) * s.w.mss)
}

/// Fast recovery begins (before the reduction): `tcp_enter_recovery()` → `tcp_init_undo()`,
/// prior_ssthresh = `tcp_current_ssthresh()`, prior_cwnd = cwnd.
pub(crate) fn on_enter_recovery(s: &mut Sender) {
    if !s.undo.enabled {
        return;
    }
    let (una, cwnd, ssthresh) = (s.snd_una, s.w.cwnd, current_ssthresh(s));
    s.undo.init(una, cwnd, ssthresh);
}

/// The RTO fired (before the reduction). `reduced`: ssthresh was already reduced for this
/// window (the timer fired in fast recovery, or again in the same RTO episode), and
/// `tcp_enter_loss()` then keeps the undo state it has. F-RTO runs for this episode unless
/// the RTO interrupted fast recovery on its first expiry (`new_recovery ||
/// icsk_retransmits`).
pub(crate) fn on_enter_loss(s: &mut Sender, reduced: bool) {
    // F-RTO's undo needs the values too, also without the D-SACK and timestamp undos.
    if (s.undo.enabled || s.undo.frto_enabled) && !reduced {
        let (una, cwnd, ssthresh) = (s.snd_una, s.w.cwnd, current_ssthresh(s));
        s.undo.init(una, cwnd, ssthresh);
    }
    let in_loss = s.in_rto_loss && s.snd_una < s.recover;
    let new_recovery = !s.in_recovery && !in_loss;
    s.undo.frto = s.undo.frto_enabled && (new_recovery || s.rtt.backoff() > 0);
}

/// A segment is retransmitted (`tcp_retransmit_skb()`: undo_retrans += 1, retrans_stamp).
pub(crate) fn on_retransmit(s: &mut Sender, now: SimTime) {
    let u = &mut s.undo;
    if u.enabled {
        u.retrans = Some(u.retrans.unwrap_or(0) + 1);
        u.retrans_stamp.get_or_insert(ts_value(now));
    }
}

/// The TSecr of the ACK about to be processed (for `tcp_packet_delayed()`).
pub(crate) fn on_ack_start(s: &mut Sender, ecr: Option<u32>) {
    s.undo.ecr = if s.timestamps_on() { ecr.unwrap_or(0) } else { 0 };
}

/// `tcp_undo_cwnd_reduction()`: cwnd and ssthresh back to their values before the reduction.
fn undo_cwnd_reduction(s: &mut Sender, now: SimTime) {
    let u = &mut s.undo;
    if u.prior_ssthresh > 0 {
        s.w.cwnd = s.w.cwnd.max(u.prior_cwnd);
        s.w.ssthresh = s.w.ssthresh.max(u.prior_ssthresh);
    }
    u.marker = None;
    u.undone += 1;
    s.w.bytes_acked = 0;
    s.stats.max_cwnd = s.stats.max_cwnd.max(s.w.cwnd);
    // CUBIC restarts its curve from the restored window (Linux: bictcp_reset() at the loss
    // left epoch_start = 0, so the next congestion-avoidance ACK starts a new epoch).
    s.cc.on_recovery_exit(&mut s.w, now);
}

/// Fast recovery ends in Open without the `cwnd = ssthresh` of `tcp_end_cwnd_reduction()`
/// (the undo restored the window), as `tcp_try_keep_open()` leaves it: no recovery point
/// pending.
fn leave_recovery(s: &mut Sender) {
    s.in_recovery = false;
    s.prr = None;
    s.dupacks = 0;
    s.recover = s.snd_una;
}

/// `tcp_try_undo_dsack()`: in Open, Disorder or Recovery, every retransmission of the episode
/// was D-SACKed. Called after the ACK's SACK blocks were read; true if undone.
pub(crate) fn try_undo_dsack(s: &mut Sender, now: SimTime) -> bool {
    let in_loss = s.in_rto_loss && s.snd_una < s.recover;
    if !s.undo.enabled || in_loss || s.undo.marker.is_none() || s.undo.retrans != Some(0) {
        return false;
    }
    // RACK keeps a widened reordering window one recovery longer (tcp_try_undo_dsack()).
    s.dsack.persist_one_more();
    undo_cwnd_reduction(s, now);
    if s.in_recovery {
        leave_recovery(s);
    }
    true
}

/// Fast recovery reached its recovery point: `tcp_try_undo_recovery()`. True if the reduction
/// was undone (recovery then ended here); false: the caller ends recovery as usual.
pub(crate) fn try_undo_recovery(s: &mut Sender, now: SimTime) -> bool {
    if !s.undo.enabled {
        return false;
    }
    if s.undo.may_undo() {
        undo_cwnd_reduction(s, now);
        leave_recovery(s);
        return true;
    }
    // A recovery that was not spurious counts down RACK's widened window (reo_wnd_persist).
    s.dsack.recovery_ended();
    false
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

/// `tcp_process_loss()` for an ACK in RTO recovery (after cumulative and selective
/// acknowledgment were applied, before cwnd grows). Returns true when F-RTO wants new data
/// sent instead of retransmissions on this ACK (REXMIT_NEW).
pub(crate) fn process_loss(s: &mut Sender, now: SimTime, a: LossAck) -> bool {
    if !a.in_loss || !(s.undo.enabled || s.undo.frto) {
        return false;
    }
    let recovered = s.snd_una >= s.recover;
    // tcp_try_undo_loss(sk, false): all retransmissions D-SACKed, or a timestamp echo older
    // than the first of them.
    if a.advanced && s.undo.enabled && s.undo.may_undo() {
        undo_loss(s, now);
        return false;
    }
    if s.undo.frto {
        // RFC 5682 §3.1 step 3b (Linux: FLAG_ORIG_SACK_ACKED): the RTO was spurious.
        if a.orig_acked {
            undo_loss(s, now);
            return false;
        }
        if s.snd_max > s.recover {
            // New data went out on F-RTO's second step: a duplicate ACK or a SACK now means the
            // timeout was genuine (step 3a).
            if a.sacked_or_dup {
                s.undo.frto = false;
            }
        } else if a.advanced && !recovered {
            // Step 2: the retransmission was ACKed; send new data if allowed, else give up.
            if s.has_new_data() && s.snd_una + s.peer_wnd > s.snd_max {
                return true;
            }
            s.undo.frto = false;
        }
    }
    false
}

/// `tcp_try_undo_loss()` succeeded: cwnd and ssthresh restored, RTO recovery over (state Open),
/// the loss marks forgotten (`tcp_undo_cwnd_reduction(sk, true)`), so go-back-N stops.
fn undo_loss(s: &mut Sender, now: SimTime) {
    undo_cwnd_reduction(s, now);
    s.undo.frto = false;
    s.in_rto_loss = false;
    s.recover = s.snd_una;
    s.snd_nxt = s.snd_max;
    s.outstanding.rack_relink_after_undo();
}

/// F-RTO step 2 (REXMIT_NEW): new data within cwnd, counting as in flight only what
/// go-back-N has resent and not yet seen ACKed (Linux's in-flight after `tcp_enter_loss()`
/// marked everything lost); the go-back-N point is kept for a genuine timeout.
pub(crate) fn send_new_data(s: &mut Sender, now: SimTime, out: &mut Vec<TxSeg>) {
    let resume = s.snd_nxt;
    let resent = resume.saturating_sub(s.snd_una);
    s.snd_nxt = s.snd_max;
    let start = s.snd_max;
    loop {
        let room = s.w.cwnd.saturating_sub(resent + (s.snd_max - start));
        let edge = (s.snd_max + room).min(s.snd_una + s.peer_wnd.min(u64::MAX - s.snd_una));
        if !s.send_new(now, edge, out) {
            break;
        }
    }
    if s.snd_max == start {
        s.undo.frto = false; // nothing could be sent (tcp_xmit_recovery(): frto = 0)
    }
    s.snd_nxt = resume.max(s.snd_una);
    s.frto_new = Some((start, s.snd_max));
}

#[cfg(test)]
mod tests {
    use crate::engine::{SimDuration, SimTime};
    use crate::tcp::cc::CcConfig;
    use crate::tcp::config::{RecoveryKind, TcpConfig};
    use crate::tcp::recovery::test_support::ack;
    use crate::tcp::segment::{Flags, Segment};
    use crate::tcp::sender::{ts_value, Sender, TxSeg};

    const MSS: u64 = 1000;

    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }
    fn seq(k: u64) -> u64 {
        1 + (k - 1) * MSS
    }

    /// A Linux-like RACK sender (CUBIC, no TLP, no timestamps), RTT 100 ms, `n` segments in
    /// flight from t = 0 with IW 10, `data` segments written.
    fn sender(undo: bool, frto: bool, n: u64, data: u64) -> Sender {
        let cfg = TcpConfig {
            mss: MSS as u32,
            cc: CcConfig::by_name("cubic").unwrap(),
            recovery: RecoveryKind::Rack,
            sack: true,
            undo,
            frto,
            dsack: undo,
            rto_keeps_reduced_ssthresh: true,
            abc_l: Some(65535),
            min_rto: SimDuration::from_millis(200),
            ..TcpConfig::default()
        };
        let mut s = Sender::new(&cfg, true, false);
        s.rtt.sample(SimDuration::from_millis(100), 1, 1);
        s.write(data * MSS);
        s.start(10 * MSS);
        let mut out = vec![];
        s.transmit(at(0), &mut out);
        assert_eq!(out.len() as u64, n);
        s
    }

    fn rto(s: &mut Sender) -> Vec<TxSeg> {
        let t = s.rto_deadline_only().expect("RTO armed");
        let mut out = vec![];
        s.on_rto(t, &mut out);
        out
    }

    #[test]
    fn frto_an_ack_of_never_retransmitted_data_undoes_the_rto() {
        // tcp_process_loss(): FLAG_ORIG_SACK_ACKED → tcp_try_undo_loss(sk, true).
        let mut s = sender(true, true, 10, 30);
        let out = rto(&mut s);
        assert_eq!(out.iter().map(|t| (t.seq, t.retransmit)).collect::<Vec<_>>(), vec![(seq(1), true)]);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (MSS, 7 * MSS), "CUBIC: ssthresh = 0.7 · 10");
        let t = s.rto_deadline_only().unwrap();
        // Segments 1 and 2 ACKed: 2 was never resent.
        let out = ack(&mut s, t + SimDuration::from_millis(10), seq(3), &[]);
        assert_eq!(s.w.ssthresh, u64::MAX, "ssthresh back to its value before the RTO");
        assert_eq!(s.w.cwnd, 12 * MSS, "cwnd 10 restored, then slow start by the 2 segments ACKed");
        assert!(!s.in_rto_loss && s.undo.undone == 1);
        // Go-back-N stopped: only new data follows (8 in flight, cwnd 12).
        assert!(out.iter().all(|t| !t.retransmit));
        assert_eq!(out.iter().map(|t| t.seq).collect::<Vec<_>>(), (11..=14).map(seq).collect::<Vec<_>>());
    }

    #[test]
    fn frto_undoes_a_spurious_rto_also_without_the_dsack_and_timestamp_undos() {
        let mut s = sender(false, true, 10, 30);
        rto(&mut s);
        let t = s.rto_deadline_only().unwrap();
        ack(&mut s, t + SimDuration::from_millis(10), seq(3), &[]);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (12 * MSS, u64::MAX));
    }

    #[test]
    fn without_frto_the_same_ack_keeps_the_reduction() {
        let mut s = sender(true, false, 10, 30);
        rto(&mut s);
        let t = s.rto_deadline_only().unwrap();
        let out = ack(&mut s, t + SimDuration::from_millis(10), seq(3), &[]);
        assert_eq!(s.w.ssthresh, 7 * MSS);
        assert!(s.in_rto_loss);
        assert!(out.iter().all(|t| t.retransmit), "go-back-N goes on");
    }

    #[test]
    fn frto_sends_new_data_after_the_ack_of_the_retransmission_then_undoes_on_original_data() {
        // RFC 5682 §3.1 step 2b (REXMIT_NEW): the ACK covers only the resent segment 1.
        let mut s = sender(true, true, 10, 30);
        rto(&mut s);
        let t = s.rto_deadline_only().unwrap();
        let out = ack(&mut s, t + SimDuration::from_millis(10), seq(2), &[]);
        // cwnd 2 after slow start on that ACK; nothing resent is in flight: two new segments.
        assert_eq!(
            out.iter().map(|t| (t.seq, t.retransmit)).collect::<Vec<_>>(),
            vec![(seq(11), false), (seq(12), false)]
        );
        assert!(s.in_rto_loss && s.undo.frto);
        // Step 3b: the next ACK covers segment 2, never resent: spurious, undone.
        ack(&mut s, t + SimDuration::from_millis(20), seq(3), &[]);
        assert_eq!(s.w.ssthresh, u64::MAX);
        assert!(!s.in_rto_loss);
    }

    #[test]
    fn frto_a_sack_after_the_new_data_confirms_the_timeout_and_go_back_n_resumes() {
        let mut s = sender(true, true, 10, 30);
        rto(&mut s);
        let t = s.rto_deadline_only().unwrap();
        ack(&mut s, t + SimDuration::from_millis(10), seq(2), &[]);
        // Step 3a: a SACK of new segment 11 only: the flight was lost.
        let out = ack(&mut s, t + SimDuration::from_millis(20), seq(2), &[(seq(11), seq(12))]);
        assert!(!s.undo.frto);
        assert_eq!(s.w.ssthresh, 7 * MSS);
        assert_eq!(out.first().map(|t| (t.seq, t.retransmit)), Some((seq(2), true)), "resent from 2 on");
    }

    #[test]
    fn a_dsack_of_the_only_retransmission_undoes_fast_recovery() {
        // tcp_check_dsack() → undo_retrans 0 → tcp_try_undo_dsack().
        let mut s = sender(true, false, 10, 10);
        ack(&mut s, at(100), 1, &[(seq(2), seq(5))]);
        assert!(s.in_recovery);
        assert_eq!((s.undo.marker(), s.undo.retrans()), (Some(1), Some(1)));
        ack(&mut s, at(110), seq(11), &[]);
        assert!(!s.in_recovery);
        assert_eq!(s.w.ssthresh, 7 * MSS, "recovery ended reduced: nothing shown spurious yet");
        ack(&mut s, at(200), seq(11), &[(seq(1), seq(2))]);
        assert_eq!(s.undo.marker(), None, "the marker is cleared by the undo");
        assert_eq!((s.w.cwnd, s.w.ssthresh), (10 * MSS, u64::MAX));
    }

    #[test]
    fn an_ack_echoing_a_timestamp_older_than_the_retransmission_undoes_the_rto() {
        // tcp_try_undo_loss(sk, false) with tcp_packet_delayed() (RFC 3522 Eifel): the ACK of
        // segment 1 echoes the TSval of its original transmission (t = 0), not of the resend.
        let cfg = TcpConfig {
            mss: MSS as u32,
            cc: CcConfig::by_name("cubic").unwrap(),
            recovery: RecoveryKind::Rack,
            sack: true,
            timestamps: true,
            undo: true,
            rto_keeps_reduced_ssthresh: true,
            ..TcpConfig::default()
        };
        let after_rto = || {
            let mut s = Sender::new(&cfg, true, true);
            s.write(10 * MSS);
            s.start(10 * MSS);
            s.transmit(at(0), &mut vec![]);
            rto(&mut s);
            assert_eq!(s.w.ssthresh, 7 * MSS);
            s
        };
        let echo = |ecr: u32| Segment {
            seq: 1,
            ack: seq(2),
            flags: Flags::ACK,
            wnd: 1 << 30,
            ts: Some((1, ecr)),
            ..Default::default()
        };
        // Echo of the retransmission (sent at the first RTO, before `t`): no undo.
        let mut late = after_rto();
        let t = late.rto_deadline_only().unwrap();
        late.on_ack(t, &echo(ts_value(t)), false, &mut vec![]);
        assert_eq!(late.w.ssthresh, 7 * MSS);
        let mut s = after_rto();
        s.on_ack(t, &echo(ts_value(at(0))), false, &mut vec![]);
        assert_eq!(s.w.ssthresh, u64::MAX);
        assert!(s.w.cwnd >= 10 * MSS && !s.in_rto_loss);
    }

    #[test]
    fn without_undo_a_dsack_changes_nothing() {
        let mut s = sender(false, false, 10, 10);
        ack(&mut s, at(100), 1, &[(seq(2), seq(5))]);
        ack(&mut s, at(110), seq(11), &[]);
        let before = (s.w.cwnd, s.w.ssthresh);
        ack(&mut s, at(200), seq(11), &[(seq(1), seq(2))]);
        assert_eq!((s.w.cwnd, s.w.ssthresh), before);
    }
}
