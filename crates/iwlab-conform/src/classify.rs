//! Which engine rule a failing script touches, decided by hand-written rules from its first
//! differing line: what the line expects (an assert on `tcpi_reordering`, a zero-window probe,
//! a retransmission's time, …) and what the run saw (SACK negotiated or not, the peer's zero
//! window, a setting not modelled). The rules are for planning engine work: each names the
//! kernel functions behind the behaviour.

use crate::driver::Class;
use crate::{ScriptReport, Status};

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    /// No SACK: duplicate ACKs counted as `sacked_out` and delivered (RFC 6582 NewReno).
    RenoDupack,
    /// `tp->reordering` raised from how far below the highest SACK a hole was filled.
    ReorderingDegree,
    /// RACK's reordering timer marks losses, then recovery runs PRR.
    RackReoTimerPrr,
    /// The persist timer's zero-window probes.
    ZeroWindowProbe,
    /// fq pacing, and TSO bursts sized from the pacing rate.
    FqPacingTso,
    /// Linux's timers fire on jiffies, some with a floor added.
    TimerGranularity,
    /// A `tcp_info` field the engine's view does not have.
    TcpInfoField,
    Other,
}

impl Rule {
    pub const ALL: [Rule; 8] = [
        Rule::RenoDupack,
        Rule::ReorderingDegree,
        Rule::RackReoTimerPrr,
        Rule::ZeroWindowProbe,
        Rule::FqPacingTso,
        Rule::TimerGranularity,
        Rule::TcpInfoField,
        Rule::Other,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Rule::RenoDupack => "reno-dupack",
            Rule::ReorderingDegree => "reordering-degree",
            Rule::RackReoTimerPrr => "rack-reo-timer-prr",
            Rule::ZeroWindowProbe => "zero-window-probe",
            Rule::FqPacingTso => "fq-pacing-tso",
            Rule::TimerGranularity => "timer-granularity",
            Rule::TcpInfoField => "tcp-info-field",
            Rule::Other => "other",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Rule::RenoDupack => "SACK negotiation / Reno dupack path",
            Rule::ReorderingDegree => "reordering degree from SACKs",
            Rule::RackReoTimerPrr => "RACK reorder timer -> PRR",
            Rule::ZeroWindowProbe => "zero-window probe / persist",
            Rule::FqPacingTso => "fq pacing / TSO autosizing",
            Rule::TimerGranularity => "timer granularity (jiffies)",
            Rule::TcpInfoField => "tcp_info field not in the engine's view",
            Rule::Other => "other",
        }
    }

    /// The kernel functions behind the behaviour (net/ipv4/).
    pub fn kernel(self) -> &'static str {
        match self {
            Rule::RenoDupack => {
                "tcp_add_reno_sack(), tcp_remove_reno_sacks() (tcp_input.c): each dupack counts as sacked_out and delivered, so the ACK that ends the episode grows cwnd by what it newly delivered less the dupacks"
            }
            Rule::ReorderingDegree => {
                "tcp_check_sack_reordering() (tcp_input.c): a segment sent once and delivered below fack (tcp_highest_sack_seq()) raises tp->reordering to ceil((fack - start_seq) / mss), capped by sysctl_tcp_max_reordering; counts tp->reord_seen"
            }
            Rule::RackReoTimerPrr => {
                "tcp_rack_reo_timeout() (tcp_recovery.c) -> tcp_enter_recovery(), tcp_cwnd_reduction() (PRR)"
            }
            Rule::ZeroWindowProbe => "tcp_check_probe_timer(), tcp_probe_timer(), tcp_send_probe0() (tcp_timer.c, tcp_output.c)",
            Rule::FqPacingTso => "sch_fq, tcp_update_pacing_rate() (tcp_input.c), tcp_tso_autosize() (tcp_output.c)",
            Rule::TimerGranularity => {
                "tcp_rack_mark_lost() (tcp_recovery.c): usecs_to_jiffies(timeout) + TCP_TIMEOUT_MIN; inet_csk_reset_xmit_timer() in jiffies (HZ)"
            }
            Rule::TcpInfoField => "tcp_get_info() (tcp.c)",
            Rule::Other => "",
        }
    }
}

