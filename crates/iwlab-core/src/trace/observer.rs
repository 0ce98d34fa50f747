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
}

impl<W: Write + Send> PcapTrace<W> {
    pub fn new(writer: Arc<Mutex<PcapWriter<W>>>, ports: Option<Vec<LinkId>>, filter: TraceFilter) -> Self {
        PcapTrace { writer, ports, filter, error: Arc::new(Mutex::new(None)) }
    }
    /// Where a write error, if any, will be reported.
    pub fn error_slot(&self) -> Arc<Mutex<Option<String>>> {
        self.error.clone()
    }
}

impl<W: Write + Send> Observer for PcapTrace<W> {
    fn on_packet(&mut self, now: SimTime, ev: PacketEvent, port: LinkId, pkt: &Packet) {
        if ev != PacketEvent::TxStart || self.ports.as_ref().is_some_and(|p| !p.contains(&port)) {
            return;
        }
        if !self.filter.accepts(pkt) || self.error.lock().unwrap().is_some() {
            return;
        }
        if let Err(e) = self.writer.lock().unwrap().write_packet(now, pkt) {
            *self.error.lock().unwrap() = Some(format!("pcap write failed at {now}: {e}"));
        }
    }
}
