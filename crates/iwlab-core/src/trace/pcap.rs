//! A libpcap writer: simulated packets as Ethernet/IPv4/TCP|UDP frames that tcpdump and
//! Wireshark decode, with correct checksums and real 32-bit sequence numbers.
//!
//! File format: classic libpcap (not pcapng), always little-endian so that a run writes the
//! same bytes on every machine; magic `0xa1b23c4d` (nanosecond timestamps), version 2.4,
//! snaplen 65535, `LINKTYPE_ETHERNET`. A record's timestamp is the [`SimTime`] passed to
//! [`PcapWriter::write_packet`]; its frame is built from the packet's header fields, and the
//! payload (which the simulator does not carry) is written as zero bytes.
//!
//! | layer    | field     | value                                                               |
//! |----------|-----------|---------------------------------------------------------------------|
//! | Ethernet | MACs      | [`node_mac`]: `02:00:00` + the last three bytes of [`node_ip`]      |
//! | IPv4     | addresses | [`node_ip`]: `10.a.b.c` where `a.b.c` is `node + 1` in 24 bits      |
//! |          | length    | `Packet::size`                                                      |
//! |          | TOS       | DSCP 0, ECN bits from `Packet::ecn`                                 |
//! |          | id, flags | low 16 bits of `Packet::uid`; DF set; TTL 64                        |
//! | TCP      | ports     | [`flow_ports`]: client `10000 + flow % 50000`, server `server_port` |
//! |          | seq, ack  | [`flow_isn`] of the side + relative sequence, modulo 2^32           |
//! |          | window    | `min(wnd, 65535)`, never scaled                                     |
//! |          | options   | MSS, SACK-permitted, timestamps, SACK, NOP-padded                   |
//! | UDP      | ports     | source `10000 + flow % 50000`, destination `udp_port`               |
//!
//! The header lengths are those the simulator accounts for: the TCP header is exactly
//! `20 + Segment::options_len()` bytes and the IP total length is `Packet::size`, which must
//! equal `Segment::wire_len()` (or 28 + UDP payload). That is why no window-scale option is
//! written: it is not in `options_len()`, so adding it to SYNs would make the frame longer
//! than the packet the simulator sent. Windows above 65535 bytes are shown as 65535.

use std::io::{self, Write};

use crate::engine::SimTime;
use crate::net::packet::{Ecn, FlowId, NodeId, Packet, Payload};
use crate::tcp::segment::Segment;

/// libpcap magic for nanosecond-resolution timestamps.
pub const PCAP_MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Link type of every record: Ethernet II.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Largest record kept; longer frames (only possible for a 65535-byte IP packet) are cut.
pub const SNAPLEN: u32 = 65_535;
/// Client ports are `CLIENT_PORT_BASE + flow % CLIENT_PORT_SPAN`.
pub const CLIENT_PORT_BASE: u16 = 10_000;
pub const CLIENT_PORT_SPAN: u32 = 50_000;

const ETH_HLEN: usize = 14;
const ETHERTYPE_IPV4: u16 = 0x0800;
const IPV4_HLEN: usize = 20;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;
const TCP_HLEN: usize = 20;
/// RFC 9293 (3.1): the data offset counts 32-bit words in 4 bits, so at most 40 option bytes.
const TCP_MAX_OPTIONS: usize = 40;
const UDP_HLEN: usize = 8;

// TCP option kinds.
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2; // RFC 9293 (3.2)
const OPT_SACK_PERMITTED: u8 = 4; // RFC 2018 (2)
const OPT_SACK: u8 = 5; // RFC 2018 (3)
const OPT_TIMESTAMPS: u8 = 8; // RFC 7323 (3.2)

/// How packets are turned into frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapConfig {
    /// TCP port of the server end of every connection.
    pub server_port: u16,
    /// Destination port of UDP datagrams.
    pub udp_port: u16,
    /// Leave payload bytes out of the records (`incl_len < orig_len`), as a short snaplen
    /// would: files stay small and every header is still there.
    pub snap_payload: bool,
}

impl Default for PcapConfig {
    fn default() -> Self {
        PcapConfig { server_port: 80, udp_port: 9, snap_payload: false }
    }
}

/// An end of a TCP connection: the client sends the SYN.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

