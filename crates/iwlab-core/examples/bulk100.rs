//! The performance scenario: `flows` long-lived NewReno/SACK flows (IW 10) across a dumbbell,
//! each from its own left host to its own right host, starting at a uniform random time in
//! [0, 1] s. Access links are 1 Gb/s, 1 ms; the bottleneck is `bottleneck-mbps`, 10 ms, with a
//! 250-packet drop-tail queue in each direction.
//!
//! ```text
//! cargo run --release -p iwlab-core --example bulk100 -- [--flows N] [--bottleneck-mbps B] [--seconds S] [--seed X]
//! ```
//!
//! `benches/scenario.rs` and `benches/engine.rs` include this file as a module and call
//! [`build`], so the example and the benchmarks run the same scenario.

use iwlab_core::engine::{RngStreams, SimDuration, SimTime, StreamKind};
use iwlab_core::net::dumbbell::{Access, Dumbbell, DumbbellSpec};
use iwlab_core::net::link::LinkSpec;
use iwlab_core::net::queue::{Limit, QueueConfig};
use iwlab_core::net::topology::Topology;
use iwlab_core::sim::{AppId, Application, ConnId, ConnSpec, Core, Side, Simulation};
use iwlab_core::tcp::cc::CcConfig;
use iwlab_core::tcp::config::{DelayedAck, RecoveryKind, TcpConfig};
use iwlab_core::tcp::endpoint::AppEvent;
use iwlab_core::tcp::iw::IwConfig;
use rand::Rng;
use std::time::Instant;

/// "Infinite": more than any flow can send in the simulated time.
pub const INFINITE_BYTES: u64 = 1 << 40;

/// What the scenario is built from.
#[derive(Clone, Debug)]
pub struct Params {
    pub flows: usize,
    pub bottleneck_bps: u64,
    /// Simulated time.
    pub duration: SimDuration,
    /// Flows start at a uniform random time in [0, start_window].
    pub start_window: SimDuration,
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            flows: 100,
            bottleneck_bps: 100_000_000,
            duration: SimDuration::from_secs(60),
            start_window: SimDuration::from_secs(1),
            seed: 1,
        }
    }
}

/// The TCP of every endpoint: MSS 1460, Reno with SACK recovery, no timestamps, delayed ACKs
/// (every 2nd segment, 200 ms), RFC 6298 minimum RTO of 1 s.
pub fn tcp_config() -> TcpConfig {
    TcpConfig {
        mss: 1460,
        cc: CcConfig::Reno,
        recovery: RecoveryKind::Sack,
        sack: true,
        timestamps: false,
        delayed_ack: Some(DelayedAck { segments: 2, timeout: SimDuration::from_millis(200) }),
        min_rto: SimDuration::from_secs(1),
        ..TcpConfig::default()
    }
}

/// One bulk flow: at its start the application opens a connection from `client` to `server`
/// and, once established, writes [`INFINITE_BYTES`] on the client side.
pub struct Bulk {
    pub client: u32,
    pub server: u32,
    pub cfg: TcpConfig,
    pub iw: usize,
    pub conn: Option<ConnId>,
}

impl Application for Bulk {
    fn start(&mut self, core: &mut Core, me: AppId) {
        let spec = ConnSpec {
            client: self.client,
            server: self.server,
            client_cfg: &self.cfg,
            server_cfg: &self.cfg,
            client_iw: self.iw,
            server_iw: self.iw,
            client_declared: Some(INFINITE_BYTES),
            server_declared: Some(0),
            app: Some(me),
            label: iwlab_core::metrics::FlowLabel { app_kind: "bulk", role: "transfer", page: None },
        };
        self.conn = Some(core.open(&spec));
    }

    fn on_event(&mut self, core: &mut Core, _me: AppId, conn: ConnId, side: Side, ev: AppEvent) {
        if side == Side::Client && ev == AppEvent::Established {
            core.write(conn, Side::Client, INFINITE_BYTES);
        }
    }
}

/// A built scenario, ready to run.
pub struct Scenario {
    pub sim: Simulation,
    pub dumbbell: Dumbbell,
    pub params: Params,
}

fn link(rate_bps: u64, delay: SimDuration, packets: u32) -> LinkSpec {
    LinkSpec { rate_bps, delay, queue: QueueConfig::DropTail { limit: Limit::Packets(packets) } }
}

