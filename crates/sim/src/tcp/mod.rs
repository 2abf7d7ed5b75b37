//! TCP sender and receiver, in segments, as Linux does it.
//!
//! Sequence numbers count segments, not bytes: every data packet carries one MSS (the last
//! one of a fixed-size transfer is counted whole). Linux's cwnd is in packets too, so the
//! congestion-control arithmetic is the same.
pub mod ecn;
pub mod mib;
pub mod rcv_window;
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

/// Linux's TCP timestamp clock: milliseconds (TCP_TS_HZ = 1000, `tcp_time_stamp_ts` without
/// usec timestamps). Shifted by one so that a valid TSval is never 0, which RFC 7323 code treats
/// as "no echo" (Linux adds a random per-connection offset for the same reason and others).
pub fn ts_tick(now: crate::time::Nanos) -> u64 {
    now / crate::time::NS_PER_MS + 1
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
    /// Data and Ack: the TSval of the timestamp option, in ticks of `ts_tick` (0 = no
    /// option: timestamps off). Ping: the send time in nanoseconds.
    pub ts: u64,
    /// The TSecr (the other end's TS.Recent echoed), 0 when there is nothing to echo.
    pub tsecr: u64,
    /// Ack: the receive window offered, in bytes from `seq` (already unscaled).
    pub wnd: u32,
    /// Ack: SACK blocks, most recent first; a D-SACK block, if any, comes first.
    pub sack: [SackBlock; 3],
    pub nsack: u8,
    /// Ack: the first SACK block is a D-SACK (reports a duplicate segment).
    pub dsack: bool,
    /// Ack: sent by the delayed-ACK machinery (covers two segments or timer expiry).
    pub delayed: bool,
    /// IP ECN field, ECN-capable transport: ECT(0) (RFC 3168 §5). Set on new data of an ECN
    /// connection only (Linux `tcp_ecn_send`: not on retransmissions or pure ACKs).
    pub ect: bool,
    /// IP ECN field, Congestion Experienced: set by a queue that marked the packet (RFC 3168 §5).
    pub ce: bool,
    /// TCP header ECE flag (ECN-Echo): the receiver asks the sender to reduce (RFC 3168 §6.1.3).
    pub ece: bool,
    /// TCP header CWR flag (Congestion Window Reduced): the sender has reduced (RFC 3168 §6.1.2).
    pub cwr: bool,
    /// With `ect`: the codepoint is ECT(1), the L4S identifier (RFC 9331), not ECT(0).
    pub ect1: bool,
    /// Ack of an Accurate ECN connection (RFC 9768 §3.2): the receiver's count of CE-marked
    /// packets received (r.cep), carried exactly, as the AccECN option's counters would.
    pub ace: u32,
    /// Data: the departure time the sender's fq qdisc gives the packet (`skb->tstamp`, EDT),
    /// when it is later than the time TCP released it; 0 = leaves at once.
    pub depart_ns: u64,
}

impl Pkt {
    pub fn data(flow: u32, seq: u64, ts: u64) -> Pkt {
        Pkt {
            flow,
            kind: PktKind::Data,
            bytes: DATA_PKT_BYTES,
            seq,
            ts,
            tsecr: 0,
            wnd: 0,
            sack: [(0, 0); 3],
            nsack: 0,
            dsack: false,
            delayed: false,
            ect: false,
            ce: false,
            ece: false,
            cwr: false,
            ect1: false,
            ace: 0,
            depart_ns: 0,
        }
    }

    pub fn sacks(&self) -> &[SackBlock] {
        &self.sack[..self.nsack as usize]
    }
}
