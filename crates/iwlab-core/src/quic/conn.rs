//! One simulated QUIC connection: a quinn-proto client and server endpoint (one each, so that
//! connections never share state), driven sans-IO by the engine's clock. The application's
//! bytes travel on one bidirectional stream (client-initiated, like an HTTP/3 request
//! stream): the request up, the response down. There is no HTTP/3 framing (no control or
//! QPACK streams, no HEADERS/DATA frames): the stream carries the declared bytes as they are.

use super::config::QuicStack;
use super::crypto::{with_rng, SeededCids};
use super::trace_events::{counting, Counts};
use crate::engine::{SimRng, SimTime};
use crate::net::packet::Ecn;
use crate::sim::core::{EndRecord, Side};
use crate::tcp::endpoint::{AppEvent, EndpointStats};
use crate::tcp::sender::SenderStats;
use bytes::{Bytes, BytesMut};
use quinn_proto::{
    ConnectionError, ConnectionHandle, DatagramEvent, Dir, EcnCodepoint, Endpoint, Event, StreamEvent, StreamId,
};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The virtual clock: `SimTime` zero is one fixed `Instant` of the process; quinn-proto only
/// ever subtracts and compares them.
fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}
fn instant(t: SimTime) -> Instant {
    base() + Duration::from_nanos(t.as_nanos())
}
fn sim_time(i: Instant) -> SimTime {
    SimTime::from_nanos(i.saturating_duration_since(base()).as_nanos() as u64)
}

const CLIENT_ADDR: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 50_000);
const SERVER_ADDR: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 443);

/// What a call produced for the engine: datagrams to send (UDP payloads, with their ECN
/// codepoint) and events for the application.
#[derive(Default)]
pub struct QuicOut {
    pub dgrams: Vec<(Vec<u8>, Ecn)>,
    pub events: Vec<AppEvent>,
}

/// What a QUIC flow record adds to the TCP columns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuicStats {
    /// The stack, as the flow table's `iw_policy` names it ("quic-rfc9002/reno").
    pub stack: &'static str,
    /// When each side's handshake completed (quinn-proto's `Connected`).
    pub handshake_done: [Option<SimTime>; 2],
    /// The server's first flight of the response: its datagrams from the first response byte
    /// until it next receives a datagram (one round trip), and their UDP payload bytes.
    pub first_flight_bytes: u64,
    pub first_flight_packets: u64,
    /// The server stopped sending at least once for RFC 9000 §8.1's 3x limit.
    pub amp_blocked: bool,
    /// UDP payload bytes the server sent before it first received a second datagram from the
    /// client, and the bytes of the client's first datagram (RFC 9000 §8.1 compares them).
    pub server_bytes_before_2nd: u64,
    pub client_first_dgram: u64,
    /// PTO expirations per side (RFC 9002 §6.2).
    pub pto: [u64; 2],
    /// quinn-proto's counters per side.
    pub datagrams_sent: [u64; 2],
    pub bytes_sent: [u64; 2],
    pub lost_packets: [u64; 2],
    pub max_cwnd: [u64; 2],
}

struct Peer {
    ep: Endpoint,
    conn: Option<(ConnectionHandle, quinn_proto::Connection)>,
    /// The bidirectional stream of the exchange.
    stream: Option<StreamId>,
    /// Bytes the application wrote that the stream has not taken yet.
    pending: u64,
    written: u64,
    /// The application closed its direction: FIN once `pending` is sent.
    fin: bool,
    fin_sent: bool,
    delivered: u64,
    peer_fin: bool,
    established: bool,
    /// Datagrams received.
    received: u64,
}

impl Peer {
    fn new(stack: &QuicStack, cid_seed: u64, rng_seed: u64, server: bool) -> Self {
        let mut cfg = stack.endpoint.clone();
        cfg.cid_generator(move || Box::new(SeededCids::new(cid_seed)));
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&rng_seed.to_le_bytes());
        cfg.rng_seed(Some(seed));
        let server_cfg = server.then(|| stack.server.clone());
        Peer {
            ep: Endpoint::new(Arc::new(cfg), server_cfg, false, None),
            conn: None,
            stream: None,
            pending: 0,
            written: 0,
            fin: false,
            fin_sent: false,
            delivered: 0,
            peer_fin: false,
            established: false,
            received: 0,
        }
    }
}

