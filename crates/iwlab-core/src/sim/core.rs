//! The simulation core: event loop state, packet slab, connections, and the network.
//! Applications act on it through `open`, `write`, `close`, `set_timer`, `send_udp`.

use super::app::AppId;
use crate::engine::{RngStreams, Scheduler, SimDuration, SimTime};
use crate::metrics::QueueSample;
use crate::metrics::{FlowLabel, Records};
use crate::net::link::LinkCounters;
use crate::net::packet::{Ecn, FlowId, LinkId, NodeId, Packet, Payload};
use crate::net::queue::{QueueDisc, QueuedPkt, Verdict};
use crate::net::topology::Topology;
use crate::tcp::config::TcpConfig;
use crate::tcp::endpoint::{AppEvent, Endpoint, EndpointStats, Outbox, State};
use crate::tcp::iw::AnyIw;
use crate::tcp::sender::SenderStats;
use slab::Slab;
use std::collections::VecDeque;

pub type ConnId = u32;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Client,
    Server,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A port with packets waiting finished serialising: it starts the next one.
    PortFree(LinkId),
    /// A packet reached the far end of a port's link.
    Arrive(LinkId, usize),
    TcpTimer(ConnId, Side),
    /// A QUIC endpoint's deadline (quinn-proto's `poll_timeout`).
    #[cfg(feature = "quic")]
    QuicTimer(ConnId, Side),
    AppStart(AppId),
    AppTimer(AppId, u64),
    /// Record queue lengths of the monitored ports, then again after the interval.
    QueueSample,
    /// The warm-up ends: snapshot the link counters.
    WarmupEnd,
}

/// A TCP connection: where it lives, what it was opened for, and its endpoints while it is
/// live. Once both endpoints are closed (or the handshake failed) and nothing of it is left in
/// the network or on a timer, its state can no longer change: the endpoints are replaced by
/// two [`EndRecord`]s (what its flow record needs) and the connection takes a few hundred
/// bytes, whatever it sent (memory flat in flows).
pub struct Conn {
    pub client_node: NodeId,
    pub server_node: NodeId,
    /// Indices into `Core::iw` of the policies each endpoint uses.
    pub client_iw: usize,
    pub server_iw: usize,
    pub app: Option<AppId>,
    pub label: FlowLabel,
    /// Bytes each side declared it will send (request and response).
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub opened_at: SimTime,
    /// When the endpoint on each side (indexed by `Side`) received its first and last byte.
    pub first_byte: [Option<SimTime>; 2],
    pub last_byte: [Option<SimTime>; 2],
    pub(crate) ends: Ends,
}

// Retired is the large variant on purpose: every connection retires in the end, and inline
// its records cost no allocation (no allocator header, no fragmentation) of their own.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Ends {
    Live(Box<LiveConn>),
    /// Client and server, indexed by `Side`.
    Retired([EndRecord; 2]),
    /// A live QUIC connection (see [`crate::transport`]).
    #[cfg(feature = "quic")]
    Quic(Box<crate::quic::QuicConn>),
}

/// The state of a live connection.
pub struct LiveConn {
    pub client: Endpoint,
    pub server: Endpoint,
    timer: [Option<SimTime>; 2],
    /// Its packets created and not yet delivered or dropped.
    in_flight: u32,
}

/// One endpoint of a connection, as its flow record sees it. Taken when the connection
/// retires (its endpoints can no longer change), or read off a live endpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndRecord {
    /// Bytes the application wrote.
    pub bytes_written: u64,
    /// Bytes delivered in order to the application.
    pub delivered: u64,
    pub mss: u32,
    /// TIME-WAIT or failed ([`Endpoint::is_closed`]).
    pub closed: bool,
    pub stats: EndpointStats,
    pub sender: SenderStats,
}

impl EndRecord {
    pub fn of(ep: &Endpoint) -> Self {
        EndRecord {
            bytes_written: ep.sender.bytes_written(),
            delivered: ep.receiver.delivered(),
            mss: ep.config().mss,
            closed: ep.is_closed(),
            stats: ep.stats.clone(),
            sender: ep.sender.stats.clone(),
        }
    }
}

