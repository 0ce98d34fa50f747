//! Scenario → running [`Simulation`]: the dumbbell with per-host access links (drawn from
//! the scenario seed), bottleneck loss, one IW policy instance per (host, policy name), and
//! the applications with their start times.
//!
//! Random draws made here come from `RngStreams::new(seed).stream(StreamKind::Scenario, id)`
//! with a fixed `id` per (host group, field) and per application entry, so a draw depends
//! only on the seed and on what it is for: adding a host, a group or an application never
//! changes the other draws.

use super::apps::Mapping;
use super::arrivals::{ArrivalsR, MixR};
use super::error::ScenarioError;
use super::model::{Direction, Scenario};
use super::validate::{AppR, Draw, GroupR, GroupSide, ParamsR, Resolved};
use crate::engine::{RngStreams, SimDuration, SimRng, SimTime, StreamKind};
use crate::metrics::Names;
use crate::net::dumbbell::{Access, DumbbellSpec};
use crate::net::link::LinkSpec;
use crate::net::loss::LossRule;
use crate::net::packet::{LinkId, NodeId};
use crate::net::topology::Topology;
use crate::sim::{AppId, Simulation};
use crate::tcp::config::TcpConfig;
use crate::tcp::iw::{AnyIw, Routed};
use crate::traffic::dist::SizeDist;
use crate::traffic::{AppConfig, Arrivals, Ends, Mix, MixEntry, ReplayFlow};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A built scenario, ready to run: the simulation and the ids records need.
pub struct Built {
    pub sim: Simulation,
    /// The seed the simulation runs with (the scenario's, or the override).
    pub seed: u64,
    /// The run stops at this instant (`duration`).
    pub end: SimTime,
    /// Records before this instant are warm-up.
    pub warmup: SimTime,
    /// Period of bottleneck queue sampling, if any.
    pub sample_interval: Option<SimDuration>,
    pub router_left: NodeId,
    pub router_right: NodeId,
    /// Bottleneck output ports: router L → router R, and R → L.
    pub bottleneck_forward: LinkId,
    pub bottleneck_reverse: LinkId,
    /// The dumbbell as built: bottleneck and every host's drawn access link.
    pub topology: DumbbellSpec,
    /// Host groups, left ones first, each in file order.
    pub groups: Vec<GroupNodes>,
    /// One per `[[apps]]` entry, in file order.
    pub apps: Vec<BuiltApp>,
    /// IW policy instances; the index is the one in `sim.core.iw`.
    pub iw: Vec<IwInstance>,
}

/// The hosts of a group.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupNodes {
    pub name: String,
    pub side: GroupSide,
    pub nodes: Vec<NodeId>,
    /// Each host's access link as drawn, in `nodes` order.
    pub access: Vec<HostAccess>,
}

/// One host's access link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostAccess {
    /// Output port host → router, and router → host.
    pub up_port: LinkId,
    pub down_port: LinkId,
    pub up_rate_bps: u64,
    pub down_rate_bps: u64,
    pub up_delay: SimDuration,
    pub down_delay: SimDuration,
}

/// What an application entry became.
#[derive(Clone, Debug)]
pub struct BuiltApp {
    /// `name`, or `"<kind>-<index>"`.
    pub name: String,
    pub kind: &'static str,
    /// Simulation application ids (one per instance; one in all for `poisson-flows`).
    pub app_ids: Vec<AppId>,
    /// (client, server) nodes of each instance (each pair for `poisson-flows`).
    pub hosts: Vec<(NodeId, NodeId)>,
    /// Start time of each application id.
    pub starts: Vec<SimTime>,
    /// Indices in `sim.core.iw` of the servers' and the clients' policies, per instance.
    pub server_iw: Vec<usize>,
    pub client_iw: Vec<usize>,
    /// The resolved TCP options of both ends.
    pub tcp: Arc<TcpConfig>,
    /// The engine configuration of each application id, as handed to `build_app`.
    pub configs: Vec<AppConfig>,
}

/// An IW policy instance: policy `policy` on host `node`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IwInstance {
    pub node: NodeId,
    pub policy: String,
}

