//! A `tcp_info` view of an endpoint: Linux's `struct tcp_info` fields (include/uapi/linux/tcp.h,
//! filled by `tcp_get_info()` in net/ipv4/tcp.c) computed from the engine's state, in the units
//! Linux reports: windows in segments, times in microseconds. Conformance scripts assert on it
//! (`%{ assert tcpi_snd_cwnd == 10 }%`); docs/conformance.md maps each field.

use super::ca_state;
use super::endpoint::{Endpoint, State};
use super::tcb::CaState;

/// Linux's "no ssthresh yet" (`TCP_INFINITE_SSTHRESH`, include/net/tcp.h).
pub const TCP_INFINITE_SSTHRESH: u64 = 0x7fff_ffff;

/// `icsk_ca_state` values (`enum tcp_ca_state`, include/uapi/linux/tcp.h).
pub const TCP_CA_OPEN: u8 = 0;
pub const TCP_CA_DISORDER: u8 = 1;
pub const TCP_CA_CWR: u8 = 2;
pub const TCP_CA_RECOVERY: u8 = 3;
pub const TCP_CA_LOSS: u8 = 4;

/// The fields of Linux's `struct tcp_info` the engine can state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// `tcpi_state`: TCP_ESTABLISHED = 1, SYN_SENT = 2, SYN_RECV = 3, TIME_WAIT = 6, CLOSE = 7,
    /// LISTEN = 10.
    pub state: u8,
    /// `tcpi_ca_state`: 0 Open, 1 Disorder (SACKed or duplicate-ACKed data, no recovery yet),
    /// 3 Recovery (fast recovery), 4 Loss (after an RTO until its recovery point is ACKed or the
    /// RTO is undone, `recovery/undo.rs`).
    /// CWR (2) is not reported: the engine's ECN reduction has no separate state.
    pub ca_state: u8,
    /// `tcpi_retransmits`: consecutive RTO expiries not yet cleared (`icsk_retransmits`),
    /// i.e. the RTO backoff exponent.
    pub retransmits: u32,
    /// `tcpi_backoff`: the same exponent (`icsk_backoff`).
    pub backoff: u32,
    /// `tcpi_rto`: the RTO the timer would be armed with now, backoff included, µs.
    pub rto: u64,
    /// `tcpi_snd_mss`: sender MSS, bytes.
    pub snd_mss: u32,
    /// `tcpi_unacked`: segments sent and not cumulatively ACKed (`packets_out`).
    pub unacked: u32,
    /// `tcpi_sacked`: of those, SACKed (`sacked_out`).
    pub sacked: u32,
    /// `tcpi_lost`: segments marked lost (`lost_out`), from the bytes marked lost in MSS units.
    pub lost: u32,
    /// `tcpi_rtt`: smoothed RTT, µs (0 before the first sample).
    pub rtt: u64,
    /// `tcpi_rttvar`: RTT variation, µs.
    pub rttvar: u64,
    /// `tcpi_snd_ssthresh`: segments; 0x7fffffff while "arbitrarily high".
    pub snd_ssthresh: u64,
    /// `tcpi_snd_cwnd`: congestion window, segments.
    pub snd_cwnd: u64,
    /// `tcpi_reordering`: the degree of reordering in force (`tp->reordering`): `tcp.dupthresh`,
    /// raised from SACKs with `tcp.reordering = "learned"` (`reordering.rs`).
    pub reordering: u32,
    /// `tcpi_total_retrans`: every retransmitted segment (`total_retrans`).
    pub total_retrans: u64,
    /// `tcpi_retrans`: segments retransmitted and not yet delivered or deemed lost again
    /// (`retrans_out`), from the octets in MSS units, rounded up.
    pub retrans: u32,
    /// `tcpi_probes`: zero-window probes sent since the window closed (`icsk_probes_out`,
    /// `persist.rs`).
    pub probes: u32,
    /// `tcpi_reord_seen`: reordering events detected from SACKs (`tp->reord_seen`,
    /// `reordering.rs`).
    pub reord_seen: u32,
    /// `tcpi_delivered`: segments delivered (`tp->delivered`): 1 for the SYN or SYN-ACK, then
    /// full-MSS segments ACKed cumulatively plus segments SACKed.
    pub delivered: u64,
    /// `tcpi_data_segs_out`: data segments sent, retransmissions included.
    pub data_segs_out: u64,
    /// `tcpi_bytes_acked`: data bytes cumulatively ACKed.
    pub bytes_acked: u64,
    /// `tcpi_bytes_received`: in-order data bytes received.
    pub bytes_received: u64,
    /// `tcpi_min_rtt`: minimum RTT seen, µs (0 before the first sample).
    pub min_rtt: u64,
}

