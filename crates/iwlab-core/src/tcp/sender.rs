//! The data sender: what may be sent now (RFC 5681 window rules, RFC 3042 Limited Transmit),
//! what an ACK means (RFC 5681 §2 duplicate ACKs, RFC 2018 SACK scoreboard, RFC 6298 timer
//! management), and the timers (RFC 6298 §5 RTO, RFC 8985 RACK and TLP).
//!
//! The sender owns the control block ([`Tcb`], `tcb.rs`, which it dereferences to), the
//! congestion control (`cc/`), the loss-recovery variant and mechanisms (`recovery/`), and
//! passes them to the CA state machine (`ca_state.rs`), which decides when recovery starts
//! and ends. The initial and restart windows are chosen by the endpoint from its `iw`
//! policy. The sender emits [`TxSeg`]s (sequence ranges); the endpoint turns them into
//! segments.

use super::ca_state;
use super::cc::{AckInfo, Congestion, CongestionOps};
use super::config::TcpConfig;
use super::pacing::Pacer;
use super::persist::Persist;
use super::recovery::dsack::{self, Dsack};
use super::recovery::prr::PrrState;
use super::recovery::tlp::{Tlp, TlpAck};
use super::recovery::undo::{LossAck, Undo};
use super::recovery::{AnyRecovery, Ctx, Mechanisms, RecoveryOps};
use super::reordering::Reordering;
use super::rto::{RtoRule, RttEstimator};
use super::rtt_sample::{AckedSegments, RttSamples};
use super::scoreboard::Scoreboard;
use super::segment::{Flags, Segment};
use super::tcb::{CaState, CwndUse, Tcb, Window};
use super::timers::TimerClock;
use crate::engine::{SimDuration, SimTime};
use std::ops::{Deref, DerefMut};

pub use super::segment::ts_value;
pub use super::tcb::{SenderStats, TxSeg};

pub struct Sender {
    tcb: Tcb,
    pub cc: Congestion,
    rec: AnyRecovery,
    pub(crate) mech: Mechanisms,
}

impl Deref for Sender {
    type Target = Tcb;
    fn deref(&self) -> &Tcb {
        &self.tcb
    }
}

impl DerefMut for Sender {
    fn deref_mut(&mut self) -> &mut Tcb {
        &mut self.tcb
    }
}

