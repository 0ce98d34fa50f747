//! Packets: plain data, stored in a slab while in flight and referred to by index.

use crate::engine::SimTime;
use crate::tcp::segment::Segment;

pub type NodeId = u32;
pub type LinkId = u32;
/// Index of a connection (TCP) or source (UDP) in the simulation.
pub type FlowId = u32;

/// ECN codepoint in the IP header (RFC 3168).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ce,
}

/// What the packet carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    /// A TCP segment; `to_server` says which endpoint of connection `flow` receives it.
    Tcp { seg: Segment, to_server: bool },
    /// A UDP datagram of `len` payload bytes, `seq`-th of its source.
    Udp { len: u32, seq: u64 },
    /// A QUIC datagram of connection `flow` (`len` UDP payload bytes); its bytes are in the
    /// core's datagram arena at `dgram`. `to_server` as for TCP.
    Quic { len: u32, dgram: u32, to_server: bool },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique per simulation, in creation order.
    pub uid: u64,
    pub src: NodeId,
    pub dst: NodeId,
    pub flow: FlowId,
    /// Bytes on the wire (IPv4 packet length); what links serialise and queues count.
    pub size: u32,
    pub ecn: Ecn,
    pub created: SimTime,
    pub payload: Payload,
}

impl Packet {
    pub fn tcp(&self) -> Option<&Segment> {
        match &self.payload {
            Payload::Tcp { seg, .. } => Some(seg),
            Payload::Udp { .. } | Payload::Quic { .. } => None,
        }
    }
    /// Payload bytes (TCP data or UDP payload), the unit of goodput.
    pub fn data_len(&self) -> u32 {
        match &self.payload {
            Payload::Tcp { seg, .. } => seg.len,
            Payload::Udp { len, .. } | Payload::Quic { len, .. } => *len,
        }
    }
    pub fn ect(&self) -> bool {
        self.ecn != Ecn::NotEct
    }
}
