//! Bottleneck queues. The disciplines live in the `ccbench-queue` crate (shared with the
//! ccbench-link emulator). Drop-tail keeps the departure-on-arrival fast path (`droptail`);
//! CoDel, FQ-CoDel, PIE, RED and fq are built by `aqm` and served at dequeue time by the link
//! (`link::served`).
pub mod aqm;
pub mod droptail;
pub use droptail::ScheduledDropTail;
