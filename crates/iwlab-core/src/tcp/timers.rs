//! Where a sender's timers are armed, and on which clock (`tcp.hz`).
//!
//! Exact (`hz = 0`, the default, also under the linux profile): a timer due in d fires at now + d.
//! Linux (`hz = N`; `iwlab conform` runs 250 = Kconfig's `HZ_250`): TCP's retransmission,
//! loss-probe, RACK and zero-window timers are kernel timers counted in jiffies, so each is
//!
//! 1. computed in whole jiffies, rounded up (`usecs_to_jiffies()`), by its own formula below,
//! 2. armed with `sk_reset_timer(jiffies + n)` (`inet_csk_reset_xmit_timer()`), where jiffies is
//!    the tick count at arming time (the engine's ticks start at time 0), and
//! 3. run from the timer wheel's bucket after its expiry (kernel/time/timer.c `calc_index()`):
//!    one tick late, so a timer never fires early.
//!
//! Measured on Linux 6.18 (`CONFIG_HZ=250`) with packetdrill: RACK's timer for a reordering
//! window of 25 ms (+ 2 ms) sent the retransmission 31.1 ms after the SACK that armed it
//! (7 ticks, one more for the wheel, less the SACK's phase in its tick; the engine: 32 ms), and
//! windows of 26–28 ms all gave 34.9–35.1 ms: whole 4 ms ticks (docs/conformance.md).

use crate::engine::{SimDuration, SimTime};

const NS_PER_SEC: u128 = 1_000_000_000;
/// `TCP_TIMEOUT_MIN_US` (include/net/tcp.h): added to RACK's and the loss probe's timeouts.
pub const TIMEOUT_MIN: SimDuration = SimDuration::from_millis(2);

/// The clock a sender's timers run on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimerClock {
    /// Ticks per second (Linux CONFIG_HZ); 0 = exact.
    hz: u32,
}

impl TimerClock {
    /// Timers fire at their exact times.
    pub const EXACT: TimerClock = TimerClock { hz: 0 };
    /// The HZ values Linux's Kconfig offers (kernel/Kconfig.hz).
    pub const LINUX_HZ: [u32; 4] = [100, 250, 300, 1000];

    /// `hz` ticks per second; 0 = exact.
    pub const fn new(hz: u32) -> Self {
        TimerClock { hz }
    }
    pub fn hz(self) -> u32 {
        self.hz
    }
    pub fn is_exact(self) -> bool {
        self.hz == 0
    }

    /// Whole ticks in `d`, rounded up (`usecs_to_jiffies()`).
    fn ticks(self, d: SimDuration) -> u64 {
        (d.as_nanos() as u128 * self.hz as u128).div_ceil(NS_PER_SEC) as u64
    }
    /// The tick count at `t` (jiffies).
    fn jiffies_at(self, t: SimTime) -> u64 {
        (t.as_nanos() as u128 * self.hz as u128 / NS_PER_SEC) as u64
    }
    /// When tick `j` begins.
    fn tick_time(self, j: u64) -> SimTime {
        SimTime::from_nanos((j as u128 * NS_PER_SEC).div_ceil(self.hz as u128).min(u64::MAX as u128) as u64)
    }
    fn from_ticks(self, n: u64) -> SimDuration {
        SimDuration::from_nanos((n as u128 * NS_PER_SEC).div_ceil(self.hz as u128).min(u64::MAX as u128) as u64)
    }

    /// `d` in whole ticks, rounded up (`usecs_to_jiffies()`); unchanged on the exact clock.
    pub fn round_up(self, d: SimDuration) -> SimDuration {
        if self.is_exact() {
            d
        } else {
            self.from_ticks(self.ticks(d))
        }
    }

    /// When a timer armed at `now` to expire after `when` runs: `mod_timer(jiffies + n)`, and
    /// the timer wheel runs it from the bucket after its expiry (`calc_index()` rounds up by
    /// one tick so that a timer armed late in a tick is not early).
    ///
    /// Level 0 of the wheel (< 63 ticks) only: farther timers wait for their level's coarser
    /// bucket (8 ticks on level 1, 64 on level 2), which depends on the jiffies counter's phase
    /// at arming time — random against the script's clock (a 252 ms RTO fired 253–271 ms after
    /// arming on Linux 6.18, run to run) — so the engine runs them one tick late as well.
    pub fn fire_at(self, now: SimTime, when: SimDuration) -> SimTime {
        if self.is_exact() {
            return now + when;
        }
        self.tick_time(self.jiffies_at(now) + self.ticks(when) + 1)
    }

    /// The retransmission timer (`tcp_reset_xmit_timer(ICSK_TIME_RETRANS, icsk_rto)`): `rto`
    /// is already whole ticks (`__tcp_set_rto()` in `rto.rs`).
    pub fn rto(self, now: SimTime, rto: SimDuration) -> SimTime {
        self.fire_at(now, rto)
    }