impl LiveConn {
    pub fn endpoint(&self, side: Side) -> &Endpoint {
        match side {
            Side::Client => &self.client,
            Side::Server => &self.server,
        }
    }
    /// Nothing can change this connection any more: no packet of it in the network, no
    /// timer, and each endpoint closed (RFC 9293 TIME-WAIT, entered here only once its own
    /// FIN is acknowledged) or one of them failed its handshake. A TIME-WAIT endpoint whose
    /// peer may still retransmit its FIN (the ACK of it was lost) stays live and answers it:
    /// the peer is not closed until an ACK reaches it.
    fn quiescent(&self) -> bool {
        let (c, s) = (&self.client, &self.server);
        self.in_flight == 0
            && c.next_timeout().is_none()
            && s.next_timeout().is_none()
            && ((c.is_closed() && s.is_closed()) || c.state == State::Failed || s.state == State::Failed)
    }
}

impl Conn {
    /// The live state, until the connection retires.
    pub fn live(&self) -> Option<&LiveConn> {
        match &self.ends {
            Ends::Live(l) => Some(l),
            _ => None,
        }
    }
    fn live_mut(&mut self) -> Option<&mut LiveConn> {
        match &mut self.ends {
            Ends::Live(l) => Some(l),
            _ => None,
        }
    }
    /// Not retired yet (TCP or QUIC).
    pub fn is_live(&self) -> bool {
        !matches!(self.ends, Ends::Retired(_))
    }
    /// The endpoint on `side`, while the connection is live.
    pub fn endpoint(&self, side: Side) -> Option<&Endpoint> {
        self.live().map(|l| l.endpoint(side))
    }
    /// The endpoint on `side` as its flow record sees it (live or retired).
    pub fn end(&self, side: Side) -> EndRecord {
        match &self.ends {
            Ends::Live(l) => EndRecord::of(l.endpoint(side)),
            Ends::Retired(r) => r[side as usize].clone(),
            #[cfg(feature = "quic")]
            Ends::Quic(q) => q.end_record(side),
        }
    }
    pub fn client(&self) -> EndRecord {
        self.end(Side::Client)
    }
    pub fn server(&self) -> EndRecord {
        self.end(Side::Server)
    }
}

/// How to open a connection.
#[derive(Clone, Debug)]
pub struct ConnSpec<'a> {
    pub client: NodeId,
    pub server: NodeId,
    pub client_cfg: &'a TcpConfig,
    pub server_cfg: &'a TcpConfig,
    pub client_iw: usize,
    pub server_iw: usize,
    /// Bytes each side declares it will send (size-based IW).
    pub client_declared: Option<u64>,
    pub server_declared: Option<u64>,
    pub app: Option<AppId>,
    pub label: FlowLabel,
}

/// Why a packet was dropped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DropReason {
    Queue,
    LossRule,
    NoRoute,
}

/// What happened to a packet, for observers (traces, event logs).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PacketEvent {
    /// Began serialisation on the port.
    TxStart,
    Drop(DropReason),
    /// Reached its destination host.
    Deliver,
}

/// Sees every packet event; used for pcap traces and event logs.
pub trait Observer {
    fn on_packet(&mut self, now: SimTime, ev: PacketEvent, port: LinkId, pkt: &Packet);
    /// Whether [`on_datagram`](Self::on_datagram) wants a QUIC datagram's bytes at `TxStart`.
    fn wants_datagrams(&self) -> bool {
        false
    }
    /// A QUIC packet starting serialisation, with its datagram's bytes (observers that
    /// `wants_datagrams`).
    fn on_datagram(&mut self, now: SimTime, ev: PacketEvent, port: LinkId, pkt: &Packet, _bytes: &[u8]) {
        self.on_packet(now, ev, port, pkt)
    }
}

/// Packet accounting: every packet created is delivered, dropped, or still in flight.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Accounting {
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// Payload bytes (TCP data, UDP) created / delivered / dropped.
    pub payload_created: u64,
    pub payload_delivered: u64,
    pub payload_dropped: u64,
}

