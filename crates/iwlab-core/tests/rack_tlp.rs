//! RACK-TLP (RFC 8985) in whole simulations: the lost tail of an initial window, and a busy
//! 1 Gb/s scenario run with `recovery = "rack"` (accounting, determinism). The per-rule tests
//! with exact times are in `src/tcp/recovery/{rack,tlp}.rs` and `tests/scripted.rs`.

mod common;
use common::*;
use iwlab_core::engine::SimDuration;
use iwlab_core::engine::SimTime;
use iwlab_core::metrics::Results;
use iwlab_core::net::loss::LossRule;
use iwlab_core::net::packet::NodeId;
use iwlab_core::scenario::Scenario;
use iwlab_core::sim::{AppId, Application, ConnId, ConnSpec, Core, Side};
use iwlab_core::tcp::config::{RecoveryKind, TcpConfig};
use iwlab_core::tcp::endpoint::AppEvent;
use iwlab_core::tcp::iw::IwConfig;
use std::sync::{Arc, Mutex};

const MSS: u64 = 1460;

/// The server answers at once with `response` bytes and its FIN on the last data segment
/// (`Core::write_and_close`, an HTTP/1.0 server's last act); the client notes when it has all.
struct Respond {
    client: NodeId,
    server: NodeId,
    response: u64,
    cfg: TcpConfig,
    iw: usize,
    done: Arc<Mutex<Option<SimTime>>>,
}

impl Application for Respond {
    fn start(&mut self, core: &mut Core, me: AppId) {
        let spec = ConnSpec {
            client: self.client,
            server: self.server,
            client_cfg: &self.cfg,
            server_cfg: &self.cfg,
            client_iw: self.iw,
            server_iw: self.iw,
            client_declared: Some(0),
            server_declared: Some(self.response),
            app: Some(me),
            label: Default::default(),
        };
        core.open(&spec);
    }

    fn on_event(&mut self, core: &mut Core, _me: AppId, conn: ConnId, side: Side, ev: AppEvent) {
        match (side, ev) {
            (Side::Server, AppEvent::Established) => core.write_and_close(conn, Side::Server, self.response),
            (Side::Client, AppEvent::Delivered { total }) if total == self.response => {
                *self.done.lock().unwrap() = Some(core.now());
                core.close(conn, Side::Client);
            }
            _ => {}
        }
    }
}

/// A 9-segment response with IW 10 over a 10 Mb/s, 50 ms link; `drop` = the data segments
/// (1-based) dropped once. Returns (completion, the server's sender stats).
fn nine_segments(cfg: &TcpConfig, drop: &[u64]) -> (SimDuration, iwlab_core::tcp::sender::SenderStats) {
    let mut p = pair(link(10_000_000, ms(50), 1000), 3);
    for &k in drop {
        let rule = LossRule::Segment { flow: 0, to_server: false, seq: 1 + (k - 1) * MSS, nth: 1 };
        drop_on(&mut p.sim, p.down, rule);
    }
    let iw = p.sim.core.add_iw_policy(IwConfig::Fixed { segments: 10 }.build());
    let done = Arc::new(Mutex::new(None));
    let app =
        Respond { client: p.client, server: p.server, response: 9 * MSS, cfg: cfg.clone(), iw, done: done.clone() };
    p.sim.add_app(Box::new(app), SimTime::ZERO);
    run(&mut p.sim, at(ms(30_000)));
    let t = done.lock().unwrap().expect("completed");
    (t - SimTime::ZERO, p.sim.core.conns[0].server.sender.stats.clone())
}

#[test]
fn a_dropped_tail_of_the_initial_window_is_repaired_by_the_probe_not_the_rto() {
    let sack = TcpConfig { recovery: RecoveryKind::Sack, sack: true, ..TcpConfig::default() };
    let rack = TcpConfig { recovery: RecoveryKind::Rack, sack: true, tlp: true, ..TcpConfig::default() };
    let (lossless, _) = nine_segments(&sack, &[]);
    assert_eq!(nine_segments(&rack, &[]).0, lossless, "without loss RACK-TLP changes nothing");
    // The last segment (with the FIN) lost. RFC 6675 alone: nothing above the hole, no
    // duplicate ACKs: the RTO (min 1 s) repairs it.
    let (slow, st) = nine_segments(&sack, &[9]);
    assert_eq!((st.timeouts, st.tlp_probes), (1, 0));
    assert!(slow - lossless >= ms(1_000), "{slow:?} vs {lossless:?}");
    // RFC 8985 §7: the probe (segment 9 again, the highest) leaves PTO = 2·SRTT + 200 ms
    // (one segment in flight, delayed ACKs) after the last ACK, long before the RTO.
    let (fast, st) = nine_segments(&rack, &[9]);
    assert_eq!((st.timeouts, st.tlp_probes, st.retransmits), (0, 1, 1));
    let late = fast - lossless;
    assert!(late > ms(400) && late < ms(700), "{late:?}");
}

#[test]
fn a_lost_segment_before_the_tail_is_found_by_rack_within_a_round_trip() {
    // Segment 8 lost, 9 (with the FIN) arrives and is SACKed; RACK marks 8 lost once RACK.rtt
    // + reo_wnd (min_RTT/4) has passed since it was sent (§6.2): no probe, no RTO.
    let rack = TcpConfig { recovery: RecoveryKind::Rack, sack: true, tlp: true, ..TcpConfig::default() };
    let sack = TcpConfig { recovery: RecoveryKind::Sack, sack: true, ..TcpConfig::default() };
    let (lossless, _) = nine_segments(&rack, &[]);
    let (t, st) = nine_segments(&rack, &[8]);
    assert_eq!((st.timeouts, st.tlp_probes, st.retransmits, st.fast_retransmits), (0, 0, 1, 1));
    assert!(t - lossless < ms(200), "{:?}", t - lossless);
    // RFC 6675 needs DupThresh duplicates: one SACKed segment is not enough, so the RTO it is.
    let (t, st) = nine_segments(&sack, &[8]);
    assert_eq!(st.timeouts, 1);
    assert!(t - lossless >= ms(1_000));
}

fn websearch_rack(seconds: u64) -> (String, u64) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/scenarios/websearch-1g.toml");
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("duration = \"100s\"", &format!("duration = \"{seconds}s\""))
        .replace("recovery = \"sack\"", "recovery = \"rack\"");
    let built = Scenario::from_toml_str(&text).unwrap().build(None).unwrap();
    let (end, warmup) = (built.end, built.warmup);
    let sim = built.run();
    sim.check_accounting().expect("accounting");
    let r = Results::collect(&sim, end, warmup);
    (r.flows.to_csv(), r.summary.flows_completed)
}

#[test]
fn rack_runs_the_1g_websearch_scenario_deterministically() {
    let (a, done) = websearch_rack(2);
    let (b, _) = websearch_rack(2);
    assert_eq!(a, b);
    assert!(done >= 50, "{done} flows completed");
}
