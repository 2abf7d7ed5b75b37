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
//! # How a dequeue-driven discipline plugs into the two backends
//!
//! (The design both backends now follow: crates/sim/src/link/served.rs and
//! crates/link/src/served.rs.) Drop-tail uses [`ScheduledDropTail`]: the packet's departure is
//! known on arrival, so the packet goes straight into the delay line. Every other discipline holds packets and
//! decides which one leaves (or is dropped) when the transmitter asks for the next packet, so
//! the link needs a *transmit-done* step. In both backends the change is local to the link:
//!
//! * **Simulator** (`crates/sim/src/link`, `world.rs::offer`): `Link` gets a queue enum
//!   `Fast(ScheduledDropTail) | Aqm { qdisc: Box<dyn Qdisc>, tx: Transmitter, held: Vec<Option<sim::Pkt>> }`.
//!   The drop-tail arm stays exactly as today (departure on arrival, no event). In the AQM arm:
//!   1. Enqueue at the packet's real arrival time. `Simulation::offer` is called with
//!      `at = now + access delay`, in the future; the fast path can book a future arrival,
//!      a dequeue-driven queue cannot, so an AQM link gets an `Ev::LinkEnqueue { link, pkt }`
//!      at `at` and enqueues then.
//!   2. Enqueue: store the simulator packet in `held` (slot = `Pkt::id`, a free list reuses
//!      slots), `qdisc.enqueue(now, Pkt { len: bytes, flow: flow_hash(flow id), ect: flow's
//!      ecn, .. })`; a `Dropped` verdict counts as today's `Fate::QueueDrop`. If the
//!      transmitter is idle (`!tx.is_busy(now)`), dequeue at once (step 3).
//!   3. Dequeue: `qdisc.dequeue(now)`; the packet starts transmission, `tx.send(now, len)` gives
//!      its end; from there loss, jitter and delay as today (same RNG streams; a `DropTail`
//!      qdisc through this arm should reproduce today's results up to the order of
//!      simultaneous events — a good cross-check of the new arm), and
//!      an `Ev::LinkTxDone(link)` at the end of transmission dequeues the next. `None` with
//!      packets held (fq throttling) schedules `LinkTxDone` at `next_wakeup()` instead. After
//!      each enqueue/dequeue, drain `take_dropped`: free the slots and count the drops per
//!      flow (`flows[f].dropped`) as queue drops. `Pkt::ce` is copied onto the simulator
//!      packet (the receiver echoes ECE — issue 12 part 2).
//!   4. Deliveries keep the FIFO pipe (`is_fifo`): a single transmitter sends in order.
//!   `queued_bytes` reads `qdisc.backlog_bytes()`; `bytes_sent` counts `tx` sends. Only AQM
//!   links pay for the events. A sojourn series per link is `now - Pkt::enq_ns` at dequeue.
//!   PIE and RED take a `seed`: derive it like the link's loss/jitter streams (run seed +
//!   link name) so runs stay reproducible.
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
//!
//! # Trace-driven links
//!
//! A served queue's transmitter is a [`Server`]: a fixed-rate [`Transmitter`], or a
//! [`TraceServer`] that delivers at the opportunities of a Mahimahi trace (module [`trace`]).
//! A trace link always takes the served arm (drop-tail as the [`DropTail`] qdisc): between
//! opportunities it cannot start a packet although it is idle, so both backends dequeue at
//! `Server::ready_at` (the simulator arms its transmit-done event there, ccbench-link's
//! `serve_until` replays dequeues at that time).
pub mod aqm;
mod buffer;
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
pub mod trace;
pub mod transmitter;

pub use aqm::AqmParams;
pub use buffer::BufferConfig;
pub use codel::{Codel, CodelConfig};
pub use codel_core::CodelParams;
pub use droptail::{DropTail, Limit, ScheduledDropTail};
pub use fq::{Fq, FqConfig};
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use pie::{Pie, PieConfig};



pub use pkt::{flow_hash, Pkt, Verdict};
pub use red::{Red, RedConfig};

pub use stats::{Backlog, QueueStats};
pub use trace::{parse_mahimahi, Trace, TraceConfig, TraceServer};
pub use transmitter::{Rounding, Server, Transmitter};

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
    /// Bytes and packets held now.
    fn backlog(&self) -> Backlog;
    fn backlog_bytes(&self) -> u64 {
        self.backlog().bytes
    }
    fn backlog_packets(&self) -> u64 {
        self.backlog().packets
    }
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
