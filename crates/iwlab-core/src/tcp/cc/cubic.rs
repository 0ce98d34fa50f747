//! CUBIC congestion control (RFC 9438).
//!
//! The RFC counts windows in segments and time in seconds; [`Window`] counts bytes and
//! [`SimTime`] nanoseconds. Windows are converted to segments (`bytes / SMSS` as `f64`) only
//! to evaluate the formulas, and times to seconds only inside them; the epoch start itself
//! stays an integer [`SimTime`].
//!
//! What is implemented, by section:
//! - §4.10 slow start: exactly Reno's ([`reno::slow_start`], so the ABC limit applies).
//! - §4.2 window increase: W_cubic(t) = C·(t−K)³ + W_max, K = cbrt((W_max − cwnd_epoch)/C);
//!   each ACK adds (target − cwnd)/cwnd segments per acknowledged segment, target being
//!   W_cubic(t + RTT) clamped to [cwnd, 1.5·cwnd]. RTT is the smoothed RTT (`ack.srtt`),
//!   else `ack.min_rtt`, else zero. A single ACK never takes cwnd past target.
//! - §4.3 Reno-friendly region: W_est starts at cwnd_epoch and grows by
//!   α_cubic·segments_acked/cwnd, α_cubic = 3(1−β)/(1+β) until W_est ≥ cwnd_prior, then 1
//!   (RFC 9438 compares with cwnd_prior, the cwnd before the last reduction; drafts and
//!   RFC 8312 used W_max, which differs only under fast convergence). While
//!   W_cubic(t) < W_est, cwnd = W_est.
//! - §4.6 multiplicative decrease: ssthresh = max(β·flight_size, 2·SMSS). This is the
//!   formula of RFC 9438 Figure 5 and what Reno here uses too. `ssthresh_from = Cwnd` takes
//!   β·cwnd instead, as Linux, Windows and ns-3's TcpCubic do; §4.6 allows it with measures
//!   that keep cwnd from growing while the flight is smaller (§5.8 below). The two differ
//!   when the flight size is not the window: after an RTO during SACK recovery, FlightSize
//!   (everything above SND.UNA, SACKed data included) can be far above cwnd. W_max and
//!   cwnd_prior are taken from cwnd, as the RFC defines them.
//! - §4.7 fast convergence: if cwnd < W_max, W_max = cwnd·(1+β)/2, else W_max = cwnd.
//! - §4.8 timeout: ssthresh as in §4.6; the first congestion-avoidance stage afterwards uses
//!   K = 0, W_max = W_est = cwnd_epoch. §4.10's loss-free entry into congestion avoidance
//!   (W_max undefined) does the same and sets cwnd_prior = cwnd; so does an epoch whose
//!   cwnd_epoch is already at or above W_max (Linux and FreeBSD clamp K to 0 there too).
//! - §5.8 / §4.2 application-limited flows: an ACK that finds the sender not cwnd-limited
//!   (`flight_before + SMSS <= cwnd`: another full segment would have fitted) leaves cwnd
//!   and W_est alone, and the time since the previous ACK is cut out of t by moving
//!   t_epoch forward. [`CongestionOps::on_idle_restart`] cuts the idle period out the
//!   same way. This relies on `AckInfo::flight_before` being the real flight size.
//!
//! An epoch (one congestion-avoidance stage, t_epoch in the RFC) begins at
//! [`CongestionOps::on_recovery_exit`], or on the first ACK in congestion avoidance if
//! none is running (first exit from slow start, after an RTO). A congestion event ends it;
//! so does any ACK in slow start, since the RFC's epoch is "the beginning of the current
//! congestion avoidance stage" — e.g. when an idle restart has cut cwnd below ssthresh, the
//! next stage starts afresh at ssthresh with the remembered W_max.
//!
//! Not implemented: §4.9 undo after spurious congestion events (no hook reports them),
//! HyStart++ (RFC 9406) here: it lives in `cc/hystart.rs` and the sender runs it before CUBIC.

