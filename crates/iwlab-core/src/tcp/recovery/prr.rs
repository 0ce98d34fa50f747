//! Proportional Rate Reduction (RFC 6937): how much to send on each ACK during fast recovery.
//!
//! RFC 6675 sets cwnd = ssthresh at once and sends nothing until pipe has drained below it (a
//! "half-silent" RTT), then may burst when many segments were lost. PRR spreads the reduction
//! over the recovery RTT instead: while pipe > ssthresh it sends ssthresh/RecoverFS of what is
//! delivered; once pipe ≤ ssthresh a *reduction bound* lets pipe grow back to ssthresh:
//!
//! - [`ReductionBound::Conservative`] (PRR-CRB): never send more than was delivered.
//! - [`ReductionBound::SlowStart`] (PRR-SSRB, the RFC's recommendation): one SMSS more per ACK.
//! - [`ReductionBound::Linux`]: PRR-SSRB with the extra SMSS only on an ACK that advances
//!   snd.una and reports no new loss — Linux's `tcp_cwnd_reduction()` (net/ipv4/tcp_input.c,
//!   in 6.x) and the "safe ACK" rule of RFC 9937, which obsoletes RFC 6937. With it, the ACK
//!   that ends recovery also grows cwnd from ssthresh, as Linux's does.
//!
//! The caller (SACK-based recovery) computes DeliveredData and pipe per ACK, calls
//! [`Prr::on_ack`] and sets cwnd = pipe + sndcnt, so RFC 6675's "send while cwnd − pipe ≥
//! 1 SMSS" sends exactly sndcnt (rounded down to whole segments; the remainder is kept in
//! prr_delivered − prr_out and comes back on a later ACK). [`Prr::on_sent`] counts what left.
//! Everything is in bytes, as in the RFC. [`PrrState`] is the sender's: the bound configured
//! and the episode, over the control block (`tcb.rs`).

use crate::tcp::tcb::Tcb;

/// Which reduction bound applies once pipe ≤ ssthresh (RFC 6937 §3).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReductionBound {
    /// PRR-CRB: limit = prr_delivered − prr_out (strong packet conservation).
    Conservative,
    /// PRR-SSRB: limit = max(prr_delivered − prr_out, DeliveredData) + SMSS.
    SlowStart,
    /// PRR-SSRB whose "+ SMSS" needs a safe ACK (snd.una advanced, no new loss): Linux 6.x
    /// and RFC 9937.
    Linux,
}

impl ReductionBound {
    /// Does the ACK that ends the reduction also grow cwnd? RFC 6937 ends recovery with
    /// cwnd = ssthresh; Linux sets that (tcp_end_cwnd_reduction()) and then, the state being
    /// Open again, runs congestion avoidance on what the same ACK delivered (tcp_ack() →
    /// tcp_cong_control() → tcp_cong_avoid()).
    pub fn grows_on_the_ack_ending_it(self) -> bool {
        self == ReductionBound::Linux
    }

    pub const NAMES: &'static [&'static str] = &["crb", "ssrb", "linux"];
    pub fn by_name(name: &str) -> Result<Self, String> {
        match name {
            "crb" => Ok(ReductionBound::Conservative),
            "ssrb" => Ok(ReductionBound::SlowStart),
            "linux" => Ok(ReductionBound::Linux),
            _ => Err(format!("unknown PRR reduction bound {name:?}; expected one of {:?}", Self::NAMES)),
        }
    }
}

/// PRR state of one recovery episode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prr {
    bound: ReductionBound,
    /// Target cwnd after recovery (from the congestion controller).
    ssthresh: u64,
    /// RecoverFS: FlightSize at the start of recovery, bytes.
    recover_fs: u64,
    /// Total bytes delivered to the receiver during recovery.
    prr_delivered: u64,
    /// Total bytes sent during recovery.
    prr_out: u64,
}

impl Prr {
    /// RFC 6937 §3, at the beginning of recovery: prr_delivered = prr_out = 0,
    /// RecoverFS = snd.nxt − snd.una. `recover_fs` should leave out bytes SACKed before this
    /// ACK (RFC 9937 §6; Linux uses the cwnd before recovery, `prior_cwnd`): they were
    /// delivered before recovery and are not counted in prr_delivered either.
    pub fn start(bound: ReductionBound, ssthresh: u64, recover_fs: u64) -> Self {
        Prr { bound, ssthresh, recover_fs: recover_fs.max(1), prr_delivered: 0, prr_out: 0 }
    }

