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
//! | step ECN marking at K (DCTCP, RFC 8257 §3.1) | [`Step`] | enqueue |
//! | fq (Linux's fair-queueing pacer) | [`Fq`] | dequeue (per-flow pacing) |
//! | DualPI2 (RFC 9332, L4S coupled dual queue) | [`DualPi2`] | dequeue (step and coupled PI2) |
//!
//! The scenario's side of the queue is here too: [`BufferConfig`] (`bottleneck.buffer`) and
//! module [`aqm`], which validates `bottleneck.aqm` / `bottleneck.aqm_params`, builds the
//! discipline ([`aqm::build`]) and gives back every parameter as run ([`aqm::resolved`]), so
//! both backends configure a discipline from one piece of code.
//!
//! # How the two backends serve a discipline
//!
//! Drop-tail uses [`ScheduledDropTail`]: the packet's departure is known on arrival, so the
//! packet goes straight into the delay line and no dequeue event is needed. Every other
//! discipline holds packets and decides which one leaves (or is dropped) when the transmitter
//! asks for the next packet, so the link has a *transmit-done* step:
//!
//! * **Simulator** (`crates/sim/src/link/served.rs`, driven by `world.rs`): a served link
//!   enqueues at the packet's real arrival time (an `Ev::LinkEnqueue` event), keeps the
//!   simulator's packet in a slot named by the descriptor's `id`, and dequeues when the
//!   transmitter is free (an arrival that finds it idle, an `Ev::LinkTxDone` at the end of each
//!   transmission, or the discipline's `next_wakeup`). Drops collected with `take_dropped` count
//!   as queue drops of their flow; a CE mark is copied onto the simulator's packet. PIE's and
//!   RED's seeds are derived like the link's other random streams (run seed + link name).
//! * **Emulator** (`crates/link/src/served.rs`, `path.rs`): the descriptor's `id` is the TUN
//!   buffer slot; the queue runs on a virtual clock and every dequeue due is replayed in order
//!   before each arrival and at each poll (`serve_until`). A CE mark rewrites the IP header's
//!   ECN bits with an incremental checksum update (RFC 1624); the flow hash comes from the
//!   5-tuple.
//!
//! Served through the same arm, the [`DropTail`] qdisc gives the departure times of the fast
//! path, which makes it a cross-check of the served arm.
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
pub mod dualpi2;
pub mod fq;
pub mod fq_codel;
pub mod pi2;
pub mod pie;
pub mod pkt;
pub mod red;
pub mod rng;
pub mod stats;
pub mod step;
pub mod trace;
pub mod transmitter;

pub use aqm::AqmParams;
pub use buffer::BufferConfig;
pub use codel::{Codel, CodelConfig};
pub use codel_core::CodelParams;
pub use droptail::{DropTail, Limit, ScheduledDropTail};
pub use dualpi2::{DualPi2, DualPi2Config, StepThresh};
pub use fq::{Fq, FqConfig};
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use pie::{Pie, PieConfig};
pub use pkt::{flow_hash, Pkt, Verdict};
pub use red::{Red, RedConfig};
pub use stats::{Backlog, QueueStats};
pub use step::{Step, StepConfig, Threshold};
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