use super::ops::{AckInfo, CongestionOps, Window};
use super::reno;
use crate::engine::{SimDuration, SimTime};

#[derive(Clone, Debug, PartialEq)]
pub struct CubicConfig {
    /// Multiplicative decrease factor β_cubic (RFC 9438 §4.6: 0.7).
    pub beta: f64,
    /// C (RFC 9438 §5: 0.4), in segments / s³.
    pub c: f64,
    /// Fast convergence (RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// Reno-friendly region (RFC 9438 §4.3).
    pub reno_friendly: bool,
    /// What β multiplies at a congestion event (RFC 9438 §4.6).
    pub ssthresh_from: SsthreshFrom,
    /// Real-number RFC 9438 (this file) or Linux's integer `bictcp_update()` (`cubic_linux.rs`).
    pub arithmetic: CubicArithmetic,
}

/// How the CUBIC curve is computed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CubicArithmetic {
    /// RFC 9438 in real numbers, cwnd in bytes.
    Rfc9438,
    /// Linux net/ipv4/tcp_cubic.c: whole segments, jiffies, truncated cubic term.
    Linux,
}

impl CubicArithmetic {
    pub const NAMES: [&'static str; 2] = ["rfc9438", "linux"];

    pub fn by_name(name: &str) -> Option<CubicArithmetic> {
        match name {
            "rfc9438" => Some(CubicArithmetic::Rfc9438),
            "linux" => Some(CubicArithmetic::Linux),
            _ => None,
        }
    }
}

/// The quantity a congestion event multiplies by β_cubic to get the new ssthresh.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SsthreshFrom {
    /// RFC 9438 Figure 5: the flight size (RFC 5681 FlightSize).
    FlightSize,
    /// cwnd, as Linux (`bictcp_recalc_ssthresh`), Windows and ns-3's TcpCubic compute it.
    Cwnd,
}

impl SsthreshFrom {
    pub const NAMES: [&'static str; 2] = ["flight-size", "cwnd"];

    pub fn by_name(name: &str) -> Option<SsthreshFrom> {
        match name {
            "flight-size" => Some(SsthreshFrom::FlightSize),
            "cwnd" => Some(SsthreshFrom::Cwnd),
            _ => None,
        }
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            beta: 0.7,
            c: 0.4,
            fast_convergence: true,
            reno_friendly: true,
            ssthresh_from: SsthreshFrom::FlightSize,
            arithmetic: CubicArithmetic::Rfc9438,
        }
    }
}

/// K = cbrt((W_max − cwnd_epoch) / C) (RFC 9438 §4.2, Figure 2): seconds for the curve to
/// climb from cwnd_epoch back to W_max. Windows in segments, C in segments / s³.
pub fn cubic_k(w_max: f64, cwnd_epoch: f64, c: f64) -> f64 {
    ((w_max - cwnd_epoch) / c).cbrt()
}

/// One congestion-avoidance stage (RFC 9438 §4.2). Windows in segments.
#[derive(Clone, Debug, PartialEq)]
struct Epoch {
    /// t_epoch, moved forward over application-limited and idle periods (§5.8).
    t_epoch: SimTime,
    /// Up to when elapsed time has been accounted: the epoch start or the last ACK.
    last_seen: SimTime,
    /// W_max of this stage's curve.
    w_max: f64,
    /// K, seconds.
    k: f64,
    /// W_est (§4.3).
    w_est: f64,
}

impl Epoch {
    /// W_cubic(t) = C·(t − K)³ + W_max (RFC 9438 §4.2, Figure 1), t in seconds.
    fn w_cubic(&self, c: f64, t: f64) -> f64 {
        c * (t - self.k).powi(3) + self.w_max
    }
}

