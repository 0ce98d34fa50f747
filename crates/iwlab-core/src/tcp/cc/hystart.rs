//! Leaving slow start before the first loss: HyStart++ (RFC 9406), and the delay-increase
//! detector of Linux's CUBIC HyStart (net/ipv4/tcp_cubic.c) that the `linux` profile uses.
//!
//! Both watch the minimum RTT of each round (a round ends when the ACK for `windowEnd` — the
//! SND.NXT at its start — arrives) and react when it grows by RttThresh =
//! clamp(baseline/8, 4 ms, 16 ms):
//!
//! - [`HyStartKind::Rfc9406`]: baseline = the previous round's minimum RTT; on a rise, Conservative
//!   Slow Start (CSS): growth divided by CSS_GROWTH_DIVISOR for at most CSS_ROUNDS rounds, back
//!   to slow start if a CSS round's minimum RTT falls below the one that ended slow start, then
//!   congestion avoidance with ssthresh = cwnd (§4.2).
//! - [`HyStartKind::Linux`]: baseline = the connection's minimum RTT, only once cwnd ≥ 16
//!   segments (`hystart_low_window`), after `HYSTART_MIN_SAMPLES` = 8 samples in the round; on a
//!   rise, ssthresh = cwnd at once (no CSS). Linux's other detector, the ACK train (ACKs ≤ 2 ms
//!   apart for half the minimum RTT), is not modelled: it cannot fire where ACKs of full-sized
//!   segments are more than 2 ms apart (bottlenecks below ~6 Mb/s).
//!
//! Growth per ACK is slow start's as configured (`reno::slow_start`: one SMSS per ACK, or up to
//! L·SMSS with Appropriate Byte Counting — RFC 9406 §4.2 writes min(N, L·SMSS)). Only the
//! initial slow start is covered (§4.3 RECOMMENDS that): a loss, ECN echo or RTO ends HyStart
//! for the connection ([`HyStart::on_congestion`]).

use super::ops::Window;
use super::reno;
use crate::engine::SimDuration;

/// RFC 9406 §4.3 constants.
pub const MIN_RTT_THRESH: SimDuration = SimDuration::from_millis(4);
pub const MAX_RTT_THRESH: SimDuration = SimDuration::from_millis(16);
pub const MIN_RTT_DIVISOR: u64 = 8;
pub const N_RTT_SAMPLE: u32 = 8;
pub const CSS_GROWTH_DIVISOR: u64 = 4;
pub const CSS_ROUNDS: u32 = 5;
/// Linux `hystart_low_window`: HyStart runs only from 16 segments of cwnd.
pub const LINUX_LOW_WINDOW: u64 = 16;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HyStartKind {
    /// HyStart++ (RFC 9406).
    Rfc9406,
    /// Linux CUBIC's HyStart delay detector (`HYSTART_DELAY`).
    Linux,
}

