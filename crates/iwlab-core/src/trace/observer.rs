//! Writes the packets that start serialisation on chosen ports to a pcap file, so a trace
//! shows a link as a capture on that wire would.

use super::pcap::{PcapWriter, TraceFilter};
use crate::engine::SimTime;
use crate::net::packet::{LinkId, Packet};
use crate::sim::{Observer, PacketEvent};
use std::io::Write;
use std::sync::{Arc, Mutex};

/// An observer that captures packets on `ports` (all ports if `None`) that pass `filter`.
/// The first write error is kept and reported through [`PcapTrace::error_slot`]; capture stops then.
pub struct PcapTrace<W: Write + Send> {
    writer: Arc<Mutex<PcapWriter<W>>>,
    ports: Option<Vec<LinkId>>,
    filter: TraceFilter,
    error: Arc<Mutex<Option<String>>>,
    datagrams: bool,
}

impl<W: Write + Send> PcapTrace<W> {
    pub fn new(writer: Arc<Mutex<PcapWriter<W>>>, ports: Option<Vec<LinkId>>, filter: TraceFilter) -> Self {
        PcapTrace { writer, ports, filter, error: Arc::new(Mutex::new(None)), datagrams: false }
    }
    /// Writes QUIC datagrams with their real bytes (UDP 443), which Wireshark decrypts with
    /// the run's key log (`crate::quic::with_key_log`). Asked for with the key log only: without
    /// one the bytes could not be read, and the datagrams are zeros as in every other pcap.
    pub fn with_datagrams(mut self) -> Self {
        self.datagrams = true;
        self
    }
    /// Where a write error, if any, will be reported.
    pub fn error_slot(&self) -> Arc<Mutex<Option<String>>> {
        self.error.clone()
    }
}

impl<W: Write + Send> Observer for PcapTrace<W> {
    fn on_packet(&mut self, now: SimTime, ev: PacketEvent, port: LinkId, pkt: &Packet) {
        self.write(now, ev, port, pkt, None)
    }
    fn wants_datagrams(&self) -> bool {
        self.datagrams
    }
    fn on_datagram(&mut self, now: SimTime, ev: PacketEvent, port: LinkId, pkt: &Packet, bytes: &[u8]) {
        self.write(now, ev, port, pkt, Some(bytes))
    }
}

impl<W: Write + Send> PcapTrace<W> {
    fn write(&mut self, now: SimTime, ev: PacketEvent, port: LinkId, pkt: &Packet, bytes: Option<&[u8]>) {
        if ev != PacketEvent::TxStart || self.ports.as_ref().is_some_and(|p| !p.contains(&port)) {
            return;
        }
        if !self.filter.accepts(pkt) || self.error.lock().unwrap().is_some() {
            return;
        }
        if let Err(e) = self.writer.lock().unwrap().write_packet_bytes(now, pkt, bytes) {
            *self.error.lock().unwrap() = Some(format!("pcap write failed at {now}: {e}"));
        }
    }
}
