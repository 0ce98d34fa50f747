//! Sender pacing and the paced initial window (both off by default).
//!
//! **Pacing** spaces a connection's departures at a rate derived from its window, as Linux's
//! internal TCP pacing does (`tcp_update_pacing_rate()`, net/ipv4/tcp_input.c, since commit
//! 43e122b014c9 "tcp: refine pacing rate determination", Linux 4.2):
//!
//! ```text
//! rate = ratio × mss × max(cwnd, packets_out) / srtt
//! ratio = tcp_pacing_ss_ratio (200 %) if cwnd < ssthresh / 2, else tcp_pacing_ca_ratio (120 %)
//! ```
//!
//! and each departure of `len` bytes moves the earliest next departure to
//! `max(next, now) + len / rate` (`tcp_update_skb_after_send()`, net/ipv4/tcp_output.c). ns-3's
//! `TcpSocketState` has the same rule and defaults (`PacingSsRatio` 200, `PacingCaRatio` 120,
//! `cWnd < ssThresh / 2`, `max(cWnd, bytesInFlight)`; /usr/include/ns3/tcp-socket-state.h). Without
//! an RTT sample the rate is unbounded (Linux divides only when `srtt_us` is set): no pacing.
//!
//! **Paced IW** spreads the first flight evenly over the handshake RTT instead of sending it
//! back to back: the `i`-th byte of an initial window of `IW` bytes leaves `i × RTT / IW` after
//! the first (ns-3's `PaceInitialWindow` switch; here at ratio 100 % of IW/RTT so the last
//! segment leaves one segment-gap before the first ACK can return). It needs the handshake's
//! RTT sample; after a retransmitted SYN/SYN-ACK (Karn: no sample) the IW leaves unpaced. After
//! the IW, departures follow `pacing` (paced) or the ACK clock (not paced).
//!
//! **Linux's pacer** (`pacer = "linux"`, the linux profile's and every deployed paced IW's):
//! `tcp_update_skb_after_send()` (net/ipv4/tcp_output.c) advances the departure stamp only once
//! `tp->data_segs_out >= 10` ("Original sch_fq does not pace first 10 MSS"), so a connection's
//! first 10 data segments (retransmissions count) leave at line rate whatever the rate; and it
//! forgives "OS jitter": the gap after a departure is shortened by how late it left
//! (`tcp_wstamp_ns` after `max(wstamp, now)` minus the stamp before), up to half a gap. A paced
//! IW 32 on Linux therefore sends 10 segments back to back and paces the other 22. (Linux also
//! moves the stamp to now when it sends a pure ACK; the sender here sees data only, so after an
//! idle spell with ACKs sent the credit here may be the larger, by at most half a gap.) The
//! `exact` pacer (default) paces from the first segment and forgives nothing.
//!
//! Times are integer nanoseconds; gaps round down. What is paced: new data, go-back-N
//! retransmissions after an RTO (the sender's `transmit` loop) and what RFC 6675 NextSeg sends
//! in SACK recovery. The first fast retransmit, and Reno/NewReno recovery's retransmissions,
//! leave at once (Linux paces those too — a difference for lossy paths only); they still move
//! the pacing clock.

use crate::engine::{SimDuration, SimTime};

/// Which rules move the pacing clock (scenario field `tcp.pacer`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum PacerRule {
    /// Every departure is paced; the next leaves `max(next, now) + gap`.
    #[default]
    Exact,
    /// Linux `tcp_update_skb_after_send()`: the first [`LINUX_UNPACED_SEGMENTS`] data segments
    /// are not paced, and a late departure earns up to half a gap of credit.
    Linux,
}

impl PacerRule {
    pub const NAMES: &'static [&'static str] = &["exact", "linux"];

    pub fn by_name(name: &str) -> Option<Self> {
        match name {
            "exact" => Some(PacerRule::Exact),
            "linux" => Some(PacerRule::Linux),
            _ => None,
        }
    }
}