/// A UDP flow's counters.
#[derive(Clone, Debug, Default)]
pub struct UdpFlow {
    pub src: NodeId,
    pub dst: NodeId,
    pub sent_packets: u64,
    pub sent_bytes: u64,
    pub received_packets: u64,
    pub received_bytes: u64,
}

pub struct Core {
    pub(crate) sched: Scheduler<Event>,
    pub topo: Topology,
    pub(crate) packets: Slab<Packet>,
    pub conns: Vec<Conn>,
    /// Connections not yet retired.
    pub(crate) live_conns: usize,
    pub iw: Vec<AnyIw>,
    pub udp: Vec<UdpFlow>,
    streams: RngStreams,
    outbox: Outbox,
    /// QUIC state beside the TCP one (datagram bytes in flight, records of retired flows).
    #[cfg(feature = "quic")]
    pub(crate) quic: crate::quic::engine::QuicSide,
    pub(crate) pending: VecDeque<(AppId, ConnId, Side, AppEvent)>,
    next_uid: u64,
    pub acct: Accounting,
    observers: Vec<Box<dyn Observer + Send>>,
    dropped_scratch: Vec<QueuedPkt>,
    /// Rows applications produce (pages).
    pub records: Records,
    next_page: u64,
    sampling: Option<(SimDuration, Vec<LinkId>)>,
    /// Link counters when the warm-up ended (subtracted in link records).
    pub warmup_snapshot: Option<(SimTime, Vec<LinkCounters>)>,
}

impl Core {
    pub fn new(topo: Topology, streams: RngStreams) -> Self {
        Core {
            sched: Scheduler::new(),
            topo,
            packets: Slab::new(),
            conns: Vec::new(),
            live_conns: 0,
            iw: Vec::new(),
            udp: Vec::new(),
            streams,
            outbox: Outbox::default(),
            #[cfg(feature = "quic")]
            quic: Default::default(),
            pending: VecDeque::new(),
            next_uid: 0,
            acct: Accounting::default(),
            observers: Vec::new(),
            dropped_scratch: Vec::new(),
            records: Records::default(),
            next_page: 0,
            sampling: None,
            warmup_snapshot: None,
        }
    }

    pub fn now(&self) -> SimTime {
        self.sched.now()
    }
    pub fn streams(&self) -> &RngStreams {
        &self.streams
    }
    pub fn add_observer(&mut self, o: Box<dyn Observer + Send>) {
        self.observers.push(o);
    }
    /// Packets created and not yet delivered or dropped.
    pub fn in_flight(&self) -> u64 {
        self.packets.len() as u64
    }
    /// Payload bytes in packets still in flight.
    pub fn payload_in_flight(&self) -> u64 {
        self.packets.iter().map(|(_, p)| p.data_len() as u64).sum()
    }
    /// Connections opened and not yet retired (see [`Conn`]).
    pub fn live_connections(&self) -> usize {
        self.live_conns
    }
    pub fn events_processed(&self) -> u64 {
        self.sched.events_processed()
    }
    /// Heap bytes the event queue's buffers hold (memory probes).
    pub fn scheduler_heap_bytes(&self) -> usize {
        self.sched.heap_bytes()
    }
    /// Heap bytes the packet slab holds (its capacity; a slot is a packet or a free-list link).
    pub fn packet_heap_bytes(&self) -> usize {
        self.packets.capacity() * (std::mem::size_of::<Packet>() + 8)
    }

    /// Samples the queue length of `ports` every `interval`, from time zero.
    pub fn sample_queues(&mut self, interval: SimDuration, ports: Vec<LinkId>) {
        assert!(interval > SimDuration::ZERO, "validated by the scenario");
        self.sampling = Some((interval, ports));
        self.sched.schedule(self.now(), Event::QueueSample);
    }

    /// Ends the warm-up at `at`: link records count from then on.
    pub fn set_warmup(&mut self, at: SimTime) {
        self.sched.schedule(at, Event::WarmupEnd);
    }

    /// A fresh page id.
    pub fn next_page_id(&mut self) -> u64 {
        self.next_page += 1;
        self.next_page - 1
    }