    /// The loss probe (`tcp_schedule_loss_probe()`): `pto` = 2·srtt + (tcp_rto_min for one
    /// segment, else `TCP_TIMEOUT_MIN_US`), `usecs_to_jiffies(pto)`, but no later than the
    /// RTO would fire (`min(timeout, usecs_to_jiffies(tcp_rto_delta_us()))`).
    pub fn loss_probe(self, now: SimTime, pto: SimDuration, rto_at: Option<SimTime>) -> SimTime {
        if self.is_exact() {
            // RFC 8985 §7.2: "If Now() + PTO > TCP_RTO_expiration(): PTO = TCP_RTO_expiration() − Now()".
            let at = now + pto;
            return rto_at.map_or(at, |r| at.min(r));
        }
        // The probe takes the RTO's place on the one retransmit timer (icsk_pending), so "no
        // later than the RTO" is the RTO timer's own bucket.
        let at = self.fire_at(now, self.round_up(pto));
        rto_at.map_or(at, |r| at.min(r))
    }

    /// RACK's reordering timer (`tcp_rack_mark_lost()`): the longest wait of a candidate
    /// (`remaining`), `usecs_to_jiffies(remaining + extra)` (Linux: `TCP_TIMEOUT_MIN_US`),
    /// at most the RTO (`inet_csk_reset_xmit_timer(…, icsk_rto)` caps `when`).
    pub fn rack(self, now: SimTime, remaining: SimDuration, extra: SimDuration, rto: SimDuration) -> SimTime {
        if self.is_exact() {
            return now + remaining + extra;
        }
        self.fire_at(now, self.round_up(remaining + extra).min(rto))
    }

    /// The zero-window probe timer (`tcp_check_probe_timer()`, `tcp_send_probe0()`):
    /// `tcp_probe0_when()`, whole ticks when the RTO is.
    pub fn probe0(self, now: SimTime, when: SimDuration) -> SimTime {
        self.fire_at(now, when)
    }

    /// The receiver's delayed-ACK timer (`tcp_send_delayed_ack()`: `sk_reset_timer(jiffies +
    /// ato)`).
    pub fn delayed_ack(self, now: SimTime, ato: SimDuration) -> SimTime {
        self.fire_at(now, self.round_up(ato))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn at_ms(x: u64) -> SimTime {
        SimTime::ZERO + ms(x)
    }
    const HZ250: TimerClock = TimerClock::new(250);

    #[test]
    fn usecs_to_jiffies_rounds_up_to_whole_ticks() {
        assert_eq!(HZ250.round_up(ms(25)), ms(28));
        assert_eq!(HZ250.round_up(ms(28)), ms(28));
        assert_eq!(HZ250.round_up(SimDuration::from_micros(28_001)), ms(32));
        assert_eq!(TimerClock::new(1000).round_up(SimDuration::from_micros(26_100)), ms(27));
        assert_eq!(TimerClock::EXACT.round_up(SimDuration::from_micros(26_100)), SimDuration::from_micros(26_100));
    }

    #[test]
    fn a_level_zero_timer_runs_one_tick_after_its_expiry() {
        // Armed at 200 ms (jiffy 50) for 7 ticks: expires at jiffy 57, runs at jiffy 58.
        assert_eq!(HZ250.fire_at(at_ms(200), ms(28)), at_ms(232));
        // Armed late in a tick: the same bucket (the wheel counts from the tick, not the time).
        assert_eq!(HZ250.fire_at(at_ms(203), ms(28)), at_ms(232));
        assert_eq!(TimerClock::EXACT.fire_at(at_ms(203), ms(28)), at_ms(231));
    }

    #[test]
    fn farther_timers_are_also_one_tick_late() {
        assert_eq!(HZ250.fire_at(SimTime::ZERO, ms(248)), at_ms(252));
        // A 250 ms RTO armed at 50 ms: 63 ticks from jiffy 12, run at jiffy 76.
        assert_eq!(HZ250.fire_at(at_ms(50), ms(250)), at_ms(304));
    }

    #[test]
    fn rack_timer_adds_two_ms_then_whole_ticks_capped_at_the_rto() {
        // fr-4pkt-fack-last-mss: reordering window 25 ms, SACK at 200 ms → 232 ms (Linux 6.18
        // at HZ 250: 231.8 ms); exact: 227 ms.
        assert_eq!(HZ250.rack(at_ms(200), ms(25), TIMEOUT_MIN, ms(300)), at_ms(232));
        assert_eq!(TimerClock::EXACT.rack(at_ms(200), ms(25), TIMEOUT_MIN, ms(300)), at_ms(227));
        // One more millisecond of window crosses a tick: 29 ms → 8 ticks.
        assert_eq!(HZ250.rack(at_ms(200), ms(27), TIMEOUT_MIN, ms(300)), at_ms(236));
        // Never later than the RTO's ticks (plus the wheel's one).
        assert_eq!(HZ250.rack(at_ms(200), ms(400), TIMEOUT_MIN, ms(200)), at_ms(404));
    }

    #[test]
    fn loss_probe_is_whole_ticks_and_never_later_than_the_rto() {
        // 2·srtt + 2 ms = 202 ms → 51 ticks (204 ms), + 1: armed at jiffy 25 → jiffy 77.
        assert_eq!(HZ250.loss_probe(at_ms(100), ms(202), None), at_ms(308));
        assert_eq!(TimerClock::EXACT.loss_probe(at_ms(100), ms(202), None), at_ms(302));
        // The RTO's timer runs first: the probe takes its place.
        assert_eq!(HZ250.loss_probe(at_ms(100), ms(202), Some(at_ms(256))), at_ms(256));
        assert_eq!(TimerClock::EXACT.loss_probe(at_ms(100), ms(202), Some(at_ms(250))), at_ms(250));
    }
}
