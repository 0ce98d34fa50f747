//! Wall-clock time for the relay: `CLOCK_MONOTONIC` mapped to [`SimTime`] since the relay started,
//! so the core's queue disciplines see the same kind of time as in the simulator. The link model
//! itself never reads a clock (see [`crate::link`]); only the event loop does.

use iwlab_core::engine::SimTime;

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid pointer to a timespec; CLOCK_MONOTONIC always exists on Linux.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    assert_eq!(r, 0, "clock_gettime(CLOCK_MONOTONIC)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `CLOCK_MONOTONIC`, shifted so that the relay's start is [`SimTime::ZERO`].
#[derive(Copy, Clone, Debug)]
pub struct MonoClock {
    start_ns: u64,
}

impl MonoClock {
    pub fn start() -> Self {
        MonoClock { start_ns: monotonic_ns() }
    }
    pub fn now(&self) -> SimTime {
        SimTime::from_nanos(monotonic_ns().saturating_sub(self.start_ns))
    }
    /// `t` as an absolute `CLOCK_MONOTONIC` timespec (for `timerfd_settime(TFD_TIMER_ABSTIME)`).
    pub fn to_timespec(&self, t: SimTime) -> libc::timespec {
        let ns = self.start_ns.saturating_add(t.as_nanos());
        libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_starts_near_zero_and_never_goes_back() {
        let c = MonoClock::start();
        let a = c.now();
        let b = c.now();
        assert!(a.as_nanos() < 1_000_000_000 && b >= a);
        let ts = c.to_timespec(SimTime::from_nanos(1_500_000_000));
        let abs = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        assert_eq!(abs, c.start_ns + 1_500_000_000);
    }
}