/// `tcp_update_skb_after_send()`: pacing starts once `tp->data_segs_out >= 10`.
pub const LINUX_UNPACED_SEGMENTS: u64 = 10;

/// Pacing options of one endpoint (scenario fields `tcp.pacing`, `tcp.pacing_ss_ratio`,
/// `tcp.pacing_ca_ratio`, `tcp.paced_iw`, `tcp.pacer`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PacingConfig {
    /// Pace every departure at ratio × cwnd / SRTT.
    pub enabled: bool,
    /// Percent of cwnd/SRTT while cwnd < ssthresh / 2 (Linux `tcp_pacing_ss_ratio` = 200).
    pub ss_ratio: u32,
    /// Percent of cwnd/SRTT otherwise (Linux `tcp_pacing_ca_ratio` = 120).
    pub ca_ratio: u32,
    /// Spread the initial window over the handshake RTT.
    pub paced_iw: bool,
    /// Which rules move the pacing clock (Linux's or the exact one).
    pub rule: PacerRule,
    /// Linux's paced transmit path (sch_fq installed, or `SO_MAX_PACING_RATE` set): departures
    /// grouped into TSO bursts sized by `tcp_tso_autosize()` with this `tcp_min_tso_segs`, each
    /// burst paced at `sk_pacing_rate` in Linux's arithmetic ([`linux_pacing_rate`]). None: the
    /// per-segment pacing above.
    pub tso_min_segs: Option<u32>,
    /// `SO_MAX_PACING_RATE` (bytes/s): caps the rate (`sk_max_pacing_rate`).
    pub max_rate: Option<u64>,
}

impl Default for PacingConfig {
    fn default() -> Self {
        PacingConfig {
            enabled: false,
            ss_ratio: 200,
            ca_ratio: 120,
            paced_iw: false,
            rule: PacerRule::Exact,
            tso_min_segs: None,
            max_rate: None,
        }
    }
}

impl PacingConfig {
    pub fn is_off(&self) -> bool {
        !self.enabled && !self.paced_iw
    }
}

/// The window state pacing reads (bytes).
#[derive(Copy, Clone, Debug)]
pub struct PaceState {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub flight: u64,
    pub srtt: Option<SimDuration>,
    /// Sender MSS (bytes) and the minimum RTT seen: the Linux path's rate and TSO sizing.
    pub mss: u64,
    pub min_rtt: Option<SimDuration>,
}

/// Linux `sk_pacing_shift` (10): a TSO burst holds about 1 ms of data at the pacing rate.
pub const LINUX_PACING_SHIFT: u32 = 10;
/// Linux `sk_gso_max_size` of a device without a larger GSO limit (`GSO_LEGACY_MAX_SIZE`).
pub const LINUX_GSO_MAX_SIZE: u64 = 65_536;
/// Linux `tcp_tso_rtt_log` (9): low-RTT flows get larger bursts, `gso_max_size >> (min_rtt_us >> 9)`.
pub const LINUX_TSO_RTT_LOG: u32 = 9;
/// Linux `tcp_min_tso_segs` (2).
pub const LINUX_MIN_TSO_SEGS: u32 = 2;

/// `sk_pacing_rate` in bytes/s as `tcp_update_pacing_rate()` (net/ipv4/tcp_input.c) computes
/// it: `mss × (USEC_PER_SEC / 100 << 3) × ratio × max(cwnd, packets_out) / srtt_us`, where
/// Linux keeps `srtt_us` ×8 (so the 8 cancels), ratio = `tcp_pacing_ss_ratio` while
/// cwnd < ssthresh / 2, else `tcp_pacing_ca_ratio`; without an RTT sample it does not divide.
/// Capped by `sk_max_pacing_rate` (`SO_MAX_PACING_RATE`).
pub fn linux_pacing_rate(cfg: &PacingConfig, st: &PaceState) -> u64 {
    let mss = st.mss.max(1);
    let ratio = if st.cwnd < st.ssthresh / 2 { cfg.ss_ratio } else { cfg.ca_ratio };
    let packets = (st.cwnd / mss).max(st.flight.div_ceil(mss));
    let mut rate = mss as u128 * ((1_000_000 / 100) << 3) as u128 * ratio as u128 * packets as u128;
    let srtt_us8 = st.srtt.map_or(0, |s| s.as_nanos() / 1_000 * 8);
    if srtt_us8 > 0 {
        rate /= srtt_us8 as u128;
    }
    let rate = rate.min(u64::MAX as u128) as u64;
    cfg.max_rate.map_or(rate, |m| rate.min(m))
}