/// The CUBIC controller; windows in its state are in segments (see the module docs).
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    /// W_max (§4.1.2) in segments; `None` while undefined: before any congestion event, and
    /// from an RTO until the next stage starts (§4.8).
    w_max: Option<f64>,
    /// cwnd_prior (§4.1.2) in segments: cwnd when ssthresh was last set.
    cwnd_prior: Option<f64>,
    epoch: Option<Epoch>,
    /// Growth below one byte not yet added to cwnd, in bytes.
    carry: f64,
}

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Self {
        Cubic { cfg, w_max: None, cwnd_prior: None, epoch: None, carry: 0.0 }
    }

    /// α_cubic = 3(1 − β)/(1 + β) (RFC 9438 §4.3, Figure 4).
    fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.cfg.beta) / (1.0 + self.cfg.beta)
    }

    fn start_epoch(&mut self, w: &Window, now: SimTime) {
        let cwnd_epoch = segments(w.cwnd, w.mss);
        // §4.10: entering congestion avoidance with no congestion event yet sets cwnd_prior = cwnd.
        self.cwnd_prior.get_or_insert(cwnd_epoch);
        let (w_max, k) = match self.w_max {
            // §4.2 Figure 2: K = cbrt((W_max − cwnd_epoch)/C).
            Some(w_max) if w_max > cwnd_epoch => (w_max, cubic_k(w_max, cwnd_epoch, self.cfg.c)),
            // §4.8 / §4.10: K = 0 and W_max = the cwnd at the beginning of the stage.
            _ => (cwnd_epoch, 0.0),
        };
        self.w_max = Some(w_max);
        // §4.3: W_est is set equal to cwnd_epoch at the start of the stage.
        self.epoch = Some(Epoch { t_epoch: now, last_seen: now, w_max, k, w_est: cwnd_epoch });
        self.carry = 0.0;
    }

    /// A congestion event (§4.6, §4.7): update W_max and cwnd_prior, end the epoch, and
    /// return the new ssthresh in bytes.
    fn congestion_event(&mut self, w: &Window, flight: u64) -> u64 {
        let beta = self.cfg.beta;
        let cwnd = segments(w.cwnd, w.mss);
        // §4.7: W_max = cwnd·(1 + β)/2 if cwnd < W_max and fast convergence is on, else cwnd.
        self.w_max = Some(match self.w_max {
            Some(last) if self.cfg.fast_convergence && cwnd < last => cwnd * (1.0 + beta) / 2.0,
            _ => cwnd,
        });
        // §4.6 Figure 5: cwnd_prior = cwnd.
        self.cwnd_prior = Some(cwnd);
        self.epoch = None;
        // §4.6 Figure 5: ssthresh = flight_size·β (or cwnd·β), at least 2 SMSS. Rounded to
        // the nearest byte so that 0.7·100 000 is 70 000, not 69 999.
        let basis = match self.cfg.ssthresh_from {
            SsthreshFrom::FlightSize => flight,
            SsthreshFrom::Cwnd => w.cwnd,
        };
        ((basis as f64 * beta).round() as u64).max(2 * w.mss)
    }
}

fn segments(bytes: u64, mss: u64) -> f64 {
    bytes as f64 / mss as f64
}

impl CongestionOps for Cubic {
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        if w.in_slow_start() {
            // §4.10: Reno slow start; no congestion-avoidance stage is current.
            self.epoch = None;
            reno::slow_start(w, ack.acked);
            return;
        }
        if self.epoch.is_none() {
            self.start_epoch(w, ack.now);
        }
        let (c, alpha) = (self.cfg.c, self.alpha_cubic());
        let cwnd_prior = self.cwnd_prior.unwrap_or(f64::INFINITY);
        let e = self.epoch.as_mut().expect("epoch started above");
        if ack.flight_before + w.mss <= w.cwnd {
            // §5.8: no growth while application-limited, and t excludes the period (§4.2).
            e.t_epoch += ack.now.saturating_since(e.last_seen);
            e.last_seen = ack.now;
            return;
        }
        e.last_seen = ack.now;

        let cwnd = segments(w.cwnd, w.mss);
        let segments_acked = segments(ack.acked, w.mss);
        let t = ack.now.saturating_since(e.t_epoch).as_secs_f64();
        let rtt = ack.srtt.or(ack.min_rtt).unwrap_or(SimDuration::ZERO).as_secs_f64();

