//! The persist timer and zero-window probes (RFC 9293 §3.8.6.1, RFC 1122 §4.2.2.17), as
//! Linux runs them: when the peer's window leaves no room for the next segment and nothing is
//! in flight, the timer is armed at max(RTO, TCP_RTO_MIN) (`tcp_check_probe_timer()`,
//! `tcp_probe0_base()`); each expiry sends a probe — a zero-length segment at snd.una − 1,
//! which the peer must ACK with its current window (`tcp_write_wakeup()` →
//! `tcp_xmit_probe_skb()`) — and re-arms the timer with the base doubled per probe, up to
//! the maximum RTO (`tcp_send_probe0()`, `tcp_probe0_when()`). An ACK that opens the window
//! stops it (`tcp_ack_probe()`). Probes carry no data: they do not count as the last data
//! sent, so a long closed window ends in a restart after idle.
//!
//! Linux's `tcp_write_wakeup()` sends what fits of a partial segment when the window is open
//! but smaller than the next segment; the engine probes with the zero-length segment then too.

use crate::engine::{SimDuration, SimTime};
use crate::tcp::timers::TimerClock;

/// `net.ipv4.tcp_retries2`'s default: the backoff stops doubling there.
const MAX_BACKOFF: u32 = 15;

/// The persist timer's state (`ICSK_TIME_PROBE0`, `icsk_probes_out`, `icsk_backoff`).
#[derive(Clone, Debug)]
pub(crate) struct Persist {
    /// When the next probe is due; None while the timer is off.
    pub at: Option<SimTime>,
    /// Probes sent without the window opening (`icsk_probes_out`, `tcpi_probes`).
    pub probes: u32,
    backoff: u32,
    /// `tcp.min_rto` (TCP_RTO_MIN) and `tcp.max_rto` (TCP_RTO_MAX).
    min_rto: SimDuration,
    max_rto: SimDuration,
}

impl Persist {
    pub fn new(min_rto: SimDuration, max_rto: SimDuration) -> Self {
        Persist { at: None, probes: 0, backoff: 0, min_rto, max_rto }
    }

    /// The window no longer blocks the sender: the timer stops and the backoff is forgotten.
    pub fn stop(&mut self) {
        self.at = None;
        self.probes = 0;
        self.backoff = 0;
    }

    /// An acceptable ACK arrived: Linux clears `icsk_probes_out` on every one (`tcp_ack()`), and
    /// if the window stays closed restarts the timer from now with the backoff kept
    /// (`tcp_ack_probe()`); `check` after the sender's attempt re-arms it.
    pub fn on_ack(&mut self) {
        (self.at, self.probes) = (None, 0);
    }

    /// The timeout after `backoff` doublings of max(RTO, TCP_RTO_MIN), at most TCP_RTO_MAX
    /// (`tcp_probe0_when()`).
    fn when(&self, rto: SimDuration) -> SimDuration {
        let base = rto.max(self.min_rto).as_nanos();
        SimDuration::from_nanos(base.saturating_mul(1u64 << self.backoff.min(32))).min(self.max_rto)
    }

    /// After the sender tried to send and the window blocks it: arm the timer if it is off
    /// (the sender calls `stop` when the window does not block it).
    pub fn arm(&mut self, rto: SimDuration, clock: TimerClock, now: SimTime) {
        if self.at.is_none() {
            self.at = Some(clock.probe0(now, self.when(rto)));
        }
    }

    /// The timer expired: the sequence number of the probe to send (`snd_una` − 1: a
    /// zero-length segment), and the timer re-armed with one more doubling.
    pub fn on_timer(
        &mut self,
        blocked: bool,
        rto: SimDuration,
        clock: TimerClock,
        snd_una: u64,
        now: SimTime,
    ) -> Option<u64> {
        if !blocked {
            self.stop();
            return None;
        }
        self.probes += 1;
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
        self.at = Some(clock.probe0(now, self.when(rto)));
        Some(snd_una - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    #[test]
    fn probes_back_off_from_the_rto_and_stop_when_the_window_opens() {
        let mut p = Persist::new(ms(200), ms(120_000));
        let t0 = SimTime::ZERO;
        p.arm(ms(300), TimerClock::EXACT, t0);
        assert_eq!(p.at, Some(t0 + ms(300)));
        // A second check while armed keeps the deadline.
        p.arm(ms(300), TimerClock::EXACT, t0 + ms(100));
        assert_eq!(p.at, Some(t0 + ms(300)));
        assert_eq!(p.on_timer(true, ms(300), TimerClock::EXACT, 26001, t0 + ms(300)), Some(26000));
        assert_eq!((p.at, p.probes), (Some(t0 + ms(900)), 1));
        p.on_timer(true, ms(300), TimerClock::EXACT, 26001, t0 + ms(900)).unwrap();
        assert_eq!((p.at, p.probes), (Some(t0 + ms(2100)), 2));
        // An ACK that leaves the window closed: the count restarts, the backoff stays.
        p.on_ack();
        p.arm(ms(300), TimerClock::EXACT, t0 + ms(1000));
        assert_eq!((p.at, p.probes), (Some(t0 + ms(2200)), 0));
        p.stop();
        assert_eq!((p.at, p.probes), (None, 0));
        // The base is at least TCP_RTO_MIN, the timeout at most TCP_RTO_MAX.
        p.arm(ms(50), TimerClock::EXACT, t0);
        assert_eq!(p.at, Some(t0 + ms(200)));
        for _ in 0..20 {
            p.on_timer(true, ms(50), TimerClock::EXACT, 2, t0);
        }
        assert_eq!(p.at, Some(t0 + ms(120_000)));
        assert!(p.on_timer(false, ms(50), TimerClock::EXACT, 2, t0).is_none() && p.at.is_none());
    }
}