/// Segments per TSO burst, `tcp_tso_autosize()` (net/ipv4/tcp_output.c): the bytes the pacing
/// rate sends in 2^-`sk_pacing_shift` s (~1 ms), plus `gso_max_size >> (min_rtt_us >>
/// tcp_tso_rtt_log)` for flows of small RTT, at most `gso_max_size`, in MSS, at least
/// `min_segs` (`tcp_min_tso_segs`).
pub fn linux_tso_segs(rate: u64, mss: u64, min_rtt: Option<SimDuration>, min_segs: u32) -> u32 {
    let mut bytes = rate >> LINUX_PACING_SHIFT;
    let r = min_rtt.map_or(0, |m| m.as_nanos() / 1_000) >> LINUX_TSO_RTT_LOG;
    if r < 32 {
        bytes += LINUX_GSO_MAX_SIZE >> r;
    }
    let bytes = bytes.min(LINUX_GSO_MAX_SIZE);
    ((bytes / mss.max(1)) as u32).max(min_segs.max(1))
}

/// One TSO burst (an skb) of the Linux paced path, open while segments join it.
#[derive(Clone, Debug)]
struct Burst {
    /// When its segments leave (all at once), and the departure stamp before it.
    at: SimTime,
    prior: SimTime,
    segs: u32,
    max_segs: u32,
    bytes: u64,
    /// `sk_pacing_rate` when it left (bytes/s).
    rate: u64,
}

/// One sender's pacing clock.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    cfg: PacingConfig,
    /// Pacing, the paced IW or the fq path is configured. Off, the clock never holds a
    /// segment back, so the sender skips it (`is_off`): no per-segment work when nothing paces.
    on: bool,
    /// Earliest departure of the next paced segment.
    next_at: Option<SimTime>,
    /// A segment was held back by pacing (the endpoint must wake at `next_at`).
    blocked: bool,
    /// Paced IW: end of its sequence range, its size and the handshake RTT.
    iw: Option<(u64, u64, SimDuration)>,
    /// One past the highest sequence sent so far (a retransmission of an IW segment is not
    /// part of the first flight).
    sent_to: u64,
    /// Data segments sent, retransmissions included (Linux `tp->data_segs_out`).
    segs_out: u64,
    /// The Linux paced path's open TSO burst.
    burst: Option<Burst>,
}

impl Pacer {
    pub fn new(cfg: PacingConfig) -> Self {
        let on = cfg.enabled || cfg.paced_iw || cfg.tso_min_segs.is_some();
        Pacer { cfg, on, ..Pacer::default() }
    }

    /// Nothing is paced: `ready` is always true and `on_send` need not be told (the sender
    /// tests this once per segment instead of running the clock).
    pub fn is_off(&self) -> bool {
        !self.on
    }

    /// The connection starts sending its initial window `[seq, seq + iw_bytes)`; `rtt` is the
    /// handshake's RTT sample, if there is one.
    pub fn start_iw(&mut self, seq: u64, iw_bytes: u64, rtt: Option<SimDuration>) {
        self.sent_to = seq;
        self.iw = match (self.cfg.paced_iw, rtt) {
            (true, Some(r)) if iw_bytes > 0 && r > SimDuration::ZERO => Some((seq + iw_bytes, iw_bytes, r)),
            _ => None,
        };
    }