    /// Registers an IW policy instance; connections refer to it by the returned index.
    pub fn add_iw_policy(&mut self, p: AnyIw) -> usize {
        self.iw.push(p);
        self.iw.len() - 1
    }

    /// Opens a connection: the client sends its SYN now.
    pub fn open(&mut self, spec: &ConnSpec) -> ConnId {
        let id = self.conns.len() as ConnId;
        let live = LiveConn {
            client: Endpoint::client(spec.client_cfg, spec.server, spec.client_declared),
            server: Endpoint::server(spec.server_cfg, spec.client, spec.server_declared),
            timer: [None, None],
            in_flight: 0,
        };
        self.push_conn(spec, Ends::Live(Box::new(live)));
        let now = self.now();
        let live = self.conns[id as usize].live_mut().expect("just opened");
        live.client.connect(now, &mut self.outbox);
        self.flush(id, Side::Client);
        id
    }

    /// Records a newly opened connection (TCP or QUIC ends) and counts it live.
    pub(crate) fn push_conn(&mut self, spec: &ConnSpec, ends: Ends) {
        let now = self.now();
        self.live_conns += 1;
        self.conns.push(Conn {
            client_node: spec.client,
            server_node: spec.server,
            client_iw: spec.client_iw,
            server_iw: spec.server_iw,
            app: spec.app,
            label: spec.label,
            request_bytes: spec.client_declared.unwrap_or(0),
            response_bytes: spec.server_declared.unwrap_or(0),
            opened_at: now,
            first_byte: [None, None],
            last_byte: [None, None],
            ends,
        });
    }

    /// The application on `side` of `conn` writes `bytes`.
    pub fn write(&mut self, conn: ConnId, side: Side, bytes: u64) {
        let now = self.now();
        // A retired connection's endpoints are closed: no application writes to them.
        debug_assert!(self.conns[conn as usize].is_live(), "write on retired connection {conn}");
        let Some((ep, iw, out)) = self.endpoint_and_policy(conn, side) else {
            #[cfg(feature = "quic")]
            self.quic_write(conn, side, bytes, false);
            return;
        };
        ep.write(now, bytes, iw, out);
        self.flush(conn, side);
    }

    /// The application on `side` of `conn` writes `bytes` and closes its direction at once, so
    /// the FIN can ride on the last data segment.
    pub fn write_and_close(&mut self, conn: ConnId, side: Side, bytes: u64) {
        let now = self.now();
        // Retired: both directions were closed already, which makes this a no-op.
        let Some((ep, iw, out)) = self.endpoint_and_policy(conn, side) else {
            #[cfg(feature = "quic")]
            self.quic_write(conn, side, bytes, true);
            return;
        };
        ep.write_and_close(now, bytes, iw, out);
        self.flush(conn, side);
    }

    /// The application on `side` of `conn` closes its direction.
    pub fn close(&mut self, conn: ConnId, side: Side) {
        let now = self.now();
        // Retired: both directions were closed already, which makes this a no-op.
        let Some((ep, iw, out)) = self.endpoint_and_policy(conn, side) else {
            #[cfg(feature = "quic")]
            self.quic_close(conn, side);
            return;
        };
        ep.close(now, iw, out);
        self.flush(conn, side);
    }

    /// Calls `on_timer(app, token)` at `at`.
    pub fn set_timer(&mut self, app: AppId, at: SimTime, token: u64) {
        self.sched.schedule(at.max(self.now()), Event::AppTimer(app, token));
    }
    pub(crate) fn schedule_app_start(&mut self, app: AppId, at: SimTime) {
        self.sched.schedule(at, Event::AppStart(app));
    }

    /// Registers a UDP flow from `src` to `dst`.
    pub fn add_udp_flow(&mut self, src: NodeId, dst: NodeId) -> FlowId {
        self.udp.push(UdpFlow { src, dst, ..Default::default() });
        (self.udp.len() - 1) as FlowId
    }

