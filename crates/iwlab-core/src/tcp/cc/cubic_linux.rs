//! CUBIC in Linux's integer arithmetic (net/ipv4/tcp_cubic.c, `cubic = { arithmetic = "linux" }`).
//!
//! The same curve as RFC 9438 (`cubic.rs`), computed as Linux does it, which moves cwnd by
//! whole segments at different ACKs:
//! - windows in whole segments, time in jiffies (1 ms, HZ = 1000) and 1/1024 s;
//! - `bictcp_update()`: at most once per jiffy (and not again within HZ/32 while cwnd is
//!   unchanged) the target `origin ± C·(t − K)³` with t = time since the epoch + delay_min,
//!   the cubic term truncated to whole segments, then `cnt` = cwnd / (target − cwnd) segments
//!   ACKed per increment (100·cwnd when at or above the target; at most 20 before any loss);
//! - the Reno-friendly window `tcp_cwnd` gains one segment per cwnd·15/8 segments ACKed
//!   (beta_scale, α ≈ 0.53) and caps `cnt` when it is ahead; `cnt` ≥ 2;
//! - `tcp_cong_avoid_ai()`: a counter of ACKed segments (`snd_cwnd_cnt`, cleared when a
//!   reduction starts) adds one segment per `cnt`;
//! - `bictcp_recalc_ssthresh()`: epoch ends, W_max with fast convergence, ssthresh =
//!   max(cwnd·717/1024, 2); an RTO (`cubictcp_state(TCP_CA_Loss)`) forgets W_max and the epoch;
//! - slow start: `tcp_slow_start()` up to ssthresh, the rest of the ACK goes to avoidance.
//!
//! The epoch starts on the first avoidance ACK after a reduction — with Linux's PRR bound that
//! is the ACK ending recovery (`sender.rs`) — and moves later by the time since the last send
//! whenever data leaves with nothing in flight (`CA_EVENT_TX_START`); Linux ignores the
//! restart after idle itself (`CA_EVENT_CWND_RESTART`). delay_min is the connection's minimum
//! RTT (Linux keeps its own, reset at an RTO and not fed for 1 s after an epoch starts). The
//! cube root is exact where Linux's `cubic_root()` uses a table and one Newton step (error
//! < 0.2 %).

use super::cubic::CubicConfig;
use super::ops::{AckInfo, CongestionOps, Window};
use crate::engine::SimTime;

/// BICTCP_BETA_SCALE, BICTCP_HZ.
const BETA_SCALE: u64 = 1024;
const BIC_HZ: u32 = 10;
/// Jiffies per second (CONFIG_HZ = 1000).
const HZ: u64 = 1000;

#[derive(Clone, Debug, Default)]
struct Bic {
    cnt: u64,
    last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: u64,
    origin: u64,
    k: u64,
    /// Jiffies + 1 (0 = no epoch), so that an epoch may start at time 0.
    epoch_start: u64,
    ack_cnt: u64,
    tcp_cwnd: u64,
}

#[derive(Clone, Debug)]
pub struct CubicLinux {
    /// beta (·1024), bic_scale (C·1024/10), fast convergence, tcp_friendliness.
    beta: u64,
    cube_rtt_scale: u64,
    cube_factor: u64,
    beta_scale: u64,
    fast_convergence: bool,
    friendliness: bool,
    bic: Bic,
    /// tp->snd_cwnd_cnt.
    cwnd_cnt: u64,
}

fn jiffies(t: SimTime) -> u64 {
    t.as_nanos() / (1_000_000_000 / HZ)
}

/// floor(cbrt(a)).
fn cube_root(a: u64) -> u64 {
    let mut x = (a as f64).cbrt() as u64;
    while x > 0 && (x as u128).pow(3) > a as u128 {
        x -= 1;
    }
    while ((x + 1) as u128).pow(3) <= a as u128 {
        x += 1;
    }
    x
}

/// How many times `ack_cnt` exceeds `delta` when `delta` is taken away while it does
/// (`while (ca->ack_cnt > delta)` in tcp_friendliness).
fn reno_segments(ack_cnt: u64, delta: u64) -> u64 {
    ack_cnt.checked_sub(1).and_then(|a| a.checked_div(delta)).unwrap_or(0)
}