    /// A new transmission round begins: nothing is held back yet.
    pub fn begin(&mut self) {
        self.blocked = false;
        if self.burst.is_some() {
            self.close_burst();
        }
    }

    /// May a segment leave at `now`? If not, the sender is marked blocked until `deadline()`.
    pub fn ready(&mut self, now: SimTime) -> bool {
        if !self.on {
            return true;
        }
        match &self.burst {
            Some(b) if b.at == now && b.segs < b.max_segs => return true,
            Some(_) => self.close_burst(),
            None => {}
        }
        match self.next_at {
            Some(t) if t > now => {
                self.blocked = true;
                false
            }
            _ => true,
        }
    }

    /// When the endpoint must wake to send what pacing held back (None: nothing held).
    pub fn deadline(&self) -> Option<SimTime> {
        if self.blocked {
            self.next_at
        } else {
            None
        }
    }

    /// A segment `[seq, seq + len)` left at `now`: the next may leave one gap later.
    pub fn on_send(&mut self, now: SimTime, seq: u64, len: u32, st: &PaceState) {
        self.segs_out += 1;
        if let Some(min_segs) = self.cfg.tso_min_segs {
            self.sent_to = self.sent_to.max(seq + len as u64);
            return self.burst_send(now, len, st, min_segs);
        }
        let gap = self.gap(seq, len, st);
        self.sent_to = self.sent_to.max(seq + len as u64);
        match self.cfg.rule {
            PacerRule::Exact => {
                // wstamp = max(wstamp, now) + len / rate.
                self.next_at = gap.map(|g| self.next_at.map_or(now, |t| t.max(now)) + g);
            }
            PacerRule::Linux => {
                // __tcp_transmit_skb(): prior = wstamp; wstamp = max(wstamp, now). Then
                // tcp_update_skb_after_send(): only once data_segs_out >= 10, wstamp += len / rate
                // less the credit wstamp - prior (how late this one left), at most half of it.
                let prior = self.next_at.unwrap_or(now);
                let stamp = prior.max(now);
                let gap = gap.filter(|_| self.segs_out >= LINUX_UNPACED_SEGMENTS);
                self.next_at = Some(match gap {
                    Some(g) => {
                        let credit = stamp.saturating_since(prior).min(SimDuration::from_nanos(g.as_nanos() / 2));
                        stamp + (g - credit)
                    }
                    None => stamp,
                });
            }
        }
    }

    /// The Linux paced path: the segment joins the open TSO burst leaving at `now`, or opens
    /// one sized by `tcp_tso_autosize()` from the current rate (`tcp_write_xmit()` cuts skbs at
    /// `tcp_tso_segs()`); a full burst moves the clock.
    fn burst_send(&mut self, now: SimTime, len: u32, st: &PaceState, min_segs: u32) {
        if let Some(b) = self.burst.as_mut().filter(|b| b.at == now && b.segs < b.max_segs) {
            b.segs += 1;
            b.bytes += len as u64;
        } else {
            self.close_burst();
            let rate = linux_pacing_rate(&self.cfg, st);
            let prior = self.next_at.unwrap_or(now);
            self.next_at = Some(prior.max(now));
            let max_segs = linux_tso_segs(rate, st.mss, st.min_rtt, min_segs);
            self.burst = Some(Burst { at: now, prior, segs: 1, max_segs, bytes: len as u64, rate });
        }
        if self.burst.as_ref().is_some_and(|b| b.segs >= b.max_segs) {
            self.close_burst();
        }
    }

