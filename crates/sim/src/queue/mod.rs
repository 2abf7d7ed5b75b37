//! Bottleneck queues. The disciplines live in the `ccbench-queue` crate (shared with the
//! ccbench-link emulator); the simulator's link uses its drop-tail fast path today (CoDel,
//! FQ-CoDel, PIE, RED and fq need dequeue events: see the crate's top-level doc).
pub mod droptail;
pub use droptail::ScheduledDropTail;