impl TcpInfo {
    /// Field names as Linux spells them (`tcpi_` + name), for script assertions.
    pub const FIELDS: &'static [&'static str] = &[
        "tcpi_state",
        "tcpi_ca_state",
        "tcpi_retransmits",
        "tcpi_backoff",
        "tcpi_rto",
        "tcpi_snd_mss",
        "tcpi_unacked",
        "tcpi_sacked",
        "tcpi_lost",
        "tcpi_rtt",
        "tcpi_rttvar",
        "tcpi_snd_ssthresh",
        "tcpi_snd_cwnd",
        "tcpi_reordering",
        "tcpi_total_retrans",
        "tcpi_retrans",
        "tcpi_reord_seen",
        "tcpi_probes",
        "tcpi_delivered",
        "tcpi_data_segs_out",
        "tcpi_bytes_acked",
        "tcpi_bytes_received",
        "tcpi_min_rtt",
    ];

    /// The value of field `name` (`tcpi_snd_cwnd`), `None` for a field not in [`Self::FIELDS`].
    pub fn get(&self, name: &str) -> Option<u64> {
        Some(match name {
            "tcpi_state" => self.state as u64,
            "tcpi_ca_state" => self.ca_state as u64,
            "tcpi_retransmits" => self.retransmits as u64,
            "tcpi_backoff" => self.backoff as u64,
            "tcpi_rto" => self.rto,
            "tcpi_snd_mss" => self.snd_mss as u64,
            "tcpi_unacked" => self.unacked as u64,
            "tcpi_sacked" => self.sacked as u64,
            "tcpi_lost" => self.lost as u64,
            "tcpi_rtt" => self.rtt,
            "tcpi_rttvar" => self.rttvar,
            "tcpi_snd_ssthresh" => self.snd_ssthresh,
            "tcpi_snd_cwnd" => self.snd_cwnd,
            "tcpi_reordering" => self.reordering as u64,
            "tcpi_total_retrans" => self.total_retrans,
            "tcpi_retrans" => self.retrans as u64,
            "tcpi_reord_seen" => self.reord_seen as u64,
            "tcpi_probes" => self.probes as u64,
            "tcpi_delivered" => self.delivered,
            "tcpi_data_segs_out" => self.data_segs_out,
            "tcpi_bytes_acked" => self.bytes_acked,
            "tcpi_bytes_received" => self.bytes_received,
            "tcpi_min_rtt" => self.min_rtt,
            _ => return None,
        })
    }
}