    /// Sends one UDP datagram of `payload` bytes on `flow` (IP + UDP headers add 28 bytes).
    pub fn send_udp(&mut self, flow: FlowId, payload: u32) {
        let f = &mut self.udp[flow as usize];
        f.sent_packets += 1;
        f.sent_bytes += payload as u64;
        let (src, dst, seq) = (f.src, f.dst, f.sent_packets);
        let pkt = self.new_packet(src, dst, flow, payload + 28, Ecn::NotEct, Payload::Udp { len: payload, seq });
        self.inject(src, pkt);
    }

    /// The endpoint, its IW policy and the outbox, borrowed together (`None`: retired).
    fn endpoint_and_policy(&mut self, conn: ConnId, side: Side) -> Option<(&mut Endpoint, &mut AnyIw, &mut Outbox)> {
        let c = &mut self.conns[conn as usize];
        let (client_iw, server_iw) = (c.client_iw, c.server_iw);
        let live = c.live_mut()?;
        Some(match side {
            Side::Client => (&mut live.client, &mut self.iw[client_iw], &mut self.outbox),
            Side::Server => (&mut live.server, &mut self.iw[server_iw], &mut self.outbox),
        })
    }

    /// Replaces the endpoints of a connection that can no longer change by their records.
    fn retire_if_quiescent(&mut self, conn: ConnId) {
        let c = &mut self.conns[conn as usize];
        let Ends::Live(live) = &c.ends else { return };
        if live.quiescent() {
            let rec = [EndRecord::of(&live.client), EndRecord::of(&live.server)];
            c.ends = Ends::Retired(rec);
            self.live_conns -= 1;
        }
    }

    pub(crate) fn new_packet(&mut self, src: NodeId, dst: NodeId, flow: FlowId, size: u32, ecn: Ecn, payload: Payload) -> usize {
        let uid = self.next_uid;
        self.next_uid += 1;
        let pkt = Packet { uid, src, dst, flow, size, ecn, created: self.now(), payload };
        self.acct.created += 1;
        self.acct.payload_created += pkt.data_len() as u64;
        self.packets.insert(pkt)
    }

    /// Sends what the endpoint put in the outbox, hands its events to the application and
    /// keeps one timer event pending for its next deadline.
    fn flush(&mut self, conn: ConnId, side: Side) {
        let c = &self.conns[conn as usize];
        let (src, dst) = match side {
            Side::Client => (c.client_node, c.server_node),
            Side::Server => (c.server_node, c.client_node),
        };
        let app = c.app;
        let now = self.now();
        if self.outbox.events.iter().any(|e| matches!(e, AppEvent::Delivered { .. })) {
            let c = &mut self.conns[conn as usize];
            c.first_byte[side as usize].get_or_insert(now);
            c.last_byte[side as usize] = Some(now);
        }
        // A pure ACK's flush sends one segment and hands over no event: only the segment list
        // is taken out while packets are made of it, not the whole outbox.
        if !self.outbox.segments.is_empty() {
            let mut segments = std::mem::take(&mut self.outbox.segments);
            if let Some(live) = self.conns[conn as usize].live_mut() {
                live.in_flight += segments.len() as u32;
            }
            let to_server = side == Side::Client;
            for (seg, ecn) in segments.drain(..) {
                let size = seg.wire_len();
                let key = self.new_packet(src, dst, conn, size, ecn, Payload::Tcp { seg, to_server });
                self.inject(src, key);
            }
            self.outbox.segments = segments;
        }
        if let Some(app) = app {
            for ev in self.outbox.events.drain(..) {
                self.pending.push_back((app, conn, side, ev));
            }
        }
        self.outbox.clear();
        self.update_timer(conn, side);
        self.retire_if_quiescent(conn);
    }

    fn update_timer(&mut self, conn: ConnId, side: Side) {
        let Some(live) = self.conns[conn as usize].live_mut() else { return };
        let next = live.endpoint(side).next_timeout();
        let slot = &mut live.timer[side as usize];
        if let Some(t) = next {
            if slot.is_none_or(|s| t < s) {
                *slot = Some(t);
                self.sched.schedule(t.max(self.sched.now()), Event::TcpTimer(conn, side));
            }
        }
    }