    /// The open burst has left: `tcp_update_skb_after_send()` moves the departure stamp by
    /// skb->len / rate, once `data_segs_out >= 10` and the rate is set, less the credit of a
    /// late departure (at most half of it).
    fn close_burst(&mut self) {
        let Some(b) = self.burst.take() else { return };
        let stamp = b.prior.max(b.at);
        let paced = b.rate > 0 && b.rate != u64::MAX && self.segs_out >= LINUX_UNPACED_SEGMENTS;
        self.next_at = Some(if paced {
            let len_ns = mul_div(b.bytes, 1_000_000_000, b.rate);
            let credit = stamp.saturating_since(b.prior).as_nanos().min(len_ns / 2);
            stamp + SimDuration::from_nanos(len_ns - credit)
        } else {
            stamp
        });
    }

    /// The gap after sending `len` bytes at `seq`, or None when this departure is not paced.
    pub fn gap(&self, seq: u64, len: u32, st: &PaceState) -> Option<SimDuration> {
        if let Some((end, iw_bytes, rtt)) = self.iw {
            if seq < end && seq >= self.sent_to {
                // Paced IW: the first flight's IW bytes spread over one handshake RTT.
                return Some(SimDuration::from_nanos(mul_div(len as u64, rtt.as_nanos(), iw_bytes)));
            }
        }
        if !self.cfg.enabled {
            return None;
        }
        let srtt = st.srtt.filter(|s| *s > SimDuration::ZERO)?;
        // Linux: ss ratio while cwnd < ssthresh / 2 ("approaching the end of slow start" uses ca).
        let ratio = if st.cwnd < st.ssthresh / 2 { self.cfg.ss_ratio } else { self.cfg.ca_ratio };
        let window = st.cwnd.max(st.flight);
        if window == 0 || ratio == 0 {
            return None;
        }
        // gap = len / rate = len × srtt × 100 / (ratio × window)
        Some(SimDuration::from_nanos(mul_div(len as u64 * 100, srtt.as_nanos(), ratio as u64 * window)))
    }
}

