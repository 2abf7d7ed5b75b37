//! Classic pcap output of one flow as its sender sees it (scenario `[output] pcap`).
//!
//! File format: libpcap's classic layout (pcap-savefile(5) / draft-ietf-opsawg-pcap §4-5): a
//! 24-byte global header (magic 0xa1b23c4d = nanosecond timestamps, version 2.4, snaplen,
//! LINKTYPE_RAW = 101: each record starts with an IPv4 header), then per packet a 16-byte record
//! header (seconds, nanoseconds, captured length, original length) and the captured bytes.
//! Everything little-endian; the magic tells readers the byte order.
//!
//! Each record holds an IPv4 header (RFC 791, header checksum filled in) and a TCP header
//! (RFC 9293 §3.1) with the options the simulator models: timestamps (RFC 7323 §3) and SACK
//! blocks, a D-SACK first (RFC 2018 §3, RFC 2883 §4). The payload is left out: the captured
//! length is the headers', the original length counts the payload, as `tcpdump -s` writes a
//! truncated capture. The TCP checksum is 0 (it would cover the missing payload).
//!
//! The simulator counts sequence numbers in segments of `MSS` bytes; the capture gives byte
//! sequence numbers `1 + segment * MSS` (initial sequence number 0 on both sides). The window
//! field carries the offered window right-shifted by `WSCALE` (Linux's scale for large
//! buffers; no SYN is written, so readers must be told the scale out of band).
use crate::tcp::{Pkt, PktKind, MSS};
use crate::time::Nanos;
use std::fs::File;
use std::io::{BufWriter, Write};

/// LINKTYPE_RAW: the record starts with an IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u32 = 101;
/// Magic number of a classic pcap file with nanosecond timestamps.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Longest header stack written: 20 IPv4 + 60 TCP bytes.
pub const SNAPLEN: u32 = 80;
/// Window scale applied to the window field of ACKs (RFC 7323 §2.3).
pub const WSCALE: u32 = 7;
/// The sender's address (192.0.2.1, RFC 5737 documentation range) and port.
pub const SENDER: ([u8; 4], u16) = ([192, 0, 2, 1], 40000);
/// The receiver's address (198.51.100.1, RFC 5737) and port.
pub const RECEIVER: ([u8; 4], u16) = ([198, 51, 100, 1], 5201);

const TCP_ACK: u8 = 0x10;
const TCP_ECE: u8 = 0x40;
const TCP_CWR: u8 = 0x80;
/// Window field of data segments: the sender's own receive window is not modelled.
const DATA_WINDOW: u16 = 502;

/// Byte sequence number of segment `seg` (initial sequence number 0, the SYN takes number 0).
pub fn byte_seq(seg: u64) -> u32 {
    (1 + seg * MSS as u64) as u32
}

/// The global header (24 bytes).
pub fn global_header() -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone and sigfigs stay 0
    h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
    h
}

/// RFC 1071 ones'-complement sum over `bytes` (even length), complemented.
fn ip_checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = bytes.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// TCP options of `pkt`, padded to a multiple of 4 bytes: NOP NOP TS, then NOP NOP SACK.
fn tcp_options(pkt: &Pkt, out: &mut Vec<u8>) {
    if pkt.ts != 0 {
        out.extend_from_slice(&[1, 1, 8, 10]);
        out.extend_from_slice(&(pkt.ts as u32).to_be_bytes());
        out.extend_from_slice(&(pkt.tsecr as u32).to_be_bytes());
    }
    if pkt.kind == PktKind::Ack && pkt.nsack > 0 {
        // With timestamps only three blocks fit the 40 option bytes (RFC 2018 §3).
        let room = if pkt.ts != 0 { 3 } else { 4 };
        let blocks = &pkt.sacks()[..pkt.sacks().len().min(room)];
        out.extend_from_slice(&[1, 1, 5, 2 + 8 * blocks.len() as u8]);
        for &(start, end) in blocks {
            out.extend_from_slice(&byte_seq(start).to_be_bytes());
            out.extend_from_slice(&byte_seq(end).to_be_bytes());
        }
    }
}

/// The IPv4 + TCP headers of `pkt` and its original IP length. `ip_id` is the IP
/// identification field.
pub fn headers(pkt: &Pkt, ip_id: u16) -> (Vec<u8>, u32) {
    let data = pkt.kind == PktKind::Data;
    let ((src, sport), (dst, dport)) = if data { (SENDER, RECEIVER) } else { (RECEIVER, SENDER) };
    let mut opts = Vec::with_capacity(40);
    tcp_options(pkt, &mut opts);
    let tcp_len = 20 + opts.len();
    let payload = if data { MSS as usize } else { 0 };
    let ip_len = 20 + tcp_len + payload;
    let mut b = Vec::with_capacity(20 + tcp_len);
    // IPv4 (RFC 791 §3.1); the ECN field is RFC 3168 §5's: ECT(0) = 0b10, CE = 0b11.
    let ecn = if pkt.ce {
        0b11
    } else if pkt.ect {
        0b10
    } else {
        0
    };
    b.extend_from_slice(&[0x45, ecn]);
    b.extend_from_slice(&(ip_len as u16).to_be_bytes());
    b.extend_from_slice(&ip_id.to_be_bytes());
    b.extend_from_slice(&[0x40, 0, 64, 6, 0, 0]); // DF, TTL 64, protocol TCP, checksum later
    b.extend_from_slice(&src);
    b.extend_from_slice(&dst);
    let sum = ip_checksum(&b[..20]);
    b[10..12].copy_from_slice(&sum.to_be_bytes());
    // TCP (RFC 9293 §3.1)
    b.extend_from_slice(&sport.to_be_bytes());
    b.extend_from_slice(&dport.to_be_bytes());
    let (seq, ack, window) = if data {
        (byte_seq(pkt.seq), 1u32, DATA_WINDOW)
    } else {
        (1u32, byte_seq(pkt.seq), (pkt.wnd >> WSCALE).min(u16::MAX as u32) as u16)
    };
    b.extend_from_slice(&seq.to_be_bytes());
    b.extend_from_slice(&ack.to_be_bytes());
    let mut flags = TCP_ACK;
    if pkt.ece {
        flags |= TCP_ECE;
    }
    if pkt.cwr {
        flags |= TCP_CWR;
    }
    b.extend_from_slice(&[((tcp_len / 4) as u8) << 4, flags]);
    b.extend_from_slice(&window.to_be_bytes());
    b.extend_from_slice(&[0, 0, 0, 0]); // checksum (covers the omitted payload) and urgent pointer
    b.extend_from_slice(&opts);
    (b, ip_len as u32)
}

