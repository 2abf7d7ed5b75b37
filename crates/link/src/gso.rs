//! Optional GSO path (`--gso`): the sender-side TUN is opened with IFF_VNET_HDR and TSO/checksum
//! offload, so the sender's kernel hands over up to 64 KB TCP super-packets (one read instead of
//! ~44) and skips its own software segmentation. They are cut here into the wire packets the
//! kernel would have made (same MSS, IP ids, sequence numbers, flags), each with full IPv4 and
//! TCP checksums, so queue, loss and jitter still act per packet.

pub const VIRTIO_NET_HDR_F_NEEDS_CSUM: u8 = 1;
pub const VIRTIO_NET_HDR_GSO_NONE: u8 = 0;
pub const VIRTIO_NET_HDR_GSO_TCPV4: u8 = 1;
pub const VIRTIO_NET_HDR_GSO_ECN: u8 = 0x80;

#[derive(Debug, Clone, Copy)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl VnetHdr {
    pub fn parse(b: &[u8]) -> VnetHdr {
        let u = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        VnetHdr { flags: b[0], gso_type: b[1], gso_size: u(4), csum_start: u(6), csum_offset: u(8) }
    }
}

#[inline]
fn sum16(data: &[u8], mut acc: u64) -> u64 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u64) << 8;
    }
    acc
}

#[inline]
fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Complete a CHECKSUM_PARTIAL packet: one's-complement sum from `start` to the end (the field
/// at start+offset already holds the pseudo-header sum), stored complemented at start+offset.
pub fn complete_csum(pkt: &mut [u8], start: usize, offset: usize) -> bool {
    if start + offset + 2 > pkt.len() {
        return false;
    }
    let c = !fold(sum16(&pkt[start..], 0));
    pkt[start + offset..start + offset + 2].copy_from_slice(&c.to_be_bytes());
    true
}

fn ipv4_csum(h: &mut [u8]) {
    h[10] = 0;
    h[11] = 0;
    let c = !fold(sum16(h, 0));
    h[10..12].copy_from_slice(&c.to_be_bytes());
}

fn tcp_csum(ip: &[u8], tcp: &mut [u8]) {
    tcp[16] = 0;
    tcp[17] = 0;
    let mut acc = sum16(&ip[12..20], 0); // source and destination addresses
    acc += 6 + tcp.len() as u64;
    let c = !fold(sum16(tcp, acc));
    tcp[16..18].copy_from_slice(&c.to_be_bytes());
}

