//! Scenario files: every preset parses, validates and builds into the documented values;
//! units; round trips; one test per kind of bad input (the message names the field path,
//! the value and what is allowed, and nothing panics); and fuzzing of the parsers.

use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::net::queue::{Limit, QueueConfig};
use iwlab_core::scenario::units::{Bytes, Duration, QueueLimit, Rate, RateOrShare, Size};
use iwlab_core::scenario::{Built, ErrorKind, GroupSide, Scenario, ScenarioError};
use iwlab_core::tcp::cc::cubic::SsthreshFrom;
use iwlab_core::tcp::cc::CcConfig;
use iwlab_core::tcp::config::{DelayedAck, RecoveryKind, SynLossRule};
use iwlab_core::tcp::iw::{IwContext, IwPolicy};
use iwlab_core::traffic::dist::{CdfSource, DistConfig};
use iwlab_core::traffic::{AppConfig, Arrivals, HttpVersion};
use proptest::prelude::*;
use std::path::PathBuf;

const PRESETS: &[&str] = &["rfc2415", "congested-links", "rfc6928", "iw-function", "bench-bulk"];

fn preset_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(format!("{name}.toml"))
}

fn preset_text(name: &str) -> String {
    std::fs::read_to_string(preset_path(name)).unwrap()
}