    /// Puts a packet created at `node` onto the port towards its destination.
    pub(crate) fn inject(&mut self, node: NodeId, key: usize) {
        let dst = self.packets[key].dst;
        match self.topo.route(node, dst) {
            Some(port) => self.enqueue(port, key),
            None => self.drop_packet(key, LinkId::MAX, DropReason::NoRoute),
        }
    }

    fn drop_packet(&mut self, key: usize, port: LinkId, why: DropReason) {
        let pkt = self.packets.remove(key);
        self.tcp_packet_gone(&pkt);
        match pkt.payload {
            Payload::Tcp { .. } => self.retire_if_quiescent(pkt.flow), // it may have been the last
            #[cfg(feature = "quic")]
            Payload::Quic { dgram, .. } => self.quic_dropped(pkt.flow, dgram),
            _ => {}
        }
        self.acct.dropped += 1;
        self.acct.payload_dropped += pkt.data_len() as u64;
        let now = self.now();
        for o in &mut self.observers {
            o.on_packet(now, PacketEvent::Drop(why), port, &pkt);
        }
    }

    fn enqueue(&mut self, port_id: LinkId, key: usize) {
        let now = self.now();
        let port = &mut self.topo.ports[port_id as usize];
        if !port.loss.is_empty() && port.loss.drops(&self.packets[key], &mut port.rng) {
            port.counters.loss_drops += 1;
            self.drop_packet(key, port_id, DropReason::LossRule);
            return;
        }
        let pkt = &self.packets[key];
        let q = QueuedPkt { id: key, bytes: pkt.size, ect: pkt.ect(), enqueued: now };
        match port.queue.enqueue(q, now, &mut port.rng) {
            Verdict::Dropped => {
                port.counters.queue_drops += 1;
                self.drop_packet(key, port_id, DropReason::Queue);
                return;
            }
            Verdict::Marked => {
                port.counters.marks += 1;
                self.packets[key].ecn = Ecn::Ce;
            }
            Verdict::Enqueued => {}
        }
        let port = &mut self.topo.ports[port_id as usize];
        if port.wake_pending {
            return;
        }
        if port.is_busy(now) {
            port.wake_pending = true;
            let at = port.busy_until;
            self.sched.schedule(at, Event::PortFree(port_id));
        } else {
            self.start_tx(port_id);
        }
    }

    fn start_tx(&mut self, port_id: LinkId) {
        let now = self.now();
        let port = &mut self.topo.ports[port_id as usize];
        let next = port.queue.dequeue(now, &mut self.dropped_scratch);
        // Only CoDel drops at dequeue: the scratch list is almost always empty.
        if !self.dropped_scratch.is_empty() {
            port.counters.queue_drops += self.dropped_scratch.len() as u64;
            let mut dropped = std::mem::take(&mut self.dropped_scratch);
            for d in dropped.drain(..) {
                self.drop_packet(d.id, port_id, DropReason::Queue);
            }
            self.dropped_scratch = dropped;
        }
        let Some(d) = next else { return };
        let port = &mut self.topo.ports[port_id as usize];
        let key = d.pkt.id;
        if d.mark {
            port.counters.marks += 1;
            self.packets[key].ecn = Ecn::Ce;
        }
        let pkt = &self.packets[key];
        let (size, payload) = (pkt.size, pkt.data_len());
        let t = port.tx_time_memo(size);
        port.busy_until = now + t;
        port.last_tx = (size, payload);
        port.counters.packets += 1;
        port.counters.bytes += size as u64;
        port.counters.payload_bytes += payload as u64;
        port.counters.busy_ns += t.as_nanos();
        let done = port.busy_until;
        let arrive = port.arrival(done);
        self.sched.schedule(arrive, Event::Arrive(port_id, key));
        if port.queue.len_packets() > 0 {
            port.wake_pending = true;
            self.sched.schedule(done, Event::PortFree(port_id));
        }
        if !self.observers.is_empty() {
            #[cfg(feature = "quic")]
            let bytes = match pkt.payload {
                crate::net::packet::Payload::Quic { dgram, .. } => self.quic.datagram(dgram),
                _ => None,
            };
            #[cfg(not(feature = "quic"))]
            let bytes: Option<&[u8]> = None;
            for o in &mut self.observers {
                match bytes {
                    Some(b) if o.wants_datagrams() => o.on_datagram(now, PacketEvent::TxStart, port_id, pkt, b),
                    _ => o.on_packet(now, PacketEvent::TxStart, port_id, pkt),
                }
            }
        }
    }

