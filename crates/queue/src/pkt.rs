//! The packet descriptor a discipline holds, and what it says about an arriving packet.
use crate::Nanos;

/// What a queue discipline needs to know about a packet. Small and `Copy`: the caller keeps the
/// packet itself (its bytes, its simulator state) and finds it again through `id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pkt {
    /// Opaque handle of the caller (a buffer slot, a packet number).
    pub id: u64,
    /// Time the discipline accepted the packet; set by `enqueue` (the sojourn-time origin).
    pub enq_ns: Nanos,
    /// Earliest departure time (Linux `skb->tstamp`, EDT pacing); 0 = none. Only `fq` honours it.
    pub send_at_ns: Nanos,
    /// IP length in bytes (what rates and byte limits count).
    pub len: u32,
    /// Flow hash (Linux `skb_get_hash`); the flow-queueing disciplines classify on it. Use
    /// [`flow_hash`] to spread small flow ids over the whole 32-bit range.
    pub flow: u32,
    /// ECN-capable transport (ECT(0) or ECT(1)): an AQM may mark it instead of dropping it.
    pub ect: bool,
    /// Congestion Experienced: set by a discipline that marked the packet.
    pub ce: bool,
    /// The ECN field arrived as ECT(1) or CE, the L4S identifier (RFC 9331 §5.1): DualPI2
    /// queues such a packet in its L queue. Other disciplines ignore it.
    pub l4s: bool,
}

impl Pkt {
    pub fn new(id: u64, len: u32, flow: u32) -> Pkt {
        Pkt { id, enq_ns: 0, send_at_ns: 0, len, flow, ect: false, ce: false, l4s: false }
    }
    pub fn ect(mut self, ect: bool) -> Pkt {
        self.ect = ect;
        self
    }
    pub fn l4s(mut self, l4s: bool) -> Pkt {
        self.l4s = l4s;
        self
    }

    /// Linux INET_ECN_set_ce: mark if ECN-capable; false (no mark) for a Not-ECT packet.
    #[inline]
    pub(crate) fn set_ce(&mut self) -> bool {
        if self.ect {
            self.ce = true;
        }
        self.ect
    }
}

/// The fate of an arriving packet. Packets dropped *other* than the arriving one (at dequeue by
/// an AQM, or from the fattest flow by FQ-CoDel's enqueue) are reported through
/// [`Qdisc::take_dropped`](crate::Qdisc::take_dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Queued,
    /// Queued with CE set (an AQM marked instead of dropping).
    QueuedMarked,
    Dropped,
}

/// Mix a flow key (a flow id, a 5-tuple hash) into a well-spread 32-bit hash (the finaliser of
/// SplitMix64), so that hash-bucketed disciplines see distinct small ids as random buckets.
pub fn flow_hash(key: u64) -> u32 {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}
