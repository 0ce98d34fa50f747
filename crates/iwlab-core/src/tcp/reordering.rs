//! The degree of reordering a sender learns from SACKs, as Linux keeps it in
//! `tp->reordering` and counts it in `tp->reord_seen` (`tcp_check_sack_reordering()`,
//! net/ipv4/tcp_input.c), with `tcp.reordering = "learned"`.
//!
//! A segment sent once and delivered — newly SACKed (`tcp_sacktag_one()`) or cumulatively
//! ACKed without having been SACKed (`tcp_clean_rtx_queue()`) — below the highest SACKed
//! sequence ("fack") arrived out of order: the lowest such segment's distance to fack, in
//! whole segments rounded up, raises the degree if larger (capped by
//! `net.ipv4.tcp_max_reordering`, 300), and the event is counted.
//!
//! The degree matters to cwnd growth: while it is above `net.ipv4.tcp_reordering` (the
//! configured `tcp.dupthresh`) an ACK that only SACKs data grows cwnd like one that ACKs it
//! cumulatively (`tcp_may_raise_cwnd()`: FLAG_FORWARD_PROGRESS instead of FLAG_DATA_ACKED).
//! RACK's own notion of reordering (RFC 8985 §6.2 step 3, `scoreboard.rs`) is kept apart.

/// `sysctl_tcp_max_reordering`'s default.
pub const MAX_REORDERING: u32 = 300;

/// Linux's `tp->reordering` and `tp->reord_seen`.
#[derive(Clone, Debug)]
pub(crate) struct Reordering {
    /// Learning is on (`tcp.reordering = "learned"`); off, the degree stays `base`.
    pub learned: bool,
    /// `net.ipv4.tcp_reordering` (`tcp.dupthresh`): the degree a connection starts with.
    pub base: u32,
    /// `tp->reordering`: the degree in force, segments.
    pub degree: u32,
    /// `tp->reord_seen`: reordering events counted.
    pub seen: u32,
}

impl Reordering {
    pub fn new(dupthresh: u32, learned: bool) -> Self {
        Reordering { learned, base: dupthresh, degree: dupthresh, seen: 0 }
    }

    /// `tcp_check_sack_reordering(sk, low_seq)`: `low_seq` is the start of the lowest segment
    /// delivered out of order, `fack` the highest SACKed sequence now (snd.una when nothing
    /// is SACKed any more).
    pub fn check(&mut self, low_seq: u64, fack: u64, mss: u64) {
        if !self.learned || low_seq >= fack || mss == 0 {
            return;
        }
        let metric = fack - low_seq;
        if metric > self.degree as u64 * mss {
            self.degree = metric.div_ceil(mss).min(MAX_REORDERING as u64) as u32;
        }
        self.seen += 1;
    }

    /// `tcp_enter_loss()`: "Timeout in disordered state after receiving substantial DUPACKs
    /// suggests that the degree of reordering is over-estimated" — back to the configured
    /// degree when the RTO finds Open or Disorder with at least that many segments SACKed.
    pub fn on_rto(&mut self, open_or_disorder: bool, sacked_segments: u64) {
        if open_or_disorder && sacked_segments >= self.base as u64 {
            self.degree = self.degree.min(self.base);
        }
    }

    /// `tcp_may_raise_cwnd()`: with a degree above the configured one, an ACK that made
    /// forward progress by SACKs alone may grow cwnd.
    pub fn sacks_grow_cwnd(&self) -> bool {
        self.learned && self.degree > self.base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hole_filled_below_fack_raises_the_degree_to_its_distance_in_segments() {
        let mut r = Reordering::new(3, true);
        // SACK of 3001:4001 while 8001:9001 is the highest SACKed: 6000 bytes, 6 segments.
        r.check(3001, 9001, 1000);
        assert_eq!((r.degree, r.seen), (6, 1));
        // A closer one counts as an event but does not lower the degree.
        r.check(7001, 9001, 1000);
        assert_eq!((r.degree, r.seen), (6, 2));
        // Partial segments round up; the degree is capped.
        r.check(1, 6502, 1000);
        assert_eq!(r.degree, 7);
        r.check(1, 1_000_001, 1000);
        assert_eq!(r.degree, MAX_REORDERING);
    }

    #[test]
    fn a_distance_within_the_degree_counts_the_event_only() {
        let mut r = Reordering::new(3, true);
        r.check(5001, 8001, 1000); // 3 segments: not above 3
        assert_eq!((r.degree, r.seen), (3, 1));
        assert!(!r.sacks_grow_cwnd());
        r.check(8001, 8001, 1000); // not below fack: not reordering
        assert_eq!(r.seen, 1);
    }

    #[test]
    fn without_learning_nothing_moves() {
        let mut r = Reordering::new(3, false);
        r.check(1, 10_001, 1000);
        assert_eq!((r.degree, r.seen), (3, 0));
        assert!(!r.sacks_grow_cwnd());
    }

    #[test]
    fn an_rto_in_disorder_with_enough_sacked_forgets_the_degree() {
        let mut r = Reordering::new(3, true);
        r.check(1, 10_001, 1000);
        r.on_rto(false, 5); // in recovery: kept
        assert_eq!(r.degree, 10);
        r.on_rto(true, 2); // fewer SACKed than tcp_reordering: kept
        assert_eq!(r.degree, 10);
        r.on_rto(true, 3);
        assert_eq!((r.degree, r.seen), (3, 1));
    }
}
