//! UDP background (the congested-links study's "constant" congestion, docs/studies.md): datagrams of `payload` bytes from `src`
//! to `dst` so that the rate *on the wire* (payload + 28 header bytes) is `rate_bps`.
//!
//! * Constant bit rate: packet k (from 0) leaves at start + ⌊k · bits · 10⁹ / rate⌋ ns, so
//!   rounding never accumulates and the long-run rate is exact.
//! * Poisson: exponential gaps with the same mean, bits / rate seconds.
//!
//! Packets are sent at times strictly before `stop` (or until the run ends).

use crate::engine::{SimDuration, SimRng, SimTime, StreamKind};
use crate::net::packet::{FlowId, NodeId};
use crate::sim::{AppId, Application, ConnId, Core, Side};
use crate::tcp::endpoint::AppEvent;
use crate::traffic::dist::{Exponential, SizeDist};

/// IPv4 (20) + UDP (8) header bytes on every datagram.
pub const UDP_HEADER_BYTES: u32 = 28;
/// Largest UDP payload over IPv4 (65 535 − 28).
pub const MAX_PAYLOAD: u32 = 65_507;

pub struct UdpSource {
    src: NodeId,
    dst: NodeId,
    rate_bps: u64,
    payload: u32,
    /// Exponential gaps in seconds when Poisson; `None` for constant bit rate.
    poisson: Option<Exponential>,
    stop: Option<SimTime>,
    rng: Option<SimRng>,
    flow: Option<FlowId>,
    t0: SimTime,
    sent: u64,
}

impl UdpSource {
    /// Built (and validated: `rate_bps > 0`) by [`super::build_app`].
    pub(crate) fn new(
        src: NodeId,
        dst: NodeId,
        rate_bps: u64,
        payload: u32,
        poisson: bool,
        stop: Option<SimTime>,
    ) -> Self {
        let mean_secs = (payload + UDP_HEADER_BYTES) as f64 * 8.0 / rate_bps as f64;
        let poisson = poisson.then(|| Exponential::new(mean_secs).expect("a positive rate gives a positive mean gap"));
        UdpSource { src, dst, rate_bps, payload, poisson, stop, rng: None, flow: None, t0: SimTime::ZERO, sent: 0 }
    }

    /// Time one packet takes at `rate_bps` on the wire (the CBR interval; the Poisson mean).
    pub fn mean_gap(rate_bps: u64, payload: u32) -> SimDuration {
        SimDuration::from_nanos(Self::cbr_offset(rate_bps, payload, 1))
    }

    /// Nanoseconds from the first packet to packet `k` at constant bit rate.
    fn cbr_offset(rate_bps: u64, payload: u32, k: u64) -> u64 {
        let bits = (payload + UDP_HEADER_BYTES) as u128 * 8;
        (k as u128 * bits * 1_000_000_000 / rate_bps as u128).min(u64::MAX as u128) as u64
    }

    /// The flow in `Core::udp`, once started.
    pub fn flow(&self) -> Option<FlowId> {
        self.flow
    }

    /// Sends a packet if `stop` has not come, and schedules the next one.
    fn tick(&mut self, core: &mut Core, me: AppId) {
        let now = core.now();
        let (Some(flow), Some(rng)) = (self.flow, self.rng.as_mut()) else { return };
        if self.stop.is_some_and(|s| now >= s) {
            return;
        }
        core.send_udp(flow, self.payload);
        self.sent += 1;
        let next = match &self.poisson {
            Some(gap) => now + SimDuration::from_secs_f64(gap.sample(rng)),
            None => self.t0 + SimDuration::from_nanos(Self::cbr_offset(self.rate_bps, self.payload, self.sent)),
        };
        if self.stop.is_none_or(|s| next < s) {
            core.set_timer(me, next, 0);
        }
    }
}

impl Application for UdpSource {
    fn start(&mut self, core: &mut Core, me: AppId) {
        self.rng = Some(core.streams().stream(StreamKind::App, me as u64));
        self.flow = Some(core.add_udp_flow(self.src, self.dst));
        self.t0 = core.now();
        self.tick(core, me);
    }

    fn on_event(&mut self, _core: &mut Core, _me: AppId, _conn: ConnId, _side: Side, _ev: AppEvent) {}

    fn on_timer(&mut self, core: &mut Core, me: AppId, _token: u64) {
        self.tick(core, me);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbr_times_are_exact_multiples_of_the_wire_time_rounded_down() {
        // 1000 wire bytes at 600 kb/s: 13.333… ms apart; every third one on a whole ms.
        assert_eq!(UdpSource::cbr_offset(600_000, 972, 1), 13_333_333);
        assert_eq!(UdpSource::cbr_offset(600_000, 972, 2), 26_666_666);
        assert_eq!(UdpSource::cbr_offset(600_000, 972, 3), 40_000_000);
        assert_eq!(UdpSource::cbr_offset(600_000, 972, 7500), 100_000_000_000);
        assert_eq!(UdpSource::mean_gap(600_000, 972), SimDuration::from_nanos(13_333_333));
    }

    #[test]
    fn offsets_do_not_overflow_at_extreme_rates() {
        assert_eq!(UdpSource::cbr_offset(1, MAX_PAYLOAD, u64::MAX), u64::MAX);
        assert_eq!(UdpSource::cbr_offset(u64::MAX, 0, 1), 0);
    }
}
