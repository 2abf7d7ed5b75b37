//! The AQM arm of the emulator's bottleneck: a ccbench-queue discipline served at dequeue time
//! by a fixed-rate transmitter (ccbench-queue's top-level doc, "Emulator").
//!
//! The discipline holds descriptors whose `id` is the TUN buffer slot of the packet; the bytes
//! stay in the forwarding thread's slab. The queue runs on a *virtual* clock: the transmitter
//! takes the next packet exactly when it finishes the previous one (`busy_until`), not when
//! the forwarding thread happens to wake up, so late wake-ups do not slow the link down. Before
//! each arrival, and whenever the thread polls, every dequeue due by then is replayed in order
//! (`serve_until`); the discipline therefore sees enqueues and dequeues in time order, and a
//! drop-tail FIFO served here gives the departure times of the departure-on-arrival fast path.
//!
//! The transmitter is a fixed rate or a Mahimahi trace (`ccbench_queue::Server`): a trace link
//! takes its next packet at the next delivery opportunity (`Server::ready_at`), so a dequeue is
//! due then even when the link is idle.
use ccbench_queue::{Pkt, Qdisc, QueueStats, Rounding, Server, Transmitter, Verdict};
use std::collections::VecDeque;

/// An arriving packet as the discipline sees it.
#[derive(Debug, Clone, Copy)]
pub struct Arrival {
    /// TUN buffer slot (the descriptor's id).
    pub slot: u32,
    /// IP length in bytes.
    pub len: u32,
    /// 5-tuple hash (`flowkey::of_packet`).
    pub flow: u32,
    /// ECN-capable transport (`ecn::is_ect`).
    pub ect: bool,
    /// ECT(1) or CE, the L4S identifier (`ecn::is_l4s`): DualPI2's L queue.
    pub l4s: bool,
    /// The scenario's loss and jitter apply to it (`measured::Measured::impairs`).
    pub impaired: bool,
}

/// A packet that left the discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// Transmission started; it ends at `tx_end`. `ce`: the discipline marked it.
    Sent { slot: u32, len: u32, tx_end: u64, ce: bool },
    /// Refused on arrival or dropped by the discipline (AQM drop, fattest-flow drop).
    Dropped { slot: u32, len: u32 },
}

pub struct ServedQueue {
    qdisc: Box<dyn Qdisc>,
    tx: Server,
    /// Time of the last enqueue or dequeue: the discipline's clock never runs backwards.
    clock: u64,
    /// The discipline returned nothing with packets held (fq pacing): ask again at this time.
    wake: Option<u64>,
    scratch: Vec<Pkt>,
    /// (end of transmission, bytes) of packets sent but not yet counted as departed.
    on_wire: VecDeque<(u64, u32)>,
    departed: u64,
    /// IP bytes whose transmission has started.
    pub bytes_served: u64,
}

impl ServedQueue {
    /// The emulator's transmitter carries the rate division's remainder, as the fast path.
    pub fn new(qdisc: Box<dyn Qdisc>, rate_bps: u64) -> Self {
        Self::with_server(qdisc, Server::Fixed(Transmitter::new(rate_bps, Rounding::CarryRemainder)))
    }

    /// A discipline served by `tx` (a trace link's `TraceServer`).
    pub fn with_server(qdisc: Box<dyn Qdisc>, tx: Server) -> Self {
        ServedQueue {
            qdisc,
            tx,
            clock: 0,
            wake: None,
            scratch: Vec::new(),
            on_wire: VecDeque::new(),
            departed: 0,
            bytes_served: 0,
        }
    }

    /// Start a trace link's trace at `t0` (the emulator's start); no-op for a fixed rate.
    pub fn set_trace_origin(&mut self, t0: u64) {
        if let Server::Trace(t) = &mut self.tx {
            t.set_origin(t0);
        }
    }

    /// Offer a packet arriving at `now`; what leaves the discipline on the way (this packet
    /// if refused, packets sent or dropped up to `now`) goes to `out`.
    pub fn enqueue(&mut self, now: u64, a: Arrival, out: &mut Vec<Left>) {
        self.serve_until(now, out);
        self.clock = self.clock.max(now);
        let desc = Pkt::new(a.slot as u64, a.len, a.flow).ect(a.ect).l4s(a.l4s);
        if self.qdisc.enqueue(self.clock, desc) == Verdict::Dropped {
            out.push(Left::Dropped { slot: a.slot, len: a.len });
        }
        self.collect_dropped(out);
        self.serve_until(now, out);
    }

    /// Replay every dequeue due by `now`: the transmitter takes a packet whenever it is free
    /// (at the end of the previous transmission, or at once if it was idle), or at the
    /// discipline's `next_wakeup` when it held back every packet.
    pub fn serve_until(&mut self, now: u64, out: &mut Vec<Left>) {
        while let Some(t) = self.next_due() {
            if t > now {
                break;
            }
            self.clock = t;
            match self.qdisc.dequeue(t) {
                Some(d) => {
                    self.wake = None;
                    let (_, tx_end) = self.tx.send(t, d.len);
                    self.bytes_served += d.len as u64;
                    self.on_wire.push_back((tx_end, d.len));
                    out.push(Left::Sent { slot: d.id as u32, len: d.len, tx_end, ce: d.ce });
                    self.collect_dropped(out);
                }
                None => {
                    self.collect_dropped(out);
                    match self.qdisc.next_wakeup() {
                        Some(w) if self.qdisc.backlog_packets() > 0 => self.wake = Some(w.max(t + 1)),
                        // nothing held (all dropped), or held with no time given: stop here
                        _ => {
                            self.wake = None;
                            break;
                        }
                    }
                }
            }
        }
    }

    /// When the next dequeue is due (None: nothing held).
    pub fn next_due(&self) -> Option<u64> {
        if self.qdisc.backlog_packets() == 0 {
            return None;
        }
        // free (fixed rate: at busy_until) or at the next delivery opportunity (trace)
        Some(self.tx.ready_at(self.clock.max(self.wake.unwrap_or(0))))
    }

    fn collect_dropped(&mut self, out: &mut Vec<Left>) {
        self.qdisc.take_dropped(&mut self.scratch);
        out.extend(self.scratch.drain(..).map(|d| Left::Dropped { slot: d.id as u32, len: d.len }));
    }

    /// Bytes the discipline holds (the packet being serialised has left it).
    pub fn backlog_bytes(&self) -> u64 {
        self.qdisc.backlog_bytes()
    }

    /// Packets the discipline holds.
    pub fn backlog_packets(&self) -> u64 {
        self.qdisc.backlog_packets()
    }

    /// IP bytes whose transmission ended by `t` (cumulative; `t` must not go backwards).
    pub fn departed_bytes(&mut self, t: u64) -> u64 {
        while let Some(&(end, len)) = self.on_wire.front() {
            if end > t {
                break;
            }
            self.on_wire.pop_front();
            self.departed += len as u64;
        }
        self.departed
    }

    pub fn stats(&self) -> &QueueStats {
        self.qdisc.stats()
    }
}
