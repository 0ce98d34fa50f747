//! Retransmission timer arithmetic, RFC 6298.

use crate::engine::SimDuration;

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
        }
    }

    /// Feeds one RTT measurement R (never from a retransmitted segment: Karn, RFC 6298 §3).
    pub fn sample(&mut self, r: SimDuration) {
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
        // RFC 6298 (5.7) note: a new sample after backoff collapses the backoff.
        self.backoff = 0;
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
    }

    /// The timer value to arm now: backed-off, clamped to [min, max] (RFC 6298 (2.4), (2.5)),
    /// rounded up to the clock granularity.
    pub fn rto(&self) -> SimDuration {
        // (2.4) clamps the computed RTO; (5.5) doubles the RTO in force, i.e. the clamped one.
        let clamped = self.base_rto.max(self.min_rto);
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
        e.sample(ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.rto(), ms(300)); // 100 + 4*50
    }

    #[test]
    fn later_measurements_use_alpha_one_eighth_and_beta_one_quarter() {
        let mut e = rfc(1000, 0);
        e.sample(ms(100));
        e.sample(ms(200));
        // RTTVAR = 3/4*50 + 1/4*|100-200| = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5
        assert_eq!(e.rttvar(), SimDuration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(SimDuration::from_micros(112_500)));
        assert_eq!(e.rto(), SimDuration::from_micros(362_500));
    }

    #[test]
    fn the_rto_is_never_below_the_minimum() {
        let mut e = rfc(1000, 1000);
        e.sample(ms(10));
        assert_eq!(e.rto(), ms(1000));
        let mut linux = rfc(1000, 200);
        linux.sample(ms(10));
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
        e.sample(ms(100)); // computed 300 ms, clamped to 1 s
        e.on_timeout();
        assert_eq!(e.rto(), ms(2000));
    }

    #[test]
    fn a_new_sample_after_backoff_recomputes_the_rto() {
        let mut e = rfc(1000, 0);
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.rto(), ms(4000));
        e.sample(ms(100));
        assert_eq!(e.rto(), ms(300));
    }

    #[test]
    fn granularity_g_bounds_the_variance_term_and_rounds_the_timer() {
        let mut e = RttEstimator::new(ms(3000), ms(0), ms(60_000), ms(10));
        e.sample(ms(100));
        e.sample(ms(100));
        e.sample(ms(100));
        // RTTVAR has decayed to 50*(3/4)^2 = 28.125 ms; 4*RTTVAR = 112.5 > G; RTO rounds up.
        assert_eq!(e.rto(), ms(220));
        let mut flat = RttEstimator::new(ms(3000), ms(0), ms(60_000), ms(10));
        for _ in 0..60 {
            flat.sample(ms(100));
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
