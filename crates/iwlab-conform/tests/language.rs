//! packetdrill's language as Linux's TCP scripts write it, each construct in a script of its
//! own: blocking calls, shell helpers, socket options without engine meaning, verdicts.

use iwlab_conform::{run_text, Status};
use std::path::Path;

fn run(text: &str) -> iwlab_conform::ScriptReport {
    run_text("t.pkt", text, Path::new("."), None)
}

const CLIENT: &str = "`sysctl -q net.ipv4.tcp_timestamps=0`\n\
    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
    +0 setsockopt(3, SOL_IP, IP_MTU_DISCOVER, [IP_PMTUDISC_DONT], 1) = 0\n\
    +0...0.010 connect(3, ..., ...) = 0\n\
    +0 > S 0:0(0) <...>\n\
    +.01 < S. 0:0(0) ack 1 win 65535 <mss 1000,sackOK>\n\
    +0 > . 1:1(0) ack 1\n\
    +0 write(3, ..., 1000) = 1000\n\
    +0 > P. 1:1001(1000) ack 1\n";

#[test]
fn a_blocking_connect_sends_its_syn_at_the_start_and_returns_when_established() {
    let r = run(CLIENT);
    assert_eq!(r.status(), Status::Pass, "{}", iwlab_conform::render_text(&[r.clone()]));
    // The script says it returns 50 ms after it starts; the handshake ended after 10 ms.
    let r = run(&CLIENT.replace("+0...0.010 connect", "+0...0.050 connect"));
    assert_eq!(r.status(), Status::Fail);
    let f = r.result.as_ref().unwrap().failure.clone().unwrap();
    assert_eq!(f.line, 4);
    assert_eq!(f.expected, "connect() returns at 0.050000 s (±4000 µs)");
    assert_eq!(f.actual, "the engine's connect() returned at 0.010000 s");
}

#[test]
fn ip_level_options_have_no_effect_and_say_so() {
    let r = run(&CLIENT.replace("+0 write(3", "+0 setsockopt(3, SOL_IP, IP_TOS, [4], 1) = 0\n+0 write(3"));
    assert_eq!(r.status(), Status::Pass);
    let notes = &r.result.as_ref().unwrap().notes;
    assert!(notes.iter().any(|n| n.kind == "ignored" && n.message.starts_with("setsockopt IP_TOS [4]: no effect")));
    assert!(notes.iter().any(|n| n.message.starts_with("setsockopt IP_MTU_DISCOVER")));
}

#[test]
fn set_sysctls_with_continuations_applies_each_value_and_redirections_make_no_note() {
    let text = "`set_sysctls.py /proc/sys/net/ipv4/tcp_sack=0 \\\n    /proc/sys/net/ipv4/tcp_timestamps=0\n\
        sysctl -q net.ipv4.tcp_notsent_lowat=4294967295 > /dev/null 2>&1\nip tcp_metrics flush all > /dev/null 2>&1`\n"
        .to_string()
        + &CLIENT.replace("`sysctl -q net.ipv4.tcp_timestamps=0`\n", "");
    let r = run(&text);
    let notes = &r.result.as_ref().unwrap().notes;
    let applied: Vec<&str> = notes.iter().filter(|n| n.kind == "applied").map(|n| n.message.as_str()).collect();
    assert!(applied.contains(&"net.ipv4.tcp_sack=0 → tcp.sack = false"), "{applied:?}");
    assert!(applied.contains(&"net.ipv4.tcp_timestamps=0 → tcp.timestamps = false"), "{applied:?}");
    assert!(notes.iter().all(|n| !n.message.contains("/dev/null") && !n.message.contains("2>&1")), "{notes:?}");
    // With SACK off our SYN offers no sackOK: `<...>` lets the SYN through, and the run passes.
    assert_eq!(r.status(), Status::Pass, "{}", iwlab_conform::render_text(&[r.clone()]));
}

#[test]
fn what_the_engine_cannot_run_is_unsupported_with_its_line_never_a_parse_error() {
    for (line, expect) in [
        ("+0 < udp (100)", "a UDP packet"),
        ("+0 > S. 0:0(0) ack 1 <mss 1460,FO 0123456789abcdef,nop,nop>", "the TCP option `FO 0123456789abcdef`"),
        ("+0 < [ect0] SEWA 0:0(0) win 32792 <mss 1000>", "AccECN flags"),
        ("+0 poll([{fd=3, events=POLLIN, revents=0}], 1, 0) = 0", "the system call poll()"),
        ("+0 setsockopt(3, SOL_TCP, TCP_FASTOPEN, [1], 4) = 0", "the socket option TCP_FASTOPEN"),
        ("+0 %{ assert tcpi_rcv_mss == 0 }%", "tcp_info field tcpi_rcv_mss"),
    ] {
        let r = run(&format!("{CLIENT}{line}\n"));
        assert_eq!(r.status(), Status::Unsupported, "{line}");
        let (at, what) = r.unsupported_because().unwrap();
        assert_eq!(at, 10, "{line}");
        assert!(what.starts_with(expect), "{line}: {what}");
    }
    assert_eq!(iwlab_conform::exit_code(&[run(&format!("{CLIENT}+0 < udp (100)\n"))]), 3);
}

#[test]
fn a_python_error_in_a_block_is_an_error_of_the_script() {
    let r = run(&format!("{CLIENT}+0 %{{ assert cwnd == 10 }}%\n"));
    assert_eq!(r.status(), Status::Error);
    assert_eq!(iwlab_conform::exit_code(&[r]), 2);
}