/// IPv4 address of a node: `10.a.b.c` where `a.b.c` are the low 24 bits of `node + 1`, so
/// node 0 is 10.0.0.1, node 255 is 10.0.1.0 and node 0x010203 is 10.1.2.4. Distinct for
/// node ids below 2^24 - 1; larger ids wrap around.
pub fn node_ip(node: NodeId) -> [u8; 4] {
    let n = node.wrapping_add(1);
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// Ethernet address of a node: locally administered `02:00:00` followed by the last three
/// bytes of [`node_ip`], so 10.0.0.1 is 02:00:00:00:00:01.
pub fn node_mac(node: NodeId) -> [u8; 6] {
    let ip = node_ip(node);
    [0x02, 0, 0, ip[1], ip[2], ip[3]]
}

/// `(client port, server port)` of connection `flow`: the client uses
/// `10000 + flow % 50000`, the server `server_port`.
pub fn flow_ports(flow: FlowId, server_port: u16) -> (u16, u16) {
    (CLIENT_PORT_BASE + (flow % CLIENT_PORT_SPAN) as u16, server_port)
}

/// `(source port, destination port)` of a segment of `flow` travelling towards the server
/// when `to_server`, towards the client otherwise.
pub fn tcp_ports(flow: FlowId, to_server: bool, server_port: u16) -> (u16, u16) {
    let (client, server) = flow_ports(flow, server_port);
    if to_server {
        (client, server)
    } else {
        (server, client)
    }
}

/// Initial sequence number of `side` of connection `flow`: the high 32 bits of SplitMix64
/// applied to `2 * flow + (0 for the client, 1 for the server)`. Fixed by the flow id, so a
/// scenario writes the same trace on every run, yet spread over the whole 32-bit space like
/// real ISNs, so that tools which handle wrap-around badly show it.
pub fn flow_isn(flow: FlowId, side: Side) -> u32 {
    let x = 2 * flow as u64 + (side == Side::Server) as u64;
    (splitmix64(x) >> 32) as u32
}

/// 32-bit sequence number on the wire for relative sequence `rel` of a side whose ISN is
/// `isn`: `isn + rel` modulo 2^32 (RFC 9293 (3.4): sequence arithmetic is modulo 2^32).
pub fn wire_seq(isn: u32, rel: u64) -> u32 {
    isn.wrapping_add(rel as u32)
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Which packets a trace keeps: every packet when `flows` is `None`, otherwise only those of
/// the listed flows (TCP connections or UDP sources).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceFilter {
    pub flows: Option<Vec<FlowId>>,
}

impl TraceFilter {
    /// Keeps every packet.
    pub fn all() -> Self {
        TraceFilter { flows: None }
    }
    /// Keeps only packets of `flows`.
    pub fn only(flows: impl IntoIterator<Item = FlowId>) -> Self {
        TraceFilter { flows: Some(flows.into_iter().collect()) }
    }
    pub fn accepts(&self, pkt: &Packet) -> bool {
        match &self.flows {
            None => true,
            Some(flows) => flows.contains(&pkt.flow),
        }
    }
}

/// Writes packets to a libpcap file (see the module docs for the frame layout).
///
/// ```
/// use iwlab_core::engine::SimTime;
/// use iwlab_core::net::packet::{Ecn, Packet, Payload};
/// use iwlab_core::trace::pcap::PcapWriter;
///
/// let mut w = PcapWriter::new(Vec::new()).unwrap();
/// let pkt = Packet {
///     uid: 1, src: 0, dst: 1, flow: 0, size: 28 + 100, ecn: Ecn::NotEct,
///     created: SimTime::ZERO, payload: Payload::Udp { len: 100, seq: 0 },
/// };
/// w.write_packet(SimTime::from_nanos(1_500), &pkt).unwrap();
/// let bytes = w.into_inner().unwrap();
/// assert_eq!(bytes.len(), 24 + 16 + 14 + 128); // global header, record header, frame
/// ```
pub struct PcapWriter<W: Write> {
    out: W,
    config: PcapConfig,
    frame: Vec<u8>,
    records: u64,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header with the default [`PcapConfig`] (server port 80, full payload).
    pub fn new(out: W) -> io::Result<Self> {
        Self::with_config(out, PcapConfig::default())
    }

    /// Writes the global header.
    pub fn with_config(mut out: W, config: PcapConfig) -> io::Result<Self> {
        out.write_all(&global_header())?;
        Ok(PcapWriter { out, config, frame: Vec::with_capacity(2048), records: 0 })
    }

    pub fn config(&self) -> &PcapConfig {
        &self.config
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Appends one record: `pkt` seen at `at`. A packet whose size disagrees with its headers
    /// and payload, or a time past the 32-bit seconds of the format, is refused with
    /// `InvalidInput` before anything is written.
    pub fn write_packet(&mut self, at: SimTime, pkt: &Packet) -> io::Result<()> {
        self.write_packet_bytes(at, pkt, None)
    }

    /// [`write_packet`](Self::write_packet) with the payload's real bytes (a QUIC datagram,
    /// whose length must be the packet's payload length) instead of zeros.
    pub fn write_packet_bytes(&mut self, at: SimTime, pkt: &Packet, payload: Option<&[u8]>) -> io::Result<()> {
        let ns = at.as_nanos();
        let secs = u32::try_from(ns / 1_000_000_000)
            .map_err(|_| invalid(format!("packet uid {}: time {at} does not fit pcap's 32-bit seconds", pkt.uid)))?;
        self.frame.clear();
        encode_frame_with(pkt, &self.config, payload, &mut self.frame)?;
        let orig_len = ETH_HLEN as u32 + pkt.size;
        let incl_len = (self.frame.len() as u32).min(SNAPLEN);
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&secs.to_le_bytes());
        rec[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&incl_len.to_le_bytes());
        rec[12..16].copy_from_slice(&orig_len.to_le_bytes());
        self.out.write_all(&rec)?;
        self.out.write_all(&self.frame[..incl_len as usize])?;
        self.records += 1;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flushes and hands back the sink.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

fn global_header() -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&PCAP_MAGIC_NANOS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes()); // version 2.4
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone and sigfigs stay 0
    h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
    h
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Appends the Ethernet frame of `pkt` to `out`: headers, then `data_len()` zero bytes unless
/// `config.snap_payload`. Errors (appending nothing) when `pkt.size` is not the IPv4 length
/// its headers and payload make, exceeds 65535, or the TCP options exceed 40 bytes.
pub fn encode_frame(pkt: &Packet, config: &PcapConfig, out: &mut Vec<u8>) -> io::Result<()> {
    encode_frame_with(pkt, config, None, out)
}

/// UDP port of the server end of QUIC datagrams with their bytes written (Wireshark's QUIC
/// dissector takes UDP 443 as QUIC).
pub const QUIC_PORT: u16 = 443;

/// [`encode_frame`], the payload's `bytes` written instead of zeros when given (the UDP
/// checksum then covers them, and a QUIC datagram goes between the client's port and 443).
pub fn encode_frame_with(pkt: &Packet, config: &PcapConfig, bytes: Option<&[u8]>, out: &mut Vec<u8>) -> io::Result<()> {
    if let Some(b) = bytes {
        if b.len() as u64 != pkt.data_len() as u64 {
            let (uid, n, want) = (pkt.uid, b.len(), pkt.data_len());
            return Err(invalid(format!("packet uid {uid}: {n} payload bytes for a payload of {want}")));
        }
    }
    let (proto, l4_hlen) = match &pkt.payload {
        Payload::Tcp { seg, .. } => {
            let opts = seg.options_len() as usize;
            if opts > TCP_MAX_OPTIONS {
                return Err(invalid(format!(
                    "packet uid {}: {opts} bytes of TCP options, at most {TCP_MAX_OPTIONS} fit",
                    pkt.uid
                )));
            }
            (IPPROTO_TCP, TCP_HLEN + opts)
        }
        Payload::Udp { .. } | Payload::Quic { .. } => (IPPROTO_UDP, UDP_HLEN),
    };
    let data_len = pkt.data_len() as u64;
    let expected = (IPV4_HLEN + l4_hlen) as u64 + data_len;
    if pkt.size as u64 != expected {
        return Err(invalid(format!(
            "packet uid {}: size {} but its headers and payload make {expected} bytes",
            pkt.uid, pkt.size
        )));
    }
    if pkt.size > u16::MAX as u32 {
        return Err(invalid(format!("packet uid {}: size {} exceeds the IPv4 maximum of 65535", pkt.uid, pkt.size)));
    }
    let l4_len = l4_hlen + data_len as usize;

    // Ethernet II
    out.extend_from_slice(&node_mac(pkt.dst));
    out.extend_from_slice(&node_mac(pkt.src));
    out.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());

    let src_ip = node_ip(pkt.src);
    let dst_ip = node_ip(pkt.dst);
    write_ipv4(out, pkt, proto, src_ip, dst_ip);

    // The payload is zeros, which add nothing to the one's-complement sum: the checksum
    // covers the header plus the pseudo-header, whose length field counts the payload.
    let l4_start = out.len();
    match &pkt.payload {
        Payload::Tcp { seg, to_server } => write_tcp(out, pkt.flow, seg, *to_server, config),
        Payload::Quic { len, to_server, .. } if bytes.is_some() => {
            let (client, _) = flow_ports(pkt.flow, QUIC_PORT);
            let (src, dst) = if *to_server { (client, QUIC_PORT) } else { (QUIC_PORT, client) };
            write_udp_ports(out, src, dst, *len)
        }
        Payload::Udp { len, .. } | Payload::Quic { len, .. } => write_udp(out, pkt.flow, *len, config),
    }
    debug_assert_eq!(out.len() - l4_start, l4_hlen);
    let pseudo = pseudo_header_sum(src_ip, dst_ip, proto, l4_len as u16);
    // Zeros add nothing to the sum; real bytes do (an odd-length header never precedes them).
    let mut sum = finish(ones_sum(bytes.unwrap_or(&[]), ones_sum(&out[l4_start..], pseudo)));
    let csum_at = l4_start + if proto == IPPROTO_TCP { 16 } else { 6 };
    if proto == IPPROTO_UDP && sum == 0 {
        sum = 0xffff; // RFC 768: a computed zero is sent as all ones (zero means "none")
    }
    out[csum_at..csum_at + 2].copy_from_slice(&sum.to_be_bytes());

    match bytes {
        Some(b) if !config.snap_payload => out.extend_from_slice(b),
        _ if !config.snap_payload => out.resize(out.len() + data_len as usize, 0),
        _ => {}
    }
    Ok(())
}

fn write_ipv4(out: &mut Vec<u8>, pkt: &Packet, proto: u8, src: [u8; 4], dst: [u8; 4]) {
    // RFC 3168 (5): the two low bits of the TOS byte; ECT(0) = 10, CE = 11.
    let ecn = match pkt.ecn {
        Ecn::NotEct => 0b00,
        Ecn::Ect0 => 0b10,
        Ecn::Ce => 0b11,
    };
    let start = out.len();
    out.push(0x45); // version 4, IHL 5 words
    out.push(ecn);
    out.extend_from_slice(&(pkt.size as u16).to_be_bytes());
    out.extend_from_slice(&(pkt.uid as u16).to_be_bytes());
    out.extend_from_slice(&0x4000u16.to_be_bytes()); // DF, fragment offset 0
    out.push(64); // TTL
    out.push(proto);
    out.extend_from_slice(&[0, 0]); // checksum, filled below
    out.extend_from_slice(&src);
    out.extend_from_slice(&dst);
    // RFC 791 (3.1): one's complement of the one's-complement sum of the header.
    let sum = finish(ones_sum(&out[start..], 0));
    out[start + 10..start + 12].copy_from_slice(&sum.to_be_bytes());
}

fn write_tcp(out: &mut Vec<u8>, flow: FlowId, seg: &Segment, to_server: bool, cfg: &PcapConfig) {
    let (own, peer) = if to_server { (Side::Client, Side::Server) } else { (Side::Server, Side::Client) };
    let own_isn = flow_isn(flow, own);
    let peer_isn = flow_isn(flow, peer);
    let (sport, dport) = tcp_ports(flow, to_server, cfg.server_port);
    let hlen = TCP_HLEN + seg.options_len() as usize;
    // The acknowledgement field is meaningful only with ACK set; stacks send 0 otherwise.
    let ack = if seg.has_ack() { wire_seq(peer_isn, seg.ack) } else { 0 };
    out.extend_from_slice(&sport.to_be_bytes());
    out.extend_from_slice(&dport.to_be_bytes());
    out.extend_from_slice(&wire_seq(own_isn, seg.seq).to_be_bytes());
    out.extend_from_slice(&ack.to_be_bytes());
    out.push(((hlen / 4) as u8) << 4); // data offset; reserved bits and NS zero
    out.push(seg.flags.0); // CWR ECE URG ACK PSH RST SYN FIN
    out.extend_from_slice(&(seg.wnd.min(u16::MAX as u64) as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]); // checksum (filled by the caller), urgent pointer
    write_tcp_options(out, seg, peer_isn);
}

/// Options in the order Linux sends them, packed: MSS first, then the NOPs that pad to
/// `options_len()`, then SACK-permitted, timestamps and SACK blocks. This gives the familiar
/// layouts `MSS SACK_PERM TS` on a SYN, `NOP NOP TS` on data and `NOP NOP SACK` without
/// timestamps, and a TCP header of exactly `20 + options_len()` bytes.
fn write_tcp_options(out: &mut Vec<u8>, seg: &Segment, peer_isn: u32) {
    let raw = seg.mss.map_or(0, |_| 4)
        + if seg.sack_permitted { 2 } else { 0 }
        + seg.ts.map_or(0, |_| 10)
        + if seg.sack.is_empty() { 0 } else { 2 + 8 * seg.sack.len() };
    let padded = seg.options_len() as usize;
    debug_assert!(padded >= raw && padded - raw < 4);
    if let Some(mss) = seg.mss {
        out.extend_from_slice(&[OPT_MSS, 4]);
        out.extend_from_slice(&mss.to_be_bytes());
    }
    out.resize(out.len() + (padded - raw), OPT_NOP);
    if seg.sack_permitted {
        out.extend_from_slice(&[OPT_SACK_PERMITTED, 2]);
    }
    if let Some((tsval, tsecr)) = seg.ts {
        out.extend_from_slice(&[OPT_TIMESTAMPS, 10]);
        out.extend_from_slice(&tsval.to_be_bytes());
        out.extend_from_slice(&tsecr.to_be_bytes());
    }
    if !seg.sack.is_empty() {
        // RFC 2018 (3): SACK blocks name the data receiver's view of the peer's sequence
        // space, the space of the acknowledgement field, so the peer's ISN applies.
        out.extend_from_slice(&[OPT_SACK, (2 + 8 * seg.sack.len()) as u8]);
        for &(start, end) in seg.sack.as_slice() {
            out.extend_from_slice(&wire_seq(peer_isn, start).to_be_bytes());
            out.extend_from_slice(&wire_seq(peer_isn, end).to_be_bytes());
        }
    }
}

fn write_udp(out: &mut Vec<u8>, flow: FlowId, len: u32, cfg: &PcapConfig) {
    let (sport, _) = flow_ports(flow, cfg.server_port);
    write_udp_ports(out, sport, cfg.udp_port, len)
}

fn write_udp_ports(out: &mut Vec<u8>, sport: u16, dport: u16, len: u32) {
    out.extend_from_slice(&sport.to_be_bytes());
    out.extend_from_slice(&dport.to_be_bytes());
    out.extend_from_slice(&((UDP_HLEN as u32 + len) as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]); // checksum, filled by the caller
}

/// RFC 9293 (3.1) / RFC 768: source, destination, zero, protocol, transport length.
fn pseudo_header_sum(src: [u8; 4], dst: [u8; 4], proto: u8, len: u16) -> u64 {
    let mut p = [0u8; 12];
    p[0..4].copy_from_slice(&src);
    p[4..8].copy_from_slice(&dst);
    p[9] = proto;
    p[10..12].copy_from_slice(&len.to_be_bytes());
    ones_sum(&p, 0)
}

/// RFC 1071: sum of big-endian 16-bit words (an odd last byte padded with zero), unfolded.
fn ones_sum(data: &[u8], mut acc: u64) -> u64 {
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        acc += u16::from_be_bytes([w[0], w[1]]) as u64;
    }
    if let [last] = words.remainder() {
        acc += (*last as u64) << 8;
    }
    acc
}