pub struct QuicConn {
    stack: Arc<QuicStack>,
    peers: [Peer; 2],
    /// TLS randoms (client and server hello) come from here.
    rng: Option<SimRng>,
    /// The engine's packets of this connection not yet delivered or dropped.
    pub(crate) in_flight: u32,
    pub(crate) timer: [Option<SimTime>; 2],
    pub stats: QuicStats,
    first_flight_open: bool,
    buf: Vec<u8>,
}

static ZEROS: [u8; 16_384] = [0; 16_384];

impl QuicConn {
    /// A connection whose random streams derive from `rng` (the engine's stream for it); the
    /// client's Initial is in `out`.
    pub fn open(stack: Arc<QuicStack>, now: SimTime, mut rng: SimRng, out: &mut QuicOut) -> Self {
        use rand::RngCore;
        let (a, b, c, d) = (rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64());
        let peers = [Peer::new(&stack, a, b, false), Peer::new(&stack, c, d, true)];
        let label = stack.label();
        let mut q = QuicConn {
            stack,
            peers,
            rng: Some(rng),
            in_flight: 0,
            timer: [None, None],
            stats: QuicStats { stack: label, ..QuicStats::default() },
            first_flight_open: false,
            buf: Vec::new(),
        };
        let client_cfg = q.stack.client.clone();
        let peer = &mut q.peers[Side::Client as usize];
        let r = with_rng(&mut q.rng, || peer.ep.connect(instant(now), client_cfg, SERVER_ADDR, "iwlab.test"));
        match r {
            Ok(c) => peer.conn = Some(c),
            Err(_) => out.events.push(AppEvent::Failed),
        }
        q.drive(Side::Client, now, out);
        q
    }

    /// The application on `side` writes `bytes` (and closes its direction if `close`).
    pub fn write(&mut self, side: Side, now: SimTime, bytes: u64, close: bool, out: &mut QuicOut) {
        let p = &mut self.peers[side as usize];
        p.pending += bytes;
        p.fin |= close;
        self.drive(side, now, out);
    }

    /// The application on `side` closes its direction: the stream's FIN, and once both
    /// directions are done, the connection (CONNECTION_CLOSE, as an HTTP/3 client leaving).
    pub fn close(&mut self, side: Side, now: SimTime, out: &mut QuicOut) {
        self.peers[side as usize].fin = true;
        self.drive(side, now, out);
        let p = &mut self.peers[side as usize];
        if p.fin_sent && p.peer_fin {
            if let Some((_, c)) = p.conn.as_mut() {
                c.close(instant(now), 0u32.into(), Bytes::new());
            }
            self.drive(side, now, out);
        }
    }

