//! TCP profiles: `tcp.profile = "linux"` puts a named set of values under the `[tcp]` fields
//! (engine defaults ← profile ← `[tcp]` ← an application's `tcp`), so a scenario says "Linux
//! TCP" in one line and still overrides any field. docs/scenario-format.md explains each value
//! with the kernel behaviour it stands for; the emulator reads the same table through
//! [`toml_text`] (`iwlab.scenario.PROFILES`).

use super::model::TcpSpec;

/// Profile names, for error messages.
pub const NAMES: &[&str] = &["linux"];

/// Linux 6.x defaults (net/ipv4 sysctl defaults, include/net/tcp.h constants).
pub const LINUX: &str = r#"
mss = 1448                                       # 1500-byte MTU - 40 - 12 bytes of timestamps
cc = "cubic"                                     # net.ipv4.tcp_congestion_control
cubic = { ssthresh_from = "cwnd", arithmetic = "linux" } # bictcp_recalc_ssthresh(), bictcp_update()
abc_l = 65535                                    # tcp_slow_start(): cwnd += every segment ACKed
sack = true                                      # net.ipv4.tcp_sack = 1
recovery = "rack"                                # net.ipv4.tcp_recovery = 1: RACK loss detection
tlp = true                                       # net.ipv4.tcp_early_retrans = 3: Tail Loss Probe
prr = "linux"                                    # tcp_cwnd_reduction(): PRR, safe-ACK SSRB
hystart = "linux"                                # tcp_cubic.c hystart = 1 (delay detector)
timestamps = true                                # net.ipv4.tcp_timestamps = 1
delayed_ack = { segments = 2, timeout = "40ms" } # TCP_ATO_MIN; ACK every 2nd full segment
quickack = 16                                    # TCP_MAX_QUICKACKS
initial_rto = "1s"                               # TCP_TIMEOUT_INIT
min_rto = "200ms"                                # TCP_RTO_MIN
max_rto = "120s"                                 # TCP_RTO_MAX
limited_transmit = true                          # always on in tcp_input.c
syn_loss = "rfc6928"                             # IW 1 only after > 1 SYN retransmission
dupthresh = 3                                    # net.ipv4.tcp_reordering = 3
restart_after_idle = true                        # net.ipv4.tcp_slow_start_after_idle = 1
syn_retries = 6                                  # net.ipv4.tcp_syn_retries = 6
timers = "linux"                                 # tcp_rtt_estimator(), tcp_schedule_loss_probe(), tcp_xmit_retransmit_queue()
rto_ssthresh = "once-per-window"                 # tcp_enter_loss()
pacer = "linux"                                  # tcp_update_skb_after_send(), when pacing
cwnd_growth = "cwnd-limited"                     # tcp_cong_control(): tcp_is_cwnd_limited(), acked_sacked
idle_restart = "halve-per-rto"                   # tcp_cwnd_restart()
fin = "after-write"                              # tcp_send_fin(), tcp_cwnd_test()
rto_window = "packets-in-flight"                 # tcp_xmit_retransmit_queue(), tcp_packets_in_flight()
reordering = "learned"                           # tcp_check_sack_reordering(), tcp_may_raise_cwnd()
frto = true                                      # net.ipv4.tcp_frto = 2: tcp_process_loss()
dsack = true                                     # net.ipv4.tcp_dsack = 1: tcp_dsack_set(), tcp_check_dsack()
undo = true                                      # tcp_try_undo_recovery/_dsack/_loss()
"#;

/// Linux's initial window, segments (TCP_INIT_CWND): the IW of applications that name no
/// policy when `[tcp]` has `profile = "linux"` and `iw.default` is absent.
pub const LINUX_IW_SEGMENTS: u32 = 10;
/// The name under which that policy appears (it may be redefined in `[iw.policies]`).
pub const LINUX_IW_POLICY: &str = "linux-iw10";

/// The `[tcp]` table of profile `name`, as written above.
pub fn toml_text(name: &str) -> Result<&'static str, String> {
    match name {
        "linux" => Ok(LINUX),
        _ => Err(format!("one of {NAMES:?}")),
    }
}

/// The `[tcp]` values of profile `name`.
pub fn profile(name: &str) -> Result<TcpSpec, String> {
    match name {
        "linux" => Ok(toml::from_str(toml_text(name)?).expect("the built-in linux profile parses")),
        _ => Err(format!("one of {NAMES:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_profile_parses_and_names_no_profile_itself() {
        let p = profile("linux").unwrap();
        assert_eq!(p.profile, None);
        assert_eq!(p.quickack, Some(16));
        assert!(profile("bsd").unwrap_err().contains("linux"));
    }
}