    pub(crate) fn handle(&mut self, ev: Event) {
        match ev {
            Event::PortFree(port_id) => {
                self.topo.ports[port_id as usize].wake_pending = false;
                self.start_tx(port_id);
            }
            Event::Arrive(port_id, key) => {
                let node = self.topo.ports[port_id as usize].to;
                if self.packets[key].dst == node {
                    self.deliver(port_id, key);
                } else {
                    self.inject(node, key);
                }
            }
            Event::TcpTimer(conn, side) => {
                let now = self.now();
                // A retired connection had no deadline left: this event is stale.
                let Some(live) = self.conns[conn as usize].live_mut() else { return };
                if live.timer[side as usize] == Some(now) {
                    live.timer[side as usize] = None;
                }
                let due = live.endpoint(side).next_timeout().is_some_and(|t| t <= now);
                if due {
                    let (ep, iw, out) = self.endpoint_and_policy(conn, side).expect("live");
                    ep.on_timer(now, iw, out);
                }
                self.flush(conn, side);
            }
            #[cfg(feature = "quic")]
            Event::QuicTimer(conn, side) => self.quic_timer(conn, side),
            Event::QueueSample => {
                let now = self.now();
                let Some((interval, ports)) = &self.sampling else { return };
                for &p in ports {
                    let q = &self.topo.ports[p as usize].queue;
                    let (packets, bytes) = (q.len_packets() as u64, q.len_bytes());
                    self.records.queue.push(QueueSample { time: now, port: p, packets, bytes });
                }
                let next = now + *interval;
                self.sched.schedule(next, Event::QueueSample);
            }
            Event::WarmupEnd => {
                let now = self.now();
                let snapshot = self.topo.ports.iter().map(|p| p.counters_at(now)).collect();
                self.warmup_snapshot = Some((self.now(), snapshot));
            }
            Event::AppStart(_) | Event::AppTimer(..) => unreachable!("handled by Simulation"),
        }
    }

    fn deliver(&mut self, port_id: LinkId, key: usize) {
        let now = self.now();
        let pkt = self.packets.remove(key);
        self.tcp_packet_gone(&pkt);
        self.acct.delivered += 1;
        self.acct.payload_delivered += pkt.data_len() as u64;
        for o in &mut self.observers {
            o.on_packet(now, PacketEvent::Deliver, port_id, &pkt);
        }
        match pkt.payload {
            Payload::Tcp { seg, to_server } => {
                let side = if to_server { Side::Server } else { Side::Client };
                let ce = pkt.ecn == Ecn::Ce;
                let (ep, iw, out) = self.endpoint_and_policy(pkt.flow, side).expect("in flight: live");
                ep.on_segment(now, &seg, ce, iw, out);
                self.flush(pkt.flow, side);
            }
            Payload::Udp { len, .. } => {
                let f = &mut self.udp[pkt.flow as usize];
                f.received_packets += 1;
                f.received_bytes += len as u64;
            }
            #[cfg(feature = "quic")]
            Payload::Quic { dgram, to_server, .. } => self.quic_deliver(pkt.flow, dgram, to_server, pkt.ecn),
            #[cfg(not(feature = "quic"))]
            Payload::Quic { .. } => unreachable!("QUIC packets exist only with the `quic` feature"),
        }
    }
}

impl Core {
    /// A packet left the network: one fewer in flight for its connection.
    fn tcp_packet_gone(&mut self, pkt: &Packet) {
        if let Payload::Tcp { .. } = pkt.payload {
            let live = self.conns[pkt.flow as usize].live_mut().expect("a connection with packets in flight is live");
            live.in_flight -= 1;
        }
    }
}
