//! A TCP segment as the simulator carries it: header fields and a payload length (no bytes).
//!
//! Sequence numbers are 64-bit offsets from the connection's start (the SYN has sequence 0,
//! the first data byte 1), so they never wrap inside a simulation; traces add an ISN and
//! wrap to 32 bits.

/// TCP header flags (RFC 793, RFC 3168 for ECE/CWR).
#[derive(Copy, Clone, Default, PartialEq, Eq, Debug)]
pub struct Flags(pub u8);

impl Flags {
    pub const FIN: Flags = Flags(0x01);
    pub const SYN: Flags = Flags(0x02);
    pub const RST: Flags = Flags(0x04);
    pub const PSH: Flags = Flags(0x08);
    pub const ACK: Flags = Flags(0x10);
    pub const ECE: Flags = Flags(0x40);
    pub const CWR: Flags = Flags(0x80);

    pub fn contains(self, f: Flags) -> bool {
        self.0 & f.0 == f.0
    }
    pub fn insert(&mut self, f: Flags) {
        self.0 |= f.0;
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, o: Flags) -> Flags {
        Flags(self.0 | o.0)
    }
}

/// Up to four SACK blocks `[start, end)` (RFC 2018 allows 4 without timestamps, 3 with).
#[derive(Copy, Clone, Default, PartialEq, Eq, Debug)]
pub struct SackBlocks {
    blocks: [(u64, u64); 4],
    len: u8,
}

impl SackBlocks {
    pub const MAX: usize = 4;

    pub fn push(&mut self, start: u64, end: u64) {
        debug_assert!(start < end);
        if (self.len as usize) < Self::MAX {
            self.blocks[self.len as usize] = (start, end);
            self.len += 1;
        }
    }
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One TCP segment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number of the first byte (or of the SYN/FIN when `len == 0`).
    pub seq: u64,
    /// Cumulative acknowledgement: next byte expected (valid when `ACK` is set).
    pub ack: u64,
    /// Payload bytes carried.
    pub len: u32,
    pub flags: Flags,
    /// Advertised receive window, in bytes.
    pub wnd: u64,
    /// SACK option (RFC 2018).
    pub sack: SackBlocks,
    /// SACK-permitted option on SYN / SYN-ACK.
    pub sack_permitted: bool,
    /// Timestamps option (RFC 7323): (TSval, TSecr) in microseconds.
    pub ts: Option<(u32, u32)>,
    /// MSS option on SYN / SYN-ACK.
    pub mss: Option<u16>,
    /// True when this carries data (or SYN/FIN) sent before: a retransmission.
    pub retransmit: bool,
}

impl Segment {
    pub fn is_syn(&self) -> bool {
        self.flags.contains(Flags::SYN)
    }
    pub fn is_fin(&self) -> bool {
        self.flags.contains(Flags::FIN)
    }
    pub fn has_ack(&self) -> bool {
        self.flags.contains(Flags::ACK)
    }
    /// Sequence space the segment occupies: payload plus one for SYN and for FIN.
    pub fn seq_len(&self) -> u64 {
        self.len as u64 + self.is_syn() as u64 + self.is_fin() as u64
    }
    /// Bytes of TCP options, padded to a multiple of 4 as on the wire.
    pub fn options_len(&self) -> u32 {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.sack_permitted {
            n += 2;
        }
        if self.ts.is_some() {
            n += 10;
        }
        if !self.sack.is_empty() {
            n += 2 + 8 * self.sack.len() as u32;
        }
        n.div_ceil(4) * 4
    }
    /// Size of the IPv4 packet carrying this segment: 20 (IP) + 20 (TCP) + options + payload.
    pub fn wire_len(&self) -> u32 {
        40 + self.options_len() + self.len
    }
}

/// RFC 7323 TSval: a microsecond clock (plus one, so that 0 never means "a time").
pub fn ts_value(now: crate::engine::SimTime) -> u32 {
    (now.as_nanos() / 1000 + 1) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_segment_without_options_is_mss_plus_40_bytes() {
        let s = Segment { len: 1460, flags: Flags::ACK, ..Default::default() };
        assert_eq!(s.wire_len(), 1500);
    }

    #[test]
    fn timestamps_add_12_bytes_after_padding() {
        let s = Segment { len: 1448, flags: Flags::ACK, ts: Some((1, 2)), ..Default::default() };
        assert_eq!(s.wire_len(), 1500);
    }

    #[test]
    fn syn_and_fin_each_take_one_sequence_number() {
        let s = Segment { flags: Flags::SYN | Flags::FIN, len: 10, ..Default::default() };
        assert_eq!(s.seq_len(), 12);
    }
}
