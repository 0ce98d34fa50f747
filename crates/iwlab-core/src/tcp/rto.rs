//! Retransmission timer arithmetic: RFC 6298, or Linux's estimator (`tcp.timers = "linux"`).
//!
//! Linux (net/ipv4/tcp_input.c `tcp_rtt_estimator()`, `__tcp_set_rto()`) keeps SRTT as RFC 6298
//! does but computes the variance term differently: `mdev` (4 × the mean deviation) gains only
//! 1/32 of a *decrease* of the RTT (Eifel-like), and the term added to SRTT, `rttvar`, is the
//! largest `mdev` seen in the last round trip but never below `tcp_rto_min` (200 ms); it decays
//! by a quarter of its excess once per round trip. So RTO = SRTT + max(that, 200 ms): on a
//! path with steady RTT the Linux RTO is SRTT + 200 ms, where RFC 6298 with a 200 ms floor
//! gives about SRTT — the difference between a spurious RTO and none behind a full queue.

use crate::engine::SimDuration;
use crate::tcp::timers::TimerClock;

/// Which RTO arithmetic an estimator follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtoRule {
    /// RFC 6298: RTO = max(SRTT + max(G, 4·RTTVAR), min_rto).
    #[default]
    Rfc6298,
    /// Linux `tcp_rtt_estimator()` / `__tcp_set_rto()`: RTO = SRTT + rttvar, rttvar ≥ min_rto.
    Linux,
}

/// Linux's per-round variance state (`tcp_sock` mdev_us, mdev_max_us, rttvar_us, rtt_seq), ns.
#[derive(Clone, Debug, Default)]
struct LinuxVar {
    /// 4 × the smoothed mean deviation.
    mdev: u64,
    /// The largest `mdev` in the current round trip (reset to min_rto at each round).
    mdev_max: u64,
    /// The variance term added to SRTT (≥ min_rto).
    rttvar: u64,
    /// The round ends when snd_una passes this sequence number (snd_nxt at its start).
    rtt_seq: u64,
}

/// SRTT / RTTVAR / RTO state of one sender.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<SimDuration>,
    rttvar: SimDuration,
    /// RTO before backoff.
    base_rto: SimDuration,
    /// Number of consecutive expirations (RFC 6298 (5.5): each doubles the RTO).
    backoff: u32,
    min_rto: SimDuration,
    max_rto: SimDuration,
    granularity: SimDuration,
    min_rtt: Option<SimDuration>,
    rule: RtoRule,
    linux: LinuxVar,
    clock: TimerClock,
}

