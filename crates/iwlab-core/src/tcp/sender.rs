//! The data sender: what may be sent now (RFC 5681 window rules, RFC 3042 Limited Transmit),
//! what an ACK means (RFC 5681 §2 duplicate ACKs, RFC 2018 SACK scoreboard, RFC 6298 timer
//! management), and the retransmission timeout (RFC 6298 §5, RFC 5681 §3.1 loss window).
//!
//! Fast retransmit / fast recovery live in `recovery/` (one file per variant); window growth
//! in `cc/`; the initial and restart windows are chosen by the endpoint from its `iw` policy.
//! The sender emits [`TxSeg`]s (sequence ranges); the endpoint turns them into segments.

use super::cc::hystart::HyStart;
use super::cc::{AckInfo, AnyCc, CongestionControl, Window};
use super::config::{RecoveryKind, TcpConfig};
use super::pacing::{PaceState, Pacer};
use super::recovery;
use super::recovery::dsack::Dsack;
use super::recovery::prr::{Prr, ReductionBound};
use super::recovery::tlp::Tlp;
use super::recovery::undo::{LossAck, Undo};
use super::rto::{RtoRule, RttEstimator};
use super::rtt_sample::{AckedSegments, RttSamples};
use super::scoreboard::{DeliveryCtx, Outstanding, Scoreboard};
use super::segment::Segment;
use crate::engine::{SimDuration, SimTime};

/// RFC 7323 TSval: a microsecond clock (plus one, so that 0 never means "a time").
pub fn ts_value(now: SimTime) -> u32 {
    (now.as_nanos() / 1000 + 1) as u32
}

/// One transmission the endpoint should put on the wire.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TxSeg {
    pub seq: u64,
    pub len: u32,
    pub fin: bool,
    pub retransmit: bool,
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

pub struct Sender {
    pub w: Window,
    pub cc: AnyCc,
    pub rtt: RttEstimator,
    pub(crate) kind: RecoveryKind,
    pub(crate) dupthresh: u32,
    limited_transmit: bool,
    sack: bool,
    timestamps: bool,
    /// Oldest unacknowledged sequence number.
    pub snd_una: u64,
    /// Next sequence number to send (moves back to snd_una after an RTO: go-back-N).
    pub snd_nxt: u64,
    /// One past the highest sequence number ever sent.
    pub snd_max: u64,
    /// One past the last byte the application has written.
    data_end: u64,
    fin_requested: bool,
    /// Peer's advertised window.
    pub peer_wnd: u64,
    pub(crate) mss: u32,
    /// Outstanding segments and the SACK scoreboard (`scoreboard.rs`).
    pub(crate) outstanding: Scoreboard,
    pub dupacks: u32,
    pub in_recovery: bool,
    /// NewReno `recover` / RFC 6675 RecoveryPoint: snd_max when recovery (or an RTO) began.
    pub recover: u64,
    /// RFC 6582 §3.2 (5): the timer is reset only on the first partial ACK ("Impatient").
    pub(crate) partial_acks: u32,
    pub(crate) rto_at: Option<SimTime>,
    /// RACK's reordering timer (RFC 8985 §6.3), with `recovery = "rack"`.
    pub(crate) rack_at: Option<SimTime>,
    /// Tail loss probe state (RFC 8985 §7), with `tcp.tlp`.
    pub(crate) tlp: Option<Tlp>,
    /// Last time new or retransmitted data left (RFC 5681 §4.1 idle detection).
    last_send: Option<SimTime>,
    /// RFC 3168 §6.1.2: react to ECE at most once per window of data.
    ecn_recover: u64,
    /// Set CWR on the next new data segment.
    pub cwr_pending: bool,
    /// Sequence range of the current initial/restart window and whether loss hit it.
    window_probe: Option<(u64, u64)>,
    /// Loss detected in the initial/restart window: bytes sent in it (for the IW policy).
    pub(crate) iw_loss: Option<u64>,
    /// Set when `iw_loss` was newly found; the endpoint drains it to the policy.
    pub(crate) iw_loss_new: bool,
    pub any_loss: bool,
    pub stats: SenderStats,
    /// Departure spacing (`pacing.rs`); never holds a segment when pacing is off.
    pub(crate) pacer: Pacer,
    /// RFC 6937 PRR in SACK recovery: the bound configured, and the episode's state.
    pub(crate) prr_bound: Option<ReductionBound>,
    pub(crate) prr: Option<Prr>,
    /// RFC 6937 DeliveredData of the ACK being processed: change in snd.una + change in
    /// SACKed bytes.
    pub(crate) delivered: u64,
    /// Bytes newly SACKed by the ACK being processed.
    pub(crate) newly_sacked: u64,
    /// The ACK being processed advanced snd.una (for PRR's safe-ACK test).
    pub(crate) ack_advanced: bool,
    /// Bytes marked lost after the previous ACK in recovery (PRR: "no new loss").
    pub(crate) prr_lost_seen: u64,
    /// Slow-start exit on RTT rise (RFC 9406 / Linux HyStart), if configured.
    pub hystart: Option<HyStart>,
    /// `TcpConfig::rto_keeps_reduced_ssthresh`.
    rto_keeps_reduced_ssthresh: bool,
    /// An RTO fired and its episode (up to `recover`) may still be going on.
    pub(crate) in_rto_loss: bool,
    /// Linux's cwnd-use tracking (`TcpConfig::grow_only_cwnd_limited`), None when off.
    cwnd_use: Option<CwndUse>,
    /// `TcpConfig::restart_halves_per_rto`.
    restart_halves_per_rto: bool,
    /// `TcpConfig::fin_after_write`: a FIN of its own needs room in cwnd, and is one
    /// delivered packet for PRR when SACKed.
    fin_needs_cwnd: bool,
    /// `TcpConfig::rto_window_in_flight`.
    rto_window_in_flight: bool,
    /// This ACK newly SACKed a FIN of its own (zero octets, one packet to Linux).
    pub(crate) fin_newly_sacked: bool,
    /// Undo of spurious reductions and F-RTO (`recovery/undo.rs`).
    pub(crate) undo: Undo,
    /// D-SACK reading and RACK's reordering-window adaptation (`recovery/dsack.rs`).
    pub(crate) dsack: Dsack,
    /// New data sent by F-RTO's second step after an RTO: go-back-N does not resend it.
    pub(crate) frto_new: Option<(u64, u64)>,
}

