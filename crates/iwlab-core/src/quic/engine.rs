//! The engine's side of QUIC connections: their datagrams as packets on the links (bytes in
//! an arena beside the packet slab, so TCP packets stay as small as they were), their
//! deadlines on the scheduler, their events to the applications.

use super::{QuicConn, QuicOut, QuicStack, QuicStats, UDP_IP_HEADERS};
use crate::engine::StreamKind;
use crate::net::packet::{Ecn, Payload};
use crate::sim::core::{ConnId, ConnSpec, Core, EndRecord, Ends, Event, Side};
use crate::tcp::endpoint::AppEvent;
use slab::Slab;
use std::collections::BTreeMap;
use std::sync::Arc;

/// QUIC state the core keeps.
#[derive(Default)]
pub struct QuicSide {
    /// Bytes of the QUIC datagrams in flight, by `Payload::Quic::dgram`.
    dgrams: Slab<Vec<u8>>,
    out: QuicOut,
    /// QUIC columns of retired connections.
    done: BTreeMap<ConnId, QuicStats>,
    /// A QUIC connection was opened (the flow table gains its QUIC columns).
    any: bool,
}

impl QuicSide {
    /// The bytes of datagram `dgram` while it is on the links.
    pub fn datagram(&self, dgram: u32) -> Option<&[u8]> {
        self.dgrams.get(dgram as usize).map(Vec::as_slice)
    }
}

/// Streams of QUIC connections are told apart from other flow streams by this bit of the id.
const QUIC_STREAM: u64 = 1 << 40;

impl Core {
    /// Opens a QUIC connection: the client sends its Initial now. The TCP settings of `spec`
    /// are not used.
    pub fn open_quic(&mut self, spec: &ConnSpec, stack: &Arc<QuicStack>) -> ConnId {
        let id = self.conns.len() as ConnId;
        let now = self.now();
        let rng = self.streams().stream(StreamKind::Flow, id as u64 | QUIC_STREAM);
        let mut out = std::mem::take(&mut self.quic.out);
        let q = QuicConn::open(stack.clone(), now, rng, &mut out);
        self.quic.out = out;
        self.quic.any = true;
        self.push_conn(spec, Ends::Quic(Box::new(q)));
        self.quic_flush(id, Side::Client);
        id
    }

    /// Has a QUIC connection been opened?
    pub fn has_quic(&self) -> bool {
        self.quic.any
    }

    /// The QUIC columns of connection `id` (`None`: a TCP connection).
    pub fn quic_stats(&self, id: ConnId) -> Option<&QuicStats> {
        match &self.conns[id as usize].ends {
            Ends::Quic(q) => Some(&q.stats),
            _ => self.quic.done.get(&id),
        }
    }

    fn quic_conn(&mut self, conn: ConnId) -> Option<&mut QuicConn> {
        match &mut self.conns[conn as usize].ends {
            Ends::Quic(q) => Some(q),
            _ => None,
        }
    }

    /// Runs `f` on the live QUIC connection `conn` with the output scratch, then sends
    /// what it produced.
    fn with_quic(&mut self, conn: ConnId, side: Side, f: impl FnOnce(&mut QuicConn, &mut QuicOut)) {
        let mut out = std::mem::take(&mut self.quic.out);
        if let Some(q) = self.quic_conn(conn) {
            f(q, &mut out);
        }
        self.quic.out = out;
        self.quic_flush(conn, side);
    }

    pub(crate) fn quic_write(&mut self, conn: ConnId, side: Side, bytes: u64, close: bool) {
        let now = self.now();
        self.with_quic(conn, side, |q, out| q.write(side, now, bytes, close, out));
    }

    pub(crate) fn quic_close(&mut self, conn: ConnId, side: Side) {
        let now = self.now();
        self.with_quic(conn, side, |q, out| q.close(side, now, out));
    }

    pub(crate) fn quic_timer(&mut self, conn: ConnId, side: Side) {
        let now = self.now();
        let Some(q) = self.quic_conn(conn) else { return };
        if q.timer[side as usize] == Some(now) {
            q.timer[side as usize] = None;
        }
        self.with_quic(conn, side, |q, out| q.on_timer(side, now, out));
    }

    pub(crate) fn quic_deliver(&mut self, conn: ConnId, dgram: u32, to_server: bool, ecn: Ecn) {
        let now = self.now();
        let data = self.quic.dgrams.remove(dgram as usize);
        let side = if to_server { Side::Server } else { Side::Client };
        if let Some(q) = self.quic_conn(conn) {
            q.in_flight -= 1;
        }
        self.with_quic(conn, side, |q, out| q.on_datagram(side, now, data, ecn, out));
    }

    pub(crate) fn quic_dropped(&mut self, conn: ConnId, dgram: u32) {
        self.quic.dgrams.remove(dgram as usize);
        if let Some(q) = self.quic_conn(conn) {
            q.in_flight -= 1;
        }
        self.quic_retire_if_quiescent(conn);
    }

    /// Sends the datagrams `side` produced, hands its events to the application, keeps one
    /// timer event pending for its next deadline.
    fn quic_flush(&mut self, conn: ConnId, side: Side) {
        let now = self.now();
        let c = &self.conns[conn as usize];
        let (src, dst, app) = match side {
            Side::Client => (c.client_node, c.server_node, c.app),
            Side::Server => (c.server_node, c.client_node, c.app),
        };
        let mut out = std::mem::take(&mut self.quic.out);
        if out.events.iter().any(|e| matches!(e, AppEvent::Delivered { .. })) {
            let c = &mut self.conns[conn as usize];
            c.first_byte[side as usize].get_or_insert(now);
            c.last_byte[side as usize] = Some(now);
        }
        if let Some(q) = self.quic_conn(conn) {
            q.in_flight += out.dgrams.len() as u32;
        }
        for (bytes, ecn) in out.dgrams.drain(..) {
            let len = bytes.len() as u32;
            let dgram = self.quic.dgrams.insert(bytes) as u32;
            let payload = Payload::Quic { len, dgram, to_server: side == Side::Client };
            let key = self.new_packet(src, dst, conn, len + UDP_IP_HEADERS, ecn, payload);
            self.inject(src, key);
        }
        if let Some(app) = app {
            for ev in out.events.drain(..) {
                self.pending.push_back((app, conn, side, ev));
            }
        }
        out.events.clear();
        self.quic.out = out;
        if let Some(q) = self.quic_conn(conn) {
            if let Some(t) = q.next_timeout(side) {
                let slot = &mut q.timer[side as usize];
                if slot.is_none_or(|s| t < s) {
                    *slot = Some(t);
                    let at = t.max(self.sched.now());
                    self.sched.schedule(at, Event::QuicTimer(conn, side));
                }
            }
        }
        self.quic_retire_if_quiescent(conn);
    }

    /// Replaces a QUIC connection that can no longer change by its records.
    fn quic_retire_if_quiescent(&mut self, conn: ConnId) {
        let c = &mut self.conns[conn as usize];
        let Ends::Quic(q) = &c.ends else { return };
        if q.quiescent() {
            let rec: [EndRecord; 2] = [q.end_record(Side::Client), q.end_record(Side::Server)];
            self.quic.done.insert(conn, q.stats.clone());
            c.ends = Ends::Retired(rec);
            self.live_conns -= 1;
        }
    }

    /// Bytes of QUIC datagrams in flight (memory probes).
    pub fn quic_datagrams_in_flight(&self) -> usize {
        self.quic.dgrams.len()
    }
}
