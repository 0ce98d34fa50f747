//! Shared harness for scenario-level tests: tiny topologies, a request/response transfer
//! application that logs what happened, and the accounting check every test runs.
#![allow(dead_code)]

use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::net::dumbbell::{Access, DumbbellSpec};
use iwlab_core::net::link::LinkSpec;
use iwlab_core::net::loss::LossRule;
use iwlab_core::net::packet::{LinkId, NodeId};
use iwlab_core::net::queue::{Limit, QueueConfig};
use iwlab_core::net::topology::{NodeKind, Topology};
use iwlab_core::sim::{AppId, Application, ConnId, ConnSpec, Core, Side, Simulation};
use iwlab_core::tcp::config::TcpConfig;
use iwlab_core::tcp::endpoint::AppEvent;
use iwlab_core::tcp::iw::IwConfig;
use std::sync::{Arc, Mutex};

pub fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}
pub fn at(d: SimDuration) -> SimTime {
    SimTime::ZERO + d
}

pub fn link(rate_bps: u64, delay: SimDuration, limit: u32) -> LinkSpec {
    LinkSpec { rate_bps, delay, queue: QueueConfig::DropTail { limit: Limit::Packets(limit) } }
}

/// What a transfer saw.
#[derive(Clone, Debug, Default)]
pub struct Log {
    pub conn: Option<ConnId>,
    pub established: Option<SimTime>,
    /// When the server had the whole request.
    pub request_done: Option<SimTime>,
    /// When the client had the whole response.
    pub response_done: Option<SimTime>,
    /// Each Delivered event at the receiving side of the response: (time, total bytes).
    pub response_progress: Vec<(SimTime, u64)>,
    pub request_progress: Vec<(SimTime, u64)>,
    pub closed: [Option<SimTime>; 2],
}

/// The client sends `request` bytes; when the server has them all it sends `response`
/// bytes and closes; the client closes when it has the response. With `request == 0` the
/// server answers as soon as the connection is established.
pub struct Transfer {
    pub client: NodeId,
    pub server: NodeId,
    pub request: u64,
    pub response: u64,
    pub client_cfg: TcpConfig,
    pub server_cfg: TcpConfig,
    pub client_iw: usize,
    pub server_iw: usize,
    pub log: Arc<Mutex<Log>>,
}

impl Application for Transfer {
    fn start(&mut self, core: &mut Core, me: AppId) {
        let spec = ConnSpec {
            client: self.client,
            server: self.server,
            client_cfg: &self.client_cfg,
            server_cfg: &self.server_cfg,
            client_iw: self.client_iw,
            server_iw: self.server_iw,
            client_declared: Some(self.request),
            server_declared: Some(self.response),
            app: Some(me),
            label: Default::default(),
        };
        let c = core.open(&spec);
        self.log.lock().unwrap().conn = Some(c);
        if self.request > 0 {
            core.write(c, Side::Client, self.request);
        }
    }

    fn on_event(&mut self, core: &mut Core, _me: AppId, conn: ConnId, side: Side, ev: AppEvent) {
        let now = core.now();
        let mut log = self.log.lock().unwrap();
        match (side, ev) {
            (Side::Server, AppEvent::Established) => {
                log.established.get_or_insert(now);
                if self.request == 0 {
                    drop(log);
                    self.respond(core, conn);
                }
            }
            (Side::Server, AppEvent::Delivered { total }) => {
                log.request_progress.push((now, total));
                if total == self.request {
                    log.request_done = Some(now);
                    drop(log);
                    self.respond(core, conn);
                }
            }
            (Side::Client, AppEvent::Delivered { total }) => {
                log.response_progress.push((now, total));
                if total == self.response {
                    log.response_done = Some(now);
                    drop(log);
                    core.close(conn, Side::Client);
                }
            }
            // An empty response is complete when the server's FIN arrives.
            (Side::Client, AppEvent::PeerClosed) if self.response == 0 => {
                drop(log);
                core.close(conn, Side::Client);
            }
            (s, AppEvent::Closed) => log.closed[s as usize] = Some(now),
            _ => {}
        }
    }
}

impl Transfer {
    fn respond(&mut self, core: &mut Core, conn: ConnId) {
        if self.response > 0 {
            core.write(conn, Side::Server, self.response);
        }
        core.close(conn, Side::Server);
    }
}

/// Two hosts joined by one full-duplex link (each direction `spec`).
pub struct Pair {
    pub sim: Simulation,
    pub client: NodeId,
    pub server: NodeId,
    /// Ports client→server and server→client.
    pub up: LinkId,
    pub down: LinkId,
}

pub fn pair(spec: LinkSpec, seed: u64) -> Pair {
    let mut topo = Topology::new();
    let client = topo.add_node("client", NodeKind::Host);
    let server = topo.add_node("server", NodeKind::Host);
    let streams = iwlab_core::engine::RngStreams::new(seed);
    let (up, down) = topo.connect(client, server, &spec, &spec, &streams);
    topo.compute_routes();
    Pair { sim: Simulation::new(topo, seed), client, server, up, down }
}

/// One request/response on `pair`, with the given TCP settings and IW policy for both ends.
pub fn transfer(p: &mut Pair, cfg: &TcpConfig, iw: IwConfig, request: u64, response: u64) -> Arc<Mutex<Log>> {
    let i = p.sim.core.add_iw_policy(iw.build());
    let log = Arc::new(Mutex::new(Log::default()));
    let app = Transfer {
        client: p.client,
        server: p.server,
        request,
        response,
        client_cfg: cfg.clone(),
        server_cfg: cfg.clone(),
        client_iw: i,
        server_iw: i,
        log: log.clone(),
    };
    p.sim.add_app(Box::new(app), SimTime::ZERO);
    log
}

/// Runs to `end` and asserts the accounting identity.
pub fn run(sim: &mut Simulation, end: SimTime) {
    sim.run_until(end);
    sim.check_accounting().expect("accounting");
}

/// Drops chosen packets on a port.
pub fn drop_on(sim: &mut Simulation, port: LinkId, rule: LossRule) {
    sim.core.topo.ports[port as usize].loss.add(rule);
}

/// A dumbbell with `n` hosts per side on identical access links.
pub fn dumbbell(
    n: usize,
    access: LinkSpec,
    bottleneck: LinkSpec,
    seed: u64,
) -> (Simulation, iwlab_core::net::dumbbell::Dumbbell) {
    let spec = DumbbellSpec {
        left: vec![Access::symmetric(access.clone()); n],
        right: vec![Access::symmetric(access); n],
        forward: bottleneck.clone(),
        reverse: bottleneck,
    };
    let mut topo = Topology::new();
    let d = spec.build(&mut topo, &iwlab_core::engine::RngStreams::new(seed));
    (Simulation::new(topo, seed), d)
}