impl Built {
    /// Runs to the end time and returns the simulation (records are read off it).
    pub fn run(self) -> Simulation {
        let mut sim = self.sim;
        sim.run_until(self.end);
        sim.finish();
        sim
    }
}

/// Stream ids of the scenario's own draws.
fn group_stream(group: usize, field: u64) -> u64 {
    (1 << 40) | ((group as u64) << 8) | field
}
fn app_stream(app: usize) -> u64 {
    (2 << 40) | app as u64
}

impl Draw {
    fn next(&self, rng: &mut SimRng) -> f64 {
        match self {
            Draw::Fixed(x) => *x,
            Draw::Dist(d) => d.sample(rng),
        }
    }
}

/// The per-host links of a group: (down, up) specs.
fn draw_group(g: &GroupR, gi: usize, streams: &RngStreams) -> Vec<(LinkSpec, LinkSpec)> {
    let mut rate_rng = streams.stream(StreamKind::Scenario, group_stream(gi, 1));
    let mut delay_rng = streams.stream(StreamKind::Scenario, group_stream(gi, 2));
    let mut up_rate_rng = streams.stream(StreamKind::Scenario, group_stream(gi, 3));
    let mut up_delay_rng = streams.stream(StreamKind::Scenario, group_stream(gi, 4));
    (0..g.count)
        .map(|_| {
            let rate = g.down_rate.next(&mut rate_rng).round().max(1.0) as u64;
            let delay = SimDuration::from_secs_f64(g.down_delay.next(&mut delay_rng));
            let up_rate = g.up_rate.as_ref().map_or(rate, |d| d.next(&mut up_rate_rng).round().max(1.0) as u64);
            let up_delay = g.up_delay.as_ref().map_or(delay, |d| SimDuration::from_secs_f64(d.next(&mut up_delay_rng)));
            (
                LinkSpec { rate_bps: rate, delay, queue: g.down_queue.clone() },
                LinkSpec { rate_bps: up_rate, delay: up_delay, queue: g.up_queue.clone() },
            )
        })
        .collect()
}

impl Scenario {
    /// Validates the scenario and builds the simulation; `seed` overrides the scenario's.
    pub fn build(&self, seed: Option<u64>) -> Result<Built, ScenarioError> {
        let r = self.resolve()?;
        let seed = seed.unwrap_or(self.seed);
        instantiate(&r, seed)
    }
}

