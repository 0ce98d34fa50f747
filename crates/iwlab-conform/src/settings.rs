//! What a script configures before its connection starts: sysctls from shell lines and
//! `defaults.sh`-style files, `ip route … initcwnd N`, and socket options. Each modelled
//! setting maps to one `[tcp]` field of the linux profile (scenario/profile.rs); the rest
//! are reported as ignored.

use iwlab_core::scenario::model::TcpSpec;
use iwlab_core::scenario::units::Bytes;
use iwlab_core::tcp::config::TcpConfig;
use iwlab_core::tcp::pacing::{PacerRule, LINUX_MIN_TSO_SEGS};
use std::path::Path;

/// Linux's MSS on a 1500-byte MTU: what it advertises unless TCP_MAXSEG lowers it.
pub const DEFAULT_ADV_MSS: u32 = 1460;
/// RFC 9293 §3.7.1: the MSS to assume when the peer sends none.
pub const DEFAULT_PEER_MSS: u32 = 536;
/// Bytes of the timestamps option on every segment (10, padded to 12).
pub const TS_OPTION_BYTES: u32 = 12;
/// The kernel's timer clock, CONFIG_HZ: Kconfig's default (`HZ_250`) and the kernel the scripts
/// were checked on. Scenarios keep exact timers (`tcp.hz = 0`); a script is Linux, so its
/// timers count jiffies (docs/conformance.md, "Timers"). No sysctl sets it.
pub const KERNEL_HZ: u32 = 250;

#[derive(Clone, Debug)]
pub struct Settings {
    /// `[tcp]` over the linux profile, timers in jiffies at `KERNEL_HZ`.
    pub spec: TcpSpec,
    /// `ip route … initcwnd N` (TCP_INIT_CWND = 10 otherwise).
    pub initcwnd: u32,
    /// TCP_MAXSEG.
    pub maxseg: Option<u32>,
    /// `tc qdisc … root fq`: the flow is paced (sch_fq honours each skb's departure time).
    pub fq: bool,
    /// `net.ipv4.tcp_min_tso_segs`.
    pub min_tso_segs: u32,
    /// `SO_MAX_PACING_RATE` (bytes/s); setting it also makes Linux pace the socket itself
    /// (`sk_setsockopt()`: `sk_pacing_status` NONE → NEEDED, `tcp_needs_internal_pacing()`).
    pub max_pacing_rate: Option<u64>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            spec: TcpSpec { profile: Some("linux".into()), hz: Some(KERNEL_HZ), ..TcpSpec::default() },
            initcwnd: 10,
            maxseg: None,
            fq: false,
            min_tso_segs: LINUX_MIN_TSO_SEGS,
            max_pacing_rate: None,
        }
    }
}

/// The outcome of one setting: a line for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// Changed the endpoint's configuration.
    Set(String),
    /// Not modelled by the engine, or no effect on it.
    Ignored(String),
    /// Not modelled, and it changes what Linux sends (pacing): a script failing while it is in
    /// force is not a verdict on the engine's TCP.
    Unsupported(String),
    /// The interpreter cannot honour it at all (a qdisc that drops what TCP sends): the script
    /// is UNSUPPORTED at this line.
    Refused(String),
}

/// CUBIC's module parameters (/sys/module/tcp_cubic/parameters/) at Linux's defaults, which
/// the engine's CUBIC and HyStart use (net/ipv4/tcp_cubic.c).
const CUBIC_PARAMETERS: &[(&str, &str)] = &[
    ("fast_convergence", "1"),
    ("beta", "717"),
    ("initial_ssthresh", "0"),
    ("bic_scale", "41"),
    ("tcp_friendliness", "1"),
    ("hystart", "1"),
    ("hystart_detect", "3"),
    ("hystart_low_window", "16"),
    ("hystart_ack_delta_us", "2000"),
];

/// Drops output redirections to /dev/null (`> /dev/null`, `2>&1`, `&>/dev/null`): they change
/// nothing the engine could model.
fn drop_redirections(words: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = words.into_iter().peekable();
    while let Some(w) = it.next() {
        if matches!(w.as_str(), "2>&1" | ">/dev/null" | "2>/dev/null" | "&>/dev/null" | "1>/dev/null") {
            continue;
        }
        if matches!(w.as_str(), ">" | "2>" | "&>" | "1>" | ">>") && it.peek().map(String::as_str) == Some("/dev/null") {
            it.next();
            continue;
        }
        out.push(w);
    }
    out
}

