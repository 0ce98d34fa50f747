//! Prints the RFC 6928 §5.1 round-trip table computed by simulation next to the RFC's, and
//! writes it as a small HTML report: `cargo run --release --example rfc6928_table -- out.html`.

use iwlab_core::engine::{RngStreams, SimDuration, SimTime};
use iwlab_core::net::link::LinkSpec;
use iwlab_core::net::queue::{Limit, QueueConfig};
use iwlab_core::net::topology::{NodeKind, Topology};
use iwlab_core::sim::{AppId, Application, ConnId, ConnSpec, Core, Side, Simulation};
use iwlab_core::tcp::config::{DelayedAck, TcpConfig};
use iwlab_core::tcp::endpoint::AppEvent;
use iwlab_core::tcp::iw::IwConfig;
use std::sync::{Arc, Mutex};

const SEGMENTS: [u64; 13] = [3, 6, 10, 12, 21, 25, 33, 46, 51, 78, 79, 120, 127];
const RFC_IW3: [u64; 13] = [1, 2, 3, 3, 4, 5, 5, 6, 6, 7, 8, 8, 9];
const RFC_IW10: [u64; 13] = [1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 5, 5];

/// The server sends `bytes` as soon as the connection is established.
struct Response {
    client: u32,
    server: u32,
    bytes: u64,
    cfg: TcpConfig,
    times: Arc<Mutex<(Option<SimTime>, Option<SimTime>)>>,
}

impl Application for Response {
    fn start(&mut self, core: &mut Core, me: AppId) {
        let spec = ConnSpec {
            client: self.client,
            server: self.server,
            client_cfg: &self.cfg,
            server_cfg: &self.cfg,
            client_iw: 0,
            server_iw: 0,
            client_declared: None,
            server_declared: Some(self.bytes),
            app: Some(me),
            label: Default::default(),
        };
        core.open(&spec);
    }
    fn on_event(&mut self, core: &mut Core, _me: AppId, conn: ConnId, side: Side, ev: AppEvent) {
        let mut t = self.times.lock().unwrap();
        match (side, ev) {
            (Side::Server, AppEvent::Established) => {
                t.0 = Some(core.now());
                drop(t);
                core.write(conn, Side::Server, self.bytes);
            }
            (Side::Client, AppEvent::Delivered { total }) if total == self.bytes => t.1 = Some(core.now()),
            _ => {}
        }
    }
}

fn rounds(iw: u32, segments: u64) -> u64 {
    let rtt = SimDuration::from_millis(100);
    let mut topo = Topology::new();
    let c = topo.add_node("client", NodeKind::Host);
    let s = topo.add_node("server", NodeKind::Host);
    let spec = LinkSpec {
        rate_bps: 1_000_000_000_000,
        delay: SimDuration::from_millis(50),
        queue: QueueConfig::DropTail { limit: Limit::Packets(100_000) },
    };
    topo.connect(c, s, &spec, &spec, &RngStreams::new(1));
    topo.compute_routes();
    let mut sim = Simulation::new(topo, 1);
    sim.core.add_iw_policy(IwConfig::Fixed { segments: iw }.build());
    let cfg = TcpConfig {
        delayed_ack: Some(DelayedAck { segments: 2, timeout: SimDuration::from_secs(10) }),
        ..TcpConfig::default()
    };
    let times = Arc::new(Mutex::new((None, None)));
    let app = Response { client: c, server: s, bytes: segments * 1460, cfg, times: times.clone() };
    sim.add_app(Box::new(app), SimTime::ZERO);
    sim.run_until(SimTime::ZERO + SimDuration::from_secs(60));
    sim.check_accounting().expect("accounting");
    let (start, end) = *times.lock().unwrap();
    let elapsed = end.expect("delivered") - start.expect("established");
    (elapsed.as_nanos() + rtt.as_nanos() / 2) / rtt.as_nanos()
}

fn main() {
    let out = std::env::args().nth(1).unwrap_or_else(|| "out/rfc6928-table.html".into());
    let sim3: Vec<u64> = SEGMENTS.iter().map(|&n| rounds(3, n)).collect();
    let sim10: Vec<u64> = SEGMENTS.iter().map(|&n| rounds(10, n)).collect();
    let row = |name: &str, v: &[u64]| format!("{name:<14}{}", v.iter().map(|x| format!("{x:>5}")).collect::<String>());
    println!("RFC 6928 §5.1: round trips to deliver N segments (infinite bandwidth, delayed ACKs)");
    println!("{}", row("segments", &SEGMENTS));
    println!("{}", row("IW=3  RFC", &RFC_IW3));
    println!("{}", row("IW=3  iwlab", &sim3));
    println!("{}", row("IW=10 RFC", &RFC_IW10));
    println!("{}", row("IW=10 iwlab", &sim10));
    let same = sim3 == RFC_IW3 && sim10 == RFC_IW10;
    println!("{}", if same { "iwlab reproduces the table exactly." } else { "MISMATCH with the RFC table." });
    let cells = |v: &[u64]| v.iter().map(|x| format!("<td>{x}</td>")).collect::<String>();
    let html = format!(
        "<!doctype html><meta charset=utf-8><title>iwlab: RFC 6928 §5.1</title>\
         <h1>RFC 6928 §5.1 round-trip table</h1><p>Simulated by iwlab-core {} on a 1 Tb/s, 100 ms RTT \
         lossless path with delayed ACKs (every 2nd segment, 10 s timer).</p>\
         <table border=1><tr><th>segments</th>{}</tr><tr><th>IW=3 RFC</th>{}</tr><tr><th>IW=3 iwlab</th>{}</tr>\
         <tr><th>IW=10 RFC</th>{}</tr><tr><th>IW=10 iwlab</th>{}</tr></table><p>{}</p>",
        env!("CARGO_PKG_VERSION"),
        cells(&SEGMENTS),
        cells(&RFC_IW3),
        cells(&sim3),
        cells(&RFC_IW10),
        cells(&sim10),
        if same { "Identical." } else { "Mismatch." }
    );
    if let Some(dir) = std::path::Path::new(&out).parent() {
        std::fs::create_dir_all(dir).expect("create output directory");
    }
    std::fs::write(&out, html).expect("write report");
    println!("report: {out}");
    if !same {
        std::process::exit(1);
    }
}