fn preset(name: &str) -> Scenario {
    Scenario::from_path(preset_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn built(name: &str) -> Built {
    preset(name).build(None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

/// The IW in bytes policy instance `idx` gives a connection with this MSS and declared size.
fn iw_bytes(b: &mut Built, idx: usize, mss: u64, declared: Option<u64>) -> u64 {
    let ctx = IwContext { mss, dst: 0, declared_size: declared, now: SimTime::ZERO };
    b.sim.core.iw[idx].initial_window(&ctx)
}

// ---------------------------------------------------------------------------------------
// Presets

#[test]
fn every_preset_parses_validates_and_builds() {
    for name in PRESETS {
        let s = preset(name);
        assert_eq!(s.name, *name);
        s.validate().unwrap();
        let b = s.build(None).unwrap();
        assert_eq!(b.seed, 1, "{name}");
        assert_eq!(b.end, SimTime::ZERO + s.duration.get(), "{name}");
        assert!(b.warmup < b.end, "{name}");
        assert!(!b.apps.is_empty(), "{name}");
        for a in &b.apps {
            assert_eq!(a.app_ids.len(), a.starts.len(), "{name}/{}", a.name);
            assert_eq!(a.app_ids.len(), a.configs.len(), "{name}/{}", a.name);
            assert!(a.starts.iter().all(|&t| t < b.end), "{name}/{}: starts before the end", a.name);
        }
        // Text and file give the same scenario.
        let from_text = Scenario::from_toml_str(&preset_text(name)).unwrap();
        assert_eq!(Scenario { base_dir: None, ..s }, from_text, "{name}");
    }
}

/// Runs every preset for 2 simulated seconds and checks the packet accounting identity.
/// Needs the real `traffic::build_app` (the scenario branch builds with a stub that opens no
/// connection, so a run would prove nothing).
#[test]
fn every_preset_runs_two_seconds_with_consistent_accounting() {
    for name in PRESETS {
        let mut s = preset(name);
        s.duration = "2s".parse().unwrap();
        s.warmup = Duration::ZERO;
        let sim = s.build(Some(3)).unwrap().run();
        sim.check_accounting().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(sim.core.acct.created > 0, "{name}: no packet in 2 s");
    }
}

#[test]
fn rfc2415_preset_is_spec_s1_1() {
    let s = preset("rfc2415");
    assert_eq!(s.duration, "360s".parse().unwrap());
    let mut b = s.build(None).unwrap();
    // 1.5 Mb/s, 50 ms bottleneck, drop-tail 25 packets, both directions.
    for l in [&b.topology.forward, &b.topology.reverse] {
        assert_eq!((l.rate_bps, l.delay), (1_500_000, ms(50)));
        assert_eq!(l.queue, QueueConfig::DropTail { limit: Limit::Packets(25) });
    }
    assert_eq!(b.sim.core.topo.ports[b.bottleneck_forward as usize].rate_bps, 1_500_000);
    // 4 client nodes on the left, 4 server nodes on the right, 10 Mb/s 1 ms access links.
    assert_eq!(b.groups.len(), 2);
    assert_eq!((b.groups[0].name.as_str(), b.groups[0].side, b.groups[0].nodes.len()), ("clients", GroupSide::Left, 4));
    assert_eq!(
        (b.groups[1].name.as_str(), b.groups[1].side, b.groups[1].nodes.len()),
        ("servers", GroupSide::Right, 4)
    );
    for g in &b.groups {
        for h in &g.access {
            assert_eq!(
                (h.up_rate_bps, h.down_rate_bps, h.up_delay, h.down_delay),
                (10_000_000, 10_000_000, ms(1), ms(1))
            );
        }
    }
    // TCP: Reno, no SACK, an ACK per segment, RTO 3 s / 0.2 s / 60 s, G 10 ms, 11-packet
    // window of 1460-byte segments.
    let tcp = b.apps[0].tcp.clone();
    assert_eq!(tcp.mss, 1460);
    assert_eq!(tcp.cc, CcConfig::Reno);
    assert_eq!(tcp.recovery, RecoveryKind::Reno);
    assert!(!tcp.sack && !tcp.timestamps);
    assert_eq!(tcp.delayed_ack, None);
    assert_eq!((tcp.initial_rto, tcp.min_rto, tcp.max_rto, tcp.granularity), (ms(3000), ms(200), ms(60_000), ms(10)));
    assert_eq!(tcp.rcv_wnd, 11 * 1460);
    assert_eq!(tcp.syn_loss, SynLossRule::ReduceToOne);
    // 16 web clients: client i on client node i mod 4, server node i mod 4; starts in [0, 5] s.
    let (web, ftp) = (&b.apps[0], &b.apps[1]);
    assert_eq!((web.kind, web.app_ids.len(), ftp.kind, ftp.app_ids.len()), ("web", 16, "ftp", 1));
    for (i, &(c, sv)) in web.hosts.iter().enumerate() {
        assert_eq!((c, sv), (b.groups[0].nodes[i % 4], b.groups[1].nodes[i % 4]));
    }
    assert_eq!(ftp.hosts[0], (b.groups[0].nodes[0], b.groups[1].nodes[0]));
    assert!(web.starts.iter().chain(&ftp.starts).all(|&t| t <= SimTime::ZERO + ms(5000)));
    let distinct: std::collections::BTreeSet<_> = web.starts.iter().collect();
    assert_eq!(distinct.len(), 16, "each client draws its own start");
    match &web.configs[0] {
        AppConfig::Web { version, request_bytes, primary, embedded, embedded_count, think, pages, .. } => {
            assert_eq!((*version, *request_bytes, *pages), (HttpVersion::Http10, 250, None));
            let object = DistConfig::Clamped {
                inner: Box::new(DistConfig::Pareto { shape: 1.2, scale: 1122.46 }),
                min: None,
                cap: Some(1e6),
            };
            assert_eq!((primary, embedded), (&object, &object));
            assert_eq!(embedded_count, &DistConfig::Constant { value: 3.0 });
            assert_eq!(think, &DistConfig::Uniform { lo: 1.0, hi: 5.0 });
        }
        other => panic!("{other:?}"),
    }
    match &ftp.configs[0] {
        AppConfig::Ftp { size, request_bytes, gap, count, .. } => {
            assert_eq!((*size, *request_bytes, gap, *count), (1_000_000, 250, &None, None));
        }
        other => panic!("{other:?}"),
    }
    // IW 1 by default, one policy instance per (host, policy).
    let idx = web.server_iw[0];
    assert_eq!(b.iw[idx].policy, "iw1");
    assert_eq!(iw_bytes(&mut b, idx, 1460, None), 1460);
    assert_eq!(b.iw.len(), 8, "4 client hosts + 4 server hosts, one policy each");
}

#[test]
fn rfc2415_grid_points_are_one_field_each() {
    // IW 3, 32 web clients, HTTP/1.1: the fields the comments name.
    let text = preset_text("rfc2415")
        .replace("default = \"iw1\"", "default = \"iw3\"")
        .replace("count = 16", "count = 32")
        .replace("http = \"1.0\"", "http = \"1.1\"");
    let mut b = Scenario::from_toml_str(&text).unwrap().build(None).unwrap();
    assert_eq!(b.apps[0].app_ids.len(), 32);
    assert!(matches!(b.apps[0].configs[0], AppConfig::Web { version: HttpVersion::Http11, .. }));
    let idx = b.apps[0].server_iw[0];
    assert_eq!(iw_bytes(&mut b, idx, 1460, None), 3 * 1460);
}

#[test]
fn half_and_half_populations_are_two_entries_with_their_own_policy_instances() {
    let text = preset_text("rfc2415").replace("count = 16", "count = 8");
    let mut s = Scenario::from_toml_str(&text).unwrap();
    s.apps.truncate(1); // no FTP
    let mut half = s.apps[0].clone();
    half.common.server_iw = Some("iw3".into());
    half.common.client_iw = Some("iw3".into());
    half.common.name = Some("web-iw3".into());
    s.apps.push(half);
    s.validate().unwrap();
    let mut b = s.build(None).unwrap();
    let (a, c) = (b.apps[0].server_iw.clone(), b.apps[1].server_iw.clone());
    // Same server hosts, different policy names: separate instances.
    assert_eq!(b.apps[0].hosts, b.apps[1].hosts);
    assert!(a.iter().all(|i| !c.contains(i)));
    assert_eq!(iw_bytes(&mut b, a[0], 1460, None), 1460);
    assert_eq!(iw_bytes(&mut b, c[0], 1460, None), 3 * 1460);
    // Same host and policy name across instances and entries: one shared instance.
    assert_eq!(a[0], a[4], "instances 0 and 4 share server node 0 and its iw1 instance");
    for (i, inst) in b.iw.iter().enumerate() {
        assert_eq!(b.iw.iter().filter(|o| o.node == inst.node && o.policy == inst.policy).count(), 1, "{i}");
    }
}

#[test]
fn congested_links_preset_is_spec_s1_2() {
    let mut b = built("congested-links");
    let fwd = &b.topology.forward;
    assert_eq!((fwd.rate_bps, fwd.delay), (2_000_000, ms(48)));
    // RTT = 2 × (1 + 48 + 1) ms = 100 ms: the paper's trace (§3, Table 1) sends its second flight
    // about 100 ms after the first.
    let rtt = 2 * (b.groups[0].access[0].up_delay + fwd.delay + b.groups[2].access[0].down_delay).as_nanos();
    assert_eq!(rtt, ms(100).as_nanos());
    let tcp = b.apps[0].tcp.clone();
    assert_eq!((tcp.mss, tcp.timestamps), (1448, true));
    // The short flows' receiver ACKs every segment of these responses: Linux's quick-ACK mode
    // at connection start (the `linux` profile: 16 quick ACKs, then delayed ACKs of 40 ms).
    for a in &b.apps[..2] {
        assert_eq!(a.tcp.quickack, 16, "short flows: an ACK per segment at first");
        assert_eq!(a.tcp.delayed_ack, Some(DelayedAck { segments: 2, timeout: ms(40) }));
    }
    let (iw3, iw10) = (b.apps[0].server_iw[0], b.apps[1].server_iw[0]);
    assert_eq!(iw_bytes(&mut b, iw3, 1448, None), 3 * 1448);
    assert_eq!(iw_bytes(&mut b, iw10, 1448, None), 10 * 1448);
    for a in &b.apps[..2] {
        match &a.configs[0] {
            AppConfig::ShortFlows { response_bytes, arrivals, .. } => {
                assert_eq!(*response_bytes, 10 * 1448, "10 full segments");
                assert_eq!(arrivals, &Arrivals::Periodic(ms(2000)));
            }
            other => panic!("{other:?}"),
        }
    }
    // The two short-flow entries use the two client/server pairs.
    assert_ne!(b.apps[0].hosts[0].0, b.apps[1].hosts[0].0);
    assert_ne!(b.apps[0].hosts[0].1, b.apps[1].hosts[0].1);
    match &b.apps[2].configs[0] {
        AppConfig::Udp { rate_bps, payload_bytes, src, dst, .. } => {
            assert_eq!((*rate_bps, *payload_bytes), (1_200_000, 1472), "60 % of 2 Mb/s");
            assert_eq!((*src, *dst), (b.groups[3].nodes[0], b.groups[1].nodes[0]), "server side → client side");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn rfc6928_preset_draws_a_population_per_host_from_the_seed() {
    let s = preset("rfc6928");
    let mut b = s.build(None).unwrap();
    let clients = &b.groups[0];
    assert_eq!(clients.nodes.len(), 40);
    let mut rates: Vec<u64> = clients.access.iter().map(|h| h.down_rate_bps).collect();
    assert!(rates.iter().all(|&r| (20_000..=20_000_000).contains(&r)), "{rates:?}");
    assert!(clients.access.iter().all(|h| h.up_rate_bps == h.down_rate_bps && h.up_delay == h.down_delay));
    assert!(clients.access.iter().all(|h| (ms(2)..=ms(500)).contains(&h.down_delay)));
    rates.sort_unstable();
    let median = rates[20];
    assert!((500_000..=5_000_000).contains(&median), "median {median} b/s");
    // Same seed, same population; another seed, another one; the servers are fixed.
    let again = s.build(None).unwrap();
    assert_eq!(again.groups, b.groups);
    let other = s.build(Some(2)).unwrap();
    assert_ne!(other.groups[0].access, b.groups[0].access);
    assert_eq!(other.groups[1].access, b.groups[1].access);
    // Servers run the RFC 6928 IW: 10 segments at MSS 1448.
    let idx = b.apps[0].server_iw[0];
    assert_eq!(b.iw[idx].policy, "iw10");
    assert_eq!(iw_bytes(&mut b, idx, 1448, None), 14_480);
    // Client i on client host i, server host i mod 4.
    for (i, &(c, sv)) in b.apps[0].hosts.iter().enumerate() {
        assert_eq!((c, sv), (b.groups[0].nodes[i], b.groups[1].nodes[i % 4]));
    }
}

#[test]
fn iw_function_preset_is_spec_s1_4() {
    let mut b = built("iw-function");
    assert_eq!(b.topology.forward.rate_bps, 10_000_000);
    let a = &b.apps[0];
    assert_eq!((a.kind, a.app_ids.len(), a.hosts.len()), ("poisson-flows", 1, 10));
    let rate = match &a.configs[0] {
        AppConfig::PoissonFlows { pairs, rate_per_s, size, .. } => {
            assert_eq!(pairs.len(), 10);
            assert_eq!(
                size,
                &DistConfig::Clamped {
                    inner: Box::new(DistConfig::Empirical { source: CdfSource::Builtin("websearch".into()) }),
                    min: Some(1460.0),
                    cap: None
                }
            );
            *rate_per_s
        }
        other => panic!("{other:?}"),
    };
    // load 0.6 × 10 Mb/s / (8 × mean ≈ 1.71 MB) ≈ 0.44 flows/s.
    assert!((0.40..0.48).contains(&rate), "{rate}");
    // Size-based IW: θ = 200 000 B, V = 10, MinIW = 4.
    let idx = a.server_iw[0];
    assert_eq!(b.iw[idx].policy, "size-based");
    assert_eq!(iw_bytes(&mut b, idx, 1460, Some(200_000)), 10 * 1460);
    // s = 400 kB: ⌊0.5·10 + 0.5·4⌋ = 7 segments.
    assert_eq!(iw_bytes(&mut b, idx, 1460, Some(400_000)), 7 * 1460);
    assert_eq!(iw_bytes(&mut b, idx, 1460, None), 4 * 1460);
}

#[test]
fn bench_bulk_preset_has_100_flows_on_their_own_hosts() {
    let mut b = built("bench-bulk");
    let f = &b.topology.forward;
    assert_eq!(
        (f.rate_bps, f.delay, &f.queue),
        (100_000_000, ms(10), &QueueConfig::DropTail { limit: Limit::Packets(250) })
    );
    assert_eq!((b.groups[0].nodes.len(), b.groups[1].nodes.len()), (100, 100));
    assert!(b.groups.iter().flat_map(|g| &g.access).all(|h| h.down_rate_bps == 1_000_000_000 && h.down_delay == ms(1)));
    let a = &b.apps[0];
    assert_eq!(a.app_ids.len(), 100);
    let clients: std::collections::BTreeSet<_> = a.hosts.iter().map(|h| h.0).collect();
    let servers: std::collections::BTreeSet<_> = a.hosts.iter().map(|h| h.1).collect();
    assert_eq!((clients.len(), servers.len()), (100, 100));
    assert!(a.starts.iter().all(|&t| t <= SimTime::ZERO + ms(1000)));
    let t = a.tcp.clone();
    assert_eq!((t.recovery, t.sack, t.timestamps, t.mss), (RecoveryKind::NewReno, true, false, 1460));
    assert_eq!(t.delayed_ack, Some(DelayedAck { segments: 2, timeout: ms(200) }));
    assert_eq!(t.min_rto, ms(1000));
    assert!(matches!(a.configs[0], AppConfig::Bulk { upload: false, .. }));
    let idx = a.server_iw[0];
    assert_eq!(iw_bytes(&mut b, idx, 1460, None), 10 * 1460);
}

#[test]
fn relative_cdf_files_are_found_next_to_the_scenario() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cdf-file.toml");
    let b = Scenario::from_path(&path).unwrap().build(None).unwrap();
    match &b.apps[0].configs[0] {
        AppConfig::PoissonFlows { size: DistConfig::Empirical { source: CdfSource::File(f) }, rate_per_s, .. } => {
            assert!(f.ends_with("fixtures/sizes.csv"), "{f:?}");
            assert!(*rate_per_s > 0.0);
        }
        other => panic!("{other:?}"),
    }
    // From text, the relative path is not found (the error names the field and the file).
    let e = Scenario::from_toml_str(&std::fs::read_to_string(&path).unwrap()).unwrap_err();
    assert!(e.message().starts_with("apps[0].size: empirical CDF file sizes.csv"), "{e}");
}

#[test]
fn the_complete_example_in_the_format_doc_parses_and_builds() {
    let doc = include_str!("../../../docs/scenario-format.md");
    let start = doc.find("## A complete example").unwrap();
    let block = &doc[start..];
    let body = &block[block.find("```toml\n").unwrap() + 8..];
    let body = &body[..body.find("```").unwrap()];
    let s = Scenario::from_toml_str(body).unwrap_or_else(|e| panic!("{e}"));
    // Every feature it uses survives both round trips.
    assert_eq!(Scenario::from_toml_str(&s.to_toml_string().unwrap()).unwrap(), s);
    assert_eq!(Scenario::from_json_str(&s.to_json_string().unwrap()).unwrap(), s);
    let b = s.build(None).unwrap();
    assert_eq!(b.apps.len(), 4);
    let clients = &b.groups[0];
    assert!(clients
        .access
        .iter()
        .all(|h| h.up_rate_bps == 1_000_000 && (1_000_000..=20_000_000).contains(&h.down_rate_bps)));
    assert!(clients.access.iter().all(|h| h.up_delay == h.down_delay));
    assert_eq!(b.topology.reverse.queue, QueueConfig::DropTail { limit: Limit::Packets(100) });
    assert!(matches!(b.topology.forward.queue, QueueConfig::Red(_)));
    // 20 % of the 10 Mb/s bottleneck, servers (right) → clients (left).
    assert!(matches!(b.apps[2].configs[0], AppConfig::Udp { rate_bps: 2_000_000, .. }));
    // Web entries: instances 0..4 and 4..8 on distinct clients, different server policies.
    assert_eq!(b.apps[1].hosts[0].0, clients.nodes[4]);
    assert_ne!(b.apps[0].server_iw[0], b.apps[1].server_iw[0]);
    assert_eq!(b.apps[3].tcp.cc, CcConfig::Reno);
}

// ---------------------------------------------------------------------------------------
// Units

#[test]
fn unit_strings_parse_to_base_units() {
    assert_eq!("1.5Mbps".parse::<Rate>().unwrap().bps(), 1_500_000);
    assert_eq!("600kbps".parse::<Rate>().unwrap().bps(), 600_000);
    assert_eq!("10 Gb/s".parse::<Rate>().unwrap().bps(), 10_000_000_000);
    assert_eq!("50ms".parse::<Duration>().unwrap().get(), ms(50));
    assert_eq!("360s".parse::<Duration>().unwrap().get(), SimDuration::from_secs(360));
    assert_eq!("100us".parse::<Duration>().unwrap().get(), SimDuration::from_micros(100));
    // SI: MB = 10^6 bytes; binary prefixes spelled MiB.
    assert_eq!("1MB".parse::<Bytes>().unwrap().get(), 1_000_000);
    assert_eq!("1MiB".parse::<Bytes>().unwrap().get(), 1 << 20);
    assert_eq!("200kB".parse::<Bytes>().unwrap().get(), 200_000);
    assert_eq!("25pkt".parse::<QueueLimit>().unwrap().0, Limit::Packets(25));
    assert_eq!("64KiB".parse::<QueueLimit>().unwrap().0, Limit::Bytes(65_536));
    assert_eq!("11seg".parse::<Size>().unwrap().bytes(1460), 16_060);
    assert_eq!("60%".parse::<RateOrShare>().unwrap(), RateOrShare::Percent(60.0));
    // Bare numbers (TOML integers/floats) are in the base unit: bytes, seconds, b/s, packets.
    let s = Scenario::from_toml_str(
        &preset_text("rfc2415")
            .replace("duration = \"360s\"", "duration = 360")
            .replace("rate = \"1.5Mbps\"", "rate = 1500000")
            .replace("limit = \"25pkt\"", "limit = 25")
            .replace("min_rto = \"200ms\"", "min_rto = 0.2"),
    )
    .unwrap();
    assert_eq!(s, preset("rfc2415").tap_base_dir_none());
    // Exactness: no silent rounding.
    assert!("1.5B".parse::<Bytes>().unwrap_err().contains("whole number of B"));
    assert!("0.5ns".parse::<Duration>().unwrap_err().contains("whole number of ns"));
}

trait TapBaseDir {
    fn tap_base_dir_none(self) -> Self;
}
impl TapBaseDir for Scenario {
    fn tap_base_dir_none(mut self) -> Self {
        self.base_dir = None;
        self
    }
}

// ---------------------------------------------------------------------------------------
// Round trips

#[test]
fn toml_round_trip_gives_the_same_scenario_and_a_stable_text() {
    for name in PRESETS {
        let s = preset(name).tap_base_dir_none();
        let text = s.to_toml_string().unwrap();
        let back = Scenario::from_toml_str(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert_eq!(back, s, "{name}");
        assert_eq!(back.to_toml_string().unwrap(), text, "{name}: canonical text is a fixed point");
        // Built from the re-read scenario: the same network and start times.
        let (b1, b2) = (s.build(None).unwrap(), back.build(None).unwrap());
        assert_eq!(b1.groups, b2.groups, "{name}");
        assert_eq!(b1.topology, b2.topology, "{name}");
        let starts = |b: &Built| b.apps.iter().map(|a| a.starts.clone()).collect::<Vec<_>>();
        assert_eq!(starts(&b1), starts(&b2), "{name}");
    }
}

#[test]
fn every_tcp_option_round_trips_and_resolves() {
    let text = edit(
        "rfc2415",
        "timestamps = false",
        "timestamps = false\ninitial_rcv_wnd = \"4seg\"\ninitial_ssthresh = false\nabc_l = 2\nlimited_transmit = true\n\
         ecn = true\nrestart_after_idle = false\ndupthresh = 4\nsyn_retries = 2",
    )
    .replace("count = 16", "count = 16\ntcp = { cc = \"cubic\", cubic = { beta = 0.8, c = 0.5, ssthresh_from = \"cwnd\" }, initial_ssthresh = \"64kB\", delayed_ack = true }");
    let s = Scenario::from_toml_str(&text).unwrap();
    assert_eq!(Scenario::from_toml_str(&s.to_toml_string().unwrap()).unwrap(), s);
    assert_eq!(Scenario::from_json_str(&s.to_json_string().unwrap()).unwrap(), s);
    let b = s.build(None).unwrap();
    let (web, ftp) = (b.apps[0].tcp.clone(), b.apps[1].tcp.clone());
    assert_eq!(ftp.initial_rcv_wnd, Some(4 * 1460));
    assert_eq!((ftp.initial_ssthresh, ftp.abc_l, ftp.dupthresh, ftp.syn_retries), (u64::MAX, Some(2), 4, 2));
    assert!(ftp.limited_transmit && ftp.ecn && !ftp.restart_after_idle);
    assert_eq!(ftp.cc, CcConfig::Reno);
    match &web.cc {
        CcConfig::Cubic(c) => {
            assert_eq!((c.beta, c.c, c.fast_convergence, c.ssthresh_from), (0.8, 0.5, true, SsthreshFrom::Cwnd))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!((web.initial_ssthresh, web.delayed_ack), (64_000, Some(DelayedAck { segments: 2, timeout: ms(200) })));
    let e = reject(&text.replace("cc = \"cubic\", ", ""));
    assert_mentions(&e, &["apps[0].tcp.cubic", "cc = \"cubic\""]);
    let e = reject(&text.replace("ssthresh_from = \"cwnd\"", "ssthresh_from = \"pipe\""));
    assert_mentions(&e, &["apps[0].tcp.cubic.ssthresh_from", "\"pipe\"", "[\"flight-size\", \"cwnd\"]"]);
}

#[test]
fn json_round_trip_gives_the_same_scenario() {
    for name in PRESETS {
        let s = preset(name).tap_base_dir_none();
        let json = s.to_json_string().unwrap();
        let back = Scenario::from_json_str(&json).unwrap_or_else(|e| panic!("{name}: {e}\n{json}"));
        assert_eq!(back, s, "{name}");
    }
}

// ---------------------------------------------------------------------------------------
// Bad input: one test per kind; each message names the field, the value, what is allowed.

/// `name`'s text with the first occurrence of `from` outside a comment (which must exist)
/// replaced by `to`.
fn edit(name: &str, from: &str, to: &str) -> String {
    let text = preset_text(name);
    let at = text
        .match_indices(from)
        .map(|(i, _)| i)
        .find(|&i| {
            let line_start = text[..i].rfind('\n').map_or(0, |k| k + 1);
            !text[line_start..i].contains('#')
        })
        .unwrap_or_else(|| panic!("{name} has no {from:?} outside comments"));
    format!("{}{to}{}", &text[..at], &text[at + from.len()..])
}

fn reject(text: &str) -> ScenarioError {
    match Scenario::from_toml_str(text) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    }
}

fn assert_mentions(e: &ScenarioError, needles: &[&str]) {
    let msg = e.to_string();
    for n in needles {
        assert!(msg.contains(n), "{msg:?} does not mention {n:?}");
    }
}

#[test]
fn toml_syntax_error_gives_line_and_column() {
    let text = edit("rfc2415", "count = 16", "count = = 16");
    let line = text.lines().position(|l| l.contains("count = = 16")).unwrap() + 1;
    let e = reject(&text);
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert_eq!(e.line(), Some(line));
    assert_eq!(e.column(), Some(9));
    assert_mentions(&e, &[&format!("line {line}, column 9")]);
}

#[test]
fn unknown_keys_are_rejected_with_their_path_and_the_allowed_keys() {
    let e = reject(&edit("rfc2415", "think = {", "thinktime = 3\nthink = {"));
    assert_eq!((e.kind(), e.path()), (ErrorKind::Schema, "apps[0].thinktime"));
    assert_mentions(&e, &["apps[0].thinktime", "unknown field `thinktime`", "`think`", "`embedded_count`"]);
    assert!(e.line().is_some());
    let e = reject(&edit("rfc2415", "rate = \"1.5Mbps\"", "rate = \"1.5Mbps\"\nspeed = 3"));
    assert_mentions(&e, &["topology.bottleneck.speed", "expected one of `rate`, `delay`, `queue`"]);
    let e = reject(&edit("rfc2415", "lo = 1, hi = 5", "lo = 1, high = 5"));
    assert_eq!(e.path(), "apps[0].think.high");
    let e = reject(&edit("rfc2415", "delayed_ack = false", "delayed_ack = { segs = 2 }"));
    assert_mentions(&e, &["tcp.delayed_ack.segs", "`segments` or `timeout`"]);
}

#[test]
fn wrong_types_name_the_field_and_the_expected_type() {
    let e = reject(&edit("rfc2415", "count = 16", "count = \"sixteen\""));
    assert_eq!((e.kind(), e.path()), (ErrorKind::Schema, "apps[0].count"));
    assert_mentions(&e, &["\"sixteen\"", "expected u32"]);
    let e = reject(&edit("rfc2415", "sack = false", "sack = \"no\""));
    assert_mentions(&e, &["tcp.sack", "\"no\"", "expected a boolean"]);
    let e = reject(&edit("rfc2415", "count = 16", "count = -3"));
    assert_mentions(&e, &["apps[0].count", "-3", "expected u32"]);
}

#[test]
fn zero_rates_are_rejected() {
    let e = reject(&edit("rfc2415", "rate = \"1.5Mbps\"", "rate = \"0Mbps\""));
    assert_eq!((e.kind(), e.path()), (ErrorKind::Invalid, "topology.bottleneck.rate"));
    assert_mentions(&e, &["topology.bottleneck.rate = 0bps is not allowed; expected > 0"]);
    let e = reject(&edit("rfc2415", "access = { rate = \"10Mbps\"", "access = { rate = 0"));
    assert_mentions(&e, &["topology.left[0].access.rate = 0bps", "> 0"]);
    let e = reject(&edit("congested-links", "rate = \"60%\"", "rate = \"0kbps\""));
    assert_mentions(&e, &["apps[2].rate = 0bps", "> 0"]);
}

#[test]
fn negative_values_are_rejected_with_the_unit_list() {
    let e = reject(&edit("rfc2415", "rate = \"1.5Mbps\"", "rate = \"-1.5Mbps\""));
    assert_eq!((e.kind(), e.path()), (ErrorKind::Schema, "topology.bottleneck.rate"));
    assert_mentions(&e, &["\"-1.5Mbps\" is negative", "a number >= 0", "Mbps"]);
    let e = reject(&edit("rfc2415", "delay = \"50ms\"", "delay = -0.05"));
    assert_mentions(&e, &["topology.bottleneck.delay", "-0.05"]);
    let e = reject(&edit("rfc2415", "rate = \"1.5Mbps\"", "rate = \"1.5Mbit\""));
    assert_mentions(&e, &["unknown unit \"Mbit\"", "bps, kbps, Mbps, Gbps"]);
}

#[test]
fn iw_of_zero_segments_is_rejected() {
    let e = reject(&edit(
        "rfc2415",
        "iw1 = { kind = \"fixed\", segments = 1 }",
        "iw1 = { kind = \"fixed\", segments = 0 }",
    ));
    assert_eq!(e.path(), "iw.policies.iw1.segments");
    assert_mentions(&e, &["iw.policies.iw1.segments = 0 is not allowed; expected >= 1 segment"]);
}

#[test]
fn unknown_policy_kind_lists_the_kinds() {
    let e = reject(&edit("rfc2415", "iw1 = { kind = \"fixed\"", "iw1 = { kind = \"linux\""));
    assert_eq!(e.path(), "iw.policies.iw1.kind");
    assert_mentions(&e, &["`linux`", "`fixed`, `rfc3390`, `rfc6928`, `rfc6928-fallback`, `size-based`"]);
}

#[test]
fn timer_clock_is_a_linux_hz_or_exact() {
    let e = reject(&edit("rfc2415", "sack = false", "sack = false\nhz = 7"));
    assert_eq!(e.path(), "tcp.hz");
    assert_mentions(&e, &["tcp.hz = 7 is not allowed", "0 (exact) or one of [100, 250, 300, 1000]"]);
    // The linux profile keeps exact timers; a scenario may count jiffies.
    let b = built("rfc6928");
    assert_eq!(b.apps[0].tcp.hz, 0);
    let text = edit("rfc6928", "profile = \"linux\"", "profile = \"linux\"\nhz = 250");
    let b = Scenario::from_toml_str(&text).unwrap().build(None).unwrap();
    assert_eq!(b.apps[0].tcp.hz, 250);
}

#[test]
fn unknown_congestion_control_lists_the_names() {
    let e = reject(&edit("rfc2415", "cc = \"reno\"", "cc = \"bbr\""));
    assert_eq!(e.path(), "tcp.cc");
    assert_mentions(&e, &["tcp.cc = \"bbr\" is not allowed; expected one of [\"reno\", \"newreno\", \"cubic\"]"]);
}

#[test]
fn unknown_recovery_lists_the_names_and_sack_recovery_needs_sack() {
    let e = reject(&edit("rfc2415", "recovery = \"reno\"", "recovery = \"fack\""));
    assert_mentions(&e, &["tcp.recovery = \"fack\"", "[\"reno\", \"newreno\", \"sack\", \"rack\"]"]);
    let e = reject(&edit("rfc2415", "recovery = \"reno\"", "recovery = \"sack\""));
    assert_mentions(&e, &["tcp.recovery = \"sack\"", "sack = true"]);
}

#[test]
fn rack_and_tlp_need_sack() {
    let e = reject(&edit("rfc2415", "recovery = \"reno\"", "recovery = \"rack\""));
    assert_mentions(&e, &["tcp.recovery = \"rack\"", "sack = true with it (RACK needs SACK)"]);
    let e = reject(&edit("rfc2415", "recovery = \"reno\"", "recovery = \"reno\"\ntlp = true"));
    assert_mentions(&e, &["tcp.tlp = true", "sack = true with it (TLP needs SACK)"]);
    let ok = edit("rfc2415", "recovery = \"reno\"", "recovery = \"rack\"");
    Scenario::from_toml_str(&ok.replace("sack = false", "sack = true")).unwrap();
}

#[test]
fn per_app_tcp_overrides_are_checked_under_the_app_path() {
    let e = reject(&edit("rfc2415", "count = 16", "count = 16\ntcp = { mss = 0 }"));
    assert_mentions(&e, &["apps[0].tcp.mss = 0B is not allowed; expected 1..=65000 bytes"]);
    let e = reject(&edit("rfc2415", "count = 16", "count = 16\ntcp = { min_rto = \"90s\" }"));
    assert_mentions(&e, &["apps[0].tcp.min_rto = 90s", "<= max_rto (60s)"]);
    let ok =
        Scenario::from_toml_str(&edit("rfc2415", "count = 16", "count = 16\ntcp = { cc = \"cubic\", mss = 1000 }"))
            .unwrap();
    let b = ok.build(None).unwrap();
    assert_eq!((b.apps[0].tcp.mss, b.apps[0].tcp.rcv_wnd), (1000, 11_000), "11seg follows the app's MSS");
    assert_eq!(b.apps[1].tcp.mss, 1460);
}

#[test]
fn unknown_distribution_kind_lists_the_kinds() {
    let e = reject(&edit("rfc2415", "think = { kind = \"uniform\"", "think = { kind = \"gaussian\""));
    assert_eq!(e.path(), "apps[0].think.kind");
    assert_mentions(
        &e,
        &["`gaussian`", "`constant`, `uniform`, `exponential`, `pareto`, `lomax`, `lognormal`, `weibull`, `empirical`"],
    );
}

#[test]
fn distribution_parameters_are_checked_in_the_units_written() {
    let e = reject(&edit("rfc2415", "lo = 1, hi = 5", "lo = 1, hi = 0.5"));
    assert_eq!(e.path(), "apps[0].think.hi");
    assert_mentions(&e, &["apps[0].think.hi = 0.5 is not allowed; expected >= uniform.lo = 1"]);
    let e = reject(&edit(
        "rfc2415",
        "primary = { kind = \"pareto\", shape = 1.2",
        "primary = { kind = \"pareto\", shape = 0",
    ));
    assert_mentions(&e, &["apps[0].primary.shape = 0 is not allowed; expected > 0"]);
    let e = reject(&edit("rfc6928", "median = 30\nmean = 45", "median = 30\nmean = 20"));
    assert_mentions(&e, &["topology.left[0].access.delay.mean = 20"]);
    let e = reject(&edit("rfc6928", "unit = \"ms\"", "unit = \"parsecs\""));
    assert_mentions(&e, &["topology.left[0].access.delay.unit", "\"parsecs\"", "ns, us, ms, s"]);
}

#[test]
fn empty_cdf_is_rejected() {
    let e = reject(&edit(
        "rfc6928",
        "points = [[0.02, 0.0], [0.056, 0.03], [0.256, 0.13], [1.0, 0.42], [5.0, 0.85], [20.0, 1.0]]",
        "points = []",
    ));
    assert_eq!(e.path(), "topology.left[0].access.rate");
    assert_mentions(&e, &["topology.left[0].access.rate: empirical CDF has no points", "ending with cdf = 1"]);
}

#[test]
fn non_monotone_cdf_is_rejected_at_the_point() {
    let e = reject(&edit("rfc6928", "[1.0, 0.42], [5.0, 0.85]", "[1.0, 0.42], [5.0, 0.35]"));
    assert_eq!(e.path(), "topology.left[0].access.rate.points[4]");
    assert_mentions(&e, &["cdf = 0.35 is not allowed; expected >= 0.42", "non-decreasing"]);
    let e = reject(&edit("rfc6928", "[1.0, 0.42], [5.0, 0.85]", "[1.0, 0.42], [0.5, 0.85]"));
    assert_mentions(&e, &["points[4]: value = 0.5 is not allowed; expected > 1", "strictly increasing"]);
}

#[test]
fn theta_of_zero_and_negative_theta_are_rejected() {
    let e = reject(&edit("iw-function", "theta = \"200kB\"", "theta = \"0kB\""));
    assert_eq!(e.path(), "iw.policies.size-based.theta");
    assert_mentions(&e, &["iw.policies.size-based.theta = 0B is not allowed; expected > 0 bytes"]);
    let e = reject(&edit("iw-function", "theta = \"200kB\"", "theta = -200000"));
    assert_mentions(&e, &["iw.policies.size-based.theta", "-200000 is negative"]);
    let e = reject(&edit("iw-function", "v = 10", "v = 0"));
    assert_mentions(&e, &["iw.policies.size-based.v = 0 is not allowed; expected >= 1 segment"]);
}

#[test]
fn more_instances_than_distinct_hosts_is_rejected() {
    let e = reject(&edit("bench-bulk", "count = 100\nmapping = \"distinct\"", "count = 101\nmapping = \"distinct\""));
    assert_eq!(e.path(), "apps[0].count");
    assert_mentions(
        &e,
        &["apps[0].count = 101 is not allowed; expected offset + count <= 100", "\"clients\"", "modulo"],
    );
    let e = reject(&edit("congested-links", "offset = 1", "offset = 2"));
    assert_mentions(&e, &["apps[1].count = 1", "offset + count <= 2"]);
    // The same count with modulo shares hosts and is fine.
    Scenario::from_toml_str(&edit(
        "bench-bulk",
        "count = 100\nmapping = \"distinct\"",
        "count = 101\nmapping = \"modulo\"",
    ))
    .unwrap();
}

#[test]
fn undefined_groups_and_policies_are_rejected_with_the_defined_names() {
    let e = reject(&edit("rfc2415", "servers = \"servers\"\ncount = 16", "servers = \"srv\"\ncount = 16"));
    assert_mentions(
        &e,
        &["apps[0].servers = \"srv\" is not allowed; expected a host group, one of [\"clients\", \"servers\"]"],
    );
    let e = reject(&edit("rfc2415", "default = \"iw1\"", "default = \"iw9\""));
    assert_mentions(&e, &["iw.default = \"iw9\"", "one of [\"iw1\", \"iw2\", \"iw3\", \"iw4\"]"]);
    let e = reject(&edit("congested-links", "server_iw = \"iw3\"", "server_iw = \"iw7\""));
    assert_mentions(&e, &["apps[0].server_iw = \"iw7\"", "[\"iw10\", \"iw3\"]"]);
    let e = reject(&edit("rfc2415", "default = \"iw1\"", ""));
    assert_mentions(&e, &["apps[0].server_iw: not set, and iw.default is absent"]);
    let e = reject(&edit("rfc2415", "servers = \"servers\"\ncount = 16", "servers = \"clients\"\ncount = 16"));
    assert_mentions(&e, &["apps[0].servers = \"clients\"", "other than `clients`"]);
}

#[test]
fn warmup_at_or_after_the_end_is_rejected() {
    let e = reject(&edit("rfc2415", "warmup = \"0s\"", "warmup = \"360s\""));
    assert_eq!((e.kind(), e.path()), (ErrorKind::Invalid, "warmup"));
    assert_mentions(&e, &["warmup = 360s is not allowed; expected < duration (360s)"]);
    assert!(e.line().is_some(), "validation errors are located in the text too");
    let e = reject(&edit("rfc2415", "duration = \"360s\"", "duration = \"0s\""));
    assert_mentions(&e, &["duration = 0s is not allowed; expected > 0"]);
}

#[test]
fn load_needs_a_finite_mean_and_udp_shares_stay_within_the_link() {
    let e = reject(&edit(
        "iw-function",
        "size = { kind = \"empirical\", builtin = \"websearch\", min = 1460 }",
        "size = { kind = \"pareto\", shape = 0.9, scale = 1000 }",
    ));
    assert_mentions(&e, &["apps[0].load", "finite mean", "cap"]);
    let e = reject(&edit("iw-function", "load = 0.6", "load = 0.6\nrate = 3.0"));
    assert_mentions(&e, &["apps[0]", "exactly one of `rate`", "`load`"]);
    let e = reject(&edit("iw-function", "load = 0.6", "load = 1.5"));
    assert_mentions(&e, &["apps[0].load = 1.5 is not allowed; expected 0 < load <= 1"]);
    let e = reject(&edit("congested-links", "rate = \"60%\"", "rate = \"120%\""));
    assert_mentions(&e, &["apps[2].rate = 120%", "0% < x <= 100%"]);
}

#[test]
fn json_errors_have_paths_and_locations() {
    let json = preset("rfc2415").tap_base_dir_none().to_json_string().unwrap();
    let e = Scenario::from_json_str(&json.replacen("\"count\": 16", "\"count\": \"x\"", 1)).unwrap_err();
    assert_eq!((e.kind(), e.path()), (ErrorKind::Schema, "apps[0].count"));
    let e = Scenario::from_json_str(&json.replacen("\"count\": 16", "\"count\": 16,", 1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert!(e.line().is_some());
    let e = Scenario::from_json_str(&json.replacen("\"warmup\": \"0s\"", "\"warmup\": \"1h\"", 1)).unwrap_err();
    assert_mentions(&e, &["warmup", "unknown unit \"h\""]);
}

#[test]
fn missing_files_are_io_errors() {
    let e = Scenario::from_path("/nonexistent/scenario.toml").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert_mentions(&e, &["/nonexistent/scenario.toml"]);
}

// ---------------------------------------------------------------------------------------
// Fuzzing: junk never panics.

const JUNK: &[&str] = &[
    "0",
    "-1",
    "1e400",
    "-0.0",
    "nan",
    "inf",
    "\"\"",
    "\"0\"",
    "\"-5ms\"",
    "\"1e99Gbps\"",
    "\"18446744073709551616B\"",
    "\"99999999999999999999999999999999999999999pkt\"",
    "\"1.5\"",
    "\"x\"",
    "true",
    "[]",
    "[[1, 2]]",
    "{}",
    "{ kind = \"uniform\" }",
    "{ kind = \"empirical\", points = [[1, 1]] }",
    "{ kind = 3 }",
    "\"60%\"",
    "\"0%\"",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "{ kind = \"lognormal\", mu = 1e300, sigma = 1e300 }",
    "{ kind = \"pareto\", shape = 1e-300, scale = 1e300, cap = 1e308 }",
    "\"11seg\"",
    "\"0seg\"",
    "1.5",
];

fn mutate(text: &str, line: usize, junk: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let k = line % lines.len();
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        if i == k {
            match l.split_once('=') {
                Some((key, _)) => out.push_str(&format!("{key}= {junk}")),
                None => out.push_str(junk),
            }
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    out
}

/// Parses, and where valid and small, builds; must never panic.
fn exercise(text: &str) {
    if let Ok(s) = Scenario::from_toml_str(text) {
        let hosts: usize = {
            let iwlab_core::scenario::model::TopologySpec::Dumbbell(d) = &s.topology;
            d.left.iter().chain(&d.right).map(|g| g.count as usize).sum()
        };
        let instances: u64 = s.apps.iter().map(|a| a.common.count as u64).sum();
        if hosts <= 300 && instances <= 2_000 {
            let _ = s.build(Some(5));
        }
        let _ = s.to_toml_string();
        let _ = s.to_json_string();
    }
}

proptest! {
    #[test]
    fn random_strings_never_panic_the_parsers(s in ".{0,300}") {
        let _ = Scenario::from_toml_str(&s);
        let _ = Scenario::from_json_str(&s);
        let _ = s.parse::<Rate>();
        let _ = s.parse::<Duration>();
        let _ = s.parse::<Bytes>();
        let _ = s.parse::<Size>();
        let _ = s.parse::<QueueLimit>();
        let _ = s.parse::<RateOrShare>();
    }

    #[test]
    fn tomlish_junk_never_panics(s in "[a-z_=\\[\\]{}\"., 0-9\n%-]{0,300}") {
        let _ = Scenario::from_toml_str(&s);
    }

    #[test]
    fn presets_with_one_value_replaced_by_junk_never_panic(
        p in 0..PRESETS.len(),
        line in 0usize..200,
        j in 0..JUNK.len(),
        free in "[ -~]{0,12}",
        use_free in any::<bool>(),
    ) {
        let text = preset_text(PRESETS[p]);
        let junk = if use_free { free.as_str() } else { JUNK[j] };
        exercise(&mutate(&text, line, junk));
    }

    #[test]
    fn unit_strings_of_any_number_parse_exactly(v in any::<u64>(), unit in 0usize..4) {
        let (r, b) = (Rate::new(v), Bytes::new(v));
        prop_assert_eq!(r.to_string().parse::<Rate>().unwrap(), r);
        prop_assert_eq!(b.to_string().parse::<Bytes>().unwrap(), b);
        let d = Duration::new(SimDuration::from_nanos(v));
        prop_assert_eq!(d.to_string().parse::<Duration>().unwrap(), d);
        let x = v % 1_000_000;
        let (suffix, mult) = [("bps", 1u64), ("kbps", 1_000), ("Mbps", 1_000_000), ("Gbps", 1_000_000_000)][unit];
        prop_assert_eq!(format!("{x}{suffix}").parse::<Rate>().unwrap().bps(), x * mult);
    }
}

#[test]
fn an_application_entry_with_count_0_starts_nothing() {
    let text = edit("rfc2415", "count = 1\nmapping", "count = 0\nmapping");
    let s = Scenario::from_toml_str(&text.replace("duration = \"360s\"", "duration = \"20s\"")).unwrap();
    let sim = s.build(None).unwrap().run();
    assert!(sim.core.conns.iter().all(|c| c.label.app_kind != "ftp"));
    assert!(sim.core.conns.iter().any(|c| c.label.app_kind == "web"));
}

#[test]
fn a_poisson_flows_entry_with_count_0_has_no_pairs_and_starts_nothing() {
    let text = edit("iw-function", "count = 10\nmapping", "count = 0\nmapping");
    let b = Scenario::from_toml_str(&text).unwrap().build(None).unwrap();
    assert_eq!((b.apps[0].kind, b.apps[0].app_ids.len(), b.apps[0].hosts.len()), ("poisson-flows", 0, 0));
}

#[test]
fn an_application_entry_has_at_most_max_instances() {
    use iwlab_core::scenario::MAX_INSTANCES;
    assert_eq!(MAX_INSTANCES, 100_000); // the bound the field's documentation states
    let at = |n: u32| Scenario::from_toml_str(&edit("rfc2415", "count = 1\nmapping", &format!("count = {n}\nmapping")));
    assert!(at(MAX_INSTANCES).is_ok());
    let e = at(MAX_INSTANCES + 1).unwrap_err().to_string();
    assert!(e.contains("apps[1].count = 100001 is not allowed; expected 0..=100000 instances"), "{e}");
}
