//! Per-endpoint TCP options. Every field is a scenario field; defaults are RFC defaults.

use super::cc::hystart::HyStartKind;
use super::cc::CcConfig;
use super::pacing::PacingConfig;
use super::recovery::prr::ReductionBound;
use super::rto::RtoRule;
use super::timers::TimerClock;
use crate::engine::SimDuration;

/// Which fast-retransmit / fast-recovery algorithm the sender runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RecoveryKind {
    /// RFC 5681 §3.2: leave recovery on the first ACK of new data.
    Reno,
    /// RFC 6582: stay in recovery until all data outstanding at its start is ACKed.
    NewReno,
    /// RFC 6675 conservative SACK-based recovery (needs SACK on both ends).
    Sack,
    /// RFC 8985 RACK time-based loss detection with SACK recovery (needs SACK).
    Rack,
}

impl RecoveryKind {
    pub const NAMES: &'static [&'static str] = &["reno", "newreno", "sack", "rack"];
    pub fn by_name(name: &str) -> Result<Self, String> {
        match name {
            "reno" => Ok(RecoveryKind::Reno),
            "newreno" => Ok(RecoveryKind::NewReno),
            "sack" => Ok(RecoveryKind::Sack),
            "rack" => Ok(RecoveryKind::Rack),
            _ => Err(format!("unknown loss recovery {name:?}; expected one of {:?}", Self::NAMES)),
        }
    }
}

/// What happens to the IW when the SYN or SYN-ACK had to be retransmitted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SynLossRule {
    /// RFC 3390 §2 / RFC 5681 §3.1: IW is one segment after a lost SYN or SYN-ACK.
    ReduceToOne,
    /// RFC 6928 §2: keep the IW unless the SYN or SYN-ACK was retransmitted more than once.
    Rfc6928,
}

