//! The names packetdrill binds before each `%{ … }%` block (its `code.c`): every field of
//! Linux's `struct tcp_info` as `tcpi_*`, and the symbolic constants `TCP_ESTABLISHED…`,
//! `TCP_CA_Open…`, `TCPI_OPT_*`. A field the engine's `tcp_info()` view states
//! (`crates/iwlab-core/src/tcp/info.rs`) has its value; `tcpi_advmss` comes from the
//! interpreter's MSS settings; every other field is reported as unsupported with what it
//! means in Linux, never given a made-up value.

use iwlab_core::tcp::info::TcpInfo;

/// Linux's values (include/net/tcp_states.h, include/uapi/linux/tcp.h).
pub const CONSTANTS: &[(&str, i128)] = &[
    ("TCP_ESTABLISHED", 1),
    ("TCP_SYN_SENT", 2),
    ("TCP_SYN_RECV", 3),
    ("TCP_FIN_WAIT1", 4),
    ("TCP_FIN_WAIT2", 5),
    ("TCP_TIME_WAIT", 6),
    ("TCP_CLOSE", 7),
    ("TCP_CLOSE_WAIT", 8),
    ("TCP_LAST_ACK", 9),
    ("TCP_LISTEN", 10),
    ("TCP_CLOSING", 11),
    ("TCP_CA_Open", 0),
    ("TCP_CA_Disorder", 1),
    ("TCP_CA_CWR", 2),
    ("TCP_CA_Recovery", 3),
    ("TCP_CA_Loss", 4),
    ("TCPI_OPT_TIMESTAMPS", 1),
    ("TCPI_OPT_SACK", 2),
    ("TCPI_OPT_WSCALE", 4),
    ("TCPI_OPT_ECN", 8),
    ("TCPI_OPT_ECN_SEEN", 16),
    ("TCPI_OPT_SYN_DATA", 32),
    ("TCPI_OPT_USEC_TS", 64),
    ("TCPI_OPT_TFO_CHILD", 128),
];

/// Fields of `struct tcp_info` the engine has no value for, with what Linux reports in them.
pub const NOT_MODELLED: &[(&str, &str)] = &[
    ("tcpi_options", "negotiated options bit set (TCPI_OPT_*)"),
    ("tcpi_snd_wscale", "the peer's window scale (the engine has no window scaling)"),
    ("tcpi_rcv_wscale", "our window scale (the engine has no window scaling)"),
    ("tcpi_delivery_rate_app_limited", "the delivery-rate sample was app-limited"),
    ("tcpi_ato", "delayed-ACK timeout (icsk_ack.ato)"),
    ("tcpi_rcv_mss", "the MSS estimated from received segments (icsk_ack.rcv_mss)"),
    ("tcpi_fackets", "always 0 since Linux 4.18"),
    ("tcpi_last_data_sent", "ms since the last data sent"),
    ("tcpi_last_ack_sent", "not filled by Linux"),
    ("tcpi_last_data_recv", "ms since the last data received (icsk_ack.lrcvtime)"),
    ("tcpi_last_ack_recv", "ms since the last ACK received (rcv_tstamp)"),
    ("tcpi_pmtu", "path MTU (icsk_pmtu_cookie)"),
    ("tcpi_rcv_ssthresh", "receive-window clamp of tcp_grow_window()"),
    ("tcpi_pacing_rate", "sk_pacing_rate"),
    ("tcpi_max_pacing_rate", "sk_max_pacing_rate"),
    ("tcpi_rcv_rtt", "receiver RTT estimate (rcv_rtt_est)"),
    ("tcpi_rcv_space", "receive-buffer auto-tuning space (rcvq_space)"),
    ("tcpi_segs_out", "segments sent, pure ACKs included"),
    ("tcpi_segs_in", "segments received"),
    ("tcpi_notsent_bytes", "bytes written and not yet sent"),
    ("tcpi_data_segs_in", "data segments received"),
    ("tcpi_delivery_rate", "the latest delivery-rate sample"),
    ("tcpi_busy_time", "µs with data in flight (chrono_stat)"),
    ("tcpi_rwnd_limited", "µs limited by the receive window"),
    ("tcpi_sndbuf_limited", "µs limited by the send buffer"),
    ("tcpi_delivered_ce", "segments delivered with CE marks"),
    ("tcpi_bytes_sent", "bytes sent, retransmissions included"),
    ("tcpi_bytes_retrans", "bytes retransmitted"),
    ("tcpi_dsack_dups", "D-SACK blocks received"),
    ("tcpi_rcv_ooopack", "out-of-order packets received"),
    ("tcpi_snd_wnd", "the peer's advertised window"),
    ("tcpi_rcv_wnd", "our advertised window"),
    ("tcpi_rehash", "PLB/timeout rehashes"),
    ("tcpi_total_rto", "RTO expiries over the connection"),
    ("tcpi_total_rto_recoveries", "RTO recovery episodes"),
    ("tcpi_total_rto_time", "ms spent in RTO recovery"),
    ("tcpi_ecn_mode", "AccECN mode"),
    ("tcpi_accecn_opt_seen", "AccECN option seen"),
    ("tcpi_accecn_fail_mode", "AccECN failure mode"),
    ("tcpi_options2", "more option bits"),
    ("tcpi_received_ce", "CE-marked packets received"),
    ("tcpi_delivered_e1_bytes", "AccECN counter"),
    ("tcpi_delivered_e0_bytes", "AccECN counter"),
    ("tcpi_delivered_ce_bytes", "AccECN counter"),
    ("tcpi_received_e1_bytes", "AccECN counter"),
    ("tcpi_received_e0_bytes", "AccECN counter"),
    ("tcpi_received_ce_bytes", "AccECN counter"),
];

/// A `tcpi_*` name's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    Value(u64),
    /// A Linux field with no engine meaning: what it is in Linux.
    NotModelled(&'static str),
    /// Not a field of `struct tcp_info`.
    Unknown,
}

/// The value of `name` for an endpoint whose view is `info` and that announces `adv_mss`.
pub fn field(name: &str, info: &TcpInfo, adv_mss: u32) -> Field {
    if name == "tcpi_advmss" {
        return Field::Value(adv_mss as u64);
    }
    if let Some(v) = info.get(name) {
        return Field::Value(v);
    }
    NOT_MODELLED.iter().find(|(n, _)| *n == name).map_or(Field::Unknown, |(_, what)| Field::NotModelled(what))
}

pub fn constant(name: &str) -> Option<i128> {
    CONSTANTS.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_packetdrill_field_is_modelled_or_named_as_not_modelled() {
        // The engine's view and this list must not overlap: a field is one or the other.
        for f in TcpInfo::FIELDS {
            assert!(!NOT_MODELLED.iter().any(|(n, _)| n == f), "{f} is both modelled and not");
        }
        let info = TcpInfo { snd_cwnd: 10, ..Default::default() };
        assert_eq!(field("tcpi_snd_cwnd", &info, 1460), Field::Value(10));
        assert_eq!(field("tcpi_advmss", &info, 1000), Field::Value(1000));
        let info = TcpInfo { retrans: 2, ..info };
        assert_eq!(field("tcpi_retrans", &info, 1460), Field::Value(2));
        assert!(matches!(field("tcpi_rcv_mss", &info, 1460), Field::NotModelled(w) if w.contains("rcv_mss")));
        assert_eq!(field("tcpi_nonsense", &info, 1460), Field::Unknown);
        assert_eq!(constant("TCP_CA_Recovery"), Some(3));
    }
}
