//! Standard TCP congestion control (RFC 5681), with Appropriate Byte Counting (RFC 3465)
//! when `Window::abc_l` is set.

use super::ops::{AckInfo, CongestionOps, Window};
use crate::engine::SimTime;

#[derive(Clone, Debug, Default)]
pub struct Reno;

/// Slow start (RFC 5681 (2); RFC 3465 §2.2 with ABC): cwnd += min(N, L*SMSS), with L = 1
/// when counting ACKs.
pub fn slow_start(w: &mut Window, acked: u64) {
    let l = w.abc_l.unwrap_or(1) as u64;
    w.cwnd += acked.min(l * w.mss);
}

/// Congestion avoidance: one SMSS per RTT. Counting ACKs, RFC 5681 (3):
/// cwnd += SMSS*SMSS/cwnd (at least 1 byte); with ABC, RFC 3465 §2.1: add SMSS each
/// time a cwnd's worth of bytes has been acknowledged.
pub fn congestion_avoidance(w: &mut Window, acked: u64) {
    if w.abc_l.is_some() {
        w.bytes_acked += acked;
        if w.bytes_acked >= w.cwnd {
            w.bytes_acked -= w.cwnd;
            w.cwnd += w.mss;
        }
    } else {
        w.cwnd += (w.mss * w.mss / w.cwnd).max(1);
    }
}

impl CongestionOps for Reno {
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        if w.in_slow_start() {
            slow_start(w, ack.acked);
        } else {
            congestion_avoidance(w, ack.acked);
        }
    }

    /// RFC 5681 (4): ssthresh = max(FlightSize / 2, 2*SMSS).
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u64, _now: SimTime) -> u64 {
        (flight / 2).max(2 * w.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(cwnd_segs: u64, ssthresh: u64) -> Window {
        Window { cwnd: cwnd_segs * 1000, ssthresh, mss: 1000, abc_l: None, bytes_acked: 0 }
    }
    fn ack(acked: u64) -> AckInfo {
        AckInfo { now: SimTime::ZERO, acked, flight_before: 0, srtt: None, min_rtt: None }
    }

    #[test]
    fn slow_start_grows_by_at_most_one_smss_per_ack() {
        let mut w = window(2, u64::MAX);
        Reno.on_ack(&mut w, &ack(2000)); // a delayed ACK covering two segments
        assert_eq!(w.cwnd, 3000);
    }

    #[test]
    fn abc_with_l2_grows_by_up_to_two_smss_per_ack() {
        let mut w = window(2, u64::MAX);
        w.abc_l = Some(2);
        Reno.on_ack(&mut w, &ack(3000));
        assert_eq!(w.cwnd, 4000);
    }

    #[test]
    fn congestion_avoidance_grows_by_smss_squared_over_cwnd() {
        let mut w = window(10, 5000);
        Reno.on_ack(&mut w, &ack(1000));
        assert_eq!(w.cwnd, 10_000 + 100);
    }

    #[test]
    fn abc_congestion_avoidance_adds_one_smss_per_cwnd_of_acked_bytes() {
        let mut w = window(4, 1000);
        w.abc_l = Some(2);
        for _ in 0..3 {
            Reno.on_ack(&mut w, &ack(1000));
        }
        assert_eq!(w.cwnd, 4000);
        Reno.on_ack(&mut w, &ack(1000));
        assert_eq!(w.cwnd, 5000);
    }

    #[test]
    fn ssthresh_is_half_the_flight_but_at_least_two_segments() {
        let w = window(10, u64::MAX);
        assert_eq!(Reno.ssthresh_on_loss(&w, 10_000, SimTime::ZERO), 5000);
        assert_eq!(Reno.ssthresh_on_loss(&w, 3000, SimTime::ZERO), 2000);
    }
}
