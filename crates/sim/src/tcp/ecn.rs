//! Classic ECN (RFC 3168) on one connection: the flags Linux keeps in `tp->ecn_flags` and the
//! helpers that set and read them. Followed: Linux 6.1–6.12, where they live in tcp_input.c and
//! tcp_output.c (`tcp_ecn_send`, `tcp_ecn_queue_cwr`, `tcp_ecn_withdraw_cwr`,
//! `tcp_ecn_accept_cwr`, `__tcp_ecn_check_ce`, `tcp_ecn_rcv_ecn_echo`); 6.18 moved them into
//! include/net/tcp_ecn.h beside Accurate ECN, which is not modelled.
//!
//! The handshake is not simulated: an ECN connection is one whose scenario says `ecn = true` on
//! both ends (sysctl tcp_ecn = 1 on the sender, and a receiver that accepts), as if the SYN /
//! SYN-ACK negotiation (RFC 3168 §6.1.1) had succeeded. An algorithm with TCP_CONG_NEEDS_ECN
//! (DCTCP) negotiates ECN whatever the scenario says.
//!
//! A DCTCP receiver (both ends of a Linux DCTCP connection run DCTCP) hands every ECT or CE
//! arrival to the algorithm (CA_EVENT_ECN_IS_CE / CA_EVENT_ECN_NO_CE from `__tcp_ecn_check_ce`),
//! whose `dctcp_ece_ack_update` (tcp_dctcp.h) echoes the CE state of each segment exactly:
//! ECE is on while the last segment was CE and off as soon as one arrives unmarked, with no
//! sticky echo until CWR; a change of state sends the ACK being delayed first, for the data
//! before the change and with the old state, then ACKs at once.
//!
//! Accurate ECN (RFC 9768), for an algorithm with TCP_CONG_NEEDS_ACCECN (Prague): the
//! receiver counts the CE-marked packets it receives (r.cep, §3.2.1) and every ACK carries the
//! count (`Pkt::ace`); the sender takes the increase since the previous ACK as the number of
//! newly CE-marked deliveries (`tcp_accecn_process`: it adds to `delivered_ce`, and a non-zero
//! increase is FLAG_ECE). The count is carried exactly, as the AccECN option's counters do;
//! the 3-bit ACE field alone would wrap after 8 marks between ACKs, which ACKs every second
//! segment never reach. No ECE/CWR handshake (RFC 9768 §3.1: those bits form the ACE field),
//! no quick ACKs on CE (Linux enters quick-ACK mode on CE for RFC 3168 feedback only). Every
//! packet of such a connection, retransmissions and pure ACKs included, leaves ECT(1)
//! (TCP_CONG_WANTS_ECT_1; ECN++ ACKs).
use super::Pkt;

/// The sender's half: TCP_ECN_OK and TCP_ECN_QUEUE_CWR.
#[derive(Debug, Clone, Copy, Default)]
pub struct SenderEcn {
    /// ECN negotiated on this connection.
    on: bool,
    /// TCP_ECN_QUEUE_CWR: the next new data segment carries CWR.
    queue_cwr: bool,
    /// The algorithm has TCP_CONG_NEEDS_ECN: every segment leaves ECT(0), retransmissions
    /// included (`tcp_ecn_send` clears ECT only when `!tcp_ca_needs_ecn`).
    ect_all: bool,
    /// Accurate ECN feedback (and ECT(1) instead of ECT(0)).
    accecn: bool,
    /// The receiver's CE count on the last ACK processed.
    last_ace: u32,
}

impl SenderEcn {
    pub fn new(on: bool) -> Self {
        SenderEcn { on, ..Default::default() }
    }

    /// ECN for an algorithm with TCP_CONG_NEEDS_ECN (DCTCP): on, and ECT on every segment.
    pub fn needs_ecn() -> Self {
        SenderEcn { on: true, ect_all: true, ..Default::default() }
    }