    /// A datagram for `side` arrived.
    pub fn on_datagram(&mut self, side: Side, now: SimTime, data: Vec<u8>, ecn: Ecn, out: &mut QuicOut) {
        let i = side as usize;
        self.peers[i].received += 1;
        if side == Side::Server {
            self.first_flight_open = false;
            if self.peers[i].received == 1 {
                self.stats.client_first_dgram = data.len() as u64;
            }
        }
        let ecn = match ecn {
            Ecn::NotEct => None,
            Ecn::Ect0 => Some(EcnCodepoint::Ect0),
            Ecn::Ce => Some(EcnCodepoint::Ce),
        };
        let remote = if side == Side::Server { CLIENT_ADDR } else { SERVER_ADDR };
        let at = instant(now);
        let (p, rng, buf) = (&mut self.peers[i], &mut self.rng, &mut self.buf);
        buf.clear();
        let ev = with_rng(rng, || counting(|| p.ep.handle(at, remote, None, ecn, BytesMut::from(&data[..]), buf)));
        match ev {
            Some(DatagramEvent::NewConnection(incoming)) => {
                buf.clear();
                // A refusal's answer (its size in `buf`), if any.
                let accepted =
                    with_rng(rng, || p.ep.accept(incoming, at, buf, None).map_err(|e| e.response.map(|t| t.size)));
                match accepted {
                    Ok(c) => p.conn = Some(c),
                    Err(Some(size)) => out.dgrams.push((buf[..size].to_vec(), Ecn::NotEct)),
                    Err(None) => {}
                }
            }
            Some(DatagramEvent::ConnectionEvent(ch, ev)) => {
                if let Some((h, c)) = p.conn.as_mut() {
                    if *h == ch {
                        c.handle_event(ev);
                    }
                }
            }
            Some(DatagramEvent::Response(t)) => out.dgrams.push((buf[..t.size].to_vec(), Ecn::NotEct)),
            None => {}
        }
        self.drive(side, now, out);
    }

    /// `side`'s timer fired at `now`.
    pub fn on_timer(&mut self, side: Side, now: SimTime, out: &mut QuicOut) {
        let at = instant(now);
        let (p, rng) = (&mut self.peers[side as usize], &mut self.rng);
        if let Some((_, c)) = p.conn.as_mut() {
            if c.poll_timeout().is_some_and(|t| t <= at) {
                let before = Counts::now();
                with_rng(rng, || counting(|| c.handle_timeout(at)));
                self.stats.pto[side as usize] += Counts::now().since(before).pto;
            }
        }
        self.drive(side, now, out);
    }

    /// `side`'s next deadline.
    pub fn next_timeout(&mut self, side: Side) -> Option<SimTime> {
        self.peers[side as usize].conn.as_mut().and_then(|(_, c)| c.poll_timeout()).map(sim_time)
    }

    /// Nothing can change this connection any more: both endpoints drained (or never
    /// started) and none of its packets in the network.
    pub fn quiescent(&self) -> bool {
        self.in_flight == 0 && self.peers.iter().all(|p| p.conn.is_none())
    }

    /// `side` as a TCP-shaped flow record sees it.
    pub fn end_record(&self, side: Side) -> EndRecord {
        let (p, i) = (&self.peers[side as usize], side as usize);
        EndRecord {
            bytes_written: p.written + p.pending,
            delivered: p.delivered,
            mss: self.stack.config.max_datagram_size as u32,
            closed: p.conn.is_none(),
            stats: EndpointStats {
                syn_retransmits: 0,
                iw_bytes: self.stack.config.initial_window,
                established_at: self.stats.handshake_done[i],
                ce_received: 0,
            },
            sender: SenderStats {
                data_segments_sent: self.stats.datagrams_sent[i],
                retransmits: self.stats.lost_packets[i],
                timeouts: self.stats.pto[i],
                max_cwnd: self.stats.max_cwnd[i],
                ..SenderStats::default()
            },
        }
    }

    /// Runs `side` until it has nothing more to say: endpoint events, connection events (for
    /// the application), stream writes and reads, then every datagram it may send now.
    fn drive(&mut self, side: Side, now: SimTime, out: &mut QuicOut) {
        let before = Counts::now();
        let mut rng = self.rng.take();
        with_rng(&mut rng, || counting(|| self.drive_inner(side, now, out)));
        self.rng = rng;
        let d = Counts::now().since(before);
        self.stats.pto[side as usize] += d.pto;
        if side == Side::Server && d.amp_blocked > 0 {
            self.stats.amp_blocked = true;
        }
    }