/// Delayed ACKs (RFC 5681 §4.2, RFC 1122 §4.2.3.2).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DelayedAck {
    /// ACK at least every this many data segments (2 in the RFCs).
    pub segments: u32,
    /// Longest an ACK may be withheld (200 ms typical, ≤ 500 ms).
    pub timeout: SimDuration,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Sender maximum segment size, payload bytes.
    pub mss: u32,
    pub cc: CcConfig,
    pub recovery: RecoveryKind,
    /// Offer and use SACK (RFC 2018).
    pub sack: bool,
    /// RFC 8985 §7 Tail Loss Probe (needs `sack`).
    pub tlp: bool,
    /// Offer and use timestamps (RFC 7323): 12 option bytes per segment, RTT from TSecr.
    pub timestamps: bool,
    /// `None` ACKs every segment.
    pub delayed_ack: Option<DelayedAck>,
    /// Receive buffer: the largest window this endpoint advertises, bytes (RFC 2415's
    /// "maximum window").
    pub rcv_wnd: u64,
    /// Initial receive window (Linux `initrwnd`), bytes: advertised on the SYN / SYN-ACK; the
    /// window then opens by the bytes delivered (about doubling per round trip) up to
    /// `rcv_wnd`. `None` advertises `rcv_wnd` from the start.
    pub initial_rcv_wnd: Option<u64>,
    /// RFC 6298 (2.1): RTO before any RTT sample (1 s; 3 s in RFC 2988's predecessors).
    pub initial_rto: SimDuration,
    /// RFC 6298 (2.4): lower bound of the RTO (1 s; Linux uses 200 ms).
    pub min_rto: SimDuration,
    /// RFC 6298 (2.5): upper bound (at least 60 s).
    pub max_rto: SimDuration,
    /// Clock granularity G of RFC 6298 (2.2)/(2.3); timers are rounded up to it. 0 = exact.
    pub granularity: SimDuration,
    /// The clock the timers run on (`timers.rs`): Linux's CONFIG_HZ ticks per second, timers
    /// in whole ticks run from the kernel's timer wheel; 0 = exact.
    pub hz: u32,
    /// Dup ACKs that trigger fast retransmit.
    pub dupthresh: u32,
    /// Linux `tcp_check_sack_reordering()`: learn the degree of reordering from SACKs (it
    /// starts at `dupthresh`), and while it is above `dupthresh` let ACKs that only SACK data
    /// grow cwnd (`tcp_may_raise_cwnd()`; `reordering.rs`). Off: the degree stays `dupthresh`.
    pub reordering_learned: bool,
    /// RFC 3042 Limited Transmit.
    pub limited_transmit: bool,
    /// RFC 3465 Appropriate Byte Counting with limit L (segments); `None` counts ACKs.
    pub abc_l: Option<u32>,
    pub syn_loss: SynLossRule,
    /// RFC 5681 §4.1: reduce cwnd to the restart window after an idle period > RTO.
    pub restart_after_idle: bool,
    /// RFC 3168 ECN.
    pub ecn: bool,
    /// Initial ssthresh (RFC 5681: arbitrarily high), bytes.
    pub initial_ssthresh: u64,
    /// SYN / SYN-ACK retransmissions before the connection gives up.
    pub syn_retries: u32,
    /// Sender pacing and the paced initial window (`pacing.rs`; off by default).
    pub pacing: PacingConfig,
    /// RFC 6937 Proportional Rate Reduction for cwnd in SACK or RACK recovery, with this
    /// reduction bound; `None` keeps RFC 6675's cwnd = ssthresh.
    pub prr: Option<ReductionBound>,
    /// Leave the initial slow start on an RTT rise (RFC 9406 HyStart++, or Linux CUBIC's
    /// HyStart); `None` = standard slow start until loss.
    pub hystart: Option<HyStartKind>,
    /// Linux quick-ACK mode at connection start: the first this many ACKs of in-order data
    /// are sent at once, not delayed (TCP_MAX_QUICKACKS = 16). 0 = off.
    pub quickack: u32,
    /// RTO and loss-probe arithmetic: RFC 6298 + RFC 8985, or Linux's (`rto.rs`; with Linux's,
    /// resending the first unacknowledged segment also restarts a running RTO, as
    /// `tcp_xmit_retransmit_queue()` does).
    pub timers: RtoRule,
    /// Linux `tcp_enter_loss()`: an RTO reduces ssthresh only if it was not already reduced
    /// for this window (not in recovery, not a repeated expiry); RFC 5681 (4) reduces on every
    /// expiry.
    pub rto_keeps_reduced_ssthresh: bool,
    /// Linux `tcp_cong_control()`: cwnd grows on an ACK only if the flow used its window
    /// (`tcp_is_cwnd_limited()`; in slow start: cwnd < 2 * the most segments out in the last
    /// window), and by the segments the ACK newly delivered (`acked_sacked`: newly SACKed,
    /// plus cumulatively acknowledged and not SACKed before); RFC 5681 grows it on every ACK,
    /// by the bytes the cumulative ACK covers.
    pub grow_only_cwnd_limited: bool,
    /// Linux `tcp_cwnd_restart()`: after idle, cwnd halves once per RTO elapsed, down to the
    /// restart window; RFC 5681 §4.1 restarts from the restart window at once.
    pub restart_halves_per_rto: bool,
    /// Linux `tcp_send_fin()` after a write: an application's write is transmitted before its
    /// close is seen, so the FIN rides on the last data segment only if that segment is not
    /// yet sent; otherwise it is a segment of its own, which waits for room in cwnd
    /// (`tcp_write_xmit()` → `tcp_cwnd_test()`). Off: a write-and-close queues both first
    /// (the FIN rides on the last data segment) and a bare FIN ignores cwnd.
    pub fin_after_write: bool,
    /// Linux `tcp_xmit_retransmit_queue()` after an RTO: lost segments are resent while
    /// `tcp_packets_in_flight()` (packets_out − sacked_out − lost_out + retrans_out) is below
    /// cwnd, so SACKed segments above a hole take no room in the window. Off: go-back-N
    /// resends within snd.una + cwnd, SACKed segments included (RFC 5681 §3.1, RFC 6675 §5.1
    /// leaves the RTO's retransmissions to the base window).
    pub rto_window_in_flight: bool,
    /// F-RTO after an RTO (RFC 5682 SACK-enhanced, as Linux's tcp_process_loss()).
    pub frto: bool,
    /// D-SACK (RFC 2883): report duplicates as a receiver, use the reports as a sender.
    pub dsack: bool,
    /// Linux's undo of reductions shown spurious (`recovery/undo.rs`).
    pub undo: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            cc: CcConfig::Reno,
            recovery: RecoveryKind::NewReno,
            sack: false,
            tlp: false,
            timestamps: false,
            delayed_ack: Some(DelayedAck { segments: 2, timeout: SimDuration::from_millis(200) }),
            rcv_wnd: 1 << 30,
            initial_rcv_wnd: None,
            initial_rto: SimDuration::from_secs(1),
            min_rto: SimDuration::from_secs(1),
            max_rto: SimDuration::from_secs(60),
            granularity: SimDuration::ZERO,
            hz: 0,
            dupthresh: 3,
            reordering_learned: false,
            limited_transmit: false,
            abc_l: None,
            syn_loss: SynLossRule::Rfc6928,
            restart_after_idle: true,
            ecn: false,
            initial_ssthresh: u64::MAX,
            syn_retries: 6,
            pacing: PacingConfig::default(),
            prr: None,
            hystart: None,
            quickack: 0,
            timers: RtoRule::Rfc6298,
            rto_keeps_reduced_ssthresh: false,
            grow_only_cwnd_limited: false,
            restart_halves_per_rto: false,
            fin_after_write: false,
            rto_window_in_flight: false,
            frto: false,
            dsack: false,
            undo: false,
        }
    }
}

