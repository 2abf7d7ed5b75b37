//! The ECN field of an IP packet (RFC 3168 §5): read whether the packet is ECN-capable, and
//! mark it Congestion Experienced, keeping the IPv4 header checksum valid.
//!
//! The two ECN bits are the low bits of the IPv4 TOS byte (byte 1) or of the IPv6 Traffic
//! Class (bits 4..5 of byte 1 after the 4-bit version and the high nibble of the class):
//! 00 Not-ECT, 01 ECT(1), 10 ECT(0), 11 CE.

/// ECN codepoints (RFC 3168 §5).
pub const NOT_ECT: u8 = 0b00;
pub const ECT_1: u8 = 0b01;
pub const CE: u8 = 0b11;

/// The ECN codepoint of an IPv4 or IPv6 packet (None: too short or another protocol).
#[inline]
pub fn codepoint(pkt: &[u8]) -> Option<u8> {
    match pkt.first()? >> 4 {
        4 if pkt.len() >= 20 => Some(pkt[1] & 0b11),
        // Traffic Class = low nibble of byte 0 and high nibble of byte 1; ECN = its low 2 bits.
        6 if pkt.len() >= 40 => Some((pkt[1] >> 4) & 0b11),
        _ => None,
    }
}

/// ECN-capable transport: ECT(0), ECT(1) or already CE (Linux INET_ECN_set_ce treats a CE
/// packet as markable: marking it again changes nothing).
#[inline]
pub fn is_ect(pkt: &[u8]) -> bool {
    codepoint(pkt).is_some_and(|c| c != NOT_ECT)
}

/// ECT(1) or CE: the L4S identifier (RFC 9331 §5.1; sch_dualpi2.c's default `ecn_mask`
/// matches the low bit of the ECN field, set in 01 and 11).
#[inline]
pub fn is_l4s(pkt: &[u8]) -> bool {
    codepoint(pkt).is_some_and(|c| c & ECT_1 != 0)
}

/// Set CE on an ECN-capable packet (RFC 3168 §5: a router sets CE only on ECT packets; a
/// Not-ECT packet is dropped instead, which is the queue discipline's call, not ours).
/// Returns whether the packet now carries CE. IPv4: the header checksum is updated
/// incrementally (RFC 1624 eqn. 3), as Linux IP_ECN_set_ce does; IPv6 has no header checksum.
pub fn set_ce(pkt: &mut [u8]) -> bool {
    match codepoint(pkt) {
        None | Some(NOT_ECT) => false,
        Some(CE) => true,
        Some(_) => {
            if pkt[0] >> 4 == 4 {
                // The 16-bit word at offset 0 holds version/IHL and TOS.
                let old = u16::from_be_bytes([pkt[0], pkt[1]]);
                pkt[1] |= CE;
                let new = u16::from_be_bytes([pkt[0], pkt[1]]);
                let hc = u16::from_be_bytes([pkt[10], pkt[11]]);
                pkt[10..12].copy_from_slice(&csum_update(hc, old, new).to_be_bytes());
            } else {
                pkt[1] |= CE << 4;
            }
            true
        }
    }
}