impl RttEstimator {
    pub fn new(initial: SimDuration, min: SimDuration, max: SimDuration, g: SimDuration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: SimDuration::ZERO,
            // RFC 6298 (2.1): until a measurement is made, RTO = initial (1 s).
            base_rto: initial,
            backoff: 0,
            min_rto: min,
            max_rto: max,
            granularity: g,
            min_rtt: None,
            rule: RtoRule::Rfc6298,
            linux: LinuxVar::default(),
            clock: TimerClock::EXACT,
        }
    }

    /// The same estimator following `rule`.
    pub fn with_rule(mut self, rule: RtoRule) -> Self {
        self.rule = rule;
        self
    }

    /// The same estimator counting its RTO in `clock`'s ticks.
    pub fn with_clock(mut self, clock: TimerClock) -> Self {
        self.clock = clock;
        self
    }

    pub fn clock(&self) -> TimerClock {
        self.clock
    }

    pub fn rule(&self) -> RtoRule {
        self.rule
    }

    /// Feeds one RTT measurement R (never from a retransmitted segment: Karn, RFC 6298 §3),
    /// taken on an ACK that moved snd.una to `snd_una` while snd.nxt was `snd_nxt` (Linux
    /// updates its variance once per round trip, delimited by these).
    pub fn sample(&mut self, r: SimDuration, snd_una: u64, snd_nxt: u64) {
        if self.rule == RtoRule::Linux {
            self.sample_linux(r, snd_una, snd_nxt);
        } else {
            self.sample_rfc6298(r);
        }
        // RFC 6298 (5.7) note: a new sample after backoff collapses the backoff.
        self.backoff = 0;
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
    }

    /// Linux `tcp_rtt_estimator()` (times in ns instead of µs, same arithmetic).
    fn sample_linux(&mut self, r: SimDuration, snd_una: u64, snd_nxt: u64) {
        let m = r.as_nanos().max(1) as i128;
        let rto_min = self.min_rto.as_nanos();
        let v = &mut self.linux;
        let srtt = match self.srtt {
            None => {
                // "no previous measure": srtt = m, mdev = 2m (so RTO = 3m), rttvar ≥ rto_min.
                v.mdev = 2 * m as u64;
                v.rttvar = v.mdev.max(rto_min);
                v.mdev_max = v.rttvar;
                v.rtt_seq = snd_nxt;
                m
            }
            Some(old) => {
                let old = old.as_nanos() as i128;
                let mut err = m - old; // srtt += err/8
                let srtt = old + err / 8;
                if err < 0 {
                    // A falling RTT moves mdev with gain 1/32 (α·β), not 1/4.
                    err = -err - (v.mdev / 4) as i128;
                    if err > 0 {
                        err /= 8;
                    }
                } else {
                    err -= (v.mdev / 4) as i128;
                }
                v.mdev = (v.mdev as i128 + err).max(0) as u64; // mdev = 3/4 mdev + 1/4 |err|
                if v.mdev > v.mdev_max {
                    v.mdev_max = v.mdev;
                    v.rttvar = v.rttvar.max(v.mdev_max);
                }
                if snd_una > v.rtt_seq {
                    // A round trip ended: rttvar decays towards this round's largest mdev.
                    if v.mdev_max < v.rttvar {
                        v.rttvar -= (v.rttvar - v.mdev_max) / 4;
                    }
                    v.rtt_seq = snd_nxt;
                    v.mdev_max = rto_min;
                }
                srtt.max(1)
            }
        };
        self.srtt = Some(SimDuration::from_nanos(srtt as u64));
        self.rttvar = SimDuration::from_nanos(v.rttvar / 4);
        // __tcp_set_rto(): srtt + rttvar (rttvar ≥ tcp_rto_min, so no separate clamp below).
        self.base_rto = SimDuration::from_nanos(srtt as u64 + v.rttvar);
    }

    fn sample_rfc6298(&mut self, r: SimDuration) {
        let r_ns = r.as_nanos() as i128;
        match self.srtt {
            None => {
                // RFC 6298 (2.2): SRTT <- R, RTTVAR <- R/2.
                self.srtt = Some(r);
                self.rttvar = SimDuration::from_nanos(r.as_nanos() / 2);
            }
            Some(srtt) => {
                // RFC 6298 (2.3): RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|,
                //                 SRTT <- 7/8 SRTT + 1/8 R'  (RTTVAR first, with the old SRTT).
                let s = srtt.as_nanos() as i128;
                let var = (3 * self.rttvar.as_nanos() as i128 + (s - r_ns).abs()) / 4;
                let new_srtt = (7 * s + r_ns) / 8;
                self.rttvar = SimDuration::from_nanos(var as u64);
                self.srtt = Some(SimDuration::from_nanos(new_srtt as u64));
            }
        }
        // RTO <- SRTT + max(G, K*RTTVAR), K = 4.
        let k_var = self.rttvar.saturating_mul(4).max(self.granularity);
        self.base_rto = self.srtt.unwrap() + k_var;
    }

    /// The timer value to arm now: backed-off, clamped to [min, max] (RFC 6298 (2.4), (2.5)),
    /// rounded up to the clock granularity.
    pub fn rto(&self) -> SimDuration {
        // (2.4) clamps the computed RTO; (5.5) doubles the RTO in force, i.e. the clamped one.
        let clamped = self.base_rto.max(self.min_rto);
        if !self.clock.is_exact() {
            // icsk_rto is whole jiffies (`__tcp_set_rto()`: usecs_to_jiffies(srtt + rttvar)),
            // doubled per expiry (`inet_csk_rto_backoff()`), at most TCP_RTO_MAX.
            let ticks = self.clock.round_up(clamped);
            return ticks.saturating_mul(1u64 << self.backoff.min(40)).min(self.max_rto);
        }
        clamped.saturating_mul(1u64 << self.backoff.min(40)).min(self.max_rto).round_up_to(self.granularity)
    }

    /// RFC 6298 (5.5): the timer expired; back off (double) the RTO.
    pub fn on_timeout(&mut self) {
        if self.rto() < self.max_rto {
            self.backoff += 1;
        }
    }

    /// RFC 6298 (5.7): after a SYN timeout, RTO is reset to 3 s when data transmission begins
    /// (if no RTT sample was taken and the current RTO is below 3 s).
    pub fn reset_after_syn_timeout(&mut self) {
        self.backoff = 0;
        if self.srtt.is_none() && self.base_rto < SimDuration::from_secs(3) {
            self.base_rto = SimDuration::from_secs(3);
        }
    }

    pub fn srtt(&self) -> Option<SimDuration> {
        self.srtt
    }
    pub fn rttvar(&self) -> SimDuration {
        self.rttvar
    }
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.min_rtt
    }
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn rfc(initial: u64, min: u64) -> RttEstimator {
        RttEstimator::new(ms(initial), ms(min), ms(60_000), SimDuration::ZERO)
    }

    #[test]
    fn before_any_measurement_the_rto_is_the_initial_one_second() {
        assert_eq!(rfc(1000, 1000).rto(), ms(1000));
    }

    #[test]
    fn the_first_measurement_sets_srtt_r_and_rttvar_r_over_2() {
        let mut e = rfc(1000, 0);
        e.sample(ms(100), 1, 1);
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.rto(), ms(300)); // 100 + 4*50
    }

    #[test]
    fn later_measurements_use_alpha_one_eighth_and_beta_one_quarter() {
        let mut e = rfc(1000, 0);
        e.sample(ms(100), 1, 1);
        e.sample(ms(200), 1, 1);
        // RTTVAR = 3/4*50 + 1/4*|100-200| = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5
        assert_eq!(e.rttvar(), SimDuration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(SimDuration::from_micros(112_500)));
        assert_eq!(e.rto(), SimDuration::from_micros(362_500));
    }

    #[test]
    fn the_rto_is_never_below_the_minimum() {
        let mut e = rfc(1000, 1000);
        e.sample(ms(10), 1, 1);
        assert_eq!(e.rto(), ms(1000));
        let mut linux = rfc(1000, 200);
        linux.sample(ms(10), 1, 1);
        assert_eq!(linux.rto(), ms(200));
    }

    #[test]
    fn each_expiry_doubles_the_rto_up_to_the_maximum() {
        let mut e = rfc(1000, 1000);
        let mut seen = vec![];
        for _ in 0..8 {
            seen.push(e.rto().as_nanos() / 1_000_000);
            e.on_timeout();
        }
        assert_eq!(seen, vec![1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
    }

    #[test]
    fn backoff_doubles_the_clamped_rto() {
        let mut e = rfc(1000, 1000);
        e.sample(ms(100), 1, 1); // computed 300 ms, clamped to 1 s
        e.on_timeout();
        assert_eq!(e.rto(), ms(2000));
    }

    #[test]
    fn a_new_sample_after_backoff_recomputes_the_rto() {
        let mut e = rfc(1000, 0);
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.rto(), ms(4000));
        e.sample(ms(100), 1, 1);
        assert_eq!(e.rto(), ms(300));
    }

    #[test]
    fn granularity_g_bounds_the_variance_term_and_rounds_the_timer() {
        let mut e = RttEstimator::new(ms(3000), ms(0), ms(60_000), ms(10));
        e.sample(ms(100), 1, 1);
        e.sample(ms(100), 1, 1);
        e.sample(ms(100), 1, 1);
        // RTTVAR has decayed to 50*(3/4)^2 = 28.125 ms; 4*RTTVAR = 112.5 > G; RTO rounds up.
        assert_eq!(e.rto(), ms(220));
        let mut flat = RttEstimator::new(ms(3000), ms(0), ms(60_000), ms(10));
        for _ in 0..60 {
            flat.sample(ms(100), 1, 1);
        }
        assert_eq!(flat.rto(), ms(110), "SRTT + max(G, 4*RTTVAR) with RTTVAR ~ 0");
    }

    #[test]
    fn after_a_syn_timeout_data_starts_with_a_3_second_rto() {
        let mut e = rfc(1000, 1000);
        e.on_timeout();
        e.reset_after_syn_timeout();
        assert_eq!(e.rto(), ms(3000));
    }
}

