//! ccbench-queue: the bottleneck queue disciplines of ccbench, as plain state machines (no
//! clock, no I/O: time is passed in) so that the simulator (`ccbench-sim`) and the link
//! emulator (`ccbench-link`) run the same code.
//!
//! Constants and behaviour follow the RFCs and Linux 6.x (sch_codel.c + codel_impl.h,
//! sch_fq_codel.c, sch_pie.c + pie.h, sch_red.c + red.h, sch_fq.c as of 6.12); each file says
//! where it simplifies.
//!
//! | discipline | type | decides at |
//! |---|---|---|
//! | drop-tail, departures computed on arrival | [`ScheduledDropTail`] | arrival (no dequeue events) |
//! | drop-tail FIFO (pfifo/bfifo) | [`DropTail`] | arrival |
//! | CoDel (RFC 8289) | [`Codel`] | dequeue |
//! | FQ-CoDel (RFC 8290) | [`FqCodel`] | enqueue (memory/packet limit) and dequeue |
//! | PIE (RFC 8033) | [`Pie`] | enqueue (probability updated every `tupdate`) |
//! | RED (Floyd & Jacobson 1993, gentle) | [`Red`] | enqueue |
//! | fq (Linux's fair-queueing pacer) | [`Fq`] | dequeue (per-flow pacing) |
//!
//! # How a dequeue-driven discipline plugs into the two backends (next step, not wired yet)
//!
//! Both backends today use [`ScheduledDropTail`]: the packet's departure is known on arrival,
//! so the packet goes straight into the delay line. Every other discipline holds packets and
//! decides which one leaves (or is dropped) when the transmitter asks for the next packet, so
//! the link needs a *transmit-done* step. In both backends the change is local to the link:
//!
//! * **Simulator** (`crates/sim/src/link`): `Link` gets a queue enum
//!   `Fast(ScheduledDropTail) | Aqm { qdisc: Box<dyn Qdisc>, tx: Transmitter, held: Slab<Packet> }`.
//!   `Link::offer` keeps the drop-tail fast path untouched; in the AQM arm it stores the
//!   simulator packet in `held` (slot = `Pkt::id`), calls `qdisc.enqueue(now, pkt)` and, if the
//!   transmitter is idle, dequeues at once. Dequeue happens at a new event `LinkTxDone(link)`
//!   scheduled at the end of each transmission (`Transmitter::send` gives the end): it calls
//!   `qdisc.dequeue(now)`, sends the returned packet through loss/jitter/delay as today (the
//!   delivery event as now), schedules the next `LinkTxDone`, and drains `take_dropped` to
//!   free the dropped slots and count them (`dropped_queue`). A `None` with packets still held
//!   (fq throttling a paced flow) schedules `LinkTxDone` at `next_wakeup()` instead. CE marks
//!   come back as `Pkt::ce` and are copied onto the simulator packet (the receiver echoes ECE).
//!   Flow hash: `flow_hash(flow id)`; ECT from the flow's `ecn` setting. Only links with a
//!   non-drop-tail discipline pay for the extra event.
//! * **Emulator** (`crates/link/src/path.rs`): `PathModel` gets the same enum. In the AQM arm
//!   `arrive` enqueues (the TUN buffer slot is the `Pkt::id`) and returns `Verdict::Queued`
//!   instead of a delivery time; the main loop, which already sleeps until the delay line's
//!   next due time, also wakes at the transmitter's `busy_until` (or the qdisc's
//!   `next_wakeup`), dequeues, applies loss/jitter to that packet and pushes it into the
//!   `DelayLine`. Slots from `take_dropped` are freed. A CE mark rewrites the IP header's ECN
//!   bits and updates the header checksum (RFC 1624 incremental update) before writing the
//!   packet out. The flow hash comes from the 5-tuple of the IP/TCP header.
//!
//! PIE's probability update runs on a `tupdate` timer in Linux; here it runs lazily at the
//! next enqueue/dequeue for every period that has elapsed, which is exact because the
//! backlog cannot change between two calls. So no backend needs a timer for it.
pub mod codel;
pub mod codel_core;
mod conformance;
pub mod droptail;
pub mod fq;
pub mod fq_codel;
pub mod pie;
pub mod pkt;
pub mod red;
pub mod rng;
pub mod stats;
pub mod transmitter;

pub use codel::{Codel, CodelConfig};
pub use codel_core::CodelParams;
pub use droptail::{DropTail, Limit, ScheduledDropTail};
pub use fq::{Fq, FqConfig};
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use pie::{Pie, PieConfig};



pub use pkt::{flow_hash, Pkt, Verdict};
pub use red::{Red, RedConfig};

pub use stats::QueueStats;
pub use transmitter::{Rounding, Transmitter};

/// Nanoseconds on the caller's clock (simulated time, or CLOCK_MONOTONIC in the emulator).
pub type Nanos = u64;

/// A queue discipline as a state machine. The caller owns the clock and the transmitter: it
/// offers each arriving packet with `enqueue` and, whenever the link can send, asks `dequeue`
/// for the next packet.
pub trait Qdisc {
    /// Offer an arriving packet. The discipline stamps `enq_ns = now` on it.
    fn enqueue(&mut self, now: Nanos, pkt: Pkt) -> Verdict;
    /// The next packet to transmit, if any is eligible now. Packets the discipline dropped on
    /// the way are not returned; collect them with `take_dropped`.
    fn dequeue(&mut self, now: Nanos) -> Option<Pkt>;
    fn backlog_bytes(&self) -> u64;
    fn backlog_packets(&self) -> u64;
    fn stats(&self) -> &QueueStats;
    /// Move the packets dropped since the last call, other than arriving packets refused with
    /// `Verdict::Dropped` (AQM drops at dequeue, FQ-CoDel's drops from the fattest flow), to `out`.
    fn take_dropped(&mut self, out: &mut Vec<Pkt>);
    /// When `dequeue` may next return a packet although it returned `None` with packets held
    /// (a paced flow in `fq`): the caller should ask again then.
    fn next_wakeup(&self) -> Option<Nanos> {
        None
    }
}