/// Folds the carries in and complements: the checksum field value.
fn finish(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::segment::{Flags, SackBlocks};
    use proptest::prelude::*;

    const HDR: usize = 24;
    const REC: usize = 16;

    fn be16(b: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([b[at], b[at + 1]])
    }
    fn be32(b: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
    }
    fn le32(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    fn tcp_packet(uid: u64, flow: FlowId, to_server: bool, seg: Segment) -> Packet {
        let (src, dst) = if to_server { (3, 7) } else { (7, 3) };
        Packet {
            uid,
            src,
            dst,
            flow,
            size: seg.wire_len(),
            ecn: Ecn::NotEct,
            created: SimTime::ZERO,
            payload: Payload::Tcp { seg, to_server },
        }
    }

    fn udp_packet(uid: u64, flow: FlowId, len: u32) -> Packet {
        Packet {
            uid,
            src: 1,
            dst: 2,
            flow,
            size: 28 + len,
            ecn: Ecn::NotEct,
            created: SimTime::ZERO,
            payload: Payload::Udp { len, seq: 0 },
        }
    }

    fn frame(pkt: &Packet) -> Vec<u8> {
        let mut out = Vec::new();
        encode_frame(pkt, &PcapConfig::default(), &mut out).unwrap();
        out
    }

    /// The IP header, then the transport segment (header and payload) of a frame.
    fn split(f: &[u8]) -> (&[u8], &[u8]) {
        assert_eq!(be16(f, 12), 0x0800);
        let ip = &f[ETH_HLEN..ETH_HLEN + IPV4_HLEN];
        (ip, &f[ETH_HLEN + IPV4_HLEN..])
    }

    /// Re-sums a transport segment with its pseudo-header: zero when the checksum is right.
    fn l4_residue(ip: &[u8], l4: &[u8]) -> u16 {
        let src = ip[12..16].try_into().unwrap();
        let dst = ip[16..20].try_into().unwrap();
        finish(ones_sum(l4, pseudo_header_sum(src, dst, ip[9], l4.len() as u16)))
    }

    fn data_seg(seq: u64, ack: u64, len: u32) -> Segment {
        Segment { seq, ack, len, flags: Flags::ACK, wnd: 30_000, ..Default::default() }
    }

    #[test]
    fn global_header_is_nanosecond_libpcap_2_4_ethernet() {
        let w = PcapWriter::new(Vec::new()).unwrap();
        let b = w.into_inner().unwrap();
        assert_eq!(b, [0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn record_header_carries_sim_time_and_lengths() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let pkt = tcp_packet(1, 0, true, data_seg(1, 1, 1000));
        w.write_packet(SimTime::from_nanos(3_000_000_123), &pkt).unwrap();
        assert_eq!(w.records(), 1);
        let b = w.into_inner().unwrap();
        assert_eq!(le32(&b, HDR), 3);
        assert_eq!(le32(&b, HDR + 4), 123);
        assert_eq!(le32(&b, HDR + 8), 14 + 1040);
        assert_eq!(le32(&b, HDR + 12), 14 + 1040);
        assert_eq!(b.len(), HDR + REC + 14 + 1040);
    }

    #[test]
    fn node_addresses_follow_the_documented_mapping() {
        assert_eq!(node_ip(0), [10, 0, 0, 1]);
        assert_eq!(node_ip(254), [10, 0, 0, 255]);
        assert_eq!(node_ip(255), [10, 0, 1, 0]);
        assert_eq!(node_ip(0x01_02_03), [10, 1, 2, 4]);
        assert_eq!(node_mac(0), [2, 0, 0, 0, 0, 1]);
        assert_eq!(node_mac(0x01_02_03), [2, 0, 0, 1, 2, 4]);
    }

    #[test]
    fn ethernet_and_ipv4_headers_are_filled_and_checksummed() {
        for (ecn, tos) in [(Ecn::NotEct, 0), (Ecn::Ect0, 2), (Ecn::Ce, 3)] {
            let mut pkt = tcp_packet(0x1_2345, 4, true, data_seg(1, 1, 500));
            pkt.ecn = ecn;
            let f = frame(&pkt);
            assert_eq!(&f[0..6], &node_mac(7));
            assert_eq!(&f[6..12], &node_mac(3));
            let (ip, _) = split(&f);
            assert_eq!(ip[0], 0x45);
            assert_eq!(ip[1], tos);
            assert_eq!(be16(ip, 2) as u32, pkt.size);
            assert_eq!(be16(ip, 4), 0x2345);
            assert_eq!(be16(ip, 6), 0x4000);
            assert_eq!(ip[8], 64);
            assert_eq!(ip[9], 6);
            assert_eq!(&ip[12..16], &node_ip(3));
            assert_eq!(&ip[16..20], &node_ip(7));
            assert_eq!(finish(ones_sum(ip, 0)), 0, "IPv4 header checksum");
        }
    }

    #[test]
    fn ports_depend_on_flow_and_direction() {
        assert_eq!(flow_ports(7, 80), (10_007, 80));
        assert_eq!(flow_ports(50_007, 443), (10_007, 443));
        assert_eq!(flow_ports(49_999, 80), (59_999, 80));
        assert_eq!(tcp_ports(7, true, 80), (10_007, 80));
        assert_eq!(tcp_ports(7, false, 80), (80, 10_007));
        let f = frame(&tcp_packet(0, 7, false, data_seg(1, 1, 0)));
        let (_, tcp) = split(&f);
        assert_eq!((be16(tcp, 0), be16(tcp, 2)), (80, 10_007));
    }

    #[test]
    fn isns_are_fixed_per_flow_and_differ_between_sides_and_flows() {
        assert_eq!(flow_isn(5, Side::Client), flow_isn(5, Side::Client));
        assert_ne!(flow_isn(5, Side::Client), flow_isn(5, Side::Server));
        assert_ne!(flow_isn(5, Side::Client), flow_isn(6, Side::Client));
        // The documented formula, pinned so traces stay comparable across versions.
        assert_eq!(flow_isn(0, Side::Client), (splitmix64(0) >> 32) as u32);
        assert_eq!(flow_isn(3, Side::Server), (splitmix64(7) >> 32) as u32);
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn seq_uses_own_isn_and_ack_uses_peer_isn_in_both_directions() {
        let flow = 11;
        let (ci, si) = (flow_isn(flow, Side::Client), flow_isn(flow, Side::Server));
        let f = frame(&tcp_packet(0, flow, true, data_seg(1001, 501, 100)));
        let (_, tcp) = split(&f);
        assert_eq!(be32(tcp, 4), ci.wrapping_add(1001));
        assert_eq!(be32(tcp, 8), si.wrapping_add(501));
        let f = frame(&tcp_packet(0, flow, false, data_seg(501, 1101, 0)));
        let (_, tcp) = split(&f);
        assert_eq!(be32(tcp, 4), si.wrapping_add(501));
        assert_eq!(be32(tcp, 8), ci.wrapping_add(1101));
    }

    #[test]
    fn sequence_numbers_wrap_at_2_pow_32() {
        assert_eq!(wire_seq(u32::MAX - 9, 10), 0);
        assert_eq!(wire_seq(u32::MAX, 2), 1);
        assert_eq!(wire_seq(100, (1 << 32) + 5), 105);
        assert_eq!(wire_seq(100, 3 * (1 << 32)), 100);
        let ci = flow_isn(2, Side::Client);
        let f = frame(&tcp_packet(0, 2, true, data_seg((1 << 32) + 7, 1, 10)));
        let (_, tcp) = split(&f);
        assert_eq!(be32(tcp, 4), ci.wrapping_add(7));
    }

    #[test]
    fn ack_field_is_zero_without_the_ack_flag() {
        let syn = Segment { flags: Flags::SYN, ack: 5, wnd: 1000, ..Default::default() };
        let f = frame(&tcp_packet(0, 1, true, syn));
        let (_, tcp) = split(&f);
        assert_eq!(be32(tcp, 4), flow_isn(1, Side::Client));
        assert_eq!(be32(tcp, 8), 0);
    }

    #[test]
    fn flags_including_ece_and_cwr_are_copied() {
        let seg = Segment { flags: Flags::ACK | Flags::ECE | Flags::CWR | Flags::PSH, len: 10, ..Default::default() };
        let f = frame(&tcp_packet(0, 1, true, seg));
        let (_, tcp) = split(&f);
        assert_eq!(tcp[13], 0x10 | 0x40 | 0x80 | 0x08);
    }

    #[test]
    fn window_is_clamped_to_16_bits() {
        for (wnd, field) in [(0, 0), (1000, 1000), (65_535, 65_535), (1_000_000, 65_535)] {
            let seg = Segment { wnd, ..data_seg(1, 1, 0) };
            let f = frame(&tcp_packet(0, 1, true, seg));
            let (_, tcp) = split(&f);
            assert_eq!(be16(tcp, 14), field, "wnd {wnd}");
        }
    }

    #[test]
    fn syn_options_are_mss_sack_permitted_timestamps() {
        let syn = Segment {
            flags: Flags::SYN,
            wnd: 65_535,
            mss: Some(1460),
            sack_permitted: true,
            ts: Some((0x0102_0304, 0)),
            ..Default::default()
        };
        let f = frame(&tcp_packet(0, 1, true, syn.clone()));
        let (_, tcp) = split(&f);
        assert_eq!(tcp[12] >> 4, 9); // 36 bytes
        #[rustfmt::skip]
        let expected = [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0];
        assert_eq!(&tcp[20..36], &expected);
        assert_eq!(tcp.len(), 20 + syn.options_len() as usize);
    }

    #[test]
    fn mss_and_sack_permitted_without_timestamps_pad_like_linux() {
        let syn = Segment { flags: Flags::SYN, mss: Some(536), sack_permitted: true, ..Default::default() };
        let f = frame(&tcp_packet(0, 1, true, syn));
        let (_, tcp) = split(&f);
        assert_eq!(&tcp[20..], &[2, 4, 0x02, 0x18, 1, 1, 4, 2]);
    }

    #[test]
    fn sack_edges_are_in_the_peers_sequence_space() {
        let mut sack = SackBlocks::default();
        sack.push(1001, 2001);
        sack.push(3001, 4001);
        let seg = Segment { sack, ts: Some((5, 6)), ..data_seg(1, 1, 0) };
        // Server to client: the blocks acknowledge client data, so the client's ISN applies.
        let ci = flow_isn(9, Side::Client);
        let f = frame(&tcp_packet(0, 9, false, seg.clone()));
        let (_, tcp) = split(&f);
        assert_eq!(tcp.len(), 20 + seg.options_len() as usize);
        // TS (10) + SACK (2 + 16) = 28 bytes, no padding
        assert_eq!(&tcp[20..22], &[8, 10]);
        assert_eq!(&tcp[30..32], &[5, 18]);
        assert_eq!(be32(tcp, 32), ci.wrapping_add(1001));
        assert_eq!(be32(tcp, 36), ci.wrapping_add(2001));
        assert_eq!(be32(tcp, 40), ci.wrapping_add(3001));
        assert_eq!(be32(tcp, 44), ci.wrapping_add(4001));
        assert_eq!(be32(tcp, 8), ci.wrapping_add(1));
    }

    #[test]
    fn sack_without_timestamps_is_nop_nop_sack() {
        let mut sack = SackBlocks::default();
        sack.push(10, 20);
        let seg = Segment { sack, ..data_seg(1, 1, 0) };
        let f = frame(&tcp_packet(0, 9, true, seg));
        let (_, tcp) = split(&f);
        assert_eq!(&tcp[20..24], &[1, 1, 5, 10]);
        assert_eq!(tcp.len(), 32);
    }

    /// Walks the options as a decoder would; returns (kind, length) pairs, NOP as (1, 1).
    fn parse_options(opts: &[u8]) -> Vec<(u8, u8)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < opts.len() {
            match opts[i] {
                0 => break,
                1 => {
                    out.push((1, 1));
                    i += 1;
                }
                kind => {
                    let len = opts[i + 1];
                    assert!(len >= 2 && i + len as usize <= opts.len(), "option overruns header");
                    out.push((kind, len));
                    i += len as usize;
                }
            }
        }
        assert_eq!(i, opts.len());
        out
    }

    #[test]
    fn every_option_combination_fills_exactly_options_len() {
        for mask in 0..8u8 {
            for blocks in 0..=3u64 {
                let mut sack = SackBlocks::default();
                for b in 0..blocks {
                    sack.push(100 * b + 1, 100 * b + 50);
                }
                let seg = Segment {
                    mss: (mask & 1 != 0).then_some(1400),
                    sack_permitted: mask & 2 != 0,
                    ts: (mask & 4 != 0).then_some((7, 8)),
                    sack,
                    ..data_seg(1, 1, 3)
                };
                let pkt = tcp_packet(0, 1, true, seg.clone());
                if seg.options_len() > 40 {
                    // MSS + SACK-permitted + timestamps + 3 blocks: more than a header holds.
                    assert!(encode_frame(&pkt, &PcapConfig::default(), &mut Vec::new()).is_err());
                    continue;
                }
                let f = frame(&pkt);
                let (ip, tcp) = split(&f);
                let hlen = (tcp[12] >> 4) as usize * 4;
                assert_eq!(hlen, 20 + seg.options_len() as usize, "mask {mask} blocks {blocks}");
                let kinds: Vec<u8> =
                    parse_options(&tcp[20..hlen]).into_iter().filter(|&(k, _)| k != 1).map(|(k, _)| k).collect();
                let mut want = Vec::new();
                if mask & 1 != 0 {
                    want.push(2);
                }
                if mask & 2 != 0 {
                    want.push(4);
                }
                if mask & 4 != 0 {
                    want.push(8);
                }
                if blocks > 0 {
                    want.push(5);
                }
                assert_eq!(kinds, want);
                assert_eq!(l4_residue(ip, tcp), 0);
            }
        }
    }

    #[test]
    fn tcp_checksum_verifies_with_odd_payload() {
        let f = frame(&tcp_packet(0, 1, true, Segment { ts: Some((1, 2)), ..data_seg(1, 1, 1001) }));
        let (ip, tcp) = split(&f);
        assert_eq!(tcp.len(), 32 + 1001);
        assert!(tcp[32..].iter().all(|&b| b == 0));
        assert_eq!(l4_residue(ip, tcp), 0);
        assert_ne!(be16(tcp, 16), 0);
    }

    #[test]
    fn udp_header_and_checksum() {
        let f = frame(&udp_packet(77, 12, 333));
        let (ip, udp) = split(&f);
        assert_eq!(ip[9], 17);
        assert_eq!(be16(ip, 2), 28 + 333);
        assert_eq!(be16(udp, 0), 10_012);
        assert_eq!(be16(udp, 2), 9);
        assert_eq!(be16(udp, 4), 8 + 333);
        assert_eq!(udp.len(), 8 + 333);
        assert_ne!(be16(udp, 6), 0, "zero would mean no checksum");
        assert_eq!(l4_residue(ip, udp), 0);
        assert_eq!(finish(ones_sum(ip, 0)), 0);
    }

    #[test]
    fn a_quic_datagram_with_its_bytes_goes_between_the_client_port_and_443_checksummed() {
        let bytes: Vec<u8> = (0..333u32).map(|i| (i * 7 + 1) as u8).collect(); // odd length
        let mut pkt = udp_packet(77, 12, 333);
        for (to_server, ports) in [(true, (10_012, 443)), (false, (443, 10_012))] {
            pkt.payload = Payload::Quic { len: 333, dgram: 0, to_server };
            let mut f = Vec::new();
            encode_frame_with(&pkt, &PcapConfig::default(), Some(&bytes), &mut f).unwrap();
            let (ip, udp) = split(&f);
            assert_eq!((be16(udp, 0), be16(udp, 2)), ports);
            assert_eq!(&udp[8..], &bytes[..], "the datagram as sent");
            assert_eq!(l4_residue(ip, udp), 0, "the checksum covers the payload");
        }
        let mut f = Vec::new();
        assert!(encode_frame_with(&pkt, &PcapConfig::default(), Some(&bytes[1..]), &mut f).is_err());
        // Without bytes a QUIC packet is written as before: zeros, the configured UDP port.
        let zeros = frame(&pkt);
        let (_, udp) = split(&zeros);
        assert_eq!(be16(udp, 2), 9);
        assert!(udp[8..].iter().all(|b| *b == 0));
    }

    #[test]
    fn snap_payload_keeps_headers_and_the_original_length() {
        let cfg = PcapConfig { snap_payload: true, ..PcapConfig::default() };
        let mut w = PcapWriter::with_config(Vec::new(), cfg).unwrap();
        let seg = Segment { ts: Some((1, 2)), ..data_seg(1, 1, 1448) };
        w.write_packet(SimTime::ZERO, &tcp_packet(0, 1, true, seg)).unwrap();
        w.write_packet(SimTime::ZERO, &udp_packet(1, 1, 100)).unwrap();
        let b = w.into_inner().unwrap();
        assert_eq!(le32(&b, HDR + 8), 14 + 20 + 32);
        assert_eq!(le32(&b, HDR + 12), 14 + 1500);
        let f = &b[HDR + REC..HDR + REC + 66];
        let (ip, tcp) = split(f);
        // The checksum still covers the full segment: zeros change no sum, only the length.
        let mut full = tcp.to_vec();
        full.resize(tcp.len() + 1448, 0);
        assert_eq!(l4_residue(ip, &full), 0);
        let r2 = HDR + REC + 66;
        assert_eq!(le32(&b, r2 + 8), 14 + 28);
        assert_eq!(le32(&b, r2 + 12), 14 + 128);
        assert_eq!(b.len(), r2 + REC + 42);
    }

    #[test]
    fn inconsistent_packets_are_refused_without_writing() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let mut pkt = tcp_packet(5, 1, true, data_seg(1, 1, 100));
        pkt.size += 1;
        let err = w.write_packet(SimTime::ZERO, &pkt).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("uid 5"), "{err}");

        let mut sack = SackBlocks::default();
        for b in 0..4 {
            sack.push(10 * b + 1, 10 * b + 5);
        }
        let seg = Segment { sack, ts: Some((1, 1)), ..data_seg(1, 1, 0) };
        let err = w.write_packet(SimTime::ZERO, &tcp_packet(6, 1, true, seg)).unwrap_err();
        assert!(err.to_string().contains("44 bytes of TCP options"), "{err}");

        let late = SimTime::from_nanos((u32::MAX as u64 + 1) * 1_000_000_000);
        let ok = udp_packet(7, 1, 10);
        assert!(w.write_packet(late, &ok).is_err());

        assert_eq!(w.records(), 0);
        assert_eq!(w.into_inner().unwrap().len(), HDR);
    }

    #[test]
    fn same_packets_give_identical_bytes() {
        let run = || {
            let mut w = PcapWriter::new(Vec::new()).unwrap();
            for i in 0..20u64 {
                let pkt = tcp_packet(i, (i % 3) as u32, i % 2 == 0, data_seg(1 + 100 * i, 1, 100));
                w.write_packet(SimTime::from_nanos(1000 * i), &pkt).unwrap();
            }
            w.into_inner().unwrap()
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn filter_keeps_all_or_only_listed_flows() {
        let a = udp_packet(0, 1, 10);
        let b = udp_packet(1, 2, 10);
        assert!(TraceFilter::all().accepts(&a));
        assert!(TraceFilter::default().accepts(&b));
        let only = TraceFilter::only([2, 5]);
        assert!(!only.accepts(&a));
        assert!(only.accepts(&b));
        assert!(!TraceFilter { flows: Some(vec![]) }.accepts(&a));
    }

    proptest! {
        #[test]
        fn any_segment_decodes_to_its_fields_with_valid_checksums(
            flow in any::<u32>(),
            to_server in any::<bool>(),
            seq in any::<u64>(),
            ack in any::<u64>(),
            len in 0u32..3000,
            flags in any::<u8>(),
            wnd in any::<u64>(),
            mss in proptest::option::of(any::<u16>()),
            sack_permitted in any::<bool>(),
            ts in proptest::option::of(any::<(u32, u32)>()),
            blocks in proptest::collection::vec((0u64..1 << 40, 1u64..100_000), 0..=3),
        ) {
            let mut sack = SackBlocks::default();
            for &(s, l) in &blocks {
                sack.push(s, s + l);
            }
            let seg = Segment {
                seq, ack, len, flags: Flags(flags), wnd, sack, sack_permitted, ts, mss,
                retransmit: false,
            };
            prop_assume!(seg.options_len() <= 40);
            let f = frame(&tcp_packet(1, flow, to_server, seg.clone()));
            let (ip, tcp) = split(&f);
            prop_assert_eq!(f.len() as u32, 14 + seg.wire_len());
            prop_assert_eq!(finish(ones_sum(ip, 0)), 0);
            prop_assert_eq!(l4_residue(ip, tcp), 0);
            prop_assert_eq!((tcp[12] >> 4) as u32 * 4, 20 + seg.options_len());
            let (own, peer) =
                if to_server { (Side::Client, Side::Server) } else { (Side::Server, Side::Client) };
            prop_assert_eq!(be32(tcp, 4), (flow_isn(flow, own) as u64 + seq) as u32);
            let want_ack =
                if seg.has_ack() { (flow_isn(flow, peer) as u64 + ack) as u32 } else { 0 };
            prop_assert_eq!(be32(tcp, 8), want_ack);
            prop_assert_eq!(tcp[13], flags);
            parse_options(&tcp[20..20 + seg.options_len() as usize]);
        }
    }
}
