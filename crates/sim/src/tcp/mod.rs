//! TCP sender and receiver, in segments, as Linux does it.
//!
//! Sequence numbers count segments, not bytes: every data packet carries one MSS (the last
//! one of a fixed-size transfer is counted whole). Linux's cwnd is in packets too, so the
//! congestion-control arithmetic is the same.
pub mod receiver;
pub mod rtt;
pub mod sender;

/// Payload bytes per segment: 1500 MTU - 20 IP - 20 TCP - 12 timestamp option.
pub const MSS: u32 = 1448;
/// IP packet size of a full segment; link rates and byte buffers count this.
pub const DATA_PKT_BYTES: u32 = 1500;
/// IP size of a pure ACK with the timestamp option (SACK blocks not counted).
pub const ACK_PKT_BYTES: u32 = 52;
/// Linux initial window (RFC 6928, TCP_INIT_CWND).
pub const INIT_CWND: u32 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PktKind {
    Data,
    Ack,
    /// Latency probe (ping request / reply).
    PingReq,
    PingResp,
}

/// One SACK block [start, end) in segment numbers.
pub type SackBlock = (u64, u64);

/// A packet as the network sees it. Small and `Copy`: packets live in pipes and events.
#[derive(Debug, Clone, Copy)]
pub struct Pkt {
    pub flow: u32,
    pub kind: PktKind,
    pub bytes: u32,
    /// Data: segment number. Ack: cumulative ACK (next segment expected).
    pub seq: u64,
    /// Data: the sender's transmit time (the TSval). Ack: the echoed TSval (TSecr).
    /// Ping: the send time.
    pub ts: u64,
    /// Ack: SACK blocks, most recent first; a D-SACK block, if any, comes first.
    pub sack: [SackBlock; 3],
    pub nsack: u8,
    /// Ack: the first SACK block is a D-SACK (reports a duplicate segment).
    pub dsack: bool,
    /// Ack: sent by the delayed-ACK machinery (covers two segments or timer expiry).
    pub delayed: bool,
}

impl Pkt {
    pub fn data(flow: u32, seq: u64, ts: u64) -> Pkt {
        Pkt {
            flow,
            kind: PktKind::Data,
            bytes: DATA_PKT_BYTES,
            seq,
            ts,
            sack: [(0, 0); 3],
            nsack: 0,
            dsack: false,
            delayed: false,
        }
    }

    pub fn sacks(&self) -> &[SackBlock] {
        &self.sack[..self.nsack as usize]
    }
}