impl HyStartKind {
    pub const NAMES: &'static [&'static str] = &["rfc9406", "linux"];
    pub fn by_name(name: &str) -> Result<Self, String> {
        match name {
            "rfc9406" | "hystart++" => Ok(HyStartKind::Rfc9406),
            "linux" => Ok(HyStartKind::Linux),
            _ => Err(format!("unknown HyStart variant {name:?}; expected one of {:?}", Self::NAMES)),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Standard slow start, watching the RTT.
    SlowStart,
    /// Conservative Slow Start; `rounds` begun in it (the partial round of entry counts).
    Css { rounds: u32 },
    /// Slow start is over (delay rise, CSS done, or a congestion signal): HyStart is idle.
    Done,
}

/// RttThresh = max(MIN_RTT_THRESH, min(base / MIN_RTT_DIVISOR, MAX_RTT_THRESH)) (RFC 9406
/// §4.2; Linux's `HYSTART_DELAY_THRESH(delay_min >> 3)` clamps the same way).
pub fn rtt_thresh(base: SimDuration) -> SimDuration {
    SimDuration::from_nanos(base.as_nanos() / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyStart {
    kind: HyStartKind,
    phase: Phase,
    /// windowEnd: the round ends when an ACK reaches it. 0 = no round started yet.
    window_end: u64,
    last_round_min_rtt: Option<SimDuration>,
    current_round_min_rtt: Option<SimDuration>,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Option<SimDuration>,
    /// The connection's minimum RTT (Linux `delay_min`).
    min_rtt: Option<SimDuration>,
    /// Times slow start was left because of an RTT rise (for tests and records).
    pub exits: u32,
}

impl HyStart {
    pub fn new(kind: HyStartKind) -> Self {
        HyStart {
            kind,
            phase: Phase::SlowStart,
            window_end: 0,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
            css_baseline_min_rtt: None,
            min_rtt: None,
            exits: 0,
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Does HyStart take the growth of an ACK in this window state?
    pub fn active(&self, w: &Window) -> bool {
        self.phase != Phase::Done && w.in_slow_start()
    }

    /// A loss, ECN echo or RTO: slow start is over for good (RFC 9406 §4.2 "If loss or
    /// ECN-marking is observed anytime during standard slow start or CSS, exit").
    pub fn on_congestion(&mut self) {
        self.phase = Phase::Done;
    }

    /// An ACK of `acked` new bytes in slow start (the caller checked [`HyStart::active`]):
    /// `ack` is the cumulative ACK, `snd_nxt` the next sequence to send, `rtt` this ACK's
    /// RTT sample. Grows cwnd and may end slow start (then ssthresh = cwnd). Returns false
    /// when slow start ended before this ACK's growth: the controller grows cwnd instead.
    pub fn on_ack(&mut self, w: &mut Window, acked: u64, ack: u64, snd_nxt: u64, rtt: Option<SimDuration>) -> bool {
        // A round ends when an ACK passes windowEnd (Linux: `after(ack, end_seq)`).
        if ack > self.window_end {
            self.start_round(w, snd_nxt);
        }
        if let Some(r) = rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        match (self.phase, self.kind) {
            (Phase::Done, _) => false, // CSS_ROUNDS just ended: ssthresh = cwnd now
            (_, HyStartKind::Linux) => {
                // Linux checks in pkts_acked, before cong_avoid grows cwnd.
                if let Some(r) = rtt {
                    self.linux_sample(w, r);
                }
                self.phase != Phase::Done && {
                    reno::slow_start(w, acked);
                    true
                }
            }
            (phase, HyStartKind::Rfc9406) => {
                // §4.2: cwnd += min(N, L·SMSS), divided by CSS_GROWTH_DIVISOR in CSS; then the
                // RTT sample.
                let before = w.cwnd;
                reno::slow_start(w, acked);
                if matches!(phase, Phase::Css { .. }) {
                    w.cwnd = before + (w.cwnd - before) / CSS_GROWTH_DIVISOR;
                }
                if let Some(r) = rtt {
                    self.rfc9406_sample(r);
                }
                true
            }
        }
    }

    /// "At the start of each round": lastRoundMinRTT = currentRoundMinRTT, currentRoundMinRTT
    /// = infinity, rttSampleCount = 0, windowEnd = SND.NXT; CSS counts its rounds.
    fn start_round(&mut self, w: &mut Window, snd_nxt: u64) {
        self.last_round_min_rtt = self.current_round_min_rtt;
        self.current_round_min_rtt = None;
        self.rtt_sample_count = 0;
        self.window_end = snd_nxt;
        if let Phase::Css { rounds } = self.phase {
            if rounds >= CSS_ROUNDS {
                // §4.2: "If CSS_ROUNDS rounds are complete, enter congestion avoidance by
                // setting the ssthresh to the current cwnd."
                w.ssthresh = w.cwnd;
                self.phase = Phase::Done;
            } else {
                self.phase = Phase::Css { rounds: rounds + 1 };
            }
        }
    }

    fn rfc9406_sample(&mut self, r: SimDuration) {
        let cur = self.current_round_min_rtt.map_or(r, |c| c.min(r));
        self.current_round_min_rtt = Some(cur);
        self.rtt_sample_count += 1;
        if self.rtt_sample_count < N_RTT_SAMPLE {
            return;
        }
        match self.phase {
            Phase::SlowStart => {
                let Some(last) = self.last_round_min_rtt else { return };
                // §4.2: currentRoundMinRTT >= lastRoundMinRTT + RttThresh → CSS.
                if cur >= last + rtt_thresh(last) {
                    self.css_baseline_min_rtt = Some(cur);
                    self.phase = Phase::Css { rounds: 1 };
                    self.exits += 1;
                }
            }
            Phase::Css { .. } => {
                // §4.2: a CSS round whose minimum RTT is below the baseline: the exit was
                // spurious, resume slow start.
                if self.css_baseline_min_rtt.is_some_and(|b| cur < b) {
                    self.css_baseline_min_rtt = None;
                    self.phase = Phase::SlowStart;
                }
            }
            Phase::Done => {}
        }
    }

    fn linux_sample(&mut self, w: &mut Window, r: SimDuration) {
        // tcp_cubic.c bictcp_acked(): HyStart only while cwnd >= hystart_low_window.
        if w.cwnd < LINUX_LOW_WINDOW * w.mss {
            return;
        }
        // hystart_update(): curr_rtt = min over the round; the first HYSTART_MIN_SAMPLES
        // samples only count, later ones compare with delay_min + clamp(delay_min/8, 4, 16 ms).
        let cur = self.current_round_min_rtt.map_or(r, |c| c.min(r));
        self.current_round_min_rtt = Some(cur);
        if self.rtt_sample_count < N_RTT_SAMPLE {
            self.rtt_sample_count += 1;
            return;
        }
        let base = self.min_rtt.unwrap_or(r);
        if cur > base + rtt_thresh(base) {
            w.ssthresh = w.cwnd;
            self.phase = Phase::Done;
            self.exits += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }
    fn window(segs: u64) -> Window {
        Window { cwnd: segs * MSS, ssthresh: u64::MAX, mss: MSS, abc_l: None, bytes_acked: 0 }
    }

    /// Drives one round per call: every segment of the current cwnd is ACKed singly with
    /// the given RTT. `seq` is the next sequence number to send; returns it after the round.
    fn round(h: &mut HyStart, w: &mut Window, seq: &mut u64, rtt: SimDuration) {
        let segs = w.cwnd / MSS;
        let (start, mut nxt) = (*seq, *seq + w.cwnd);
        for k in 1..=segs {
            if !h.active(w) {
                break;
            }
            let cwnd_before = w.cwnd;
            h.on_ack(w, MSS, start + k * MSS, nxt, Some(rtt));
            nxt += MSS + (w.cwnd - cwnd_before); // the ACK's slot plus what growth allows
        }
        *seq = start + segs * MSS; // the next round's ACKs are for what this one sent
    }

    #[test]
    fn constants_are_rfc_9406_section_4_3() {
        assert_eq!((MIN_RTT_THRESH, MAX_RTT_THRESH), (ms(4), ms(16)));
        assert_eq!((MIN_RTT_DIVISOR, N_RTT_SAMPLE, CSS_GROWTH_DIVISOR, CSS_ROUNDS), (8, 8, 4, 5));
        // RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms).
        assert_eq!(rtt_thresh(ms(20)), ms(4));
        assert_eq!(rtt_thresh(ms(100)), ms(12) + SimDuration::from_micros(500));
        assert_eq!(rtt_thresh(ms(200)), ms(16));
    }

    #[test]
    fn steady_rtt_keeps_standard_slow_start() {
        let (mut h, mut w, mut seq) = (HyStart::new(HyStartKind::Rfc9406), window(10), 1);
        for _ in 0..4 {
            round(&mut h, &mut w, &mut seq, ms(100));
        }
        assert_eq!(w.cwnd, 160 * MSS, "doubling per round: 10 → 160");
        assert_eq!(h.phase(), Phase::SlowStart);
    }

    #[test]
    fn rise_by_rtt_thresh_after_eight_samples_enters_css() {
        let mut h = HyStart::new(HyStartKind::Rfc9406);
        let mut w = window(10);
        let mut seq = 1;
        round(&mut h, &mut w, &mut seq, ms(100)); // lastRoundMinRTT = 100 ms; RttThresh 12.5 ms
        assert_eq!(w.cwnd, 20 * MSS);
        // Next round: 12.4 ms more is not enough ...
        let mut h2 = h.clone();
        let mut w2 = w.clone();
        let mut seq2 = seq;
        round(&mut h2, &mut w2, &mut seq2, ms(112) + SimDuration::from_micros(400));
        assert_eq!(h2.phase(), Phase::SlowStart);
        // ... 12.5 ms is: CSS from the 8th sample of the round on.
        let start = seq;
        let mut nxt = seq + w.cwnd;
        for k in 1..=8 {
            let before = w.cwnd;
            h.on_ack(&mut w, MSS, start + k * MSS, nxt, Some(ms(112) + SimDuration::from_micros(500)));
            nxt += MSS + w.cwnd - before;
        }
        assert_eq!(h.phase(), Phase::Css { rounds: 1 });
        assert_eq!(w.cwnd, 28 * MSS, "the 8th ACK still grows by a full SMSS");
        assert_eq!(w.ssthresh, u64::MAX, "CSS is still slow start");
        // In CSS each ACK adds SMSS / CSS_GROWTH_DIVISOR.
        h.on_ack(&mut w, MSS, start + 9 * MSS, nxt, Some(ms(113)));
        assert_eq!(w.cwnd, 28 * MSS + MSS / 4);
    }

    #[test]
    fn css_lasts_css_rounds_then_ssthresh_is_cwnd() {
        let mut h = HyStart::new(HyStartKind::Rfc9406);
        let mut w = window(10);
        let mut seq = 1;
        round(&mut h, &mut w, &mut seq, ms(100));
        round(&mut h, &mut w, &mut seq, ms(120)); // enters CSS on the 8th ACK: partial round 1
        assert_eq!(h.phase(), Phase::Css { rounds: 1 });
        // 8 ACKs at full growth, then 12 at a quarter: 20 + 8 + 3 = 31 segments.
        assert_eq!(w.cwnd, 31 * MSS);
        for r in 2..=CSS_ROUNDS {
            let before = w.cwnd;
            round(&mut h, &mut w, &mut seq, ms(120));
            assert_eq!(h.phase(), Phase::Css { rounds: r });
            // cwnd/MSS ACKs, each adding MSS/4: growth of a quarter per round.
            assert_eq!(w.cwnd - before, (before / MSS) * (MSS / 4));
        }
        let cwnd = w.cwnd;
        // The first ACK of the next round ends CSS: ssthresh = cwnd, congestion avoidance
        // (the controller grows cwnd from this ACK on).
        assert!(!h.on_ack(&mut w, MSS, seq + MSS, seq + cwnd, Some(ms(120))));
        assert_eq!(h.phase(), Phase::Done);
        assert_eq!(w.ssthresh, cwnd);
        assert!(!h.active(&w));
        assert_eq!(h.exits, 1);
    }

    #[test]
    fn rtt_below_the_css_baseline_resumes_slow_start() {
        let mut h = HyStart::new(HyStartKind::Rfc9406);
        let mut w = window(10);
        let mut seq = 1;
        round(&mut h, &mut w, &mut seq, ms(100));
        round(&mut h, &mut w, &mut seq, ms(120)); // cssBaselineMinRtt = 120 ms
        round(&mut h, &mut w, &mut seq, ms(119)); // 8 samples below 120 ms: back to slow start
        assert_eq!(h.phase(), Phase::SlowStart);
    }

    #[test]
    fn congestion_ends_hystart() {
        let mut h = HyStart::new(HyStartKind::Rfc9406);
        h.on_congestion();
        assert!(!h.active(&window(10)));
    }

    #[test]
    fn linux_detector_waits_for_16_segments_then_sets_ssthresh_at_once() {
        let mut h = HyStart::new(HyStartKind::Linux);
        let mut w = window(10);
        let mut seq = 1;
        round(&mut h, &mut w, &mut seq, ms(100));
        // cwnd 20: a round at +20 ms. The first 8 samples only count; the 9th compares
        // min(round) = 120 ms > 100 + 12.5 ms, before that ACK's growth: ssthresh = cwnd = 28.
        round(&mut h, &mut w, &mut seq, ms(120));
        assert_eq!(h.phase(), Phase::Done);
        assert_eq!((w.cwnd, w.ssthresh), (28 * MSS, 28 * MSS));
        // Below hystart_low_window nothing is checked.
        let mut h = HyStart::new(HyStartKind::Linux);
        let mut w = window(4);
        let mut seq = 1;
        round(&mut h, &mut w, &mut seq, ms(100));
        round(&mut h, &mut w, &mut seq, ms(200));
        assert_eq!(h.phase(), Phase::SlowStart);
        assert_eq!(w.cwnd, 16 * MSS);
    }
}
