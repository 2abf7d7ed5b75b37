//! Classic ECN (RFC 3168) on one connection: the flags Linux keeps in `tp->ecn_flags` and the
//! helpers that set and read them. Followed: Linux 6.1–6.12, where they live in tcp_input.c and
//! tcp_output.c (`tcp_ecn_send`, `tcp_ecn_queue_cwr`, `tcp_ecn_withdraw_cwr`,
//! `tcp_ecn_accept_cwr`, `__tcp_ecn_check_ce`, `tcp_ecn_rcv_ecn_echo`); 6.18 moved them into
//! include/net/tcp_ecn.h beside Accurate ECN, which is not modelled.
//!
//! The handshake is not simulated: an ECN connection is one whose scenario says `ecn = true` on
//! both ends (sysctl tcp_ecn = 1 on the sender, and a receiver that accepts), as if the SYN /
//! SYN-ACK negotiation (RFC 3168 §6.1.1) had succeeded.
use super::Pkt;

/// The sender's half: TCP_ECN_OK and TCP_ECN_QUEUE_CWR.
#[derive(Debug, Clone, Copy, Default)]
pub struct SenderEcn {
    /// ECN negotiated on this connection.
    on: bool,
    /// TCP_ECN_QUEUE_CWR: the next new data segment carries CWR.
    queue_cwr: bool,
}

impl SenderEcn {
    pub fn new(on: bool) -> Self {
        SenderEcn { on, queue_cwr: false }
    }

    pub fn on(&self) -> bool {
        self.on
    }

    /// `tcp_ecn_rcv_ecn_echo`: the ACK carries ECE on an ECN connection (FLAG_ECE).
    pub fn ece(&self, ack: &Pkt) -> bool {
        self.on && ack.ece
    }

    /// `tcp_ecn_queue_cwr` (from `tcp_init_cwnd_reduction` and `tcp_enter_loss`).
    pub fn queue_cwr(&mut self) {
        if self.on {
            self.queue_cwr = true;
        }
    }

    /// `tcp_ecn_withdraw_cwr` (from `tcp_undo_cwnd_reduction`: the reduction is undone).
    pub fn withdraw_cwr(&mut self) {
        self.queue_cwr = false;
    }

    /// Whether a CWR is waiting for the next new data segment.
    pub fn cwr_queued(&self) -> bool {
        self.queue_cwr
    }

    /// `tcp_ecn_send` for a segment about to leave: new data gets ECT(0) and, once, a queued
    /// CWR; a retransmission goes out Not-ECT (RFC 3168 §6.1.5) and leaves CWR queued.
    pub fn stamp(&mut self, pkt: &mut Pkt, new_data: bool) {
        if !self.on || !new_data {
            return;
        }
        pkt.ect = true;
        if self.queue_cwr {
            self.queue_cwr = false;
            pkt.cwr = true;
        }
    }
}

/// The receiver's half: TCP_ECN_OK, TCP_ECN_DEMAND_CWR and TCP_ECN_SEEN.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReceiverEcn {
    on: bool,
    /// TCP_ECN_DEMAND_CWR: a CE mark arrived and no CWR since; every ACK carries ECE.
    demand_cwr: bool,
    /// TCP_ECN_SEEN: an ECT or CE segment has arrived.
    seen: bool,
    /// Data segments that arrived CE-marked (the receiving host's IpExtInCEPkts).
    pub ce_received: u64,
}

/// `tcp_enter_quickack_mode(sk, 2)` from `__tcp_ecn_check_ce`: at most two quick ACKs (the
/// receive window is always large enough that rcv_wnd / 2·rcv_mss does not limit it here).
pub const ECN_QUICKACKS: u32 = 2;

impl ReceiverEcn {
    pub fn new(on: bool) -> Self {
        ReceiverEcn { on, ..Default::default() }
    }

    /// ECE on the ACKs sent now (`tcp_ecn_send` for a pure ACK: `th->ece` while DEMAND_CWR).
    pub fn ece(&self) -> bool {
        self.demand_cwr
    }

    /// `tcp_ecn_accept_cwr`, for every segment that passed PAWS: a CWR ends the echo; a data
    /// segment with CWR must be ACKed at once (ICSK_ACK_NOW: the sender's cwnd may be tiny).
    /// Returns true when that immediate ACK is due.
    pub fn accept_cwr(&mut self, pkt: &Pkt) -> bool {
        if self.on && pkt.cwr {
            self.demand_cwr = false;
            return true;
        }
        false
    }

    /// `__tcp_ecn_check_ce` (via `tcp_event_data_recv` for in-order data and
    /// `tcp_data_queue_ofo` for out-of-order data). Returns the quick-ACK count to enter
    /// (0: none): a CE mark starts the echo and asks for quick ACKs; a Not-ECT segment after
    /// ECT ones is probably a retransmission and asks for quick ACKs too.
    pub fn check_ce(&mut self, pkt: &Pkt) -> u32 {
        if !self.on {
            return 0;
        }
        if pkt.ce {
            self.ce_received += 1;
            self.seen = true;
            if !self.demand_cwr {
                self.demand_cwr = true;
                return ECN_QUICKACKS;
            }
            0
        } else if pkt.ect {
            self.seen = true;
            0
        } else if self.seen {
            ECN_QUICKACKS
        } else {
            0
        }
    }
}