/// ⌊a × b / c⌋ without overflow (c > 0).
fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    ((a as u128 * b as u128) / c as u128).min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn at(x: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(x)
    }
    fn st(cwnd: u64, ssthresh: u64, flight: u64, srtt: Option<u64>) -> PaceState {
        PaceState {
            cwnd: cwnd * MSS,
            ssthresh,
            flight: flight * MSS,
            srtt: srtt.map(ms),
            mss: MSS,
            min_rtt: srtt.map(ms),
        }
    }

    #[test]
    fn off_by_default_never_holds_a_segment() {
        let mut p = Pacer::new(PacingConfig::default());
        p.start_iw(1, 10 * MSS, Some(ms(100)));
        for k in 0..20 {
            assert!(p.ready(at(0)));
            p.on_send(at(0), 1 + k * MSS, MSS as u32, &st(10, u64::MAX, k, Some(100)));
        }
        assert_eq!(p.deadline(), None);
    }

    #[test]
    fn slow_start_rate_is_200_percent_of_cwnd_over_srtt() {
        // Linux tcp_update_pacing_rate(): cwnd 10 < ssthresh/2, srtt 100 ms: rate = 2 × 10 MSS
        // / 100 ms, so one MSS every 5 ms exactly.
        let p = Pacer::new(PacingConfig { enabled: true, ..PacingConfig::default() });
        assert_eq!(p.gap(1, MSS as u32, &st(10, u64::MAX, 0, Some(100))), Some(ms(5)));
        // cwnd ≥ ssthresh/2 (here 10 ≥ 20/2): the CA ratio, 120 %: 100 ms / 12 = 8.333… ms.
        assert_eq!(p.gap(1, MSS as u32, &st(10, 20 * MSS, 0, Some(100))), Some(SimDuration::from_nanos(8_333_333)));
        // max(cwnd, packets out): 20 in flight with cwnd 10 (after a reduction) paces by 20.
        assert_eq!(p.gap(1, MSS as u32, &st(10, 20 * MSS, 20, Some(100))), Some(SimDuration::from_nanos(4_166_666)));
        // No RTT sample: no pacing (Linux divides by srtt_us only when it is set).
        assert_eq!(p.gap(1, MSS as u32, &st(10, u64::MAX, 0, None)), None);
    }

    #[test]
    fn departures_follow_max_of_next_and_now_plus_gap() {
        let mut p = Pacer::new(PacingConfig { enabled: true, ..PacingConfig::default() });
        let s = st(10, u64::MAX, 0, Some(100));
        p.begin();
        assert!(p.ready(at(0)));
        p.on_send(at(0), 1, MSS as u32, &s);
        assert!(!p.ready(at(4_999)));
        assert_eq!(p.deadline(), Some(at(5_000)));
        p.begin();
        assert!(p.ready(at(5_000)));
        p.on_send(at(5_000), 1 + MSS, MSS as u32, &s);
        // Idle for a while: the next departure is now + gap, no burst credit is kept.
        p.begin();
        assert!(p.ready(at(50_000)));
        p.on_send(at(50_000), 1 + 2 * MSS, MSS as u32, &s);
        assert!(!p.ready(at(54_000)));
        assert_eq!(p.deadline(), Some(at(55_000)));
    }

    #[test]
    fn paced_iw_spreads_the_first_flight_over_the_handshake_rtt() {
        // IW 10 over an RTT of 100 ms: one MSS every 10 ms; the 11th byte range is not in the IW
        // and, with pacing off, leaves unpaced.
        let mut p = Pacer::new(PacingConfig { paced_iw: true, ..PacingConfig::default() });
        p.start_iw(1, 10 * MSS, Some(ms(100)));
        let s = st(10, u64::MAX, 0, Some(100));
        let mut t = at(0);
        let mut departures = vec![];
        for k in 0..10 {
            p.begin();
            while !p.ready(t) {
                t = p.deadline().unwrap();
                p.begin();
            }
            departures.push(t.as_nanos() / 1_000_000);
            p.on_send(t, 1 + k * MSS, MSS as u32, &s);
        }
        assert_eq!(departures, (0..10).map(|k| k * 10).collect::<Vec<_>>());
        assert_eq!(p.gap(1 + 10 * MSS, MSS as u32, &s), None);
        // A retransmission of an IW segment is not part of the first flight: not paced here.
        assert_eq!(p.gap(1 + 3 * MSS, MSS as u32, &s), None);
        // No handshake sample (Karn after a retransmitted SYN-ACK): the IW is not paced.
        let mut q = Pacer::new(PacingConfig { paced_iw: true, ..PacingConfig::default() });
        q.start_iw(1, 10 * MSS, None);
        assert_eq!(q.gap(1, MSS as u32, &s), None);
    }

    /// Departure times (µs) of `n` segments sent as soon as the pacer allows, from t = 0.
    fn first_flight(p: &mut Pacer, n: u64, s: &PaceState) -> Vec<u64> {
        let mut t = at(0);
        let mut departures = vec![];
        for k in 0..n {
            p.begin();
            while !p.ready(t) {
                t = p.deadline().unwrap();
                p.begin();
            }
            departures.push(t.as_nanos() / 1_000);
            p.on_send(t, 1 + k * MSS, MSS as u32, s);
        }
        departures
    }

    fn linux(cfg: PacingConfig) -> Pacer {
        Pacer::new(PacingConfig { rule: PacerRule::Linux, ..cfg })
    }

    #[test]
    fn linux_does_not_pace_a_connections_first_10_data_segments() {
        // tcp_update_skb_after_send(): wstamp advances only once data_segs_out >= 10, i.e. from
        // the 10th departure on. A paced IW 20 over 100 ms (gap 5 ms): 10 segments at t = 0,
        // then one every 5 ms — the 11th leaves one gap after the 10th.
        let mut p = linux(PacingConfig { enabled: true, paced_iw: true, ..PacingConfig::default() });
        p.start_iw(1, 20 * MSS, Some(ms(100)));
        let departures = first_flight(&mut p, 20, &st(20, u64::MAX, 0, Some(100)));
        let expected: Vec<u64> = (0..20).map(|k: u64| k.saturating_sub(9) * 5_000).collect();
        assert_eq!(departures, expected);
        assert_eq!(&departures[..11], &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5_000]);
        // A paced IW of 10 or less is not paced at all on Linux.
        let mut q = linux(PacingConfig { enabled: true, paced_iw: true, ..PacingConfig::default() });
        q.start_iw(1, 10 * MSS, Some(ms(100)));
        assert_eq!(first_flight(&mut q, 10, &st(10, u64::MAX, 0, Some(100))), vec![0; 10]);
        // The exact pacer paces from the first segment: 10 ms apart for IW 10.
        let mut e = Pacer::new(PacingConfig { enabled: true, paced_iw: true, ..PacingConfig::default() });
        e.start_iw(1, 10 * MSS, Some(ms(100)));
        assert_eq!(
            first_flight(&mut e, 10, &st(10, u64::MAX, 0, Some(100))),
            (0..10).map(|k| k * 10_000).collect::<Vec<_>>()
        );
    }

    #[test]
    fn linux_counts_retransmissions_among_the_first_10() {
        // data_segs_out counts every data segment sent, retransmissions too: after 9 new
        // segments and one retransmission, the next new segment is paced.
        let mut p = linux(PacingConfig { enabled: true, ..PacingConfig::default() });
        let s = st(10, u64::MAX, 0, Some(100));
        for k in 0..9 {
            p.on_send(at(0), 1 + k * MSS, MSS as u32, &s);
        }
        assert_eq!(p.next_at, Some(at(0)));
        p.on_send(at(0), 1, MSS as u32, &s); // a retransmission of the first
        assert_eq!(p.next_at, Some(at(5_000)));
    }

    #[test]
    fn linux_forgives_a_late_departure_up_to_half_a_gap() {
        // tcp_update_skb_after_send(): len_ns -= min(len_ns / 2, wstamp - prior_wstamp).
        let mut p = linux(PacingConfig { enabled: true, ..PacingConfig::default() });
        let s = st(10, u64::MAX, 0, Some(100)); // gap 5 ms
        for k in 0..10 {
            p.on_send(at(0), 1 + k * MSS, MSS as u32, &s);
        }
        assert_eq!(p.next_at, Some(at(5_000)));
        // 1 ms late: the next gap is 4 ms.
        p.on_send(at(6_000), 1 + 10 * MSS, MSS as u32, &s);
        assert_eq!(p.next_at, Some(at(10_000)));
        // On time: a whole gap.
        p.on_send(at(10_000), 1 + 11 * MSS, MSS as u32, &s);
        assert_eq!(p.next_at, Some(at(15_000)));
        // After idling 35 ms the credit is capped at half a gap: 2.5 ms.
        p.on_send(at(50_000), 1 + 12 * MSS, MSS as u32, &s);
        assert_eq!(p.next_at, Some(at(52_500)));
    }

    fn fq(min_tso_segs: u32, max_rate: Option<u64>) -> PacingConfig {
        PacingConfig {
            enabled: true,
            rule: PacerRule::Linux,
            tso_min_segs: Some(min_tso_segs),
            max_rate,
            ..PacingConfig::default()
        }
    }

    #[test]
    fn linux_rate_is_200_percent_in_slow_start_120_after_and_capped_by_so_max_pacing_rate() {
        // tcp_update_pacing_rate(): mss 1460 × cwnd 10 / srtt 100 ms = 146 000 B/s, × 200 %.
        let s = PaceState { mss: 1460, ..st(10, u64::MAX, 0, Some(100)) };
        let s = PaceState { cwnd: 10 * 1460, ..s };
        assert_eq!(linux_pacing_rate(&fq(2, None), &s), 292_000);
        // cwnd ≥ ssthresh / 2: tcp_pacing_ca_ratio, 120 %.
        assert_eq!(linux_pacing_rate(&fq(2, None), &PaceState { ssthresh: 20 * 1460, ..s }), 175_200);
        // The ratios are the sysctls'.
        let cfg = PacingConfig { ss_ratio: 100, ..fq(2, None) };
        assert_eq!(linux_pacing_rate(&cfg, &s), 146_000);
        // sk_max_pacing_rate caps it.
        assert_eq!(linux_pacing_rate(&fq(2, Some(100_000)), &s), 100_000);
        // max(cwnd, packets_out): 20 packets out with cwnd 10 doubles it.
        assert_eq!(linux_pacing_rate(&fq(2, None), &PaceState { flight: 20 * 1460, ..s }), 584_000);
        // No RTT sample: Linux does not divide (a rate no link reaches), still capped.
        let none = PaceState { srtt: None, ..s };
        assert_eq!(linux_pacing_rate(&fq(2, None), &none), 1460 * 80_000 * 200 * 10);
        assert_eq!(linux_pacing_rate(&fq(2, Some(50_000)), &none), 50_000);
    }

    #[test]
    fn tso_bursts_hold_a_millisecond_of_the_rate_and_at_least_tcp_min_tso_segs() {
        let rtt = Some(ms(100));
        // 292 000 B/s >> 10 = 285 bytes: less than one MSS, so tcp_min_tso_segs.
        assert_eq!(linux_tso_segs(292_000, 1460, rtt, 2), 2);
        assert_eq!(linux_tso_segs(292_000, 1460, rtt, 4), 4);
        // 100 MB/s: 97 656 bytes, capped at gso_max_size 65 536: 44 segments.
        assert_eq!(linux_tso_segs(100_000_000, 1460, rtt, 2), 44);
        // min_rtt 1 ms: 1000 >> tcp_tso_rtt_log (9) = 1, so gso_max_size >> 1 more bytes.
        assert_eq!(linux_tso_segs(292_000, 1460, Some(ms(1)), 2), (285 + 32_768) / 1460);
    }

    /// Departure times (µs) of `n` segments when the sender sends all it may at each instant,
    /// one transmit round (`begin()`) per instant: segments of one round share TSO bursts.
    fn rounds(p: &mut Pacer, n: u64, s: &PaceState) -> Vec<u64> {
        let mut t = at(0);
        let mut departures = vec![];
        p.begin();
        for k in 0..n {
            while !p.ready(t) {
                t = p.deadline().unwrap();
                p.begin();
            }
            departures.push(t.as_nanos() / 1_000);
            p.on_send(t, 1 + k * MSS, MSS as u32, s);
        }
        departures
    }

    #[test]
    fn fq_paces_whole_tso_bursts_after_the_first_10_segments() {
        // cwnd 10, srtt 100 ms, MSS 1000: 200 000 B/s, bursts of 2 (tcp_min_tso_segs = 2). The
        // first 10 segments (five bursts) leave at once; the fifth brings data_segs_out to 10,
        // so the next burst leaves 2000 B / 200 000 B/s = 10 ms later, both its segments at once.
        let mut p = Pacer::new(fq(2, None));
        let departures = rounds(&mut p, 14, &st(10, u64::MAX, 0, Some(100)));
        assert_eq!(departures, [vec![0; 10], vec![10_000, 10_000, 20_000, 20_000]].concat());
        // Bursts of 4: the third burst (segments 9–12) ends the unpaced 10, so 13–14 wait 20 ms.
        let mut q = Pacer::new(fq(4, None));
        let departures = rounds(&mut q, 14, &st(10, u64::MAX, 0, Some(100)));
        assert_eq!(departures, [vec![0; 12], vec![20_000, 20_000]].concat());
        // A pacing cap of 100 000 B/s doubles the gap.
        let mut c = Pacer::new(fq(2, Some(100_000)));
        let departures = rounds(&mut c, 14, &st(10, u64::MAX, 0, Some(100)));
        assert_eq!(departures, [vec![0; 10], vec![20_000, 20_000, 40_000, 40_000]].concat());
    }
}