impl Sender {
    pub fn new(cfg: &TcpConfig, sack: bool, timestamps: bool) -> Self {
        let mss = cfg.mss as u64;
        let tcb = Tcb {
            w: Window { cwnd: mss, ssthresh: cfg.initial_ssthresh, mss, abc_l: cfg.abc_l, bytes_acked: 0 },
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.granularity)
                .with_rule(cfg.timers)
                .with_clock(TimerClock::new(cfg.hz)),
            dupthresh: cfg.dupthresh,
            reordering: Reordering::new(cfg.dupthresh, cfg.reordering_learned),
            limited_transmit: cfg.limited_transmit,
            sack,
            timestamps,
            snd_una: 1,
            snd_nxt: 1,
            snd_max: 1,
            data_end: 1,
            fin_requested: false,
            peer_wnd: u64::MAX,
            mss: cfg.mss,
            outstanding: Scoreboard::new(cfg.dupthresh, mss, cfg.recovery == super::config::RecoveryKind::Rack),
            dupacks: 0,
            ca: CaState::Open,
            recover: 0,
            partial_acks: 0,
            rto_at: None,
            rack_at: None,
            persist: Persist::new(cfg.min_rto, cfg.max_rto),
            last_send: None,
            ecn_recover: 0,
            cwr_pending: false,
            window_probe: None,
            iw_loss: None,
            iw_loss_new: false,
            any_loss: false,
            stats: SenderStats::default(),
            pacer: Pacer::new(cfg.pacing),
            delivered: 0,
            newly_sacked: 0,
            ack_advanced: false,
            fin_newly_sacked: false,
            rto_keeps_reduced_ssthresh: cfg.rto_keeps_reduced_ssthresh,
            cwnd_use: cfg.grow_only_cwnd_limited.then(CwndUse::default),
            restart_halves_per_rto: cfg.restart_halves_per_rto,
            fin_needs_cwnd: cfg.fin_after_write,
            rto_window_in_flight: cfg.rto_window_in_flight,
            frto_new: None,
        };
        let tlp = cfg.tlp.then(|| match cfg.timers {
            // RFC 8985 §7.2: the peer's worst-case delayed-ACK time.
            RtoRule::Rfc6298 => {
                Tlp { max_ack_delay: cfg.delayed_ack.map_or(SimDuration::ZERO, |d| d.timeout), ..Tlp::default() }
            }
            // Linux tcp_schedule_loss_probe(): tcp_rto_min for one segment, 2 ms otherwise.
            RtoRule::Linux => Tlp { max_ack_delay: cfg.min_rto, multi_delay: SimDuration::from_millis(2), ..Tlp::default() },
        });
        Sender {
            tcb,
            cc: Congestion::new(&cfg.cc, cfg.hystart),
            rec: AnyRecovery::new(cfg.recovery),
            mech: Mechanisms {
                prr: PrrState::new(cfg.prr),
                tlp,
                undo: Undo::new(cfg.undo, cfg.frto),
                dsack: Dsack::new(cfg.dsack && sack),
            },
        }
    }

    /// The control block and the mechanisms, borrowed apart (for tests).
    #[cfg(test)]
    pub(crate) fn split(&mut self) -> (&mut Tcb, &mut Mechanisms) {
        (&mut self.tcb, &mut self.mech)
    }

    /// The recovery variant and what the policies work on, borrowed apart.
    fn parts(&mut self) -> (&mut AnyRecovery, Ctx<'_>) {
        (&mut self.rec, Ctx { t: &mut self.tcb, cc: &mut self.cc, m: &mut self.mech })
    }
    fn ctx(&mut self) -> Ctx<'_> {
        self.parts().1
    }

    /// Sets cwnd to the initial window and notes its sequence range (RFC 6928 §4 fallback).
    pub fn start(&mut self, iw_bytes: u64) {
        let t = &mut self.tcb;
        t.w.cwnd = iw_bytes;
        t.stats.max_cwnd = t.stats.max_cwnd.max(iw_bytes);
        t.window_probe = Some((t.snd_nxt, t.snd_nxt + iw_bytes));
        t.pacer.start_iw(t.snd_nxt, iw_bytes, t.rtt.srtt());
        // Room for the first flight (and a FIN) without growing segment by segment.
        t.outstanding.reserve(iw_bytes.div_ceil(t.w.mss) as usize + 1);
        // RFC 8985 §7.3: the handshake's RTT sample counts as one "since the start".
        let sampled = t.rtt.srtt().is_some();
        if let Some(tlp) = self.mech.tlp.as_mut() {
            tlp.rtt_sampled = sampled;
        }
    }

    /// The application writes `bytes` more.
    pub fn write(&mut self, bytes: u64) {
        debug_assert!(!self.tcb.fin_requested, "write after close");
        self.tcb.data_end += bytes;
    }
    /// The application closes: a FIN follows the last byte.
    pub fn request_fin(&mut self) {
        self.tcb.fin_requested = true;
    }
    /// All data and the FIN (if any) acknowledged.
    pub fn all_acked(&self) -> bool {
        self.tcb.snd_una == self.tcb.data_end + self.tcb.fin_requested as u64
    }
    pub fn fin_acked(&self) -> bool {
        self.tcb.fin_requested && self.tcb.snd_una > self.tcb.data_end
    }
    pub fn bytes_written(&self) -> u64 {
        self.tcb.data_end - 1
    }
    /// When the sender's next timer fires: the RTO, or RACK's reordering timer or the TLP
    /// probe timer when those are on (`on_rto` handles all three).
    pub fn rto_deadline(&self) -> Option<SimTime> {
        let t = SimTime::earliest(
            SimTime::earliest(self.tcb.rto_at, self.tcb.rack_at),
            self.mech.tlp.as_ref().and_then(|t| t.at),
        );
        SimTime::earliest(t, self.tcb.persist.at)
    }
    /// The retransmission timer alone.
    #[cfg(test)]
    pub(crate) fn rto_deadline_only(&self) -> Option<SimTime> {
        self.tcb.rto_at
    }

    /// RFC 5681 §4.1: has the sender been idle (nothing in flight) longer than one RTO?
    pub fn idle_restart_due(&self, now: SimTime) -> bool {
        let t = &self.tcb;
        t.snd_una == t.snd_max && t.has_new_data() && t.last_send.is_some_and(|l| now.saturating_since(l) > t.rtt.rto())
    }

    /// Applies the restart window: cwnd = min(RW, cwnd), RW = min(IW, cwnd) (RFC 5681 §4.1);
    /// with `restart_halves_per_rto`, Linux's tcp_cwnd_restart(): ssthresh =
    /// tcp_current_ssthresh() (at least 3/4 cwnd), then cwnd halves once per RTO the sender
    /// was idle, never below RW.
    pub fn restart_after_idle(&mut self, rw_iw: u64, now: SimTime) {
        let t = &mut self.tcb;
        let restart = t.w.cwnd.min(rw_iw);
        if t.restart_halves_per_rto {
            let cwnd = t.w.cwnd;
            t.w.ssthresh = t.w.ssthresh.max(cwnd / 2 + cwnd / 4);
            let rto = t.rtt.rto();
            let mut idle = t.last_send.map_or(SimDuration::ZERO, |l| now.saturating_since(l));
            let mut w = cwnd;
            while idle > rto && w > restart {
                idle = idle - rto;
                w /= 2;
            }
            t.w.cwnd = w.max(restart);
        } else {
            t.w.cwnd = restart;
        }
        self.cc.on_idle_restart(&mut t.w, now);
        t.window_probe = Some((t.snd_nxt, t.snd_nxt + t.w.cwnd));
        t.iw_loss = None;
    }

    /// Processes the ACK fields of an arriving segment. Transmission is left to `transmit`.
    pub fn on_ack(&mut self, now: SimTime, seg: &Segment, ecn: bool, out: &mut Vec<TxSeg>) {
        let ack = seg.ack;
        if ack > self.tcb.snd_max {
            return; // acknowledges something never sent: ignore (RFC 9293 §3.10.7.4)
        }
        self.tcb.persist.on_ack();
        // RFC 2883 D-SACK: read before the probe's episode and the scoreboard change.
        let dsack = self.mech.dsack.enabled.then(|| dsack::block(seg)).flatten();
        let probe_end = self.mech.tlp.as_ref().and_then(|t| t.end_seq);
        self.mech.undo.on_ack_start(&self.tcb, seg.ts.map(|(_, ecr)| ecr));
        let in_loss = self.tcb.in_loss();
        self.tcb.outstanding.orig_sacked_end = u64::MAX;
        // tcp_ack(): prior_fack, for a hole the cumulative ACK fills (tcp_clean_rtx_queue()).
        let prior_fack = self.tcb.outstanding.fack(self.tcb.snd_una);
        // RFC 8985 §7.4.2: a probe that repaired a loss reduces cwnd (and this ACK does not grow it).
        let tlp_reduced =
            self.mech.tlp.as_mut().is_some_and(|p| p.process_ack(&self.tcb, seg, dsack) == TlpAck::Repaired);
        if tlp_reduced {
            ca_state::on_tlp_repair(&mut self.ctx(), now);
        }
        let t = &mut self.tcb;
        t.peer_wnd = seg.wnd;
        t.newly_sacked = 0;
        t.fin_newly_sacked = false;
        t.delivered = 0;
        t.ack_advanced = ack > t.snd_una;
        let mut dsacking = false;
        if t.sack && !seg.sack.is_empty() {
            if let Some(d) = self.mech.dsack.on_ack(&self.tcb, seg, probe_end) {
                self.mech.undo.duplicates(d.resent, d.end);
                dsacking = true;
            }
            self.update_scoreboard(now, seg);
        }
        self.tcb.delivered = self.tcb.newly_sacked;
        // Linux tcp_try_undo_dsack(): every retransmission of the episode D-SACKed.
        if dsack.is_some() {
            ca_state::try_undo_dsack(&mut self.ctx(), now);
        }
        let mut frto_send = false;
        // RFC 3168 §6.1.2: no cwnd increase in response to the ACK whose ECE we acted on.
        let reduced = ecn && seg.flags.contains(Flags::ECE) && ca_state::on_ece(&mut self.ctx(), now);
        if ack > self.tcb.snd_una {
            frto_send = self.on_new_ack(now, seg, !reduced && !tlp_reduced, in_loss, prior_fack, out);
        } else {
            if !reduced && !tlp_reduced {
                self.grow_on_sacks(now, seg);
            }
            let t = &self.tcb;
            let dup = ack == t.snd_una && seg.len == 0 && !seg.is_syn() && !seg.is_fin() && t.snd_max > t.snd_una;
            if in_loss {
                // Linux tcp_process_loss() on an ACK that does not advance snd.una.
                let orig_acked = t.outstanding.orig_sacked_end <= t.recover;
                let a = LossAck {
                    in_loss,
                    advanced: false,
                    orig_acked,
                    sacked_or_dup: t.newly_sacked > 0 || (dup && !dsacking),
                };
                ca_state::process_loss(&mut self.ctx(), now, a);
            }
            // Linux counts no duplicate ACK that carries a trusted D-SACK (FLAG_DSACKING_ACK): it
            // reports a needless resend, not a segment that left the network.
            if dup && !dsacking {
                // RFC 5681 §2 DUPLICATE ACKNOWLEDGMENT (conditions a–d).
                self.tcb.dupacks += 1;
                let (rec, mut c) = self.parts();
                ca_state::on_dupack(rec, &mut c, now, out);
            }
        }
        let t = &mut self.tcb;
        if t.frto_new.is_some_and(|(_, end)| t.snd_una >= end || t.ca != CaState::Loss) {
            t.frto_new = None;
        }
        let (rec, mut c) = self.parts();
        ca_state::after_ack(rec, &mut c, now, out);
        if frto_send {
            // RFC 5682 §3.1 step 2b, after this ACK grew cwnd (Linux tcp_xmit_recovery()).
            self.frto_send_new_data(now, out);
        }
        if let Some(tlp) = self.mech.tlp.as_mut() {
            tlp.revalidate(&self.tcb);
        }
    }

    /// An ACK of new data; true when F-RTO wants new data sent after it (`recovery/undo.rs`).
    fn on_new_ack(
        &mut self,
        now: SimTime,
        seg: &Segment,
        grow: bool,
        in_loss: bool,
        prior_fack: u64,
        out: &mut Vec<TxSeg>,
    ) -> bool {
        let ack = seg.ack;
        let t = &mut self.tcb;
        let acked = ack - t.snd_una;
        let flight_before = t.flight_size();
        let reno_sacked = t.reno_sacked();
        // Pop what is now cumulatively acknowledged, noting the send times Karn's rule allows
        // an RTT sample from (`rtt_sample.rs`).
        let mut covered = AckedSegments::default();
        // RFC 6937 DeliveredData: SACKed bytes now cumulatively acknowledged were counted
        // when they were SACKed.
        let sacked_before = t.outstanding.sacked_bytes();
        let ctx = t.delivery_ctx(now, seg);
        let mut orig_acked = t.outstanding.orig_sacked_end <= t.recover;
        // tcp_clean_rtx_queue(): the lowest segment sent once and never SACKed now ACKed.
        let mut reord = u64::MAX;
        while let Some(front) = t.outstanding.front() {
            if front.end() <= ack {
                covered.note(front);
                if front.tx == 1 {
                    // Linux FLAG_ORIG_SACK_ACKED: sent before the RTO, never resent.
                    orig_acked |= !front.sacked() && front.end() <= t.recover;
                    if !front.sacked() {
                        reord = reord.min(front.seq);
                    }
                }
                t.outstanding.pop_front(&ctx);
            } else {
                if front.seq < ack {
                    // Partially acknowledged segment (rare: our segments sit on an MSS grid).
                    t.outstanding.cut_front(ack);
                }
                break;
            }
        }
        let was_sacked = sacked_before - t.outstanding.sacked_bytes();
        let RttSamples { rto: mut sample, cc: mut cc_sample } = covered.samples(t.rtt.rule(), now);
        if t.timestamps {
            // RFC 7323 §4.1: RTT from the echoed timestamp (immune to retransmission ambiguity).
            // Linux prefers the send times and falls back on TSecr (tcp_ack_update_rtt()); on
            // in-order ACKs TSecr echoes the send time of the same (oldest) segment.
            sample = match seg.ts {
                Some((_, ecr)) if ecr != 0 => Some(SimDuration::from_micros(ts_value(now).wrapping_sub(ecr) as u64)),
                _ => None,
            };
            cc_sample = sample;
        }
        if let Some(r) = sample {
            t.rtt.sample(r, ack, t.snd_nxt.max(ack));
            if let Some(tlp) = self.mech.tlp.as_mut() {
                tlp.rtt_sampled = true;
            }
        }
        t.snd_una = ack;
        if t.reordering.learned && t.sack && reord < prior_fack {
            // "Non-retransmitted hole got filled? That's reordering" (tcp_clean_rtx_queue()).
            let fack = t.outstanding.fack(ack);
            t.reordering.check(reord, fack, t.w.mss);
        }
        if t.snd_nxt < ack {
            t.snd_nxt = ack;
        }
        if t.window_probe.is_some_and(|(_, end)| ack >= end) {
            t.window_probe = None;
        }
        t.delivered = (acked + t.newly_sacked).saturating_sub(was_sacked);
        // Linux tcp_process_loss() (F-RTO, undo after an RTO) comes before cwnd grows.
        let a = LossAck { in_loss, advanced: true, orig_acked, sacked_or_dup: t.newly_sacked > 0 };
        let frto_send = ca_state::process_loss(&mut self.ctx(), now, a);
        let t = &self.tcb;
        let info = AckInfo { now, acked, flight_before, srtt: t.rtt.srtt(), min_rtt: t.rtt.min_rtt() };
        if t.in_recovery() {
            let (rec, mut c) = self.parts();
            ca_state::on_ack_in_recovery(rec, &mut c, now, acked, out);
            let ends_reduction =
                !self.tcb.in_recovery() && self.mech.prr.bound().is_some_and(|b| b.grows_on_the_ack_ending_it());
            if ends_reduction && grow && self.cwnd_limited() {
                // Linux: cwnd = ssthresh (tcp_end_cwnd_reduction()), then congestion avoidance
                // on the segments this ACK delivered (tcp_cong_control(), acked_sacked).
                let delivered = self.tcb.delivered;
                self.cc.on_ack(&mut self.tcb.w, &AckInfo { acked: delivered, ..info });
            }
        } else {
            self.tcb.dupacks = 0;
            if grow && self.cwnd_limited() {
                // Linux grows cwnd by the segments this ACK newly delivered (tcp_ack():
                // acked_sacked = tp->delivered − prior_delivered, to tcp_cong_control()), not by
                // how far snd.una moved: segments SACKed earlier were delivered then. RFC 5681
                // counts the bytes the cumulative ACK covers.
                let t = &mut self.tcb;
                if reno_sacked > 0 {
                    // Without SACK the duplicate ACKs were delivered segments already
                    // (tcp_add_reno_sack()); the cumulative ACK delivers the rest, at least one
                    // (tcp_remove_reno_sacks(): max(acked − sacked_out, 1)).
                    t.delivered = acked.saturating_sub(reno_sacked * t.w.mss).max(acked.min(t.w.mss));
                }
                let grow_by = if t.cwnd_use.is_some() { t.delivered } else { acked };
                // HyStart (RFC 9406) takes slow start's growth while it is active.
                self.cc.grow(&mut t.w, &AckInfo { acked: grow_by, ..info }, ack, t.snd_nxt, cc_sample);
            }
        }
        let t = &mut self.tcb;
        t.stats.max_cwnd = t.stats.max_cwnd.max(t.w.cwnd);
        // RFC 6298 (5.2)/(5.3): stop the timer when all is acknowledged, else restart it
        // (in NewReno recovery only on the first partial ACK, RFC 6582 §3.2 (5)).
        if t.snd_una == t.snd_max {
            t.rto_at = None;
        } else if !t.in_recovery() || self.rec.rearms_rto_in_recovery(t) {
            t.arm_rto(now);
        }
        // RFC 8985 §7.2: (re)start the PTO on an ACK of new data.
        if let Some(tlp) = self.mech.tlp.as_mut() {
            tlp.schedule(&self.tcb, now);
        }
        frto_send
    }

    /// Linux `tcp_may_raise_cwnd()` for an ACK that does not move snd.una: with a degree of
    /// reordering above `tcp.dupthresh`, newly SACKed data grows cwnd outside a reduction
    /// (`reordering.rs`).
    fn grow_on_sacks(&mut self, now: SimTime, seg: &Segment) {
        let t = &self.tcb;
        if !t.reordering.sacks_grow_cwnd() || t.newly_sacked == 0 || t.in_recovery() || t.in_loss() {
            return;
        }
        if !self.cwnd_limited() {
            return;
        }
        let t = &mut self.tcb;
        let info = AckInfo {
            now,
            acked: t.delivered,
            flight_before: t.flight_size(),
            srtt: t.rtt.srtt(),
            min_rtt: t.rtt.min_rtt(),
        };
        self.cc.grow(&mut t.w, &info, seg.ack, t.snd_nxt, None);
        t.stats.max_cwnd = t.stats.max_cwnd.max(t.w.cwnd);
    }

    /// RFC 2018: mark outstanding segments covered by the ACK's SACK blocks, then move the
    /// RFC 6675 IsLost frontier (`scoreboard.rs`: amortised O(log n) per block).
    fn update_scoreboard(&mut self, now: SimTime, seg: &Segment) {
        let t = &mut self.tcb;
        let ctx = t.delivery_ctx(now, seg);
        let sacked_before = t.outstanding.sacked_bytes();
        let fin_before = t.lone_fin_sacked();
        // The reordering the SACK walk notes is read only while the degree is learned.
        let learn = t.reordering.learned;
        if learn {
            t.outstanding.begin_sacks(t.snd_una);
        }
        for &(s, e) in seg.sack.as_slice() {
            if e <= t.snd_una {
                continue;
            }
            t.outstanding.sack_block(s, e, &ctx);
        }
        if learn {
            // tcp_sacktag_write_queue() → tcp_check_sack_reordering(state->reord).
            let (low, fack) = (t.outstanding.sacked_out_of_order, t.outstanding.fack(t.snd_una));
            t.reordering.check(low, fack, t.w.mss);
        }
        t.outstanding.update_lost();
        t.newly_sacked = t.outstanding.sacked_bytes() - sacked_before;
        t.fin_newly_sacked = t.fin_needs_cwnd && !fin_before && t.lone_fin_sacked();
    }

    /// Queues a retransmission of the outstanding segment starting at `seq`.
    pub(crate) fn retransmit(&mut self, now: SimTime, seq: u64, out: &mut Vec<TxSeg>) {
        self.ctx().retransmit(now, seq, out);
    }

    /// Sends one new segment if the window allows; false if nothing was sent.
    pub(crate) fn send_new(&mut self, now: SimTime, edge: u64, out: &mut Vec<TxSeg>) -> bool {
        self.ctx().send_new(now, edge, out)
    }

    /// Sends what the window allows: go-back-N retransmissions after an RTO, then new data,
    /// then the FIN. In SACK or RACK recovery the variant chooses instead.
    pub fn transmit(&mut self, now: SimTime, out: &mut Vec<TxSeg>) {
        let sent = out.len();
        self.transmit_window(now, out);
        if self.tcb.cwnd_use.is_some() {
            self.validate_cwnd(out.len() > sent);
        }
        // The persist timer (`persist.rs`); the RTO it starts from is needed only when armed.
        let t = &mut self.tcb;
        if t.window_blocks() {
            let (rto, clock) = (t.rtt.rto(), t.rtt.clock());
            t.persist.arm(rto, clock, now);
        } else {
            t.persist.stop();
        }
    }

    /// Linux tcp_cwnd_validate() after tcp_write_xmit(): the window was used up if the data
    /// in flight reached cwnd (Linux counts whole packets; here cwnd is in bytes and may end
    /// mid-segment, so: no room left for another full segment). A new window of data starts
    /// the record afresh; within one, a cwnd-limited send, or more segments out than recorded
    /// while not cwnd-limited, replace it.
    fn validate_cwnd(&mut self, sent: bool) {
        let t = &mut self.tcb;
        let limited = t.flight_size() + t.w.mss > t.w.cwnd;
        let (snd_una, snd_nxt, out) = (t.snd_una, t.snd_nxt, t.outstanding.len() as u64);
        let Some(u) = t.cwnd_use.as_mut() else { return };
        if !(sent || limited) {
            return;
        }
        if snd_una >= u.until || limited || (!u.limited && out > u.max_out) {
            *u = CwndUse { limited, max_out: out, until: snd_nxt };
        }
    }

    /// Linux tcp_is_cwnd_limited(): may this ACK grow cwnd? Always, unless the rule is on;
    /// then if the last window was cwnd-limited, or in slow start while cwnd is below twice
    /// the most segments that were out ("ensure cwnd grows to twice what was ACKed").
    fn cwnd_limited(&self) -> bool {
        let t = &self.tcb;
        match &t.cwnd_use {
            None => true,
            Some(u) => u.limited || (t.w.in_slow_start() && t.w.cwnd < 2 * u.max_out * t.w.mss),
        }
    }

    fn transmit_window(&mut self, now: SimTime, out: &mut Vec<TxSeg>) {
        self.tcb.pacer.begin();
        if self.tcb.in_recovery() {
            let (rec, mut c) = self.parts();
            if rec.send_in_recovery(&mut c, now, out) {
                return;
            }
        }
        // Linux tcp_xmit_retransmit_queue() resends while tcp_packets_in_flight() < cwnd: the
        // SACKed octets below snd.nxt are not in flight, so they widen the go-back-N window.
        let t = &self.tcb;
        let in_flight_rule = t.ca == CaState::Loss && t.rto_window_in_flight;
        let mut sacked_below = if in_flight_rule {
            (0..t.outstanding.len())
                .map_while(|i| t.outstanding.get(i))
                .take_while(|o| o.end() <= t.snd_nxt)
                .filter(|o| o.sacked())
                .map(|o| o.len() as u64)
                .sum()
        } else {
            0
        };
        loop {
            let t = &mut self.tcb;
            let edge = (t.window_edge() + sacked_below).saturating_sub(self.frto_in_flight());
            let t = &mut self.tcb;
            if t.snd_nxt < t.snd_max {
                // Go-back-N after an RTO: resend outstanding segments (skipping SACKed ones).
                let i = t.outstanding.partition_point(|o| o.end() <= t.snd_nxt);
                let Some(o) = t.outstanding.get(i) else {
                    t.snd_nxt = t.snd_max;
                    continue;
                };
                if o.sacked() || t.frto_new.is_some_and(|(a, b)| o.seq >= a && o.seq < b) {
                    if in_flight_rule && o.sacked() {
                        sacked_below += o.len() as u64;
                    }
                    t.snd_nxt = o.end();
                    continue;
                }
                if o.seq + o.len() as u64 > edge && o.len() > 0 || !t.pacer.ready(now) {
                    return;
                }
                let (seq, end) = (o.seq, o.end());
                self.retransmit(now, seq, out);
                self.tcb.snd_nxt = end;
                continue;
            }
            if !self.send_new(now, edge, out) {
                return;
            }
        }
    }

    /// Octets of F-RTO's new data still in flight (unSACKed), which go-back-N's window counts.
    fn frto_in_flight(&self) -> u64 {
        let t = &self.tcb;
        let Some((a, b)) = t.frto_new else { return 0 };
        let from = t.outstanding.partition_point(|o| o.seq < a.max(t.snd_una));
        (from..t.outstanding.len())
            .map_while(|i| t.outstanding.get(i))
            .take_while(|o| o.seq < b)
            .filter(|o| !o.sacked())
            .map(|o| o.len() as u64)
            .sum()
    }

    /// F-RTO step 2 (REXMIT_NEW, `recovery/undo.rs`): new data within cwnd, counting as in
    /// flight only what go-back-N has resent and not yet seen ACKed (Linux's in-flight after
    /// `tcp_enter_loss()` marked everything lost); the go-back-N point is kept for a genuine
    /// timeout.
    fn frto_send_new_data(&mut self, now: SimTime, out: &mut Vec<TxSeg>) {
        let t = &mut self.tcb;
        let resume = t.snd_nxt;
        let resent = resume.saturating_sub(t.snd_una);
        t.snd_nxt = t.snd_max;
        let start = t.snd_max;
        loop {
            let t = &self.tcb;
            let room = t.w.cwnd.saturating_sub(resent + (t.snd_max - start));
            let edge = (t.snd_max + room).min(t.rwnd_edge());
            if !self.send_new(now, edge, out) {
                break;
            }
        }
        if self.tcb.snd_max == start {
            self.mech.undo.frto = false; // nothing could be sent (tcp_xmit_recovery(): frto = 0)
        }
        let t = &mut self.tcb;
        t.snd_nxt = resume.max(t.snd_una);
        t.frto_new = Some((start, t.snd_max));
    }

    /// Handles whichever sender timers are due at `now`: RACK's (RFC 8985 §6.3), the loss
    /// probe (§7.3), then the RTO (RFC 6298 (5.4)–(5.6), RFC 5681 §3.1).
    pub fn on_rto(&mut self, now: SimTime, out: &mut Vec<TxSeg>) {
        if self.tcb.rack_at.is_some_and(|t| t <= now) {
            self.tcb.rack_at = None;
            let (rec, mut c) = self.parts();
            ca_state::on_rack_timer(rec, &mut c, now, out);
            self.transmit(now, out);
        }
        if self.mech.tlp.as_ref().and_then(|t| t.at).is_some_and(|t| t <= now) {
            self.send_probe(now, out);
        }
        if self.tcb.persist.at.is_some_and(|t| t <= now) {
            let t = &mut self.tcb;
            let (blocked, rto, clock) = (t.window_blocks(), t.rtt.rto(), t.rtt.clock());
            if let Some(seq) = t.persist.on_timer(blocked, rto, clock, t.snd_una, now) {
                out.push(TxSeg { seq, len: 0, fin: false, retransmit: false });
            }
        }
        if self.tcb.rto_at.is_some_and(|t| t <= now) {
            self.tcb.rto_at = None;
            if self.tcb.snd_una == self.tcb.snd_max {
                return;
            }
            ca_state::enter_loss(&mut self.ctx(), now);
            self.transmit(now, out);
        }
    }

    /// RFC 8985 §7.3 TLP_send_probe(): the PTO expired (`recovery/tlp.rs` decides).
    fn send_probe(&mut self, now: SimTime, out: &mut Vec<TxSeg>) {
        let Some(tlp) = self.mech.tlp.as_mut() else { return };
        let probe = tlp.on_pto(&self.tcb);
        if self.tcb.snd_una == self.tcb.snd_max {
            return;
        }
        if probe {
            // "Transmit the lowest-sequence unsent segment" if the receive window allows
            // (FlightSize may exceed cwnd by this one segment).
            let edge = self.tcb.rwnd_edge();
            let new_data = self.tcb.snd_nxt == self.tcb.snd_max && self.send_new(now, edge, out);
            if !new_data {
                // "Retransmit the highest-sequence segment sent".
                if let Some(last) = self.tcb.outstanding.back().map(|o| o.seq) {
                    self.retransmit(now, last, out);
                }
            }
            if let Some(tlp) = self.mech.tlp.as_mut() {
                tlp.probe_sent(&mut self.tcb, new_data);
            }
        }
        // "Arm the RTO timer" (not the PTO) after the probe, or instead of it.
        // Linux too restarts the RTO from now after a probe (tcp_send_loss_probe() clears
        // icsk_pending before tcp_rearm_rto(); checked with rto-repeated-keeps-ssthresh.pkt).
        self.tcb.arm_rto(now);
    }

    /// When pacing releases a segment it held back (None: nothing held).
    pub fn pacing_deadline(&self) -> Option<SimTime> {
        self.tcb.pacer.deadline()
    }

    /// Time since the last transmission, for tests and records.
    pub fn last_send(&self) -> Option<SimTime> {
        self.tcb.last_send
    }

    /// Segments outstanding, for invariants.
    pub fn outstanding_segments(&self) -> usize {
        self.tcb.outstanding.len()
    }
}