/// Cut an IPv4/TCP super-packet into segments of `mss` payload bytes; `emit(segment)` is called
/// for each, in order. Returns false when the packet is not IPv4/TCP as expected.
pub fn segment_tcp4(pkt: &[u8], mss: usize, mut emit: impl FnMut(&[u8])) -> bool {
    if pkt.len() < 40 || pkt[0] >> 4 != 4 || pkt[9] != 6 || mss == 0 {
        return false;
    }
    let ihl = (pkt[0] & 0x0f) as usize * 4;
    if pkt.len() < ihl + 20 {
        return false;
    }
    let doff = (pkt[ihl + 12] >> 4) as usize * 4;
    let hdr = ihl + doff;
    if pkt.len() < hdr {
        return false;
    }
    let payload = &pkt[hdr..];
    let id0 = u16::from_be_bytes([pkt[4], pkt[5]]);
    let seq0 = u32::from_be_bytes([pkt[ihl + 4], pkt[ihl + 5], pkt[ihl + 6], pkt[ihl + 7]]);
    let n = payload.len().div_ceil(mss).max(1);
    let mut seg = [0u8; 2048];
    for i in 0..n {
        let chunk = &payload[(i * mss).min(payload.len())..((i + 1) * mss).min(payload.len())];
        let len = hdr + chunk.len();
        if len > seg.len() {
            return false;
        }
        seg[..hdr].copy_from_slice(&pkt[..hdr]);
        seg[hdr..len].copy_from_slice(chunk);
        seg[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        seg[4..6].copy_from_slice(&id0.wrapping_add(i as u16).to_be_bytes());
        let seq = seq0.wrapping_add((i * mss) as u32);
        seg[ihl + 4..ihl + 8].copy_from_slice(&seq.to_be_bytes());
        let mut flags = pkt[ihl + 13];
        if i + 1 < n {
            flags &= !(0x01 | 0x08); // FIN, PSH only on the last segment
        }
        if i > 0 {
            flags &= !0x80; // CWR only on the first
        }
        seg[ihl + 13] = flags;
        ipv4_csum(&mut seg[..ihl]);
        let (ip, tcp) = seg[..len].split_at_mut(ihl);
        tcp_csum(ip, tcp);
        emit(&seg[..len]);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verify(seg: &[u8]) {
        let ihl = (seg[0] & 0xf) as usize * 4;
        assert_eq!(fold(sum16(&seg[..ihl], 0)), 0xffff, "ip checksum");
        let mut acc = sum16(&seg[12..20], 0);
        acc += 6 + (seg.len() - ihl) as u64;
        assert_eq!(fold(sum16(&seg[ihl..], acc)), 0xffff, "tcp checksum");
    }

    #[test]
    fn segments_carry_right_headers_and_checksums() {
        let mss = 1448;
        let payload: Vec<u8> = (0..(3 * mss + 100)).map(|i| (i * 7) as u8).collect();
        let mut pkt = vec![0u8; 20 + 32];
        pkt[0] = 0x45;
        pkt[4..6].copy_from_slice(&100u16.to_be_bytes());
        pkt[8] = 64;
        pkt[9] = 6;
        pkt[12..16].copy_from_slice(&[198, 18, 0, 1]);
        pkt[16..20].copy_from_slice(&[198, 18, 0, 2]);
        pkt[20 + 4..20 + 8].copy_from_slice(&0xffff_fff0u32.to_be_bytes());
        pkt[20 + 12] = 8 << 4;
        pkt[20 + 13] = 0x18 | 0x80; // PSH ACK CWR
        pkt.extend_from_slice(&payload);
        let tot = pkt.len() as u16;
        pkt[2..4].copy_from_slice(&tot.to_be_bytes());
        let mut segs: Vec<Vec<u8>> = Vec::new();
        assert!(segment_tcp4(&pkt, mss, |s| segs.push(s.to_vec())));
        assert_eq!(segs.len(), 4);
        let mut joined = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            verify(s);
            assert_eq!(u16::from_be_bytes([s[2], s[3]]) as usize, s.len());
            assert_eq!(u16::from_be_bytes([s[4], s[5]]), 100 + i as u16);
            let seq = u32::from_be_bytes([s[24], s[25], s[26], s[27]]);
            assert_eq!(seq, 0xffff_fff0u32.wrapping_add((i * mss) as u32));
            assert_eq!(s[33] & 0x08 != 0, i == 3, "PSH only last");
            assert_eq!(s[33] & 0x80 != 0, i == 0, "CWR only first");
            joined.extend_from_slice(&s[52..]);
        }
        assert_eq!(joined, payload);
        assert_eq!(segs[0].len(), 52 + mss);
    }

    #[test]
    fn partial_checksum_completion() {
        // a TCP segment whose check field holds the pseudo-header sum
        let mut p = vec![0u8; 20 + 20 + 10];
        p[0] = 0x45;
        p[9] = 6;
        p[12..16].copy_from_slice(&[198, 18, 0, 1]);
        p[16..20].copy_from_slice(&[198, 18, 0, 2]);
        for (i, b) in p[40..].iter_mut().enumerate() {
            *b = i as u8 * 3;
        }
        let tcp_len = 30u64;
        let pseudo = fold(sum16(&p[12..20], 6 + tcp_len));
        p[36..38].copy_from_slice(&pseudo.to_be_bytes());
        assert!(complete_csum(&mut p, 20, 16));
        let acc = sum16(&p[12..20], 6 + tcp_len);
        assert_eq!(fold(sum16(&p[20..], acc)), 0xffff);
    }
}
