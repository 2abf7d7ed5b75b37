//! The kernel's TCP MIB counters (`/proc/net/snmp` "Tcp:" and `/proc/net/netstat` "TcpExt:",
//! as `nstat` names them) for the events the simulator models, so that `ccbench validate` can
//! compare mechanisms, not only goodput. Each endpoint keeps one `Mib`; a run reports the sum
//! over all flows per side ("sender" / "receiver"), like the kernel backend's per-namespace
//! deltas. A counter the simulator does not model is reported as null, never as 0.
//!
//! Where each is incremented follows Linux 6.x: the comment on a field names the kernel site.
use serde::ser::{Serialize, SerializeMap, Serializer};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mib {
    /// TcpOutSegs: segments sent (data and pure ACKs; tcp_transmit_skb).
    pub out_segs: u64,
    /// TcpInSegs: segments received (tcp_v4_rcv, before any check).
    pub in_segs: u64,
    /// TcpRetransSegs: retransmitted segments (__tcp_retransmit_skb).
    pub retrans_segs: u64,
    /// TCPLossProbes: tail loss probes sent (tcp_send_loss_probe).
    pub loss_probes: u64,
    /// TCPLossProbeRecovery: losses repaired by a retransmitted probe (tcp_process_tlp_ack).
    pub loss_probe_recovery: u64,
    /// TCPSACKReorder: reordering detected from SACK (tcp_check_sack_reordering).
    pub sack_reorder: u64,
    /// TCPDSACKRecv: D-SACK blocks received (tcp_check_dsack).
    pub dsack_recv: u64,
    /// TCPDSACKOldSent: D-SACK sent for a duplicate below rcv_nxt (tcp_dsack_set).
    pub dsack_old_sent: u64,
    /// TCPDSACKOfoSent: D-SACK sent for a duplicate of out-of-order data.
    pub dsack_ofo_sent: u64,
    /// TCPDSACKUndo: reduction undone because D-SACKs showed every retransmission spurious.
    pub dsack_undo: u64,
    /// TCPFullUndo: reduction undone at the end of Recovery (tcp_try_undo_recovery).
    pub full_undo: u64,
    /// TCPPartialUndo: reduction undone on a partial ACK (tcp_try_undo_partial).
    pub partial_undo: u64,
    /// TCPLossUndo: an RTO's Loss state undone (tcp_try_undo_loss).
    pub loss_undo: u64,
    /// TCPTimeouts: retransmission timeouts (tcp_retransmit_timer).
    pub timeouts: u64,
    /// TCPFastRetrans: retransmissions outside Loss state (tcp_retransmit_skb in Recovery/Disorder).
    pub fast_retrans: u64,
    /// TCPLostRetransmit: a retransmission found lost again (tcp_rack_detect_loss).
    pub lost_retransmit: u64,
    /// TCPSackRecovery: entries into Recovery (tcp_enter_recovery with SACK).
    pub sack_recovery: u64,
    /// PAWSEstab: segments discarded by PAWS on an established connection (tcp_validate_incoming).
    pub paws_estab: u64,
    /// TCPOFOQueue: segments queued out of order (tcp_data_queue_ofo).
    pub ofo_queue: u64,
    /// DelayedACKs: delayed-ACK timer expiries that sent an ACK (tcp_delack_timer_handler).
    pub delayed_acks: u64,
    /// TCPHystartTrainDetect / TCPHystartTrainCwnd: CUBIC's HyStart left slow start on the
    /// ACK-train test, and the cwnd it left at (summed over exits).
    pub hystart_train_detect: u64,
    pub hystart_train_cwnd: u64,
    /// TCPHystartDelayDetect / TCPHystartDelayCwnd: the same for the delay-increase test.
    pub hystart_delay_detect: u64,
    pub hystart_delay_cwnd: u64,
    /// TCPDeliveredCE: segments delivered by ACKs with ECE (tcp_newly_delivered, FLAG_ECE).
    pub delivered_ce: u64,
    /// IpExtInCEPkts: packets received with CE in the IP header (the IP layer counts them,
    /// before TCP looks at them).
    pub in_ce_pkts: u64,
}

/// One row of the `counters` table: a side and its counters. Serialises with nstat's names.
#[derive(Debug, Clone)]
pub struct CounterRow {
    pub side: &'static str,
    pub mib: Mib,
}