/// Builds the dumbbell and schedules one [`Bulk`] application per flow.
pub fn build(p: &Params) -> Scenario {
    let access = Access::symmetric(link(1_000_000_000, SimDuration::from_millis(1), 1000));
    let bottleneck = link(p.bottleneck_bps, SimDuration::from_millis(10), 250);
    let spec = DumbbellSpec {
        left: vec![access.clone(); p.flows],
        right: vec![access; p.flows],
        forward: bottleneck.clone(),
        reverse: bottleneck,
    };
    let streams = RngStreams::new(p.seed);
    let mut topo = Topology::new();
    let dumbbell = spec.build(&mut topo, &streams);
    let mut sim = Simulation::new(topo, p.seed);
    let iw = sim.core.add_iw_policy(IwConfig::Fixed { segments: 10 }.build());
    let cfg = tcp_config();
    cfg.validate().expect("scenario TCP config");
    for i in 0..p.flows {
        let mut rng = streams.stream(StreamKind::App, i as u64);
        let start = SimTime::ZERO + SimDuration::from_nanos(rng.gen_range(0..=p.start_window.as_nanos()));
        let app = Bulk { client: dumbbell.left[i], server: dumbbell.right[i], cfg: cfg.clone(), iw, conn: None };
        sim.add_app(Box::new(app), start);
    }
    Scenario { sim, dumbbell, params: p.clone() }
}

impl Scenario {
    pub fn end(&self) -> SimTime {
        SimTime::ZERO + self.params.duration
    }
    pub fn run(&mut self) {
        let end = self.end();
        self.sim.run_until(end);
    }
    /// Payload bytes delivered in order to the receivers of all flows.
    pub fn delivered_bytes(&self) -> u64 {
        self.sim.core.conns.iter().map(|c| c.server().delivered).sum()
    }
}

/// Peak resident set size of this process, kB (Linux `VmHWM`).
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn parse_args() -> Result<Params, String> {
    let mut p = Params::default();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match flag.as_str() {
            "--flows" => {
                let v = value("--flows")?;
                p.flows =
                    v.parse().ok().filter(|&n| n >= 1).ok_or(format!("--flows = {v:?}; expected an integer >= 1"))?;
            }
            "--bottleneck-mbps" => {
                let v = value("--bottleneck-mbps")?;
                let mbps: f64 = v
                    .parse()
                    .ok()
                    .filter(|&x: &f64| x > 0.0 && x <= 1e6)
                    .ok_or(format!("--bottleneck-mbps = {v:?}; expected a number in (0, 1e6]"))?;
                p.bottleneck_bps = (mbps * 1e6).round() as u64;
            }
            "--seconds" => {
                let v = value("--seconds")?;
                let s: f64 = v
                    .parse()
                    .ok()
                    .filter(|&x: &f64| x > 0.0 && x <= 1e6)
                    .ok_or(format!("--seconds = {v:?}; expected a number in (0, 1e6]"))?;
                p.duration = SimDuration::from_secs_f64(s);
            }
            "--seed" => {
                let v = value("--seed")?;
                p.seed = v.parse().map_err(|_| format!("--seed = {v:?}; expected an unsigned integer"))?;
            }
            "-h" | "--help" => {
                println!("usage: bulk100 [--flows N] [--bottleneck-mbps B] [--seconds S] [--seed X]");
                std::process::exit(0);
            }
            other => {
                return Err(format!(
                    "unknown argument {other:?}; expected --flows, --bottleneck-mbps, --seconds or --seed"
                ))
            }
        }
    }
    Ok(p)
}

fn main() {
    let params = match parse_args() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bulk100: {e}");
            std::process::exit(2);
        }
    };
    let t0 = Instant::now();
    let mut sc = build(&params);
    let built = t0.elapsed();
    let t1 = Instant::now();
    sc.run();
    let wall = t1.elapsed().as_secs_f64();

    let core = &sc.sim.core;
    let secs = params.duration.as_secs_f64();
    let now = sc.end();
    let events = core.events_processed();
    let fwd = &core.topo.ports[sc.dumbbell.forward as usize];
    let goodput_mbps = sc.delivered_bytes() as f64 * 8.0 / secs / 1e6;
    println!(
        "scenario          {} flows, bottleneck {} Mb/s, seed {}",
        params.flows,
        params.bottleneck_bps as f64 / 1e6,
        params.seed
    );
    println!("build time        {:.3} s", built.as_secs_f64());
    println!("wall time         {wall:.3} s");
    println!("simulated         {secs:.3} s ({:.1}x real time)", secs / wall);
    println!("events            {events}");
    println!("events/s          {:.3} M", events as f64 / wall / 1e6);
    println!("packets created   {}", core.acct.created);
    println!("packets/s         {:.3} M", core.acct.created as f64 / wall / 1e6);
    println!("bottleneck util.  {:.4}", fwd.utilisation(now));
    println!("goodput (total)   {goodput_mbps:.3} Mb/s");
    println!("bottleneck drops  {}", fwd.drops().0);
    match sc.sim.check_accounting() {
        Ok(()) => println!("accounting        ok"),
        Err(e) => println!("accounting        FAILED: {e}"),
    }
    match peak_rss_kb() {
        Some(kb) => println!("peak RSS          {:.1} MB", kb as f64 / 1024.0),
        None => println!("peak RSS          unavailable"),
    }
}