        if self.cfg.reno_friendly {
            // §4.3 Figure 4: W_est += α_cubic·segments_acked/cwnd; α_cubic = 1 once
            // W_est >= cwnd_prior.
            let a = if e.w_est >= cwnd_prior { 1.0 } else { alpha };
            e.w_est += a * segments_acked / cwnd;
            // §4.3: if W_cubic(t) < W_est, cwnd = W_est (never below the current cwnd).
            if e.w_cubic(c, t) < e.w_est {
                w.cwnd = w.cwnd.max((e.w_est * w.mss as f64) as u64);
                return;
            }
        }
        // §4.2: target = W_cubic(t + RTT), bounded to [cwnd, 1.5·cwnd].
        let target = e.w_cubic(c, t + rtt).clamp(cwnd, 1.5 * cwnd);
        // §4.4, §4.5: cwnd += (target − cwnd)/cwnd per acknowledged segment.
        let grow = (target - cwnd) * (segments_acked / cwnd).min(1.0);
        let bytes = grow * w.mss as f64 + self.carry;
        let whole = bytes.floor();
        self.carry = bytes - whole;
        w.cwnd += whole as u64;
    }

    fn ssthresh_on_loss(&mut self, w: &Window, flight: u64, _now: SimTime) -> u64 {
        self.congestion_event(w, flight)
    }

    /// §4.8: ssthresh as for a loss (§4.6); the next stage starts from K = 0 with
    /// W_max = cwnd_epoch, which `start_epoch` does when W_max is undefined.
    fn ssthresh_on_rto(&mut self, w: &Window, flight: u64, _now: SimTime) -> u64 {
        let ssthresh = self.congestion_event(w, flight);
        self.w_max = None;
        ssthresh
    }

    /// The congestion-avoidance stage after a congestion event starts now, from
    /// cwnd_epoch = cwnd (§4.2). If recovery left cwnd below ssthresh, slow start comes first
    /// and the stage begins when it ends.
    fn on_recovery_exit(&mut self, w: &mut Window, now: SimTime) {
        if w.in_slow_start() {
            self.epoch = None;
        } else {
            self.start_epoch(w, now);
        }
    }

    /// §5.8: t must not include idle periods, so the curve is shifted later by the time since
    /// the last ACK (Linux does the same). If cwnd has been cut below ssthresh, the next ACK
    /// ends the stage instead and a new one starts after slow start.
    fn on_idle_restart(&mut self, w: &mut Window, now: SimTime) {
        if w.in_slow_start() {
            self.epoch = None;
        } else if let Some(e) = self.epoch.as_mut() {
            e.t_epoch += now.saturating_since(e.last_seen);
            e.last_seen = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::Reno;

    const MSS: u64 = 1000;

    fn window(cwnd_segs: u64, ssthresh_segs: u64) -> Window {
        Window {
            cwnd: cwnd_segs * MSS,
            ssthresh: ssthresh_segs.saturating_mul(MSS),
            mss: MSS,
            abc_l: None,
            bytes_acked: 0,
        }
    }
    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn at(d: SimDuration) -> SimTime {
        SimTime::ZERO + d
    }
    /// An ACK of `acked` bytes from a cwnd-limited sender, with smoothed RTT `rtt`.
    fn ack(now: SimTime, acked: u64, w: &Window, rtt: SimDuration) -> AckInfo {
        AckInfo { now, acked, flight_before: w.cwnd, srtt: Some(rtt), min_rtt: Some(rtt) }
    }

    /// Delivers that ACK to `cc`.
    fn deliver(cc: &mut Cubic, w: &mut Window, now: SimTime, acked: u64, rtt: SimDuration) {
        let a = ack(now, acked, w, rtt);
        cc.on_ack(w, &a);
    }

    /// A loss at `cwnd_segs` segments (flight = cwnd), recovery ending at `now` with
    /// cwnd = ssthresh, as `tcp::recovery` does.
    fn loss_and_recovery(cc: &mut Cubic, w: &mut Window, now: SimTime) {
        w.ssthresh = cc.ssthresh_on_loss(w, w.cwnd, now);
        w.cwnd = w.ssthresh;
        cc.on_recovery_exit(w, now);
    }

    /// One RTT of ACKs, one per segment, evenly spaced; returns the time after it.
    fn one_rtt(cc: &mut Cubic, w: &mut Window, start: SimTime, rtt: SimDuration) -> SimTime {
        let n = w.cwnd / MSS;
        for i in 0..n {
            let now = start + SimDuration::from_nanos(rtt.as_nanos() * (i + 1) / n);
            deliver(cc, w, now, MSS, rtt);
        }
        start + rtt
    }

    #[test]
    fn k_for_w_max_100_and_beta_0_7_is_cbrt_75_seconds() {
        // §4.2 Figure 2: K = cbrt(W_max·(1 − β)/C) = cbrt(100·0.3/0.4) = cbrt(75) = 4.217163… s.
        assert!((cubic_k(100.0, 70.0, 0.4) - 4.217_163_326_508_746).abs() < 1e-6);
        let mut cc = Cubic::new(CubicConfig::default());
        let mut w = window(100, 50);
        loss_and_recovery(&mut cc, &mut w, SimTime::ZERO);
        let e = cc.epoch.as_ref().unwrap();
        assert!((e.k - 75f64.cbrt()).abs() < 1e-6);
        assert_eq!(e.w_max, 100.0);
    }

    #[test]
    fn a_loss_at_cwnd_100_segments_sets_ssthresh_to_70_segments() {
        // §4.6 Figure 5: ssthresh = flight_size·β_cubic.
        let mut cc = Cubic::new(CubicConfig::default());
        let w = window(100, 50);
        assert_eq!(cc.ssthresh_on_loss(&w, 100_000, SimTime::ZERO), 70_000);
        assert_eq!(cc.w_max, Some(100.0));
        assert_eq!(cc.cwnd_prior, Some(100.0));
    }

    #[test]
    fn an_rto_with_a_flight_of_300_segments_and_cwnd_100_takes_beta_of_the_flight_or_of_cwnd() {
        // §4.8 with §4.6 Figure 5: ssthresh = flight_size·β = 210 segments by default;
        // `ssthresh_from = Cwnd` (Linux, ns-3) takes cwnd·β = 70 segments.
        let w = window(100, 50);
        let mut rfc = Cubic::new(CubicConfig::default());
        assert_eq!(rfc.ssthresh_on_rto(&w, 300_000, SimTime::ZERO), 210_000);
        let mut linux = Cubic::new(CubicConfig { ssthresh_from: SsthreshFrom::Cwnd, ..Default::default() });
        assert_eq!(linux.ssthresh_on_rto(&w, 300_000, SimTime::ZERO), 70_000);
        assert_eq!(linux.ssthresh_on_loss(&window(100, 50), 40_000, SimTime::ZERO), 70_000);
    }

    #[test]
    fn ssthresh_is_at_least_two_segments() {
        // §4.6 Figure 5: ssthresh = max(ssthresh, 2).
        let mut cc = Cubic::new(CubicConfig::default());
        assert_eq!(cc.ssthresh_on_loss(&window(2, 1), 2000, SimTime::ZERO), 2000);
    }

    #[test]
    fn fast_convergence_a_second_loss_at_80_below_w_max_100_sets_w_max_to_68() {
        // §4.7: cwnd < W_max, so W_max = cwnd·(1 + β)/2 = 80·1.7/2 = 68.
        let mut cc = Cubic::new(CubicConfig::default());
        let mut w = window(100, 50);
        loss_and_recovery(&mut cc, &mut w, SimTime::ZERO);
        w.cwnd = 80 * MSS;
        assert_eq!(cc.ssthresh_on_loss(&w, 80_000, at(ms(1000))), 56_000);
        assert!((cc.w_max.unwrap() - 68.0).abs() < 1e-9);
        assert_eq!(cc.cwnd_prior, Some(80.0));
    }

    #[test]
    fn without_fast_convergence_w_max_is_the_cwnd_before_reduction() {
        let mut cc = Cubic::new(CubicConfig { fast_convergence: false, ..Default::default() });
        let mut w = window(100, 50);
        loss_and_recovery(&mut cc, &mut w, SimTime::ZERO);
        w.cwnd = 80 * MSS;
        cc.ssthresh_on_loss(&w, 80_000, at(ms(1000)));
        assert_eq!(cc.w_max, Some(80.0));
    }

    #[test]
    fn cwnd_follows_the_cubic_curve_concave_to_w_max_at_k_then_convex() {
        // §4.2, §4.4, §4.5: from cwnd_epoch = 70 the window climbs to W_max = 100 at
        // t = K = 4.217 s, flattening on the way (concave), then accelerates (convex).
        // At RTT 200 ms, W_est (§4.3) only reaches 91 segments by t = 8 s, under the curve.
        let rtt = ms(200);
        let mut cc = Cubic::new(CubicConfig::default());
        let mut w = window(100, 50);
        loss_and_recovery(&mut cc, &mut w, SimTime::ZERO);
        let k = cc.epoch.as_ref().unwrap().k;
        let mut now = SimTime::ZERO;
        let mut samples = vec![(0.0, segments(w.cwnd, MSS))];
        while now < at(SimDuration::from_secs(8)) {
            now = one_rtt(&mut cc, &mut w, now, rtt);
            samples.push((now.as_secs_f64(), segments(w.cwnd, MSS)));
        }
        let e = cc.epoch.as_ref().unwrap();
        assert!(e.w_est < e.w_cubic(0.4, 8.0), "stayed out of the Reno-friendly region");
        let near_k = samples.iter().min_by(|a, b| (a.0 - k).abs().total_cmp(&(b.0 - k).abs()));
        let (t_k, cwnd_at_k) = *near_k.unwrap();
        assert!((t_k - k).abs() <= 0.1);
        assert!((cwnd_at_k - 100.0).abs() < 1.0, "cwnd at t≈K is {cwnd_at_k}");
        // Growth per second over one-second steps: falling before K, rising after it.
        let per_second: Vec<(f64, f64)> =
            samples.iter().step_by(5).collect::<Vec<_>>().windows(2).map(|p| (p[0].0, p[1].1 - p[0].1)).collect();
        for d in per_second.windows(2) {
            let (t0, g0) = d[0];
            let (t1, g1) = d[1];
            assert!(g0 >= 0.0 && g1 >= 0.0);
            if t1 + 1.0 <= k {
                assert!(g1 < g0, "concave before K: growth {g0} then {g1} at t = {t0}");
            } else if t0 >= k {
                assert!(g1 > g0, "convex after K: growth {g0} then {g1} at t = {t0}");
            }
        }
        assert!(samples.last().unwrap().1 > 110.0);
    }

    #[test]
    fn in_the_reno_friendly_region_cwnd_is_w_est() {
        // §4.3: with W_max = 10 and RTT 10 ms the cubic curve is nearly flat over a few RTTs,
        // and Reno grows faster. W_est starts at cwnd_epoch = 7 and on every ACK
        // W_est = W_est + α_cubic·segments_acked/cwnd, α_cubic = 3(1 − 0.7)/(1 + 0.7) until
        // W_est >= cwnd_prior = 10, then 1; W_cubic(t) < W_est, so cwnd = W_est.
        let rtt = ms(10);
        let mut cc = Cubic::new(CubicConfig::default());
        let mut w = window(10, 5);
        loss_and_recovery(&mut cc, &mut w, SimTime::ZERO);
        assert_eq!(w.cwnd, 7000);
        let mut w_est = 7.0_f64;
        for i in 1..=50u64 {
            deliver(&mut cc, &mut w, at(SimDuration::from_micros(1400 * i)), MSS, rtt);
            let alpha_cubic = if w_est >= 10.0 { 1.0 } else { 3.0 * (1.0 - 0.7) / (1.0 + 0.7) };
            w_est += alpha_cubic * 1.0 / w_est;
            assert!((segments(w.cwnd, MSS) - w_est).abs() < 1e-3, "ACK {i}: {} vs {w_est}", w.cwnd);
        }
        // After 50 ACKs (70 ms), W_est = 10.20 segments; the cubic curve alone is at 7.31.
        assert_eq!(w.cwnd, 10_199);
        assert!((w_est - 10.1997).abs() < 1e-4, "{w_est}");
        let e = cc.epoch.as_ref().unwrap();
        assert!((e.w_cubic(0.4, 0.07) - 7.31).abs() < 0.01);
    }

    #[test]
    fn w_est_grows_with_alpha_1_once_it_reaches_cwnd_prior() {
        // §4.3: once W_est >= cwnd_prior, α_cubic = 1; on §4.10's loss-free entry into
        // congestion avoidance cwnd_prior = cwnd, so W_est = W_est + 1·segments_acked/cwnd
        // from the start: 10 ACKs at cwnd 10 add about one segment.
        let rtt = ms(10);
        let mut cc = Cubic::new(CubicConfig::default());
        let mut w = window(10, 10);
        let mut w_est = 10.0_f64;
        for i in 1..=10u64 {
            deliver(&mut cc, &mut w, at(SimDuration::from_micros(i)), MSS, rtt);
            w_est += 1.0 / w_est;
        }
        assert_eq!(w.cwnd, 10_958);
        assert!((w_est - 10.9586).abs() < 1e-4, "{w_est}");
        assert!((cc.epoch.as_ref().unwrap().w_est - w_est).abs() < 1e-4);
    }

    #[test]
    fn slow_start_below_ssthresh_matches_reno_exactly() {
        // §4.10: CUBIC MAY use Reno's slow start; with and without ABC (RFC 3465 L = 2).
        for abc_l in [None, Some(2)] {
            let mut cubic = Cubic::new(CubicConfig::default());
            let mut wc = window(2, 64);
            wc.abc_l = abc_l;
            let mut wr = wc.clone();
            let mut i = 0;
            while wc.in_slow_start() {
                i += 1;
                let acked = [1000, 2000, 3000, 500][i % 4];
                let a = ack(at(ms(i as u64)), acked, &wc, ms(50));
                cubic.on_ack(&mut wc, &a);
                Reno.on_ack(&mut wr, &a);
                assert_eq!(wc, wr);
            }
            assert!(i > 20);
        }
    }

    #[test]
    fn cwnd_never_decreases_on_an_ack_in_congestion_avoidance() {
        // §4.2: target is never below cwnd; §4.3 sets cwnd = W_est only when that is larger.
        // Losses at varying windows, RTTs from 1 ms to 500 ms, ACKs of 1–3 segments and some
        // application-limited ACKs.
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for fc in [false, true] {
            let mut cc = Cubic::new(CubicConfig { fast_convergence: fc, ..Default::default() });
            let mut w = window(40, 30);
            let mut now = SimTime::ZERO;
            for round in 0..20_000u64 {
                now += SimDuration::from_micros(1 + next() % 20_000);
                if round % 2000 == 1999 {
                    loss_and_recovery(&mut cc, &mut w, now);
                    continue;
                }
                let rtt = SimDuration::from_millis(1 + next() % 500);
                let mut a = ack(now, MSS * (1 + next() % 3), &w, rtt);
                if next() % 10 == 0 {
                    a.flight_before = w.cwnd / 2;
                }
                let before = w.cwnd;
                cc.on_ack(&mut w, &a);
                assert!(w.cwnd >= before, "cwnd fell from {before} to {}", w.cwnd);
                assert!(w.cwnd <= before + before / 2 + 1, "more than 1.5·cwnd on one ACK");
            }
        }
    }

    #[test]
    fn after_an_rto_the_first_stage_has_k_0_and_w_max_at_cwnd_epoch() {
        // §4.8: ssthresh as in §4.6; K = 0, W_max = W_est = the cwnd at the start of the stage.
        let mut cc = Cubic::new(CubicConfig::default());
        let mut w = window(100, u64::MAX);
        w.ssthresh = cc.ssthresh_on_rto(&w, 100_000, SimTime::ZERO);
        assert_eq!(w.ssthresh, 70_000);
        w.cwnd = MSS; // the loss window (RFC 5681 §3.1)
        let rtt = ms(100);
        let mut now = SimTime::ZERO;
        while w.in_slow_start() {
            now += ms(1);
            deliver(&mut cc, &mut w, now, MSS, rtt);
            assert!(cc.epoch.is_none());
        }
        now += ms(1);
        let cwnd_epoch = segments(w.cwnd, MSS);
        deliver(&mut cc, &mut w, now, MSS, rtt);
        let e = cc.epoch.as_ref().unwrap();
        assert_eq!((e.k, e.w_max, e.t_epoch), (0.0, cwnd_epoch, now));
        assert!(e.w_est > cwnd_epoch && e.w_est < cwnd_epoch + 0.01);
    }

    #[test]
    fn an_application_limited_ack_leaves_cwnd_and_stops_the_clock() {
        // §5.8: no increase while application-limited, and t excludes that time.
        let mut cc = Cubic::new(CubicConfig::default());
        let mut w = window(100, 50);
        loss_and_recovery(&mut cc, &mut w, SimTime::ZERO);
        let mut a = ack(at(ms(300)), MSS, &w, ms(100));
        a.flight_before = w.cwnd - MSS; // room for one more segment that was not sent
        cc.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 70_000);
        assert_eq!(cc.epoch.as_ref().unwrap().t_epoch, at(ms(300)));
    }

    #[test]
    fn after_idle_the_curve_resumes_where_it_left_off() {
        // §5.8: t excludes idle periods, so 10 s of idle changes nothing but the clock.
        let rtt = ms(100);
        let idle = SimDuration::from_secs(10);
        let mut busy = Cubic::new(CubicConfig::default());
        let mut w_busy = window(100, 50);
        loss_and_recovery(&mut busy, &mut w_busy, SimTime::ZERO);
        let mut now = SimTime::ZERO;
        for _ in 0..10 {
            now = one_rtt(&mut busy, &mut w_busy, now, rtt);
        }
        let mut idler = busy.clone();
        let mut w_idler = w_busy.clone();
        idler.on_idle_restart(&mut w_idler, now + idle);
        for _ in 0..10 {
            let later = one_rtt(&mut idler, &mut w_idler, now + idle, rtt);
            now = one_rtt(&mut busy, &mut w_busy, now, rtt);
            assert_eq!(w_idler.cwnd, w_busy.cwnd);
            assert_eq!(later, now + idle);
        }
        assert!(w_busy.cwnd > 80_000);
    }

    #[test]
    fn an_idle_restart_below_ssthresh_starts_a_new_stage_after_slow_start() {
        // RFC 5681 §4.1 restart cut cwnd to the restart window: slow start to ssthresh, then a
        // new stage from cwnd_epoch = ssthresh towards the remembered W_max = 100.
        let mut cc = Cubic::new(CubicConfig::default());
        let mut w = window(100, 50);
        loss_and_recovery(&mut cc, &mut w, SimTime::ZERO);
        let mut now = one_rtt(&mut cc, &mut w, SimTime::ZERO, ms(100));
        now += SimDuration::from_secs(5);
        w.cwnd = 10 * MSS;
        cc.on_idle_restart(&mut w, now);
        assert!(cc.epoch.is_none());
        while w.in_slow_start() {
            now += ms(1);
            deliver(&mut cc, &mut w, now, MSS, ms(100));
        }
        now += ms(1);
        deliver(&mut cc, &mut w, now, MSS, ms(100));
        let e = cc.epoch.as_ref().unwrap();
        assert_eq!((e.w_max, e.t_epoch), (100.0, now));
        assert!((e.k - 75f64.cbrt()).abs() < 1e-6);
    }
}