impl CubicLinux {
    pub fn new(cfg: &CubicConfig) -> Self {
        let beta = (cfg.beta * BETA_SCALE as f64).round() as u64;
        let bic_scale = (cfg.c * BETA_SCALE as f64 / 10.0).round().max(1.0) as u64;
        let cube_rtt_scale = bic_scale * 10;
        CubicLinux {
            beta,
            cube_rtt_scale,
            // 2^40 / (bic_scale·10): K = cbrt(cube_factor·(W_max − cwnd)) in 1/1024 s.
            cube_factor: (1u64 << (10 + 3 * BIC_HZ)) / cube_rtt_scale,
            beta_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta).max(1),
            fast_convergence: cfg.fast_convergence,
            friendliness: cfg.reno_friendly,
            bic: Bic::default(),
            cwnd_cnt: 0,
        }
    }

    /// `bictcp_update()`: sets `cnt`, segments ACKed per cwnd increment.
    fn update(&mut self, cwnd: u64, acked: u64, now: u64, delay_min_us: u64) {
        let b = &mut self.bic;
        b.ack_cnt += acked;
        if b.last_cwnd == cwnd && now.saturating_sub(b.last_time) <= HZ / 32 {
            return;
        }
        // The cubic function is evaluated at most once per jiffy.
        if !(b.epoch_start != 0 && now == b.last_time) {
            b.last_cwnd = cwnd;
            b.last_time = now;
            if b.epoch_start == 0 {
                b.epoch_start = now + 1;
                b.ack_cnt = acked;
                b.tcp_cwnd = cwnd;
                if b.last_max_cwnd <= cwnd {
                    b.k = 0;
                    b.origin = cwnd;
                } else {
                    b.k = cube_root(self.cube_factor * (b.last_max_cwnd - cwnd));
                    b.origin = b.last_max_cwnd;
                }
            }
            // t = now − epoch + delay_min (usecs_to_jiffies rounds up), in 1/1024 s.
            let t_j = now - (b.epoch_start - 1) + delay_min_us.div_ceil(1_000_000 / HZ);
            let t = (t_j << BIC_HZ) / HZ;
            let offs = t.abs_diff(b.k) as u128;
            let delta = ((self.cube_rtt_scale as u128 * offs * offs * offs) >> (10 + 3 * BIC_HZ)) as u64;
            let target = if t < b.k { b.origin.saturating_sub(delta) } else { b.origin + delta };
            b.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
            // Before any loss the curve's start is too timid: at least 5 % per round trip.
            if b.last_max_cwnd == 0 && b.cnt > 20 {
                b.cnt = 20;
            }
        }
        if self.friendliness {
            let delta = (cwnd * self.beta_scale) >> 3;
            // One Reno segment per `delta` ACKed, counted while ack_cnt > delta (strictly).
            let n = reno_segments(b.ack_cnt, delta);
            b.tcp_cwnd += n;
            b.ack_cnt -= n * delta;
            if b.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (b.tcp_cwnd - cwnd);
                b.cnt = b.cnt.min(max_cnt);
            }
        }
        // At most one segment per two ACKed (1.5× per round trip).
        b.cnt = b.cnt.max(2);
    }

    /// `tcp_cong_avoid_ai()`: the new cwnd in segments.
    fn avoid_ai(&mut self, cwnd: u64, w: u64, acked: u64) -> u64 {
        let mut cwnd = cwnd;
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            cwnd += delta;
        }
        cwnd
    }

    /// `bictcp_recalc_ssthresh()`, and the reduction's start clears `snd_cwnd_cnt`.
    fn recalc_ssthresh(&mut self, w: &Window) -> u64 {
        let cwnd = w.cwnd / w.mss;
        let b = &mut self.bic;
        b.epoch_start = 0;
        b.last_max_cwnd = if self.fast_convergence && cwnd < b.last_max_cwnd {
            cwnd * (BETA_SCALE + self.beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.cwnd_cnt = 0;
        (cwnd * self.beta / BETA_SCALE).max(2) * w.mss
    }
}

impl CongestionOps for CubicLinux {
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        let mss = w.mss;
        let mut cwnd = w.cwnd / mss;
        // Linux counts packets: a partial segment is one.
        let mut acked = ack.acked.div_ceil(mss);
        if w.in_slow_start() {
            // tcp_slow_start(): up to ssthresh; what is left of the ACK goes to avoidance.
            let ssthresh = w.ssthresh / mss;
            let grown = (cwnd + acked).min(ssthresh.max(cwnd));
            acked -= grown - cwnd;
            cwnd = grown;
            if acked == 0 {
                w.cwnd = w.cwnd.max(cwnd * mss);
                return;
            }
        }
        let delay_min = ack.min_rtt.map_or(0, |d| d.as_nanos() / 1000);
        self.update(cwnd, acked, jiffies(ack.now), delay_min);
        let cnt = self.bic.cnt;
        cwnd = self.avoid_ai(cwnd, cnt, acked);
        w.cwnd = w.cwnd.max(cwnd * mss);
    }

    fn ssthresh_on_loss(&mut self, w: &Window, _flight: u64, _now: SimTime) -> u64 {
        self.recalc_ssthresh(w)
    }

    /// tcp_enter_loss(): ssthresh as for a loss, then `cubictcp_state(TCP_CA_Loss)` resets
    /// the whole state (W_max forgotten).
    fn ssthresh_on_rto(&mut self, w: &Window, _flight: u64, _now: SimTime) -> u64 {
        let s = self.recalc_ssthresh(w);
        self.bic = Bic::default();
        s
    }

    /// `cubictcp_cwnd_event(CA_EVENT_TX_START)`: sending again with nothing in flight, the
    /// time since data last left is cut out of the epoch (never past now). A flight ACKed
    /// whole, one stretch ACK per round trip, so keeps t where it was.
    fn on_tx_start(&mut self, now: SimTime, last_send: SimTime) {
        let b = &mut self.bic;
        let now = jiffies(now);
        let delta = now.saturating_sub(jiffies(last_send));
        if b.epoch_start != 0 && delta > 0 {
            b.epoch_start = (b.epoch_start + delta).min(now + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;

    const MSS: u64 = 1000;

    fn at_ms(x: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(x)
    }
    fn ack(now_ms: u64, segs: u64, rtt_ms: u64) -> AckInfo {
        let rtt = Some(SimDuration::from_millis(rtt_ms));
        AckInfo { now: at_ms(now_ms), acked: segs * MSS, flight_before: 0, srtt: rtt, min_rtt: rtt }
    }

    #[test]
    fn the_constants_are_linuxs() {
        let c = CubicLinux::new(&CubicConfig::default());
        assert_eq!((c.beta, c.cube_rtt_scale, c.beta_scale), (717, 410, 15));
        assert_eq!(c.cube_factor, (1u64 << 40) / 410);
        assert_eq!(cube_root(27), 3);
        assert_eq!(cube_root(26), 2);
    }

    #[test]
    fn the_reno_friendly_count_takes_delta_away_only_while_strictly_above_it() {
        assert_eq!(reno_segments(30, 30), 0);
        assert_eq!(reno_segments(31, 30), 1);
        assert_eq!(reno_segments(60, 30), 1);
        assert_eq!(reno_segments(61, 30), 2);
        assert_eq!(reno_segments(0, 30), 0);
        assert_eq!(reno_segments(5, 0), 0);
    }

    /// The loss of tests/conformance/cubic-growth-after-loss.pkt: cwnd 20 → ssthresh 14; the
    /// ACK ending recovery (19 segments delivered, RTT 100 ms) starts the epoch with K = 2.47 s
    /// (2524/1024 s): the cubic term 0.4·(2.47 − 0.1)³ = 5.3 truncates to 5, target 15, cnt =
    /// 14, and 19 ACKed segments add one: 15; then one stretch ACK per round trip.
    #[test]
    fn growth_after_a_loss_is_linuxs_in_whole_segments() {
        let mut c = CubicLinux::new(&CubicConfig::default());
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS, abc_l: None, bytes_acked: 0 };
        w.ssthresh = c.ssthresh_on_loss(&w, 20 * MSS, at_ms(0));
        assert_eq!(w.ssthresh, 14 * MSS);
        w.cwnd = w.ssthresh;
        c.on_ack(&mut w, &ack(300, 19, 100));
        c.on_tx_start(at_ms(300), at_ms(200)); // epoch already at now: unchanged
        assert_eq!(c.bic.k, 2524);
        assert_eq!((c.bic.origin, c.bic.cnt), (20, 14));
        assert_eq!(w.cwnd / MSS, 15);
        // Observed on Linux 6.18: 16, 16, 16, 16, 18, 18 after the next stretch ACKs.
        // Each stretch ACK covers the whole flight, so the next send starts from nothing in
        // flight (TX_START) and the epoch moves by the 100 ms since the last send: t stays
        // 200 ms, target 16. The Reno-friendly window (one segment per 15/8·cwnd ACKed)
        // reaches 17 on the fifth ACK: cnt 16, and the credit of four rounds adds two.
        let mut seen = vec![];
        for (i, segs) in [15, 16, 16, 16, 16, 18].into_iter().enumerate() {
            let now = 400 + 100 * i as u64;
            c.on_ack(&mut w, &ack(now, segs, 100));
            c.on_tx_start(at_ms(now), at_ms(now - 100));
            seen.push(w.cwnd / MSS);
        }
        assert_eq!(seen, [16, 16, 16, 16, 18, 18]);
    }

    #[test]
    fn an_rto_forgets_w_max_and_the_first_epoch_is_capped_at_cnt_20() {
        let mut c = CubicLinux::new(&CubicConfig::default());
        let mut w = Window { cwnd: 40 * MSS, ssthresh: u64::MAX, mss: MSS, abc_l: None, bytes_acked: 0 };
        w.ssthresh = c.ssthresh_on_rto(&w, 40 * MSS, at_ms(0));
        assert_eq!(w.ssthresh, 28 * MSS);
        assert_eq!(c.bic.last_max_cwnd, 0);
        w.cwnd = w.ssthresh;
        c.on_ack(&mut w, &ack(1000, 1, 100));
        // No W_max: origin = cwnd, K = 0, target 28 + 0.4·0.1³ → 28: cnt 100·28, capped at 20.
        assert_eq!(c.bic.cnt, 20);
    }
}