#[cfg(test)]
mod linux_tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn linux() -> RttEstimator {
        RttEstimator::new(ms(1000), ms(200), ms(120_000), SimDuration::ZERO).with_rule(RtoRule::Linux)
    }

    #[test]
    fn the_first_sample_gives_srtt_plus_max_of_twice_the_rtt_and_rto_min() {
        // tcp_rtt_estimator(): mdev = 2·m, rttvar = max(mdev, tcp_rto_min); RTO = srtt + rttvar.
        let mut e = linux();
        e.sample(ms(100), 1, 1);
        assert_eq!(e.rto(), ms(300)); // 100 + max(200, 200)
        let mut fast = linux();
        fast.sample(ms(10), 1, 1);
        assert_eq!(fast.rto(), ms(210), "10 ms + the 200 ms floor on rttvar, not max(30, 200)");
        let mut slow = linux();
        slow.sample(ms(300), 1, 1);
        assert_eq!(slow.rto(), ms(900), "3·RTT when 2·RTT > 200 ms");
    }

    #[test]
    fn a_steady_rtt_keeps_the_rto_200_ms_above_srtt() {
        // RFC 6298 with a 200 ms floor would fall to max(SRTT, 200 ms) = 300 ms here.
        let mut e = linux();
        let mut una = 1;
        for _ in 0..200 {
            una += 1000;
            e.sample(ms(300), una, una + 1); // each ACK ends a round trip
        }
        assert_eq!(e.srtt(), Some(ms(300)));
        // rttvar's excess over rto_min shrinks by a quarter per round (integer arithmetic
        // stops it at 3 ns, as Linux's stops at 3 µs).
        assert!(e.rto() >= ms(500) && e.rto() < ms(500) + SimDuration::from_micros(1), "{:?}", e.rto());
        let mut rfc = RttEstimator::new(ms(1000), ms(200), ms(120_000), SimDuration::ZERO);
        for _ in 0..200 {
            rfc.sample(ms(300), 1, 1);
        }
        assert_eq!(rfc.rto(), ms(300));
    }

    #[test]
    fn a_rising_rtt_raises_rttvar_at_once_and_it_decays_a_quarter_per_round() {
        let mut e = linux();
        e.sample(ms(100), 1, 1001); // mdev 200, rttvar 200 ms, round ends past 1001
                                    // +200 ms error: srtt 125, mdev = 200 - 50 + 200 = 350 ms → rttvar 350 at once.
        e.sample(ms(300), 1001, 5001);
        assert_eq!(e.srtt(), Some(ms(125)));
        assert_eq!(e.rto(), ms(475));
        // This ACK ends the round (snd_una passed 1001): mdev_max was 350 = rttvar, nothing
        // decays; the next round starts with mdev_max = rto_min. mdev falls to 262.5 ms.
        e.sample(ms(125), 5001, 9001);
        assert_eq!(e.rttvar(), SimDuration::from_micros(350_000 / 4));
        e.sample(ms(125), 13_001, 17_001);
        assert_eq!(e.srtt(), Some(ms(125)));
        // mdev = 262.5·3/4 = 196.875 < mdev_max (200 = rto_min); the round ends: rttvar
        // decays by a quarter of its excess, 350 → 350 - 150/4 = 312.5 ms.
        assert_eq!(e.rto(), SimDuration::from_micros(125_000 + 312_500));
    }

    #[test]
    fn a_falling_rtt_moves_mdev_with_an_eighth_of_the_usual_gain() {
        let mut e = linux();
        e.sample(ms(400), 1, 1); // mdev 800 ms
        e.sample(ms(80), 1, 1); // err -320: srtt 360; |err| - mdev/4 = 120 → 15; mdev 815
        assert_eq!(e.srtt(), Some(ms(360)));
        assert_eq!(e.rto(), ms(360 + 815));
    }
}