    fn drive_inner(&mut self, side: Side, now: SimTime, out: &mut QuicOut) {
        let i = side as usize;
        let at = instant(now);
        let server_received = self.peers[Side::Server as usize].received;
        let p = &mut self.peers[i];
        let Some((ch, conn)) = p.conn.as_mut() else { return };
        loop {
            let mut again = false;
            while let Some(ev) = conn.poll_endpoint_events() {
                if let Some(cev) = p.ep.handle_event(*ch, ev) {
                    conn.handle_event(cev);
                }
            }
            while let Some(ev) = conn.poll() {
                again = true;
                match ev {
                    Event::Connected => {
                        p.established = true;
                        self.stats.handshake_done[i] = Some(now);
                        out.events.push(AppEvent::Established);
                    }
                    Event::Stream(StreamEvent::Opened { dir: Dir::Bi }) if p.stream.is_none() => {
                        p.stream = conn.streams().accept(Dir::Bi);
                    }
                    Event::Stream(StreamEvent::Finished { .. }) => out.events.push(AppEvent::AllAcked),
                    Event::ConnectionLost { reason } => {
                        let ev = match reason {
                            _ if !p.established => AppEvent::Failed,
                            ConnectionError::ApplicationClosed(_) | ConnectionError::LocallyClosed => AppEvent::Closed,
                            _ => AppEvent::Closed,
                        };
                        out.events.push(ev);
                    }
                    _ => {}
                }
            }
            // Writes: the client opens the stream once the server's transport parameters
            // allow it (quinn-proto opens none before).
            if (p.pending > 0 || (p.fin && !p.fin_sent)) && p.stream.is_none() && side == Side::Client {
                p.stream = conn.streams().open(Dir::Bi);
            }
            if let Some(id) = p.stream {
                let mut s = conn.send_stream(id);
                while p.pending > 0 {
                    let n = p.pending.min(ZEROS.len() as u64) as usize;
                    match s.write(&ZEROS[..n]) {
                        Ok(0) | Err(_) => break,
                        Ok(k) => {
                            if side == Side::Server && p.written == 0 {
                                self.first_flight_open = true;
                            }
                            p.pending -= k as u64;
                            p.written += k as u64;
                            again = true;
                        }
                    }
                }
                if p.pending == 0 && p.fin && !p.fin_sent && s.finish().is_ok() {
                    p.fin_sent = true;
                }
                // Reads.
                let before = (p.delivered, p.peer_fin);
                if let Ok(mut chunks) = conn.recv_stream(id).read(true) {
                    loop {
                        match chunks.next(usize::MAX) {
                            Ok(Some(c)) => p.delivered += c.bytes.len() as u64,
                            Ok(None) => {
                                p.peer_fin = true;
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    let _ = chunks.finalize();
                }
                if p.delivered > before.0 {
                    out.events.push(AppEvent::Delivered { total: p.delivered });
                }
                if p.peer_fin && !before.1 {
                    out.events.push(AppEvent::PeerClosed);
                }
            }
            // Datagrams, one per Transmit (no segmentation offload).
            loop {
                self.buf.clear();
                let Some(t) = conn.poll_transmit(at, 1, &mut self.buf) else { break };
                let ecn = match t.ecn {
                    Some(EcnCodepoint::Ect0) | Some(EcnCodepoint::Ect1) => Ecn::Ect0,
                    Some(EcnCodepoint::Ce) => Ecn::Ce,
                    None => Ecn::NotEct,
                };
                let len = t.size as u64;
                if side == Side::Server {
                    if self.first_flight_open {
                        self.stats.first_flight_bytes += len;
                        self.stats.first_flight_packets += 1;
                    }
                    if server_received < 2 {
                        self.stats.server_bytes_before_2nd += len;
                    }
                }
                out.dgrams.push((self.buf[..t.size].to_vec(), ecn));
                again = true;
            }
            if !again {
                break;
            }
        }
        let s = conn.stats();
        self.stats.datagrams_sent[i] = s.udp_tx.datagrams;
        self.stats.bytes_sent[i] = s.udp_tx.bytes;
        self.stats.lost_packets[i] = s.path.lost_packets;
        self.stats.max_cwnd[i] = self.stats.max_cwnd[i].max(s.path.cwnd);
        if conn.is_drained() {
            p.conn = None;
        }
    }
}