/// Linux `tcp_cwnd_validate()`'s record of how much of cwnd the flow used: the strongest
/// signal seen in the last window of data (is_cwnd_limited, max_packets_out, cwnd_usage_seq).
#[derive(Clone, Copy, Debug, Default)]
struct CwndUse {
    /// A transmission left the flight at or above cwnd.
    limited: bool,
    /// The most segments outstanding after a transmission in this window.
    max_out: u64,
    /// The window ends when snd_una reaches this (snd_nxt when it was recorded).
    until: u64,
}

impl Sender {
    pub fn new(cfg: &TcpConfig, sack: bool, timestamps: bool) -> Self {
        let mss = cfg.mss as u64;
        Sender {
            w: Window { cwnd: mss, ssthresh: cfg.initial_ssthresh, mss, abc_l: cfg.abc_l, bytes_acked: 0 },
            cc: cfg.cc.build(),
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.granularity).with_rule(cfg.timers),
            kind: cfg.recovery,
            dupthresh: cfg.dupthresh,
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
            outstanding: Scoreboard::new(cfg.dupthresh, mss, cfg.recovery == RecoveryKind::Rack),
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            partial_acks: 0,
            rto_at: None,
            rack_at: None,
            tlp: cfg.tlp.then(|| match cfg.timers {
                // RFC 8985 §7.2: the peer's worst-case delayed-ACK time.
                RtoRule::Rfc6298 => {
                    Tlp { max_ack_delay: cfg.delayed_ack.map_or(SimDuration::ZERO, |d| d.timeout), ..Tlp::default() }
                }
                // Linux tcp_schedule_loss_probe(): tcp_rto_min for one segment, 2 ms otherwise.
                RtoRule::Linux => {
                    Tlp { max_ack_delay: cfg.min_rto, multi_delay: SimDuration::from_millis(2), ..Tlp::default() }
                }
            }),
            last_send: None,
            ecn_recover: 0,
            cwr_pending: false,
            window_probe: None,
            iw_loss: None,
            iw_loss_new: false,
            any_loss: false,
            stats: SenderStats::default(),
            pacer: Pacer::new(cfg.pacing),
            prr_bound: cfg.prr,
            prr: None,
            delivered: 0,
            newly_sacked: 0,
            ack_advanced: false,
            prr_lost_seen: 0,
            hystart: cfg.hystart.map(HyStart::new),
            rto_keeps_reduced_ssthresh: cfg.rto_keeps_reduced_ssthresh,
            in_rto_loss: false,
            cwnd_use: cfg.grow_only_cwnd_limited.then(CwndUse::default),
            restart_halves_per_rto: cfg.restart_halves_per_rto,
            fin_needs_cwnd: cfg.fin_after_write,
            rto_window_in_flight: cfg.rto_window_in_flight,
            fin_newly_sacked: false,
            undo: Undo::new(cfg.undo, cfg.frto),
            dsack: Dsack::new(cfg.dsack && sack),
            frto_new: None,
        }
    }

    /// Sets cwnd to the initial window and notes its sequence range (RFC 6928 §4 fallback).
    pub fn start(&mut self, iw_bytes: u64) {
        self.w.cwnd = iw_bytes;
        self.stats.max_cwnd = self.stats.max_cwnd.max(iw_bytes);
        self.window_probe = Some((self.snd_nxt, self.snd_nxt + iw_bytes));
        self.pacer.start_iw(self.snd_nxt, iw_bytes, self.rtt.srtt());
        // Room for the first flight (and a FIN) without growing segment by segment.
        self.outstanding.reserve(iw_bytes.div_ceil(self.w.mss) as usize + 1);
        // RFC 8985 §7.3: the handshake's RTT sample counts as one "since the start".
        let sampled = self.rtt.srtt().is_some();
        if let Some(t) = self.tlp.as_mut() {
            t.rtt_sampled = sampled;
        }
    }

    /// The application writes `bytes` more.
    pub fn write(&mut self, bytes: u64) {
        debug_assert!(!self.fin_requested, "write after close");
        self.data_end += bytes;
    }
    /// The application closes: a FIN follows the last byte.
    pub fn request_fin(&mut self) {
        self.fin_requested = true;
    }
    /// All data and the FIN (if any) acknowledged.
    pub fn all_acked(&self) -> bool {
        self.snd_una == self.data_end + self.fin_requested as u64
    }
    pub fn fin_acked(&self) -> bool {
        self.fin_requested && self.snd_una > self.data_end
    }
    pub fn bytes_written(&self) -> u64 {
        self.data_end - 1
    }
    /// When the sender's next timer fires: the RTO, or RACK's reordering timer or the TLP
    /// probe timer when those are on (`on_rto` handles all three).
    pub fn rto_deadline(&self) -> Option<SimTime> {
        SimTime::earliest(SimTime::earliest(self.rto_at, self.rack_at), self.tlp.as_ref().and_then(|t| t.at))
    }
    /// The retransmission timer alone.
    pub(crate) fn rto_deadline_only(&self) -> Option<SimTime> {
        self.rto_at
    }
    /// RFC 5681 FlightSize: data sent and not yet acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_nxt.max(self.snd_una) - self.snd_una
    }

    /// RFC 5681 §4.1: has the sender been idle (nothing in flight) longer than one RTO?
    pub fn idle_restart_due(&self, now: SimTime) -> bool {
        self.snd_una == self.snd_max
            && self.has_new_data()
            && self.last_send.is_some_and(|t| now.saturating_since(t) > self.rtt.rto())
    }

    /// Applies the restart window: cwnd = min(RW, cwnd), RW = min(IW, cwnd) (RFC 5681 §4.1);
    /// with `restart_halves_per_rto`, Linux's tcp_cwnd_restart(): ssthresh =
    /// tcp_current_ssthresh() (at least 3/4 cwnd), then cwnd halves once per RTO the sender
    /// was idle, never below RW.
    pub fn restart_after_idle(&mut self, rw_iw: u64, now: SimTime) {
        let restart = self.w.cwnd.min(rw_iw);
        if self.restart_halves_per_rto {
            let cwnd = self.w.cwnd;
            self.w.ssthresh = self.w.ssthresh.max(cwnd / 2 + cwnd / 4);
            let rto = self.rtt.rto();
            let mut idle = self.last_send.map_or(SimDuration::ZERO, |t| now.saturating_since(t));
            let mut w = cwnd;
            while idle > rto && w > restart {
                idle = idle - rto;
                w /= 2;
            }
            self.w.cwnd = w.max(restart);
        } else {
            self.w.cwnd = restart;
        }
        self.cc.on_idle_restart(&mut self.w, now);
        self.window_probe = Some((self.snd_nxt, self.snd_nxt + self.w.cwnd));
        self.iw_loss = None;
    }

    /// Timestamps are in use on this connection.
    pub(crate) fn timestamps_on(&self) -> bool {
        self.timestamps
    }

    pub(crate) fn has_new_data(&self) -> bool {
        self.snd_max < self.data_end || (self.fin_requested && self.snd_max == self.data_end)
    }

    pub(crate) fn note_loss(&mut self) {
        self.any_loss = true;
        if let Some(h) = &mut self.hystart {
            h.on_congestion(); // RFC 9406 §4.2: loss ends HyStart++
        }
        if let Some((start, end)) = self.window_probe {
            if self.snd_una < end && self.iw_loss.is_none() {
                self.iw_loss = Some(self.snd_max.min(end) - start);
                self.iw_loss_new = true;
            }
        }
    }

    /// Processes the ACK fields of an arriving segment. Transmission is left to `transmit`.
    pub fn on_ack(&mut self, now: SimTime, seg: &Segment, ecn: bool, out: &mut Vec<TxSeg>) {
        let ack = seg.ack;
        if ack > self.snd_max {
            return; // acknowledges something never sent: ignore (RFC 9293 §3.10.7.4)
        }
        // RFC 2883 D-SACK: read before the probe's episode and the scoreboard change.
        let dsack = self.dsack.enabled.then(|| recovery::dsack::block(seg)).flatten();
        let probe_end = self.tlp.as_ref().and_then(|t| t.end_seq);
        recovery::undo::on_ack_start(self, seg.ts.map(|(_, ecr)| ecr));
        let in_loss = self.in_rto_loss && self.snd_una < self.recover;
        self.outstanding.orig_sacked_end = u64::MAX;
        // RFC 8985 §7.4.2: a probe that repaired a loss reduces cwnd (and this ACK does not grow it).
        let tlp_reduced = self.tlp.is_some() && recovery::tlp::process_ack(self, now, seg, dsack);
        self.peer_wnd = seg.wnd;
        self.newly_sacked = 0;
        self.fin_newly_sacked = false;
        self.delivered = 0;
        self.ack_advanced = ack > self.snd_una;
        let mut dsacking = false;
        if self.sack && !seg.sack.is_empty() {
            dsacking = recovery::dsack::on_ack(self, seg, probe_end);
            self.update_scoreboard(now, seg);
        }
        self.delivered = self.newly_sacked;
        // Linux tcp_try_undo_dsack(): every retransmission of the episode D-SACKed.
        if dsack.is_some() {
            recovery::undo::try_undo_dsack(self, now);
        }
        let mut frto_send = false;
        // RFC 3168 §6.1.2: no cwnd increase in response to the ACK whose ECE we acted on.
        let reduced = ecn && seg.flags.contains(super::segment::Flags::ECE) && self.on_ece(now);
        if ack > self.snd_una {
            frto_send = self.on_new_ack(now, seg, !reduced && !tlp_reduced, in_loss, out);
        } else {
            let dup =
                ack == self.snd_una && seg.len == 0 && !seg.is_syn() && !seg.is_fin() && self.snd_max > self.snd_una;
            if in_loss {
                // Linux tcp_process_loss() on an ACK that does not advance snd.una.
                let orig_acked = self.outstanding.orig_sacked_end <= self.recover;
                let a = LossAck {
                    in_loss,
                    advanced: false,
                    orig_acked,
                    sacked_or_dup: self.newly_sacked > 0 || (dup && !dsacking),
                };
                recovery::undo::process_loss(self, now, a);
            }
            // Linux counts no duplicate ACK that carries a trusted D-SACK (FLAG_DSACKING_ACK): it
            // reports a needless resend, not a segment that left the network.
            if dup && !dsacking {
                // RFC 5681 §2 DUPLICATE ACKNOWLEDGMENT (conditions a–d).
                self.dupacks += 1;
                recovery::on_dupack(self, now, out);
            }
        }
        if self.frto_new.is_some_and(|(_, end)| self.snd_una >= end || !self.in_rto_loss) {
            self.frto_new = None;
        }
        if self.kind == RecoveryKind::Rack {
            recovery::rack::after_ack(self, now, out);
        }
        if frto_send {
            // RFC 5682 §3.1 step 2b, after this ACK grew cwnd (Linux tcp_xmit_recovery()).
            recovery::undo::send_new_data(self, now, out);
        }
        if self.tlp.is_some() {
            recovery::tlp::revalidate(self);
        }
    }

    /// An ACK of new data; true when F-RTO wants new data sent after it (`recovery/undo.rs`).
    fn on_new_ack(&mut self, now: SimTime, seg: &Segment, grow: bool, in_loss: bool, out: &mut Vec<TxSeg>) -> bool {
        let ack = seg.ack;
        let acked = ack - self.snd_una;
        let flight_before = self.flight_size();
        // Pop what is now cumulatively acknowledged, noting the send times Karn's rule allows
        // an RTT sample from (`rtt_sample.rs`).
        let mut covered = AckedSegments::default();
        // RFC 6937 DeliveredData: SACKed bytes now cumulatively acknowledged were counted
        // when they were SACKed.
        let sacked_before = self.outstanding.sacked_bytes();
        let ctx = self.delivery_ctx(now, seg);
        let mut orig_acked = self.outstanding.orig_sacked_end <= self.recover;
        while let Some(front) = self.outstanding.front() {
            if front.end() <= ack {
                covered.note(front);
                if front.tx == 1 {
                    // Linux FLAG_ORIG_SACK_ACKED: sent before the RTO, never resent.
                    orig_acked |= !front.sacked() && front.end() <= self.recover;
                }
                self.outstanding.pop_front(&ctx);
            } else {
                if front.seq < ack {
                    // Partially acknowledged segment (rare: our segments sit on an MSS grid).
                    self.outstanding.cut_front(ack);
                }
                break;
            }
        }
        let was_sacked = sacked_before - self.outstanding.sacked_bytes();
        let RttSamples { rto: mut sample, cc: mut cc_sample } = covered.samples(self.rtt.rule(), now);
        if self.timestamps {
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
            self.rtt.sample(r, ack, self.snd_nxt.max(ack));
            if let Some(t) = self.tlp.as_mut() {
                t.rtt_sampled = true;
            }
        }
        self.snd_una = ack;
        if self.snd_nxt < ack {
            self.snd_nxt = ack;
        }
        if self.window_probe.is_some_and(|(_, end)| ack >= end) {
            self.window_probe = None;
        }
        self.delivered = (acked + self.newly_sacked).saturating_sub(was_sacked);
        // Linux tcp_process_loss() (F-RTO, undo after an RTO) comes before cwnd grows.
        let a = LossAck { in_loss, advanced: true, orig_acked, sacked_or_dup: self.newly_sacked > 0 };
        let frto_send = recovery::undo::process_loss(self, now, a);
        let info = AckInfo { now, acked, flight_before, srtt: self.rtt.srtt(), min_rtt: self.rtt.min_rtt() };
        if self.in_recovery {
            recovery::on_ack_in_recovery(self, now, acked, out);
            let ends_reduction = !self.in_recovery && self.prr_bound.is_some_and(|b| b.grows_on_the_ack_ending_it());
            if ends_reduction && grow && self.cwnd_limited() {
                // Linux: cwnd = ssthresh (tcp_end_cwnd_reduction()), then congestion avoidance
                // on the segments this ACK delivered (tcp_cong_control(), acked_sacked).
                self.cc.on_ack(&mut self.w, &AckInfo { acked: self.delivered, ..info });
            }
        } else {
            self.dupacks = 0;
            if grow && self.cwnd_limited() {
                // Linux grows cwnd by the segments this ACK newly delivered (tcp_ack():
                // acked_sacked = tp->delivered − prior_delivered, to tcp_cong_control()), not by
                // how far snd.una moved: segments SACKed earlier were delivered then. RFC 5681
                // counts the bytes the cumulative ACK covers.
                let grow_by = if self.cwnd_use.is_some() { self.delivered } else { acked };
                // HyStart (RFC 9406) takes slow start's growth while it is active.
                let (snd_nxt, w) = (self.snd_nxt, &mut self.w);
                let grown = match &mut self.hystart {
                    Some(h) if h.active(w) => h.on_ack(w, grow_by, ack, snd_nxt, cc_sample),
                    _ => false,
                };
                if !grown {
                    self.cc.on_ack(&mut self.w, &AckInfo { acked: grow_by, ..info });
                }
            }
        }
        self.stats.max_cwnd = self.stats.max_cwnd.max(self.w.cwnd);
        // RFC 6298 (5.2)/(5.3): stop the timer when all is acknowledged, else restart it
        // (in NewReno recovery only on the first partial ACK, RFC 6582 §3.2 (5)).
        if self.snd_una == self.snd_max {
            self.rto_at = None;
        } else if !self.in_recovery || self.kind != RecoveryKind::NewReno || self.partial_acks <= 1 {
            self.arm_rto(now);
        }
        // RFC 8985 §7.2: (re)start the PTO on an ACK of new data.
        if self.tlp.is_some() {
            recovery::tlp::schedule(self, now);
        }
        frto_send
    }

    /// Reacts to an ECN echo; true if cwnd was reduced.
    fn on_ece(&mut self, now: SimTime) -> bool {
        // RFC 3168 §6.1.2: at most one reduction per window; not again while recovering.
        if self.in_recovery || self.snd_una < self.ecn_recover {
            return false;
        }
        if let Some(h) = &mut self.hystart {
            h.on_congestion(); // RFC 9406 §4.2: an ECN echo ends HyStart++
        }
        let flight = self.flight_size();
        self.undo.forget(); // Linux tcp_enter_cwr(): an ECN reduction is not undone
        self.w.ssthresh = self.cc.ssthresh_on_loss(&self.w, flight, now);
        self.w.cwnd = self.w.ssthresh.max(self.w.mss);
        self.ecn_recover = self.snd_max;
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
        true
    }

    /// What RACK needs to know about the ACK that delivers segments (RFC 8985 §6.2 step 2).
    fn delivery_ctx(&self, now: SimTime, seg: &Segment) -> DeliveryCtx {
        let ts_ecr = if self.timestamps { seg.ts.map(|(_, ecr)| ecr).filter(|&e| e != 0) } else { None };
        DeliveryCtx { now, min_rtt: self.rtt.min_rtt(), ts_ecr }
    }

    /// RFC 2018: mark outstanding segments covered by the ACK's SACK blocks, then move the
    /// RFC 6675 IsLost frontier (`scoreboard.rs`: amortised O(log n) per block).
    fn update_scoreboard(&mut self, now: SimTime, seg: &Segment) {
        let ctx = self.delivery_ctx(now, seg);
        let sacked_before = self.outstanding.sacked_bytes();
        let fin_before = self.lone_fin_sacked();
        for &(s, e) in seg.sack.as_slice() {
            if e <= self.snd_una {
                continue;
            }
            self.outstanding.sack_block(s, e, &ctx);
        }
        self.outstanding.update_lost();
        self.newly_sacked = self.outstanding.sacked_bytes() - sacked_before;
        self.fin_newly_sacked = self.fin_needs_cwnd && !fin_before && self.lone_fin_sacked();
    }

    /// Is a FIN sent in a segment of its own SACKed?
    fn lone_fin_sacked(&self) -> bool {
        if !self.fin_requested || self.snd_max <= self.data_end {
            return false;
        }
        let i = self.outstanding.partition_point(|o| o.seq < self.data_end);
        self.outstanding.get(i).is_some_and(|o| o.fin() && o.len() == 0 && o.sacked())
    }

    pub(crate) fn arm_rto(&mut self, now: SimTime) {
        self.rto_at = Some(now + self.rtt.rto());
    }

    /// Enters fast retransmit: the caller (a recovery variant) has set ssthresh/cwnd.
    pub(crate) fn enter_recovery(&mut self) {
        self.in_recovery = true;
        self.in_rto_loss = false;
        self.recover = self.snd_max;
        self.outstanding.set_high_rxt(self.snd_una);
        self.partial_acks = 0;
        self.stats.fast_retransmits += 1;
        self.note_loss();
    }

    /// Leaves recovery and tells the controller.
    pub(crate) fn exit_recovery(&mut self, now: SimTime) {
        if self.prr.take().is_some() {
            // RFC 6937: recovery ends with cwnd at ssthresh (Linux tcp_end_cwnd_reduction()).
            self.w.cwnd = self.w.ssthresh;
        }
        self.in_recovery = false;
        self.dupacks = 0;
        self.cc.on_recovery_exit(&mut self.w, now);
    }

    /// The first unacknowledged segment, for retransmission.
    pub(crate) fn first_unacked(&self) -> Option<TxSeg> {
        self.outstanding.front().map(|o| TxSeg { seq: o.seq, len: o.len(), fin: o.fin(), retransmit: true })
    }

    /// Queues a retransmission of the outstanding segment starting at `seq`.
    pub(crate) fn retransmit(&mut self, now: SimTime, seq: u64, out: &mut Vec<TxSeg>) {
        let i = self.outstanding.index_of(seq);
        if i >= self.outstanding.len() {
            return;
        }
        let o = self.outstanding.on_retransmit(i, now);
        let tx = TxSeg { seq: o.seq, len: o.len(), fin: o.fin(), retransmit: true };
        let end = o.end();
        let high_rxt = self.outstanding.high_rxt().max(end);
        self.outstanding.set_high_rxt(high_rxt);
        self.stats.retransmits += 1;
        recovery::undo::on_retransmit(self, now);
        self.stats.data_segments_sent += (tx.len > 0) as u64;
        self.count_prr_out(end - tx.seq);
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
        out.push(tx);
    }

    /// The usable window's right edge: snd_una + min(cwnd (+ Limited Transmit), rwnd).
    fn window_edge(&self) -> u64 {
        let mut cwnd = self.w.cwnd;
        if self.limited_transmit && !self.in_recovery && self.dupacks > 0 && self.dupacks < self.dupthresh {
            // RFC 3042: on the first two dup ACKs one new segment each, cwnd unchanged.
            cwnd += self.dupacks.min(2) as u64 * self.w.mss;
        }
        self.snd_una + cwnd.min(self.peer_wnd)
    }

    /// Sends what the window allows: go-back-N retransmissions after an RTO, then new data,
    /// then the FIN. In SACK recovery, RFC 6675 NextSeg decides instead.
    pub fn transmit(&mut self, now: SimTime, out: &mut Vec<TxSeg>) {
        let sent = out.len();
        self.transmit_window(now, out);
        if self.cwnd_use.is_some() {
            self.validate_cwnd(out.len() > sent);
        }
    }

    /// Linux tcp_cwnd_validate() after tcp_write_xmit(): the window was used up if the data
    /// in flight reached cwnd (Linux counts whole packets; here cwnd is in bytes and may end
    /// mid-segment, so: no room left for another full segment). A new window of data starts
    /// the record afresh; within one, a cwnd-limited send, or more segments out than recorded
    /// while not cwnd-limited, replace it.
    fn validate_cwnd(&mut self, sent: bool) {
        let limited = self.flight_size() + self.w.mss > self.w.cwnd;
        let (snd_una, snd_nxt, out) = (self.snd_una, self.snd_nxt, self.outstanding.len() as u64);
        let Some(u) = self.cwnd_use.as_mut() else { return };
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
        match &self.cwnd_use {
            None => true,
            Some(u) => u.limited || (self.w.in_slow_start() && self.w.cwnd < 2 * u.max_out * self.w.mss),
        }
    }

    fn transmit_window(&mut self, now: SimTime, out: &mut Vec<TxSeg>) {
        self.pacer.begin();
        if self.in_recovery && self.kind == RecoveryKind::Sack {
            recovery::sack::send_next_segments(self, now, out);
            return;
        }
        if self.in_recovery && self.kind == RecoveryKind::Rack {
            recovery::rack::send_next_segments(self, now, out);
            return;
        }
        // Linux tcp_xmit_retransmit_queue() resends while tcp_packets_in_flight() < cwnd: the
        // SACKed octets below snd.nxt are not in flight, so they widen the go-back-N window.
        let in_flight_rule = self.in_rto_loss && self.rto_window_in_flight;
        let mut sacked_below = if in_flight_rule {
            (0..self.outstanding.len())
                .map_while(|i| self.outstanding.get(i))
                .take_while(|o| o.end() <= self.snd_nxt)
                .filter(|o| o.sacked())
                .map(|o| o.len() as u64)
                .sum()
        } else {
            0
        };
        loop {
            let edge = (self.window_edge() + sacked_below).saturating_sub(self.frto_in_flight());
            if self.snd_nxt < self.snd_max {
                // Go-back-N after an RTO: resend outstanding segments (skipping SACKed ones).
                let i = self.outstanding.partition_point(|o| o.end() <= self.snd_nxt);
                let Some(o) = self.outstanding.get(i) else {
                    self.snd_nxt = self.snd_max;
                    continue;
                };
                if o.sacked() || self.frto_new.is_some_and(|(a, b)| o.seq >= a && o.seq < b) {
                    if in_flight_rule && o.sacked() {
                        sacked_below += o.len() as u64;
                    }
                    self.snd_nxt = o.end();
                    continue;
                }
                if o.seq + o.len() as u64 > edge && o.len() > 0 || !self.pacer.ready(now) {
                    return;
                }
                let (seq, end) = (o.seq, o.end());
                self.retransmit(now, seq, out);
                self.snd_nxt = end;
                continue;
            }
            if !self.send_new(now, edge, out) {
                return;
            }
        }
    }

    /// Octets of F-RTO's new data still in flight (unSACKed), which go-back-N's window counts.
    fn frto_in_flight(&self) -> u64 {
        let Some((a, b)) = self.frto_new else { return 0 };
        let from = self.outstanding.partition_point(|o| o.seq < a.max(self.snd_una));
        (from..self.outstanding.len())
            .map_while(|i| self.outstanding.get(i))
            .take_while(|o| o.seq < b)
            .filter(|o| !o.sacked())
            .map(|o| o.len() as u64)
            .sum()
    }

    /// Sends one new segment if the window allows; false if nothing was sent.
    pub(crate) fn send_new(&mut self, now: SimTime, edge: u64, out: &mut Vec<TxSeg>) -> bool {
        if self.snd_nxt < self.data_end {
            let len = (self.data_end - self.snd_nxt).min(self.mss as u64);
            if self.snd_nxt + len > edge || !self.pacer.ready(now) {
                return false;
            }
            // A FIN rides on the segment carrying the last byte when the app already closed.
            let fin = self.fin_requested && self.snd_nxt + len == self.data_end;
            self.push_new(now, len as u32, fin, out);
            true
        } else if self.fin_requested && self.snd_nxt == self.data_end && self.pacer.ready(now) {
            // Linux tcp_write_xmit(): a FIN of its own passes tcp_cwnd_test() like any skb —
            // it waits while the packets in flight fill cwnd.
            if self.fin_needs_cwnd && self.snd_nxt + 1 > edge {
                return false;
            }
            self.push_new(now, 0, true, out);
            true
        } else {
            false
        }
    }

    fn push_new(&mut self, now: SimTime, len: u32, fin: bool, out: &mut Vec<TxSeg>) {
        let seq = self.snd_nxt;
        if let (0, Some(last)) = (self.flight_size(), self.last_send) {
            self.cc.on_tx_start(now, last); // Linux CA_EVENT_TX_START (tcp_event_data_sent())
        }
        self.outstanding.push(Outstanding::new(seq, len, fin, now));
        self.snd_nxt += len as u64 + fin as u64;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        self.count_prr_out(len as u64 + fin as u64);
        self.stats.data_segments_sent += (len > 0) as u64;
        self.last_send = Some(now);
        self.paced(now, seq, len);
        // RFC 6298 (5.1): start the timer when sending data if it is not running.
        if self.rto_at.is_none() {
            self.arm_rto(now);
        }
        // RFC 8985 §7.2: (re)start the PTO after sending new data (not the probe itself).
        if self.tlp.is_some() {
            recovery::tlp::schedule(self, now);
        }
        out.push(TxSeg { seq, len, fin, retransmit: false });
    }

    /// RFC 6298 (5.4)–(5.6) and RFC 5681 §3.1: the retransmission timer expired.
    /// Handles whichever sender timers are due at `now`: RACK's (RFC 8985 §6.3), the loss
    /// probe (§7.3), then the RTO.
    pub fn on_rto(&mut self, now: SimTime, out: &mut Vec<TxSeg>) {
        if self.rack_at.is_some_and(|t| t <= now) {
            self.rack_at = None;
            recovery::rack::on_timer(self, now, out);
        }
        if self.tlp.as_ref().and_then(|t| t.at).is_some_and(|t| t <= now) {
            recovery::tlp::on_pto(self, now, out);
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.on_retransmission_timeout(now, out);
        }
    }

    fn on_retransmission_timeout(&mut self, now: SimTime, out: &mut Vec<TxSeg>) {
        self.rto_at = None;
        if self.snd_una == self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        self.note_loss();
        let flight = self.flight_size();
        // Linux tcp_enter_loss(): ssthresh is reduced only if it was not already reduced for
        // this window — not in fast recovery, and not on a repeated expiry of the same RTO
        // episode (icsk_retransmits > 0, here: the timer backed off with no new RTT sample).
        let reduced = (self.in_recovery || (self.in_rto_loss && self.rtt.backoff() > 0)) && self.snd_una < self.recover;
        // Linux tcp_enter_loss(): what an undo would restore, and whether F-RTO runs.
        recovery::undo::on_enter_loss(self, reduced);
        self.frto_new = None;
        if !(self.rto_keeps_reduced_ssthresh && reduced) {
            // RFC 5681 (4): ssthresh = max(FlightSize/2, 2*SMSS).
            self.w.ssthresh = self.cc.ssthresh_on_rto(&self.w, flight, now);
        }
        // cwnd = LW = 1 SMSS.
        self.w.cwnd = self.w.mss;
        self.in_rto_loss = true;
        self.w.bytes_acked = 0;
        self.in_recovery = false;
        self.prr = None;
        self.dupacks = 0;
        // RFC 6582 §4: remember the highest sequence sent so that dup ACKs caused by the
        // go-back-N retransmissions do not trigger another fast retransmit.
        self.recover = self.snd_max;
        self.outstanding.set_high_rxt(self.snd_una);
        self.outstanding.rack_reset_on_rto();
        self.rack_at = None;
        // RFC 8985 §7.1: RTO recovery ends any TLP episode.
        recovery::tlp::reset(self);
        self.rtt.on_timeout();
        // Go back N: resend from the first unacknowledged segment.
        self.snd_nxt = self.snd_una;
        self.arm_rto(now);
        self.transmit(now, out);
    }

    /// A segment left: move the pacing clock (a no-op when pacing is off).
    fn paced(&mut self, now: SimTime, seq: u64, len: u32) {
        let (cwnd, ssthresh, flight, srtt) = (self.w.cwnd, self.w.ssthresh, self.flight_size(), self.rtt.srtt());
        self.pacer.on_send(now, seq, len, &PaceState { cwnd, ssthresh, flight, srtt });
    }

    /// When pacing releases a segment it held back (None: nothing held).
    pub fn pacing_deadline(&self) -> Option<SimTime> {
        self.pacer.deadline()
    }

    /// RFC 6937: prr_out += data sent, for every (re)transmission during recovery.
    fn count_prr_out(&mut self, bytes: u64) {
        if let Some(p) = &mut self.prr {
            p.on_sent(bytes);
        }
    }

    /// Time since the last transmission, for tests and records.
    pub fn last_send(&self) -> Option<SimTime> {
        self.last_send
    }

    /// Segments outstanding, for invariants.
    pub fn outstanding_segments(&self) -> usize {
        self.outstanding.len()
    }
}