    /// RFC 6937 §3, on every ACK during recovery: `delivered` is DeliveredData
    /// (change_in(snd.una) + change_in(SACKd)), `pipe` the RFC 6675 pipe after the ACK was
    /// processed and before anything is sent on it; `safe_ack` says the ACK advanced snd.una
    /// and marked no new segment lost (used by [`ReductionBound::Linux`] only). Returns
    /// sndcnt, the bytes that may be sent in response to this ACK.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, mss: u64, safe_ack: bool) -> u64 {
        self.prr_delivered += delivered;
        let sndcnt = if pipe > self.ssthresh {
            // Proportional Rate Reduction: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS)
            // − prr_out.
            let product = self.prr_delivered as u128 * self.ssthresh as u128;
            let target = if self.bound == ReductionBound::Linux {
                // Linux counts packets: the quotient is rounded up to a whole segment
                // (tcp_cwnd_reduction(): div_u64(ssthresh * prr_delivered + prior_cwnd - 1,
                // prior_cwnd)), where the RFC's byte arithmetic rounds up to a byte.
                product.div_ceil(self.recover_fs as u128 * mss as u128) * mss as u128
            } else {
                product.div_ceil(self.recover_fs as u128)
            };
            (target as u64).saturating_sub(self.prr_out)
        } else {
            let banked = self.prr_delivered.saturating_sub(self.prr_out);
            let limit = match self.bound {
                // PRR-CRB: limit = prr_delivered − prr_out.
                ReductionBound::Conservative => banked,
                // PRR-SSRB: limit = MAX(prr_delivered − prr_out, DeliveredData) + MSS.
                ReductionBound::SlowStart => banked.max(delivered) + mss,
                // Linux: the + MSS only on a safe ACK (RFC 9937 §7).
                ReductionBound::Linux => banked.max(delivered) + if safe_ack { mss } else { 0 },
            };
            // Attempt to catch up, as permitted by limit: sndcnt = MIN(ssthresh − pipe, limit).
            (self.ssthresh - pipe).min(limit)
        };
        // RFC 9937 §7 / Linux: force the fast retransmit on the ACK that starts recovery.
        if self.prr_out == 0 && sndcnt < mss {
            return mss;
        }
        sndcnt
    }

    /// RFC 6937 §3, on any data transmission or retransmission: prr_out += data sent.
    pub fn on_sent(&mut self, bytes: u64) {
        self.prr_out += bytes;
    }

    pub fn prr_delivered(&self) -> u64 {
        self.prr_delivered
    }
    pub fn prr_out(&self) -> u64 {
        self.prr_out
    }
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
}

/// The sender's PRR: the bound configured (`tcp.prr`; None: off) and the episode in progress.
#[derive(Clone, Debug, Default)]
pub struct PrrState {
    bound: Option<ReductionBound>,
    episode: Option<Prr>,
    /// Bytes marked lost after the previous ACK in recovery ("no new loss").
    lost_seen: u64,
}

impl PrrState {
    pub fn new(bound: Option<ReductionBound>) -> Self {
        PrrState { bound, episode: None, lost_seen: 0 }
    }

    pub fn bound(&self) -> Option<ReductionBound> {
        self.bound
    }

    /// A reduction is in progress.
    pub fn active(&self) -> bool {
        self.episode.is_some()
    }

    /// RFC 6937 §3, at the beginning of recovery (ssthresh already set, in SACK-based and RACK
    /// recovery when `tcp.prr` is on): prr_delivered = prr_out = 0, RecoverFS = snd.nxt −
    /// snd.una less the bytes SACKed before this ACK (RFC 9937 §6: not delivered in recovery).
    pub(crate) fn start(&mut self, t: &Tcb) {
        let Some(bound) = self.bound else { return };
        let sacked_before = t.outstanding.sacked_bytes() - t.newly_sacked;
        let fs = t.flight_size().saturating_sub(sacked_before);
        self.episode = Some(Prr::start(bound, t.w.ssthresh, fs));
        self.lost_seen = t.outstanding.lost_bytes_marked();
    }

    /// RFC 6937 §3, on every ACK during recovery: sndcnt from DeliveredData and `pipe` (RFC
    /// 6675 SetPipe, or RACK's in-flight estimate), then cwnd = pipe + sndcnt so that the
    /// window rule sends exactly that (Linux `tcp_cwnd_reduction()`). A safe ACK (Linux bound)
    /// advanced snd.una and marked no new loss.
    pub(crate) fn on_ack(&mut self, t: &mut Tcb, pipe: impl FnOnce(&Tcb) -> u64) {
        // Linux counts packets: a SACKed FIN of its own is one delivered packet
        // (tcp_sacktag_one(): sacked_out += pcount), one segment here.
        let fin = if t.fin_newly_sacked { t.w.mss } else { 0 };
        if self.episode.is_none() || t.delivered + fin == 0 {
            return; // Linux: an ACK that delivers nothing leaves cwnd alone
        }
        // The scoreboard is up to date (IsLost / RACK marks included): a new loss shows as
        // more bytes marked lost than after the previous ACK.
        let lost = t.outstanding.lost_bytes_marked();
        let newly_lost = lost > self.lost_seen;
        self.lost_seen = lost;
        let pipe = pipe(t);
        let (delivered, mss, safe) = (t.delivered + fin, t.w.mss, t.ack_advanced && !newly_lost);
        let sndcnt = self.episode.as_mut().expect("checked above").on_ack(delivered, pipe, mss, safe);
        t.w.cwnd = pipe + sndcnt;
    }