fn instantiate(r: &Resolved, seed: u64) -> Result<Built, ScenarioError> {
    let streams = RngStreams::new(seed);
    let links: Vec<Vec<(LinkSpec, LinkSpec)>> =
        r.groups.iter().enumerate().map(|(gi, g)| draw_group(g, gi, &streams)).collect();
    let access = |side: GroupSide| -> Vec<Access> {
        r.groups
            .iter()
            .zip(&links)
            .filter(|(g, _)| g.side == side)
            .flat_map(|(_, l)| l.iter().map(|(down, up)| Access { up: up.clone(), down: down.clone() }))
            .collect()
    };
    let spec = DumbbellSpec {
        left: access(GroupSide::Left),
        right: access(GroupSide::Right),
        forward: LinkSpec { rate_bps: r.forward.rate_bps, delay: r.forward.delay, queue: r.forward.queue.clone() },
        reverse: LinkSpec { rate_bps: r.reverse.rate_bps, delay: r.reverse.delay, queue: r.reverse.queue.clone() },
    };
    let mut topo = Topology::new();
    let db = spec.build(&mut topo, &streams);
    if r.jitter > SimDuration::ZERO {
        topo.ports.iter_mut().for_each(|p| p.jitter = r.jitter);
    }
    if let Some((p, dir)) = r.loss {
        if matches!(dir, Direction::Both | Direction::Forward) {
            topo.ports[db.forward as usize].loss.add(LossRule::Random { p });
        }
        if matches!(dir, Direction::Both | Direction::Reverse) {
            topo.ports[db.reverse as usize].loss.add(LossRule::Random { p });
        }
    }
    // Hosts of each group, in the order the dumbbell numbered them.
    let (mut next_left, mut next_right) = (0usize, 0usize);
    let mut groups = Vec::with_capacity(r.groups.len());
    for (g, l) in r.groups.iter().zip(&links) {
        let (pool, next, router) = match g.side {
            GroupSide::Left => (&db.left, &mut next_left, db.router_left),
            GroupSide::Right => (&db.right, &mut next_right, db.router_right),
        };
        let nodes: Vec<NodeId> = pool[*next..*next + g.count as usize].to_vec();
        *next += g.count as usize;
        let access = nodes
            .iter()
            .zip(l)
            .map(|(&h, (down, up))| HostAccess {
                up_port: topo.port_between(h, router).expect("host is linked to its router"),
                down_port: topo.port_between(router, h).expect("router is linked to its host"),
                up_rate_bps: up.rate_bps,
                down_rate_bps: down.rate_bps,
                up_delay: up.delay,
                down_delay: down.delay,
            })
            .collect();
        groups.push(GroupNodes { name: g.name.clone(), side: g.side, nodes, access });
    }

    let mut sim = Simulation::new(topo, seed);
    let mut iw_index: BTreeMap<(NodeId, String), usize> = BTreeMap::new();
    let mut iw = Vec::new();
    let routes = super::policy_file::route_table(&r.iw_routes, &groups);
    let mut policy = |sim: &mut Simulation, node: NodeId, name: &str| -> usize {
        *iw_index.entry((node, name.to_string())).or_insert_with(|| {
            iw.push(IwInstance { node, policy: name.to_string() });
            let p = match &routes {
                None => r.iw[name].build(),
                Some(t) => AnyIw::routed(Routed::new(t.clone(), r.iw[name].build(), |n| r.iw[n].build())),
            };
            sim.core.add_iw_policy(p)
        })
    };
    let mut apps = Vec::with_capacity(r.apps.len());
    for (ai, a) in r.apps.iter().enumerate() {
        let mut start_rng = streams.stream(StreamKind::Scenario, app_stream(ai));
        let mut out = BuiltApp {
            name: a.name.clone(),
            kind: a.kind,
            app_ids: Vec::new(),
            hosts: Vec::new(),
            starts: Vec::new(),
            server_iw: Vec::new(),
            client_iw: Vec::new(),
            tcp: a.tcp.clone(),
            configs: Vec::new(),
        };
        let ends: Vec<Ends> = (0..a.count)
            .map(|i| {
                let (c, s) = hosts(a, i, &groups);
                let ends = Ends {
                    client: c,
                    server: s,
                    client_tcp: a.tcp.clone(),
                    server_tcp: a.tcp.clone(),
                    client_iw: policy(&mut sim, c, &a.client_iw),
                    server_iw: policy(&mut sim, s, &a.server_iw),
                    transport: a.transport.clone(),
                };
                out.hosts.push((c, s));
                out.server_iw.push(ends.server_iw);
                out.client_iw.push(ends.client_iw);
                ends
            })
            .collect();
        let configs: Vec<AppConfig> = match &a.params {
            // count = 0: no pairs, no source (the entry starts nothing, as every kind's count 0).
            ParamsR::PoissonFlows { .. } if ends.is_empty() => Vec::new(),
            ParamsR::PoissonFlows { rate_per_s, size, request, count } => vec![AppConfig::PoissonFlows {
                pairs: ends,
                rate_per_s: *rate_per_s,
                size: size.clone(),
                request_bytes: *request,
                count: *count,
            }],
            p => ends
                .into_iter()
                .map(|e| {
                    let server = e.server;
                    app_config(p, e, &mut |name: &str| policy(&mut sim, server, name))
                })
                .collect(),
        };
        for cfg in configs {
            let at = SimTime::ZERO + SimDuration::from_secs_f64(a.start.next(&mut start_rng));
            let app = crate::traffic::build_app(&cfg).map_err(|e| {
                ScenarioError::invalid(format!("apps[{ai}]"), format!("cannot build the application: {e}"))
            })?;
            out.app_ids.push(sim.add_app(app, at));
            out.starts.push(at);
            out.configs.push(cfg);
        }
        apps.push(out);
    }
    // Names for the flow records: each application id's entry, each policy instance's name.
    let mut app_names = Vec::new();
    for a in &apps {
        for &id in &a.app_ids {
            if app_names.len() <= id as usize {
                app_names.resize(id as usize + 1, String::new());
            }
            app_names[id as usize] = a.name.clone();
        }
    }
    let iw_names = iw.iter().map(|i| i.policy.clone()).collect();
    sim.core.records.names = Some(Arc::new(Names { apps: app_names, iw: iw_names }));
    // Measurement: bottleneck queue samples and the end of the warm-up.
    if let Some(interval) = r.sample_interval {
        sim.core.sample_queues(interval, vec![db.forward, db.reverse]);
    }
    if r.warmup > SimTime::ZERO {
        sim.core.set_warmup(r.warmup);
    }
    Ok(Built {
        sim,
        seed,
        end: r.end,
        warmup: r.warmup,
        sample_interval: r.sample_interval,
        router_left: db.router_left,
        router_right: db.router_right,
        bottleneck_forward: db.forward,
        bottleneck_reverse: db.reverse,
        topology: spec,
        groups,
        apps,
        iw,
    })
}

