//! The flow a packet belongs to, for the flow-queueing disciplines (fq_codel, fq): a hash of
//! the 5-tuple (protocol, addresses, ports), as Linux's skb_get_hash classifies a packet
//! without a tc filter. ICMP echo requests/replies use their identifier as the port, so each
//! ping session is a flow of its own (the flow dissector's ICMP key does the same).
use ccbench_queue::flow_hash;

const TCP: u8 = 6;
const UDP: u8 = 17;
const ICMP: u8 = 1;
const ICMPV6: u8 = 58;

/// FNV-1a over the tuple bytes, then spread by `ccbench_queue::flow_hash`.
fn mix(bytes: &[&[u8]]) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in bytes {
        for &b in *part {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    flow_hash(h)
}

/// Ports (or ICMP echo id) of the transport header at `l4`, 0 when absent.
fn ports(proto: u8, l4: &[u8]) -> [u8; 4] {
    match proto {
        TCP | UDP if l4.len() >= 4 => [l4[0], l4[1], l4[2], l4[3]],
        // type, code, checksum, identifier: echo request 8 / reply 0 (v4), 128 / 129 (v6)
        ICMP | ICMPV6 if l4.len() >= 6 && matches!(l4[0], 0 | 8 | 128 | 129) => [l4[4], l4[5], 0, 0],
        _ => [0; 4],
    }
}

/// The flow hash of an IPv4/IPv6 packet; 0 for anything unparseable.
pub fn of_packet(p: &[u8]) -> u32 {
    match p.first().map(|b| b >> 4) {
        Some(4) if p.len() >= 20 => {
            let ihl = (p[0] & 0x0f) as usize * 4;
            let proto = p[9];
            // a non-first fragment has no transport header
            let first_frag = u16::from_be_bytes([p[6], p[7]]) & 0x1fff == 0;
            let l4 = if first_frag && p.len() > ihl { &p[ihl..] } else { &[][..] };
            mix(&[&[4, proto], &p[12..20], &ports(proto, l4)])
        }
        Some(6) if p.len() >= 40 => {
            let proto = p[6]; // extension headers are not followed (ccbench sends none)
            mix(&[&[6, proto], &p[8..40], &ports(proto, &p[40..])])
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecn::tests::ipv4;

    fn tcp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
        let mut p = ipv4(0, 64, 1, src, dst, false);
        p.extend_from_slice(&sport.to_be_bytes());
        p.extend_from_slice(&dport.to_be_bytes());
        p.extend_from_slice(&[0; 16]);
        p
    }

    #[test]
    fn same_tuple_same_hash_any_field_changes_it() {
        let a = [198, 18, 0, 1];
        let b = [198, 18, 0, 2];
        let base = of_packet(&tcp(a, b, 40000, 5201));
        assert_eq!(base, of_packet(&tcp(a, b, 40000, 5201)));
        let mut again = tcp(a, b, 40000, 5201);
        again[8] = 3; // TTL, id, ECN bits are not part of the flow
        again[1] = 0b11;
        assert_eq!(base, of_packet(&again));
        for other in [tcp(a, b, 40001, 5201), tcp(a, b, 40000, 5202), tcp(b, a, 40000, 5201)] {
            assert_ne!(base, of_packet(&other));
        }
        // 64 connections from consecutive ports spread over fq_codel's 1024 buckets
        // (reciprocal_scale, as fq_codel_hash): nearly all distinct, as random hashing gives
        // (expected collisions ≈ 64²/2/1024 ≈ 2).
        let bucket = |h: u32| ((h as u64 * 1024) >> 32) as u32;
        let mut buckets: Vec<u32> = (0..64).map(|i| bucket(of_packet(&tcp(a, b, 40000 + i, 5201)))).collect();
        buckets.sort();
        buckets.dedup();
        assert!(buckets.len() >= 58, "{}", buckets.len());
    }
}