    /// RFC 6937: prr_out += data sent, for every (re)transmission during recovery.
    pub fn on_sent(&mut self, bytes: u64) {
        if let Some(p) = &mut self.episode {
            p.on_sent(bytes);
        }
    }

    /// The episode ends (recovery over or an RTO); true if one was in progress.
    pub fn end(&mut self) -> bool {
        self.episode.take().is_some()
    }
}

#[cfg(test)]
mod tests {
    //! RFC 6937 §3.1 examples: cwnd = FlightSize = pipe = 20 segments when segment 0 is lost,
    //! ssthresh 10, Limited Transmit sends 2 new segments on the first two duplicate ACKs,
    //! the third starts recovery. ACK k SACKs segment k. The model below keeps the RFC 6675
    //! scoreboard of the examples (IsLost: 3 SACKed segments above) in whole segments
    //! (MSS = 1), and sends retransmissions of lost segments first, then new data.

    use super::*;
    use std::collections::BTreeSet;

    /// Per ACK after the loss: (pipe before sending, segments sent, retransmissions among them).
    fn run(lost: &[u64], acks: &[u64], bound: ReductionBound) -> Vec<(u64, u64, u64)> {
        let mut sent: BTreeSet<u64> = (0..20).collect();
        let mut next = 20;
        let lost_set: BTreeSet<u64> = lost.iter().copied().collect();
        let (mut sacked, mut rexmit) = (BTreeSet::new(), BTreeSet::new());
        let mut prr: Option<Prr> = None;
        let mut rows = vec![];
        for &k in acks {
            let sacked_before = sacked.len() as u64;
            sacked.insert(k);
            let is_lost = |s: u64, sacked: &BTreeSet<u64>| sacked.range(s + 1..).count() >= 3;
            let pipe = sent
                .iter()
                .filter(|&&s| !sacked.contains(&s))
                .map(|&s| (!is_lost(s, &sacked)) as u64 + rexmit.contains(&s) as u64)
                .sum::<u64>();
            let any_lost = sent.iter().any(|&s| !sacked.contains(&s) && is_lost(s, &sacked));
            let n = match &mut prr {
                None if !any_lost => 1, // RFC 3042 Limited Transmit
                None => {
                    // RecoverFS = snd.nxt − snd.una − bytes SACKed before this ACK.
                    let fs = next - lost_set.iter().next().unwrap() - sacked_before;
                    let p = prr.insert(Prr::start(bound, 10, fs));
                    p.on_ack(1, pipe, 1, false)
                }
                Some(p) => p.on_ack(1, pipe, 1, false),
            };
            let mut r = 0;
            for _ in 0..n {
                match sent.iter().find(|&&s| !sacked.contains(&s) && is_lost(s, &sacked) && !rexmit.contains(&s)) {
                    Some(&s) => {
                        rexmit.insert(s);
                        r += 1;
                    }
                    None => {
                        sent.insert(next);
                        next += 1;
                    }
                }
            }
            if let Some(p) = &mut prr {
                p.on_sent(n);
            }
            rows.push((pipe, n, r));
        }
        rows
    }

    #[test]
    fn single_loss_sends_on_every_other_ack_until_pipe_reaches_ssthresh() {
        // RFC 6937 §3.1, first figure ("PRR"): N N R then one new segment on every other ACK
        // (sndcnt = CEIL(prr_delivered·10/20) − prr_out alternates 1, 0), ending with pipe
        // exactly at ssthresh = 10 ("PRR will converge to exactly the target window", §4).
        // The RFC's pipe row repeats 18 once and shows sends on ACKs 17-19 that its own
        // formula does not give; RFC 9937 §8 corrected the example to the values below
        // (inflight 19 19 18 18 17 17 … 11 11 10).
        let rows = run(&[0], &(1..20).collect::<Vec<_>>(), ReductionBound::SlowStart);
        let pipe: Vec<u64> = rows.iter().map(|r| r.0).collect();
        assert_eq!(pipe, [19, 19, 18, 18, 17, 17, 16, 16, 15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10]);
        let sent: Vec<u64> = rows.iter().map(|r| r.1).collect();
        assert_eq!(sent, [1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0]);
        assert_eq!(rows[2].2, 1, "the third duplicate ACK sends the retransmission (R)");
        // Both reduction bounds behave the same for a single loss (§3.1).
        assert_eq!(run(&[0], &(1..20).collect::<Vec<_>>(), ReductionBound::Conservative), rows);
    }