impl TcpConfig {
    /// The window to advertise after `delivered` bytes have reached the application.
    pub fn advertised_window(&self, delivered: u64) -> u64 {
        match self.initial_rcv_wnd {
            Some(w) => (w + delivered).min(self.rcv_wnd),
            None => self.rcv_wnd,
        }
    }

    /// Checks values no endpoint can run with; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.mss == 0 || self.mss > 65_000 {
            return Err(format!("tcp.mss = {} is not allowed; expected 1..=65000 bytes", self.mss));
        }
        if self.rcv_wnd < self.mss as u64 {
            return Err(format!("tcp.rcv_wnd = {} bytes is below one MSS ({})", self.rcv_wnd, self.mss));
        }
        if self.initial_rcv_wnd.is_some_and(|w| w < self.mss as u64) {
            return Err(format!(
                "tcp.initial_rcv_wnd = {:?} bytes is below one MSS ({})",
                self.initial_rcv_wnd, self.mss
            ));
        }
        if self.recovery == RecoveryKind::Sack && !self.sack {
            return Err("tcp.recovery = \"sack\" needs tcp.sack = true".into());
        }
        if self.recovery == RecoveryKind::Rack && !self.sack {
            return Err("tcp.recovery = \"rack\" needs tcp.sack = true".into());
        }
        if self.tlp && !self.sack {
            return Err("tcp.tlp = true needs tcp.sack = true".into());
        }
        if self.prr.is_some() && !matches!(self.recovery, RecoveryKind::Sack | RecoveryKind::Rack) {
            return Err("tcp.prr needs tcp.recovery = \"sack\" or \"rack\"".into());
        }
        if self.min_rto > self.max_rto {
            return Err(format!("tcp.min_rto ({}) exceeds tcp.max_rto ({})", self.min_rto, self.max_rto));
        }
        if self.hz != 0 && !TimerClock::LINUX_HZ.contains(&self.hz) {
            return Err(format!("tcp.hz = {} is not allowed; expected 0 (exact) or one of {:?}", self.hz, TimerClock::LINUX_HZ));
        }
        if self.initial_rto == SimDuration::ZERO {
            return Err("tcp.initial_rto must be > 0".into());
        }
        if self.dupthresh == 0 {
            return Err("tcp.dupthresh must be >= 1".into());
        }
        if let Some(d) = self.delayed_ack {
            if d.segments == 0 {
                return Err("tcp.delayed_ack.segments must be >= 1".into());
            }
        }
        if self.pacing.enabled && (self.pacing.ss_ratio == 0 || self.pacing.ca_ratio == 0) {
            return Err("tcp.pacing_ss_ratio and tcp.pacing_ca_ratio must be >= 1 (percent)".into());
        }
        if self.abc_l == Some(0) {
            return Err("tcp.abc_l must be >= 1 segment when set".into());
        }
        Ok(())
    }
}
