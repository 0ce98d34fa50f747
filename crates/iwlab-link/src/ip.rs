//! The two things the link needs to know about an IP packet: is it ECN-capable, and how to mark
//! it Congestion Experienced. RFC 3168 §5: the ECN field is the two low bits of the IPv4 TOS
//! byte / the IPv6 Traffic Class; 01 and 10 are ECT, 11 is CE, 00 is not ECN-capable.

/// The ECN field of the packet, or `None` if it is not an IPv4/IPv6 packet.
pub fn ecn_field(pkt: &[u8]) -> Option<u8> {
    match pkt.first()? >> 4 {
        4 if pkt.len() >= 20 => Some(pkt[1] & 0b11),
        // Traffic Class = low nibble of byte 0 and high nibble of byte 1; ECN = its two low bits.
        6 if pkt.len() >= 40 => Some((pkt[1] >> 4) & 0b11),
        _ => None,
    }
}

/// ECN-capable: ECT(0), ECT(1), or already CE (marking it again changes nothing).
pub fn is_ect(pkt: &[u8]) -> bool {
    matches!(ecn_field(pkt), Some(1..=3))
}

/// Sets the ECN field to CE (RFC 3168 §5), updating the IPv4 header checksum incrementally
/// (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')). Returns false, leaving the packet alone, if it is
/// not an ECN-capable IP packet.
pub fn set_ce(pkt: &mut [u8]) -> bool {
    if !is_ect(pkt) {
        return false;
    }
    match pkt[0] >> 4 {
        4 => {
            let old = u16::from_be_bytes([pkt[0], pkt[1]]);
            pkt[1] |= 0b11;
            let new = u16::from_be_bytes([pkt[0], pkt[1]]);
            let hc = u16::from_be_bytes([pkt[10], pkt[11]]);
            let mut sum = (!hc) as u32 + (!old) as u32 + new as u32;
            while sum > 0xffff {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            pkt[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        }
        _ => pkt[1] |= 0b11 << 4, // IPv6 has no header checksum.
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 1071 checksum of an IPv4 header (checksum field included: a valid header gives 0).
    fn checksum(h: &[u8]) -> u16 {
        let mut sum: u32 = h.chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    fn ipv4(tos: u8) -> Vec<u8> {
        let mut h = vec![0x45, tos, 0, 60, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 198, 18, 1, 1, 198, 18, 2, 1];
        let c = checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h.resize(60, 0);
        h
    }

    #[test]
    fn ipv4_ecn_codepoints() {
        assert_eq!(ecn_field(&ipv4(0x00)), Some(0));
        assert!(!is_ect(&ipv4(0x00)));
        assert!(is_ect(&ipv4(0x02)) && is_ect(&ipv4(0x01)) && is_ect(&ipv4(0x03)));
        assert_eq!(ecn_field(&[0x45, 0x02]), None, "too short to be IPv4");
        assert_eq!(ecn_field(&[]), None);
    }

    #[test]
    fn marking_ipv4_sets_ce_and_keeps_the_header_checksum_valid() {
        for tos in [0x01, 0x02, 0xb8 | 0x02, 0xfd] {
            let mut p = ipv4(tos);
            assert_eq!(checksum(&p[..20]), 0);
            assert!(set_ce(&mut p));
            assert_eq!(p[1], tos | 3);
            assert_eq!(checksum(&p[..20]), 0, "tos {tos:#x}");
        }
        let mut not_ect = ipv4(0xb8);
        assert!(!set_ce(&mut not_ect));
        assert_eq!(not_ect, ipv4(0xb8));
    }

    #[test]
    fn marking_ipv6_sets_the_traffic_class_ecn_bits() {
        // Version 6, traffic class 0x02 (ECT(0)), flow label 0x12345.
        let mut p = vec![0x60, 0x21, 0x23, 0x45];
        p.resize(40, 0);
        assert_eq!(ecn_field(&p), Some(2));
        assert!(set_ce(&mut p));
        assert_eq!(&p[..4], &[0x60, 0x31, 0x23, 0x45]);
        assert_eq!(ecn_field(&p), Some(3));
    }
}