    #[test]
    fn burst_loss_with_the_conservative_bound_sends_one_retransmission_per_ack() {
        // RFC 6937 §3.1, segments 0-14 lost, "PRR-CRB": pipe 19 19 4 4 4, sent N N R R R.
        let lost: Vec<u64> = (0..15).collect();
        let rows = run(&lost, &[15, 16, 17, 18, 19], ReductionBound::Conservative);
        assert_eq!(rows, [(19, 1, 0), (19, 1, 0), (4, 1, 1), (4, 1, 1), (4, 1, 1)]);
    }

    #[test]
    fn burst_loss_with_the_slow_start_bound_sends_two_retransmissions_per_ack() {
        // RFC 6937 §3.1, "PRR-SSRB": pipe 19 19 4 5 6, sent N N 2R 2R 2R (RB "bd", "d", "d").
        let lost: Vec<u64> = (0..15).collect();
        let rows = run(&lost, &[15, 16, 17, 18, 19], ReductionBound::SlowStart);
        assert_eq!(rows, [(19, 1, 0), (19, 1, 0), (4, 2, 2), (5, 2, 2), (6, 2, 2)]);
    }

    #[test]
    fn linux_bound_adds_the_extra_segment_only_on_safe_acks() {
        // Duplicate ACKs (snd.una unchanged) are not safe: Linux sends what was delivered.
        let lost: Vec<u64> = (0..15).collect();
        let rows = run(&lost, &[15, 16, 17, 18, 19], ReductionBound::Linux);
        assert_eq!(rows, [(19, 1, 0), (19, 1, 0), (4, 1, 1), (4, 1, 1), (4, 1, 1)]);
        // A cumulative ACK of 2 segments with no new loss may send 2 + 1.
        let mut p = Prr::start(ReductionBound::Linux, 10_000, 20_000);
        p.on_sent(1000);
        assert_eq!(p.on_ack(2000, 4000, 1000, true), 3000);
        assert_eq!(p.on_ack(2000, 4000, 1000, false), 3000, "banked 4000 − 1000 = 3000 ≥ 2000");
    }

    #[test]
    fn proportional_part_is_the_ceiling_in_bytes() {
        // CUBIC-like: ssthresh = 0.7·RecoverFS = 14 000 of 20 000 bytes; MSS 1000.
        let mut p = Prr::start(ReductionBound::SlowStart, 14_000, 20_000);
        assert_eq!(p.on_ack(1000, 18_000, 1000, false), 1000, "CEIL(1000·14000/20000) = 700 → forced to one MSS");
        p.on_sent(1000);
        assert_eq!(p.on_ack(1000, 18_000, 1000, false), 400, "CEIL(2000·0.7) − 1000");
        assert_eq!(p.on_ack(1000, 18_000, 1000, false), 1100, "nothing was sent: 2100 − 1000");
        assert_eq!(p.prr_delivered(), 3000);
    }

    #[test]
    fn bound_names() {
        assert_eq!(ReductionBound::by_name("ssrb"), Ok(ReductionBound::SlowStart));
        assert!(ReductionBound::by_name("fast").unwrap_err().contains("crb"));
    }

    #[test]
    fn linux_rounds_the_proportional_share_up_to_whole_segments() {
        // tests/conformance/prr-proportional-rate-reduction.pkt: cwnd 20, ssthresh 14, the
        // ACK that starts recovery SACKs 3 segments, pipe 16 > 14: Linux sends
        // ceil(14 · 3 / 20) = 3 segments; the RFC's bytes give 2 100 bytes, 2 whole segments.
        let mss = 1000;
        let mut linux = Prr::start(ReductionBound::Linux, 14 * mss, 20 * mss);
        assert_eq!(linux.on_ack(3 * mss, 16 * mss, mss, false), 3 * mss);
        let mut rfc = Prr::start(ReductionBound::SlowStart, 14 * mss, 20 * mss);
        assert_eq!(rfc.on_ack(3 * mss, 16 * mss, mss, false), 2100);
        // The next segment delivered: ceil(14 · 4 / 20) = 3 segments, all sent already.
        linux.on_sent(3 * mss);
        assert_eq!(linux.on_ack(mss, 18 * mss, mss, false), 0);
    }
}