    /// An L4S sender (TCP_CONG_NEEDS_ACCECN and TCP_CONG_WANTS_ECT_1): ECT(1) on every
    /// segment, Accurate ECN feedback.
    pub fn l4s() -> Self {
        SenderEcn { on: true, ect_all: true, accecn: true, ..Default::default() }
    }

    pub fn on(&self) -> bool {
        self.on
    }

    /// Whether the connection uses Accurate ECN feedback.
    pub fn accecn(&self) -> bool {
        self.accecn
    }

    /// `tcp_accecn_process`: packets newly reported CE-marked by this ACK (its count less the
    /// last one seen; an older count from a reordered ACK reports nothing).
    pub fn accecn_delta(&mut self, ack: &Pkt) -> u32 {
        if !self.accecn || ack.ace <= self.last_ace {
            return 0;
        }
        let d = ack.ace - self.last_ace;
        self.last_ace = ack.ace;
        d
    }

    /// `tcp_ecn_rcv_ecn_echo`: the ACK carries ECE on an ECN connection (FLAG_ECE).
    pub fn ece(&self, ack: &Pkt) -> bool {
        self.on && ack.ece
    }

    /// `tcp_ecn_queue_cwr` (from `tcp_init_cwnd_reduction` and `tcp_enter_loss`).
    pub fn queue_cwr(&mut self) {
        if self.on && !self.accecn {
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
    /// CWR; a retransmission goes out Not-ECT (RFC 3168 §6.1.5) and leaves CWR queued — except
    /// under an algorithm with TCP_CONG_NEEDS_ECN, whose retransmissions stay ECT(0).
    pub fn stamp(&mut self, pkt: &mut Pkt, new_data: bool) {
        if !self.on {
            return;
        }
        pkt.ect1 = self.accecn;
        if !new_data {
            pkt.ect = self.ect_all;
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
    /// DCTCP's receiver: the CE events go to `dctcp_ece_ack_update`.
    dctcp: bool,
    /// DCTCP `ce_state`: the last ECT / CE data segment was CE.
    ce_state: bool,
    /// DCTCP `prior_rcv_nxt`: rcv_nxt after the last ECT / CE data segment.
    prior_rcv_nxt: u64,
    /// Accurate ECN feedback: ACKs carry `ce_received`, no ECE/CWR, ECT(1) ACKs.
    accecn: bool,
}

/// What `__tcp_ecn_check_ce` asks of the receiver for one data segment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CeCheck {
    /// `tcp_enter_quickack_mode(sk, n)`: at least this many quick ACKs (0: no change).
    pub quickacks: u32,
    /// ICSK_ACK_NOW: ACK this segment at once (DCTCP, on a change of CE state).
    pub ack_now: bool,
    /// DCTCP on a change of CE state with a delayed ACK pending: send first an ACK of
    /// `rcv_nxt` (the first field) with ECE as given (the state before the change).
    pub early_ack: Option<(u64, bool)>,
}

/// `tcp_enter_quickack_mode(sk, 2)` from `__tcp_ecn_check_ce`: at most two quick ACKs (the
/// receive window is always large enough that rcv_wnd / 2·rcv_mss does not limit it here).
pub const ECN_QUICKACKS: u32 = 2;

impl ReceiverEcn {
    pub fn new(on: bool) -> Self {
        ReceiverEcn { on, ..Default::default() }
    }

    /// ECN on with DCTCP's exact CE echo (the receiving host runs DCTCP).
    pub fn dctcp() -> Self {
        ReceiverEcn { on: true, dctcp: true, ..Default::default() }
    }

    /// Accurate ECN feedback (RFC 9768) with ECT(1) ACKs, for an L4S sender.
    pub fn accecn() -> Self {
        ReceiverEcn { on: true, accecn: true, ..Default::default() }
    }

    /// The CE count an ACK carries (r.cep; 0 without Accurate ECN).
    pub fn ace(&self) -> u32 {
        if self.accecn {
            self.ce_received as u32
        } else {
            0
        }
    }

    /// Whether the ACKs leave ECT(1) (an L4S host: ECN++ ACKs).
    pub fn ack_ect1(&self) -> bool {
        self.accecn
    }

    /// Whether this receiver runs DCTCP's CE state machine.
    pub fn is_dctcp(&self) -> bool {
        self.dctcp
    }

    /// Whether the ACKs leave ECT(0): a pure ACK is Not-ECT (RFC 3168 §6.1.4), but a host whose
    /// algorithm has TCP_CONG_NEEDS_ECN sends every segment ECT(0) (`tcp_init_congestion_control`
    /// sets it on the socket and `tcp_ecn_send` leaves it).
    pub fn ack_ect(&self) -> bool {
        self.dctcp || self.accecn
    }

    /// ECE on the ACKs sent now (`tcp_ecn_send` for a pure ACK: `th->ece` while DEMAND_CWR).
    pub fn ece(&self) -> bool {
        self.demand_cwr
    }

    /// `tcp_ecn_accept_cwr`, for every segment that passed PAWS: a CWR ends the echo; a data
    /// segment with CWR must be ACKed at once (ICSK_ACK_NOW: the sender's cwnd may be tiny).
    /// Returns true when that immediate ACK is due.
    pub fn accept_cwr(&mut self, pkt: &Pkt) -> bool {
        if self.on && !self.accecn && pkt.cwr {
            self.demand_cwr = false;
            return true;
        }
        false
    }

    /// `__tcp_ecn_check_ce` (via `tcp_event_data_recv` for in-order data and
    /// `tcp_data_queue_ofo` for out-of-order data). `rcv_nxt`: the receiver's rcv_nxt after the
    /// segment (Linux has queued an in-order segment, not yet what it joins from the
    /// out-of-order queue); `delack_pending`: a delayed ACK is armed (ICSK_ACK_TIMER).
    /// Classic ECN: a CE mark starts the echo and asks for quick ACKs; a Not-ECT segment after
    /// ECT ones is probably a retransmission and asks for quick ACKs too. DCTCP: an ECT or CE
    /// segment runs `dctcp_ece_ack_update` first, which sets the echo to this segment's state
    /// (so a CE mark finds the echo already on and asks for no quick ACKs).
    pub fn check_ce(&mut self, pkt: &Pkt, rcv_nxt: u64, delack_pending: bool) -> CeCheck {
        let mut out = CeCheck::default();
        if !self.on {
            return out;
        }
        if self.dctcp && (pkt.ce || pkt.ect) {
            self.dctcp_ece_ack_update(pkt.ce, rcv_nxt, delack_pending, &mut out);
        }
        if self.accecn {
            // r.cep counts each CE packet; the feedback is the count, not an echo to hold.
            if pkt.ce {
                self.ce_received += 1;
                self.seen = true;
            } else if pkt.ect {
                self.seen = true;
            } else if self.seen {
                out.quickacks = ECN_QUICKACKS;
            }
            return out;
        }
        if pkt.ce {
            self.ce_received += 1;
            self.seen = true;
            if !self.demand_cwr {
                self.demand_cwr = true;
                out.quickacks = ECN_QUICKACKS;
            }
        } else if pkt.ect {
            self.seen = true;
        } else if self.seen {
            out.quickacks = ECN_QUICKACKS;
        }
        out
    }

    /// `dctcp_ece_ack_update` (tcp_dctcp.h): on a change of CE state, the delayed ACK (if
    /// one is pending) goes out first with the previous state for the data up to the previous
    /// segment, and this segment is ACKed at once; the echo then follows this segment's state
    /// (`dctcp_ece_ack_cwr`).
    fn dctcp_ece_ack_update(&mut self, ce: bool, rcv_nxt: u64, delack_pending: bool, out: &mut CeCheck) {
        if self.ce_state != ce {
            if delack_pending {
                out.early_ack = Some((self.prior_rcv_nxt, self.ce_state));
            }
            out.ack_now = true;
        }
        self.prior_rcv_nxt = rcv_nxt;
        self.ce_state = ce;
        self.demand_cwr = ce;
    }
}