/// Splits a command into words as `sh` does for simple quoting ("a b" and 'a b' are one word).
fn shell_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut any = false;
    for ch in s.chars() {
        match (quote, ch) {
            (None, '"' | '\'') => {
                quote = Some(ch);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (_, c) => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

fn flag(v: &str) -> Option<bool> {
    v.trim().parse::<i64>().ok().map(|n| n != 0)
}

impl Settings {
    /// The MSS this side advertises in its SYN or SYN-ACK.
    pub fn adv_mss(&self) -> u32 {
        self.maxseg.unwrap_or(DEFAULT_ADV_MSS).min(DEFAULT_ADV_MSS)
    }

    pub fn timestamps(&self) -> bool {
        self.spec.timestamps.unwrap_or(true)
    }

    /// The engine configuration for a connection whose peer announced `peer_mss` and with
    /// `ts` = timestamps in use on both sides (Linux `tcp_sync_mss`: the smaller MSS, less
    /// the timestamp option); `peer_sack` = the peer's SYN carried sackOK (SACK is used only
    /// when both sides offer it: `tcp_parse_options()` sets `sack_ok` from the peer's SYN).
    pub fn config(&self, peer_mss: Option<u32>, ts: bool, peer_sack: bool) -> Result<TcpConfig, String> {
        let mut spec = self.spec.clone();
        let sack = spec.sack.unwrap_or(true) && peer_sack;
        spec.sack = Some(sack);
        if sack {
            // RACK loss detection: Linux 6.18 uses it with SACK whatever net.ipv4.tcp_recovery
            // says (tests/conformance/rack-on-whatever-tcp-recovery.pkt).
            spec.recovery = Some("rack".into());
        } else {
            // Without SACK Linux neither probes (tcp_schedule_loss_probe needs tcp_is_sack)
            // nor runs RACK: NewReno-style recovery, as the profile does for sack = false.
            spec.tlp = None;
        }
        let mss = peer_mss.unwrap_or(DEFAULT_PEER_MSS).min(self.adv_mss()) - if ts { TS_OPTION_BYTES } else { 0 };
        spec.mss = Some(Bytes::new(mss as u64));
        let mut cfg = iwlab_core::scenario::tcp_config(&spec).map_err(|e| e.to_string())?;
        // Linux paces a flow only under fq or once SO_MAX_PACING_RATE was set (cubic and reno
        // never ask for it: tcp_needs_internal_pacing()); then every skb is a TSO burst.
        if self.fq || self.max_pacing_rate.is_some() {
            cfg.pacing.enabled = true;
            cfg.pacing.rule = PacerRule::Linux;
            cfg.pacing.tso_min_segs = Some(self.min_tso_segs);
            cfg.pacing.max_rate = self.max_pacing_rate;
        }
        Ok(cfg)
    }

    /// One `net.ipv4.*` sysctl (name without the prefix).
    pub fn sysctl(&mut self, name: &str, value: &str) -> Applied {
        let v = value.trim().trim_matches(['"', '\'']);
        let full = format!("net.ipv4.{name}={v}");
        let set = |s: String| Applied::Set(format!("{full} → tcp.{s}"));
        let bad = || Applied::Ignored(format!("{full}: value not understood"));
        match name {
            "tcp_sack" => flag(v).map_or_else(bad, |b| {
                self.spec.sack = Some(b);
                set(format!("sack = {b}"))
            }),
            "tcp_timestamps" => flag(v).map_or_else(bad, |b| {
                self.spec.timestamps = Some(b);
                set(format!("timestamps = {b}"))
            }),
            // Bit 0x1 once chose RACK over RFC 6675's dupthresh; Linux 6.18 marks losses with
            // RACK whatever its value (observed: rack-on-whatever-tcp-recovery.pkt), and the
            // other bits (0x2 static reordering window, 0x4 no dupthresh) are not modelled.
            "tcp_recovery" => match v.parse::<u32>() {
                Ok(_) => Applied::Ignored(format!(
                    "{full}: not modelled (RACK loss detection is always on with SACK, as in Linux 6.18)"
                )),
                Err(_) => bad(),
            },
            // 3 and 4 enable the Tail Loss Probe (tcp_schedule_loss_probe); 0..2 do not.
            "tcp_early_retrans" => v.parse::<u32>().map_or_else(
                |_| bad(),
                |n| {
                    self.spec.tlp = Some(n >= 3);
                    set(format!("tlp = {}", n >= 3))
                },
            ),
            "tcp_reordering" => v.parse::<u32>().ok().filter(|&n| n >= 1).map_or_else(bad, |n| {
                self.spec.dupthresh = Some(n);
                set(format!("dupthresh = {n}"))
            }),
            "tcp_slow_start_after_idle" => flag(v).map_or_else(bad, |b| {
                self.spec.restart_after_idle = Some(b);
                set(format!("restart_after_idle = {b}"))
            }),
            // Any non-zero value turns F-RTO on (with SACK it is RFC 5682's SACK-enhanced
            // version whatever the value: tcp_enter_loss() reads it as a flag).
            "tcp_frto" => v.parse::<u32>().map_or_else(
                |_| bad(),
                |n| {
                    self.spec.frto = Some(n != 0);
                    set(format!("frto = {}", n != 0))
                },
            ),
            "tcp_dsack" => flag(v).map_or_else(bad, |b| {
                self.spec.dsack = Some(b);
                set(format!("dsack = {b}"))
            }),
            "tcp_congestion_control" => self.congestion(v),
            // tcp_update_pacing_rate(): percent of cwnd/srtt in slow start and after it.
            "tcp_pacing_ss_ratio" | "tcp_pacing_ca_ratio" => v.parse::<u32>().map_or_else(
                |_| bad(),
                |n| {
                    let ss = name == "tcp_pacing_ss_ratio";
                    *(if ss { &mut self.spec.pacing_ss_ratio } else { &mut self.spec.pacing_ca_ratio }) = Some(n);
                    set(format!(
                        "{} = {n} (used while the flow is paced)",
                        if ss { "pacing_ss_ratio" } else { "pacing_ca_ratio" }
                    ))
                },
            ),
            "tcp_min_tso_segs" => v.parse::<u32>().ok().filter(|&n| n >= 1).map_or_else(bad, |n| {
                self.min_tso_segs = n;
                Applied::Set(format!("{full} → TSO bursts of at least {n} segments while the flow is paced"))
            }),
            // 1 = request ECN on outgoing connections and accept it; 0 = never. (2, accept only
            // when requested, has no single engine switch.)
            "tcp_ecn" if v == "0" || v == "1" => {
                self.spec.ecn = Some(v == "1");
                set(format!("ecn = {}", v == "1"))
            }
            "tcp_syn_retries" => v.parse::<u32>().map_or_else(
                |_| bad(),
                |n| {
                    self.spec.syn_retries = Some(n);
                    set(format!("syn_retries = {n}"))
                },
            ),
            _ => Applied::Ignored(format!("{full}: not modelled by the engine")),
        }
    }

    /// TCP_CONGESTION or `net.ipv4.tcp_congestion_control`.
    pub fn congestion(&mut self, name: &str) -> Applied {
        match name {
            "cubic" | "reno" => {
                self.spec.cc = Some(name.into());
                Applied::Set(format!("congestion control {name} → tcp.cc = {name:?}"))
            }
            _ => Applied::Ignored(format!(
                "congestion control {name:?} is not modelled (cubic, reno); kept {:?}",
                self.spec.cc.as_deref().unwrap_or("cubic")
            )),
        }
    }

    /// A shell command line (packetdrill runs it with `system()`): sysctls, `echo V >
    /// /proc/sys/net/ipv4/X`, `ip route … initcwnd N`, and `*.sh` files (read relative to
    /// `dir`, line by line). Returns one entry per command.
    pub fn shell(&mut self, cmd: &str, dir: &Path, depth: u32) -> Vec<Applied> {
        let mut out = Vec::new();
        let joined = cmd.replace("\\\n", " ");
        for part in joined.split(['\n', ';']).flat_map(|p| p.split("&&")) {
            let owned = drop_redirections(shell_words(part));
            let words: Vec<&str> = owned.iter().map(String::as_str).collect();
            if words.is_empty() || words[0].starts_with('#') {
                continue;
            }
            let program = words[0].rsplit('/').next().unwrap_or(words[0]);
            match program {
                "sysctl" => {
                    for w in words[1..].iter().filter(|w| !w.starts_with('-')) {
                        match w.split_once('=') {
                            Some((k, v)) => {
                                let k = k.replace('/', ".");
                                match k.strip_prefix("net.ipv4.") {
                                    Some(n) => out.push(self.sysctl(n, v)),
                                    None => out.push(Applied::Ignored(format!("{k}={v}: not modelled by the engine"))),
                                }
                            }
                            None => out.push(Applied::Ignored(format!("sysctl {w}: no value to set"))),
                        }
                    }
                }
                "echo" if words.len() == 4 && words[2] == ">" => out.push(self.proc_write(words[3], words[1])),
                // packetdrill's helper: `set_sysctls.py /proc/sys/net/ipv4/NAME=VALUE …` writes
                // each file and saves the old values for a restore script.
                "set_sysctls.py" => {
                    for w in &words[1..] {
                        match w.split_once('=') {
                            Some((path, v)) => out.push(self.proc_write(path, v)),
                            None => out.push(Applied::Ignored(format!("set_sysctls.py {w}: no value to set"))),
                        }
                    }
                }
                w if w.starts_with("sysctl_restore_") => out.push(Applied::Ignored(format!(
                    "`{}`: restores the sysctls of set_sysctls.py (no effect on the connection)",
                    part.trim()
                ))),
                "ip" if words.get(1) == Some(&"route") => out.push(self.route(&words)),
                "ip" if words.get(1) == Some(&"tcp_metrics") => out.push(Applied::Ignored(
                    "ip tcp_metrics: no effect (the engine keeps no metrics between connections)".into(),
                )),
                "tc" if words.get(1) == Some(&"qdisc") => out.push(self.qdisc(&words)),
                w if w.ends_with(".sh") => {
                    let w = words[0];
                    let path = dir.join(w);
                    match std::fs::read_to_string(&path) {
                        Ok(text) if depth < 4 => out.extend(self.shell(&text, path.parent().unwrap_or(dir), depth + 1)),
                        Ok(_) => out.push(Applied::Ignored(format!("{w}: nested too deep"))),
                        Err(_) => out.push(Applied::Ignored(format!("{w}: no such file next to the script"))),
                    }
                }
                _ => out.push(Applied::Ignored(format!("`{}`: not modelled by the engine", part.trim()))),
            }
        }
        out
    }

    /// `echo VALUE > PATH` or set_sysctls.py's `PATH=VALUE`.
    fn proc_write(&mut self, path: &str, value: &str) -> Applied {
        if let Some(n) = path.strip_prefix("/proc/sys/net/ipv4/") {
            return self.sysctl(n, value);
        }
        if let Some(p) = path.strip_prefix("/sys/module/tcp_cubic/parameters/") {
            let v = value.trim().trim_matches(['"', '\'']);
            return match CUBIC_PARAMETERS.iter().find(|(n, _)| *n == p) {
                Some((_, d)) if *d == v => {
                    Applied::Ignored(format!("tcp_cubic {p}={v}: Linux's default, which the engine's CUBIC uses"))
                }
                Some((_, d)) => Applied::Unsupported(format!(
                    "tcp_cubic {p}={v}: the engine's CUBIC has Linux's default {d}, not modelled otherwise"
                )),
                None => Applied::Ignored(format!("tcp_cubic {p}={v}: not modelled by the engine")),
            };
        }
        Applied::Ignored(format!("{path}={value}: not modelled by the engine"))
    }

    fn route(&mut self, words: &[&str]) -> Applied {
        let line = words.join(" ");
        match words.iter().position(|w| *w == "initcwnd").and_then(|i| words.get(i + 1)) {
            Some(n) => match n.parse::<u32>() {
                Ok(n) if n >= 1 => {
                    self.initcwnd = n;
                    Applied::Set(format!("{line} → initial window {n} segments"))
                }
                _ => Applied::Ignored(format!("{line}: initcwnd {n} is not a positive integer")),
            },
            None => Applied::Ignored(format!("{line}: only initcwnd is modelled")),
        }
    }

    /// `tc qdisc … root KIND`: fq holds each skb until the departure time TCP stamped on it
    /// (`tcp_update_skb_after_send()`: the flow paced at sk_pacing_rate, in TSO bursts sized by
    /// `tcp_tso_autosize()`); a FIFO that takes every packet sends as the engine does. Anything
    /// else would drop or hold what TCP sends, which the engine has no layer for: refused.
    fn qdisc(&mut self, words: &[&str]) -> Applied {
        let line = words.join(" ");
        if words.iter().any(|w| matches!(*w, "del" | "delete")) {
            return Applied::Ignored(format!("`{line}`: no effect (the engine sends without a qdisc)"));
        }
        let Some(at) = words.iter().position(|w| *w == "root") else {
            return Applied::Refused(format!("`{line}`: only a root qdisc is read"));
        };
        let (kind, params) = (words.get(at + 1).copied().unwrap_or(""), &words[(at + 2).min(words.len())..]);
        match kind {
            "fq" => {
                self.fq = true;
                Applied::Set(format!(
                    "`{line}` → the flow is paced at sk_pacing_rate in TSO bursts sized by tcp_tso_autosize()"
                ))
            }
            "pfifo" | "bfifo" | "pfifo_fast" | "noqueue" => match fifo_refusal(kind, params) {
                Some(why) => Applied::Refused(format!("`{line}`: {why}")),
                None => Applied::Ignored(format!("`{line}`: no effect (a FIFO: the engine sends as it does)")),
            },
            _ => Applied::Refused(format!("`{line}`: the qdisc {kind:?} is not modelled")),
        }
    }
}

/// Why a FIFO's parameters cannot be honoured, if they cannot: net/sched/sch_fifo.c enqueues
/// while the queue is below `limit` (packets for pfifo, bytes for bfifo), so pfifo `limit 0`
/// drops every packet and bfifo below one packet drops full-sized ones — local transmit
/// failures (`tcp_transmit_skb()` errors), which the engine does not model.
fn fifo_refusal(kind: &str, params: &[&str]) -> Option<String> {
    let mut rest = params.iter();
    while let Some(p) = rest.next() {
        if *p != "limit" || kind == "pfifo_fast" || kind == "noqueue" {
            return Some(format!("the {kind} parameter {p:?} is not modelled"));
        }
        let v = rest.next().map(|v| v.trim_end_matches('b'));
        let Some(n) = v.and_then(|v| v.parse::<u64>().ok()) else {
            return Some(format!("{kind} limit {:?}: not a number", v.unwrap_or("")));
        };
        if kind == "pfifo" && n == 0 {
            return Some("pfifo limit 0 drops every packet (local transmit failures are not modelled)".into());
        }
        if kind == "bfifo" && n < 1500 {
            return Some(format!("bfifo limit {n} bytes drops full-sized packets (local transmit failures are not modelled)"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modelled_sysctls_change_the_config_and_others_are_ignored() {
        let mut s = Settings::default();
        let r = s.shell(
            "sysctl -q net.ipv4.tcp_sack=0 net.ipv4.tcp_dsack=0 net.ipv4.tcp_rmem=\"4096 540000 15728640\"; echo 0 > /proc/sys/net/ipv4/tcp_timestamps\n\
             ip route change local 192.0.2.1 dev lo initcwnd 4\ntc qdisc add dev tun0 root pfifo",
            Path::new("."),
            0,
        );
        assert!(matches!(r[0], Applied::Set(_)) && matches!(r[1], Applied::Set(_)));
        assert_eq!(r[2], Applied::Ignored("net.ipv4.tcp_rmem=4096 540000 15728640: not modelled by the engine".into()));
        assert!(matches!(r[3], Applied::Set(_)) && matches!(r[4], Applied::Set(_)));
        assert!(matches!(r[5], Applied::Ignored(_)));
        assert_eq!(r.len(), 6);
        assert_eq!(s.initcwnd, 4);
        let c = s.config(Some(1000), false, true).unwrap();
        assert!(!c.sack && !c.timestamps && !c.dsack);
        assert_eq!(c.mss, 1000);
    }

    #[test]
    fn a_script_runs_the_kernels_timers_in_jiffies() {
        // Linux counts its TCP timers in jiffies at CONFIG_HZ; scenarios under the linux
        // profile keep exact timers.
        let cfg = Settings::default().config(Some(1000), true, true).unwrap();
        assert_eq!(cfg.hz, KERNEL_HZ);
        let spec = TcpSpec { profile: Some("linux".into()), ..TcpSpec::default() };
        assert_eq!(iwlab_core::scenario::tcp_config(&spec).unwrap().hz, 0);
    }

    #[test]
    fn a_qdisc_that_would_drop_what_tcp_sends_is_refused() {
        let mut s = Settings::default();
        let refused = |r: Vec<Applied>| matches!(r.as_slice(), [Applied::Refused(_)]);
        assert!(refused(s.shell("tc qdisc replace dev tun0 root pfifo limit 0", Path::new("."), 0)));
        assert!(refused(s.shell("tc qdisc replace dev tun0 root bfifo limit 1000", Path::new("."), 0)));
        assert!(refused(s.shell("tc qdisc add dev tun0 root netem delay 10ms", Path::new("."), 0)));
        assert!(refused(s.shell("tc qdisc add dev tun0 root pfifo_fast bands 3", Path::new("."), 0)));
        for fifo in ["pfifo", "pfifo limit 1", "bfifo limit 3000", "noqueue"] {
            let r = s.shell(&format!("tc qdisc replace dev tun0 root {fifo}"), Path::new("."), 0);
            assert!(matches!(r.as_slice(), [Applied::Ignored(_)]), "{fifo}: {r:?}");
        }
    }

    #[test]
    fn a_shell_file_is_read_from_its_path_relative_to_the_script() {
        let dir = std::env::temp_dir().join(format!("hc-conform-sh-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("common")).unwrap();
        std::fs::create_dir_all(dir.join("cubic")).unwrap();
        std::fs::write(dir.join("common/defaults.sh"), "sysctl -q net.ipv4.tcp_sack=0\n").unwrap();
        let mut s = Settings::default();
        let r = s.shell("../common/defaults.sh", &dir.join("cubic"), 0);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(r, vec![Applied::Set("net.ipv4.tcp_sack=0 → tcp.sack = false".into())]);
    }

    #[test]
    fn tcp_frto_zero_turns_frto_off_and_any_other_value_on() {
        let mut s = Settings::default();
        assert!(s.config(Some(1000), false, true).unwrap().frto, "the linux profile runs F-RTO");
        let r = s.shell("sysctl -q net.ipv4.tcp_frto=0", Path::new("."), 0);
        assert_eq!(r[0], Applied::Set("net.ipv4.tcp_frto=0 → tcp.frto = false".into()));
        assert!(!s.config(Some(1000), false, true).unwrap().frto);
        s.shell("sysctl -q net.ipv4.tcp_frto=2", Path::new("."), 0);
        assert!(s.config(Some(1000), false, true).unwrap().frto);
    }

    #[test]
    fn tcp_recovery_zero_leaves_rack_on_as_linux_6_18_does() {
        let mut s = Settings::default();
        let r = s.shell("sysctl -q net.ipv4.tcp_recovery=0", Path::new("."), 0);
        assert!(matches!(&r[0], Applied::Ignored(m) if m.contains("RACK")), "{r:?}");
        assert_eq!(s.config(Some(1000), false, true).unwrap().recovery, iwlab_core::tcp::config::RecoveryKind::Rack);
    }

    #[test]
    fn mss_is_the_smaller_one_less_timestamps() {
        let s = Settings::default();
        assert_eq!(s.config(Some(1000), true, true).unwrap().mss, 988);
        assert_eq!(s.config(Some(9000), false, true).unwrap().mss, 1460);
        assert_eq!(s.config(None, false, true).unwrap().mss, 536);
    }

    #[test]
    fn fq_paces_the_flow_in_tso_bursts_and_without_it_cubic_is_not_paced() {
        let mut s = Settings::default();
        let c = s.config(Some(1000), false, true).unwrap();
        assert!(
            !c.pacing.enabled && c.pacing.tso_min_segs.is_none(),
            "no qdisc, cubic: tcp_needs_internal_pacing() is false"
        );
        let r = s.shell(
            "tc qdisc replace dev tun0 root fq\nsysctl -q net.ipv4.tcp_min_tso_segs=4 net.ipv4.tcp_pacing_ss_ratio=150",
            Path::new("."),
            0,
        );
        assert!(r.iter().all(|a| matches!(a, Applied::Set(_))), "{r:?}");
        let c = s.config(Some(1000), false, true).unwrap();
        assert!(c.pacing.enabled && c.pacing.rule == PacerRule::Linux);
        assert_eq!((c.pacing.tso_min_segs, c.pacing.ss_ratio, c.pacing.ca_ratio), (Some(4), 150, 120));
        // A FIFO does not pace.
        let mut f = Settings::default();
        f.shell("tc qdisc replace dev tun0 root pfifo", Path::new("."), 0);
        assert!(!f.config(Some(1000), false, true).unwrap().pacing.enabled);
    }
}