impl Endpoint {
    /// What `getsockopt(TCP_INFO)` would report for this endpoint now.
    pub fn tcp_info(&self) -> TcpInfo {
        let s = &self.sender;
        let mss = s.w.mss.max(1);
        let state = match self.state {
            State::Established => 1,
            State::SynSent => 2,
            State::SynReceived => 3,
            State::TimeWait => 6,
            State::Closed | State::Failed => 7,
            State::Listen => 10,
        };
        let synced = matches!(self.state, State::Established | State::TimeWait);
        // Without SACK Linux counts duplicate ACKs as SACKed segments (`tcp_add_reno_sack()`).
        let sacked = s.outstanding.sacked_segments() + s.reno_sacked();
        let lost = s.outstanding.lost_bytes_marked().div_ceil(mss);
        // Data bytes ACKed: snd_una counts the SYN (sequence 0) and, once ACKed, our FIN.
        let bytes_acked = s.snd_una.saturating_sub(1).min(s.bytes_written());
        let ca_state = match ca_state::reported(s) {
            CaState::Recovery => TCP_CA_RECOVERY,
            CaState::Loss => TCP_CA_LOSS,
            CaState::Disorder => TCP_CA_DISORDER,
            CaState::Open | CaState::Cwr => TCP_CA_OPEN,
        };
        let us = |d: crate::engine::SimDuration| d.as_nanos() / 1000;
        TcpInfo {
            state,
            ca_state: if synced { ca_state } else { TCP_CA_OPEN },
            retransmits: s.rtt.backoff(),
            backoff: s.rtt.backoff(),
            rto: us(s.rtt.rto()),
            snd_mss: mss as u32,
            unacked: s.outstanding_segments() as u32,
            sacked: sacked as u32,
            lost: lost as u32,
            rtt: s.rtt.srtt().map_or(0, us),
            rttvar: us(s.rtt.rttvar()),
            snd_ssthresh: if s.w.ssthresh >= TCP_INFINITE_SSTHRESH * mss {
                TCP_INFINITE_SSTHRESH
            } else {
                s.w.ssthresh / mss
            },
            snd_cwnd: s.w.cwnd / mss,
            reordering: s.reordering.degree,
            total_retrans: s.stats.retransmits,
            retrans: s.outstanding.retrans_out_bytes().div_ceil(mss) as u32,
            reord_seen: s.reordering.seen,
            probes: s.persist.probes,
            delivered: if synced { 1 + bytes_acked / mss + sacked } else { 0 },
            data_segs_out: s.stats.data_segments_sent,
            bytes_acked,
            bytes_received: self.receiver.delivered(),
            min_rtt: s.rtt.min_rtt().map_or(0, us),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{SimDuration, SimTime};
    use crate::tcp::config::TcpConfig;
    use crate::tcp::endpoint::Outbox;
    use crate::tcp::iw::IwConfig;
    use crate::tcp::segment::{Flags, Segment};

    #[test]
    fn a_fresh_connection_reports_iw_segments_and_infinite_ssthresh() {
        let cfg = TcpConfig { mss: 1000, ..TcpConfig::default() };
        let mut ep = Endpoint::server(&cfg, 1, None);
        assert_eq!(ep.tcp_info().state, 10);
        let mut iw = IwConfig::Fixed { segments: 10 }.build();
        let mut out = Outbox::default();
        let syn = Segment { flags: Flags::SYN, wnd: 1 << 20, ..Default::default() };
        ep.on_segment(SimTime::ZERO, &syn, false, &mut iw, &mut out);
        let t = SimTime::ZERO + SimDuration::from_millis(100);
        let ack = Segment { seq: 1, ack: 1, flags: Flags::ACK, wnd: 1 << 20, ..Default::default() };
        ep.on_segment(t, &ack, false, &mut iw, &mut out);
        ep.write(t, 3000, &mut iw, &mut out);
        let i = ep.tcp_info();
        assert_eq!((i.state, i.ca_state, i.snd_cwnd, i.snd_ssthresh), (1, TCP_CA_OPEN, 10, TCP_INFINITE_SSTHRESH));
        assert_eq!((i.unacked, i.delivered, i.rtt), (3, 1, 100_000));
        assert_eq!(i.get("tcpi_unacked"), Some(3));
        assert_eq!(i.get("tcpi_nonsense"), None);
        for f in TcpInfo::FIELDS {
            assert!(i.get(f).is_some(), "{f} is listed but not readable");
        }
    }
}