/// The rule a non-passing script touches, or `None` for a pass or a script that cannot run.
pub fn classify(r: &ScriptReport) -> Option<Rule> {
    let o = r.result.as_ref().ok()?;
    let f = o.failure.as_ref()?;
    if r.status() == Status::Error {
        return None;
    }
    let needs = r.unsupported_because().map(|(_, w)| w).unwrap_or_default();
    let outbound = f.event.trim_start_matches(|c: char| c != '<' && c != '>').starts_with('>');
    let reads = |name: &str| f.expected.contains(name) || f.actual.contains(name);
    // A flow paced by fq or SO_MAX_PACING_RATE (settings.rs notes "the flow is paced").
    let paced =
        o.notes.iter().any(|n| n.kind == "applied" && n.line <= f.line && n.message.contains("the flow is paced"));
    Some(if paced || needs.contains("fq pacing") || needs.contains("TSO") {
        Rule::FqPacingTso
    } else if f.class == Class::Unsupported && f.actual.starts_with("tcp_info field") {
        Rule::TcpInfoField
    } else if reads("tcpi_reordering") || reads("tcpi_reord_seen") {
        Rule::ReorderingDegree
    } else if o.zero_window && outbound {
        Rule::ZeroWindowProbe
    } else if o.sack == Some(false) {
        Rule::RenoDupack
    } else if outbound && f.actual.ends_with("(timing)") && sent_early(&f.expected, &f.actual) {
        Rule::TimerGranularity
    } else if reads("TCP_CA_Recovery") || reads("tcpi_ca_state") {
        Rule::RackReoTimerPrr
    } else {
        Rule::Other
    })
}

/// The engine sent the packet earlier than the script's time (`… at T s` in both texts).
fn sent_early(expected: &str, actual: &str) -> bool {
    let time = |s: &str| -> Option<f64> {
        let i = s.find(" at ").or_else(|| s.find(" between "))?;
        s[i..].split_whitespace().nth(1)?.parse().ok()
    };
    matches!((time(expected), time(actual)), (Some(e), Some(a)) if a < e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> ScriptReport {
        crate::run_text("t.pkt", text, std::path::Path::new("."), None)
    }

    const HANDSHAKE_NO_SACK: &str = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 bind(3, ..., ...) = 0\n\
        +0 listen(3, 1) = 0\n+0 < S 0:0(0) win 32792 <mss 1000,nop,wscale 7>\n+0 > S. 0:0(0) ack 1 <mss 1460,nop,wscale 8>\n\
        +.1 < . 1:1(0) ack 1 win 320\n+0 accept(3, ..., ...) = 4\n+0 write(4, ..., 4000) = 4000\n+0 > P. 1:4001(4000) ack 1\n";

    #[test]
    fn a_failure_without_sack_is_the_reno_path_and_a_reordering_assert_the_reordering_degree() {
        let r = run(&format!("{HANDSHAKE_NO_SACK}+.1 < . 1:1(0) ack 1001 win 320\n+0 > . 4001:5001(1000) ack 1\n"));
        assert_eq!(r.status(), Status::Fail);
        assert_eq!(classify(&r), Some(Rule::RenoDupack));
        let with_sack = HANDSHAKE_NO_SACK
            .replace("<mss 1000,nop", "<mss 1000,sackOK,nop")
            .replace("<mss 1460,nop,wscale 8>", "<mss 1460,sackOK,nop,wscale 8>");
        let r = run(&format!("{with_sack}+0 %{{ assert tcpi_reordering == 5 }}%\n"));
        assert_eq!(classify(&r), Some(Rule::ReorderingDegree));
        // A paced flow's failure (fq is modelled: FAIL, not UNSUPPORTED).
        let r =
            run(&format!("0 `tc qdisc replace dev tun0 root fq`\n{with_sack}+0 %{{ assert tcpi_snd_cwnd == 3 }}%\n"));
        assert_eq!((r.status(), classify(&r)), (Status::Fail, Some(Rule::FqPacingTso)));
        let r = run(&format!("{with_sack}+0 %{{ assert tcpi_snd_cwnd == 10 }}%\n"));
        assert_eq!(classify(&r), None);
    }

    #[test]
    fn an_early_retransmission_is_timer_granularity() {
        let e = ". 1:1001(1000) ack 1 at 0.240000 s (±4000 µs)";
        assert!(sent_early(e, ". 1:1001(1000) ack 1 at 0.225000 s (timing)"));
        assert!(!sent_early(e, ". 1:1001(1000) ack 1 at 0.250000 s (timing)"));
    }
}