/// Writes one flow's packets to a pcap file as they pass its sender. I/O errors are kept and
/// reported once by `finish`.
pub struct PcapWriter {
    out: BufWriter<File>,
    path: String,
    ip_id_data: u16,
    ip_id_ack: u16,
    error: Option<std::io::Error>,
}

impl PcapWriter {
    pub fn create(path: &str) -> Result<Self, String> {
        let file = File::create(path).map_err(|e| format!("output.pcap: cannot create {path}: {e}"))?;
        let mut w =
            PcapWriter { out: BufWriter::new(file), path: path.to_string(), ip_id_data: 0, ip_id_ack: 0, error: None };
        w.write_all(&global_header());
        Ok(w)
    }

    fn write_all(&mut self, bytes: &[u8]) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(bytes) {
                self.error = Some(e);
            }
        }
    }

    /// Record `pkt` (a data segment or an ACK of the captured flow) at time `at`.
    pub fn record(&mut self, at: Nanos, pkt: &Pkt) {
        let id = if pkt.kind == PktKind::Data { &mut self.ip_id_data } else { &mut self.ip_id_ack };
        *id = id.wrapping_add(1);
        let (hdr, orig_len) = headers(pkt, *id);
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((at / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((at % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(hdr.len() as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&orig_len.to_le_bytes());
        self.write_all(&rec);
        self.write_all(&hdr);
    }

    /// Flush the file; the first I/O error, if any, as a message naming the file.
    pub fn finish(mut self) -> Result<(), String> {
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.error = Some(e);
            }
        }
        match self.error {
            None => Ok(()),
            Some(e) => Err(format!("output.pcap: cannot write {}: {e}", self.path)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_header_is_pcap_2_4_raw_nanoseconds() {
        let h = global_header();
        assert_eq!(&h[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u16::from_le_bytes([h[4], h[5]]), 2);
        assert_eq!(u16::from_le_bytes([h[6], h[7]]), 4);
        assert_eq!(u32::from_le_bytes([h[20], h[21], h[22], h[23]]), 101);
    }

    #[test]
    fn data_segment_headers() {
        let p = Pkt::data(0, 3, 77);
        let (b, len) = headers(&p, 9);
        // 20 IP + 20 TCP + 12 timestamp option bytes; original length adds one MSS of payload.
        assert_eq!(b.len(), 52);
        assert_eq!(len, 52 + MSS);
        assert_eq!(u16::from_be_bytes([b[2], b[3]]) as u32, 52 + MSS);
        // A correct IPv4 header sums to 0xffff, so its checksum over all 20 bytes is 0.
        assert_eq!(ip_checksum(&b[..20]), 0);
        // segment 3 starts at byte 1 + 3 * 1448 = 4345
        assert_eq!(u32::from_be_bytes([b[24], b[25], b[26], b[27]]), 4345);
        assert_eq!(b[32] >> 4, 8, "data offset 32 bytes");
        assert_eq!(&b[40..44], &[1, 1, 8, 10]);
        assert_eq!(u32::from_be_bytes([b[44], b[45], b[46], b[47]]), 77);
    }

    #[test]
    fn ack_with_dsack_and_sack_blocks() {
        let mut a = Pkt::data(0, 5, 10);
        a.kind = PktKind::Ack;
        a.tsecr = 9;
        a.wnd = 128 * 1000;
        a.sack = [(2, 3), (7, 9), (0, 0)];
        a.nsack = 2;
        a.dsack = true;
        let (b, len) = headers(&a, 1);
        // 20 IP + 20 TCP + 12 TS + 4 + 2 * 8 SACK = 72 bytes, no payload
        assert_eq!(b.len(), 72);
        assert_eq!(len, 72);
        assert_eq!(u32::from_be_bytes([b[28], b[29], b[30], b[31]]), byte_seq(5));
        assert_eq!(u16::from_be_bytes([b[34], b[35]]), 1000, "128000 >> 7");
        assert_eq!(&b[52..56], &[1, 1, 5, 18]);
        assert_eq!(u32::from_be_bytes([b[56], b[57], b[58], b[59]]), byte_seq(2));
        assert_eq!(u32::from_be_bytes([b[68], b[69], b[70], b[71]]), byte_seq(9));
    }
}