/// nstat names the simulator reports as null: events it does not model.
/// TCPSpuriousRTOs needs F-RTO; TCPOFODrop needs a receive-memory limit.
pub const NOT_MODELLED: [&str; 2] = ["TcpExtTCPSpuriousRTOs", "TcpExtTCPOFODrop"];

impl Mib {
    /// The modelled counters, by nstat name.
    pub fn named(&self) -> [(&'static str, u64); 26] {
        [
            ("TcpOutSegs", self.out_segs),
            ("TcpInSegs", self.in_segs),
            ("TcpRetransSegs", self.retrans_segs),
            ("TcpExtTCPLossProbes", self.loss_probes),
            ("TcpExtTCPLossProbeRecovery", self.loss_probe_recovery),
            ("TcpExtTCPSACKReorder", self.sack_reorder),
            ("TcpExtTCPDSACKRecv", self.dsack_recv),
            ("TcpExtTCPDSACKOldSent", self.dsack_old_sent),
            ("TcpExtTCPDSACKOfoSent", self.dsack_ofo_sent),
            ("TcpExtTCPDSACKUndo", self.dsack_undo),
            ("TcpExtTCPFullUndo", self.full_undo),
            ("TcpExtTCPPartialUndo", self.partial_undo),
            ("TcpExtTCPLossUndo", self.loss_undo),
            ("TcpExtTCPTimeouts", self.timeouts),
            ("TcpExtTCPFastRetrans", self.fast_retrans),
            ("TcpExtTCPLostRetransmit", self.lost_retransmit),
            ("TcpExtTCPSackRecovery", self.sack_recovery),
            ("TcpExtPAWSEstab", self.paws_estab),
            ("TcpExtTCPOFOQueue", self.ofo_queue),
            ("TcpExtDelayedACKs", self.delayed_acks),
            ("TcpExtTCPHystartTrainDetect", self.hystart_train_detect),
            ("TcpExtTCPHystartTrainCwnd", self.hystart_train_cwnd),
            ("TcpExtTCPHystartDelayDetect", self.hystart_delay_detect),
            ("TcpExtTCPHystartDelayCwnd", self.hystart_delay_cwnd),
            ("TcpExtTCPDeliveredCE", self.delivered_ce),
            ("IpExtInCEPkts", self.in_ce_pkts),
        ]
    }

    pub fn add(&mut self, o: &Mib) {
        self.out_segs += o.out_segs;
        self.in_segs += o.in_segs;
        self.retrans_segs += o.retrans_segs;
        self.loss_probes += o.loss_probes;
        self.loss_probe_recovery += o.loss_probe_recovery;
        self.sack_reorder += o.sack_reorder;
        self.dsack_recv += o.dsack_recv;
        self.dsack_old_sent += o.dsack_old_sent;
        self.dsack_ofo_sent += o.dsack_ofo_sent;
        self.dsack_undo += o.dsack_undo;
        self.full_undo += o.full_undo;
        self.partial_undo += o.partial_undo;
        self.loss_undo += o.loss_undo;
        self.timeouts += o.timeouts;
        self.fast_retrans += o.fast_retrans;
        self.lost_retransmit += o.lost_retransmit;
        self.sack_recovery += o.sack_recovery;
        self.paws_estab += o.paws_estab;
        self.ofo_queue += o.ofo_queue;
        self.delayed_acks += o.delayed_acks;
        self.hystart_train_detect += o.hystart_train_detect;
        self.hystart_train_cwnd += o.hystart_train_cwnd;
        self.hystart_delay_detect += o.hystart_delay_detect;
        self.hystart_delay_cwnd += o.hystart_delay_cwnd;
        self.delivered_ce += o.delivered_ce;
        self.in_ce_pkts += o.in_ce_pkts;
    }
}

impl Serialize for CounterRow {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let named = self.mib.named();
        let mut m = s.serialize_map(Some(1 + named.len() + NOT_MODELLED.len()))?;
        m.serialize_entry("side", self.side)?;
        for (k, v) in named {
            m.serialize_entry(k, &v)?;
        }
        for k in NOT_MODELLED {
            m.serialize_entry(k, &Option::<u64>::None)?;
        }
        m.end()
    }
}