/// (client, server) nodes of instance `i` (see [`super::apps`]: `(offset + i) mod size`;
/// validation has checked that `distinct` never wraps).
fn hosts(a: &AppR, i: u32, groups: &[GroupNodes]) -> (NodeId, NodeId) {
    let pick = |g: &GroupNodes| {
        let k = a.offset as usize + i as usize;
        match a.mapping {
            Mapping::Modulo => g.nodes[k % g.nodes.len()],
            Mapping::Distinct => g.nodes[k],
        }
    };
    (pick(&groups[a.clients]), pick(&groups[a.servers]))
}

/// The engine configuration of one instance; `iw_of` gives the index of a policy (by name) on
/// this instance's server.
fn app_config(p: &ParamsR, ends: Ends, iw_of: &mut dyn FnMut(&str) -> usize) -> AppConfig {
    match p {
        ParamsR::Ftp { size, request, gap, count } => {
            AppConfig::Ftp { ends, size: *size, request_bytes: *request, gap: gap.clone(), count: *count }
        }
        ParamsR::Bulk { upload } => AppConfig::Bulk { ends, upload: *upload },
        ParamsR::Web { version, request, primary, embedded, embedded_count, think, pages } => AppConfig::Web {
            ends,
            version: *version,
            request_bytes: *request,
            primary: primary.clone(),
            embedded: embedded.clone(),
            embedded_count: embedded_count.clone(),
            think: think.clone(),
            pages: *pages,
        },
        ParamsR::ShortFlows { request, response, arrivals, count, mix } => {
            short_flows_config(ends, *request, *response, arrivals, *count, mix.as_ref(), iw_of)
        }
        ParamsR::PoissonFlows { rate_per_s, size, request, count } => AppConfig::PoissonFlows {
            pairs: vec![ends],
            rate_per_s: *rate_per_s,
            size: size.clone(),
            request_bytes: *request,
            count: *count,
        },
        ParamsR::Udp { rate_bps, payload, poisson, stop } => AppConfig::Udp {
            src: ends.server,
            dst: ends.client,
            rate_bps: *rate_bps,
            payload_bytes: *payload,
            poisson: *poisson,
            stop: *stop,
        },
    }
}

/// A short-flows instance: the mix's and the replay's policy names become the policy
/// instances of this instance's server (`iw_of`).
fn short_flows_config(
    ends: Ends,
    request: u64,
    response: u64,
    arrivals: &ArrivalsR,
    count: Option<u32>,
    mix: Option<&MixR>,
    iw_of: &mut dyn FnMut(&str) -> usize,
) -> AppConfig {
    let arrivals = match arrivals {
        ArrivalsR::Engine(a) => a.clone(),
        ArrivalsR::Replay(rows) => Arrivals::Replay(
            rows.iter()
                .map(|r| ReplayFlow {
                    start: r.start,
                    request_bytes: r.request,
                    response_bytes: r.response,
                    server_iw: iw_of(&r.server_iw),
                })
                .collect(),
        ),
    };
    let mix = mix.map(|m| Mix {
        entries: m
            .entries
            .iter()
            .map(|(bytes, name)| MixEntry { response_bytes: *bytes, server_iw: iw_of(name) })
            .collect(),
        order: m.order,
    });
    AppConfig::ShortFlows { ends, request_bytes: request, response_bytes: response, arrivals, count, mix }
}