/// RFC 1624 eqn. 3: the new checksum HC' = ~(~HC + ~m + m') in one's-complement arithmetic,
/// after the 16-bit word m of the covered data became m'. (Eqn. 3 rather than eqn. 2 of RFC
/// 1141 so that a result of 0x0000 is never produced from a non-zero sum: RFC 1624 §3.)
#[inline]
pub fn csum_update(hc: u16, old: u16, new: u16) -> u16 {
    let mut sum = (!hc) as u32 + (!old) as u32 + new as u32;
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The IPv4 header checksum computed from scratch (RFC 791; the checksum field counts as 0):
/// the reference the incremental update is tested against.
#[cfg(test)]
pub fn ipv4_header_checksum(hdr: &[u8]) -> u16 {
    let ihl = (hdr[0] & 0x0f) as usize * 4;
    let mut sum: u32 = 0;
    for i in (0..ihl).step_by(2) {
        if i == 10 {
            continue;
        }
        sum += u16::from_be_bytes([hdr[i], hdr[i + 1]]) as u32;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An IPv4 header (20 bytes, or 24 with a 4-byte option) with a valid checksum.
    pub(crate) fn ipv4(tos: u8, ttl: u8, id: u16, src: [u8; 4], dst: [u8; 4], options: bool) -> Vec<u8> {
        let ihl = if options { 6 } else { 5 };
        let mut h = vec![0x40 | ihl, tos, 0, 0, (id >> 8) as u8, id as u8, 0x40, 0, ttl, 6, 0, 0];
        h.extend_from_slice(&src);
        h.extend_from_slice(&dst);
        if options {
            h.extend_from_slice(&[0x94, 0x04, 0, 0]); // Router Alert
        }
        let len = h.len() as u16;
        h[2..4].copy_from_slice(&len.to_be_bytes());
        let c = ipv4_header_checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h
    }

    #[test]
    fn incremental_update_equals_full_recomputation() {
        // Several headers: every ECT codepoint, DSCP bits set, different TTLs / ids / addresses
        // (so the checksums before the mark span carries and the 0xffff/0x0000 edge), options.
        let mut n = 0;
        for tos in [0b01, 0b10, 0xb8 | 0b10, 0xfc | 0b01, 0x28 | 0b10] {
            for (ttl, id, src, dst, opt) in [
                (64, 0x1234, [198, 18, 0, 1], [198, 18, 0, 2], false),
                (1, 0xffff, [198, 19, 255, 255], [198, 18, 0, 0], false),
                (255, 0, [198, 18, 128, 7], [198, 19, 3, 200], true),
                (37, 0xbeef, [198, 18, 0, 2], [198, 18, 0, 1], true),
            ] {
                let mut h = ipv4(tos, ttl, id, src, dst, opt);
                assert_eq!(ipv4_header_checksum(&h), u16::from_be_bytes([h[10], h[11]]));
                assert!(is_ect(&h));
                assert!(set_ce(&mut h));
                assert_eq!(h[1], tos | CE, "only the ECN bits change");
                assert_eq!(codepoint(&h), Some(CE));
                let full = ipv4_header_checksum(&h);
                assert_eq!(u16::from_be_bytes([h[10], h[11]]), full, "tos {tos:#x} ttl {ttl} id {id:#x}");
                n += 1;
            }
        }
        assert_eq!(n, 20);
        // The update on arbitrary words agrees with recomputation over a word sum (RFC 1624 §4
        // example: HC = 0xDD2F, m = 0x5555 -> m' = 0x3285 gives HC' = 0x0000).
        assert_eq!(csum_update(0xDD2F, 0x5555, 0x3285), 0x0000);
    }

    #[test]
    fn not_ect_is_not_marked_and_ce_stays() {
        let mut h = ipv4(0xb8, 64, 1, [198, 18, 0, 1], [198, 18, 0, 2], false);
        let before = h.clone();
        assert!(!is_ect(&h));
        assert!(!set_ce(&mut h), "a router sets CE only on ECT packets (RFC 3168 §5)");
        assert_eq!(h, before);
        let mut c = ipv4(0b11, 64, 1, [198, 18, 0, 1], [198, 18, 0, 2], false);
        let before = c.clone();
        assert!(is_ect(&c) && set_ce(&mut c));
        assert_eq!(c, before, "CE again: unchanged, checksum too");
    }

    #[test]
    fn the_l4s_identifier_is_ect1_or_ce() {
        // ECN field 01 (ECT(1)) and 11 (CE) are L4S, 10 (ECT(0)) and 00 are not; DSCP bits
        // above them do not matter. IPv6: the same two bits in the traffic class.
        for (tos, l4s) in [(0b00, false), (0b01, true), (0b10, false), (0b11, true), (0xb8 | 0b01, true)] {
            let h = ipv4(tos, 64, 1, [198, 18, 0, 1], [198, 18, 0, 2], false);
            assert_eq!(is_l4s(&h), l4s, "tos {tos:#x}");
        }
        let mut p = vec![0u8; 40];
        p[0] = 0x60;
        p[1] = 0b01 << 4;
        assert!(is_l4s(&p));
        p[1] = 0b10 << 4;
        assert!(!is_l4s(&p));
    }

    #[test]
    fn ipv6_traffic_class() {
        // version 6, traffic class 0x02 (ECT(0)): byte0 = 0x60, byte1 = 0x20.
        let mut p = vec![0u8; 40];
        p[0] = 0x60;
        p[1] = 0x20;
        assert_eq!(codepoint(&p), Some(0b10));
        assert!(set_ce(&mut p));
        assert_eq!((p[0], p[1]), (0x60, 0x30));
        assert_eq!(codepoint(&[0x45, 0x01]), None, "truncated");
    }
}
