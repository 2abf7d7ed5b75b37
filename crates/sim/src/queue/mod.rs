//! Bottleneck queues. Drop-tail FIFO only, for now (codel, fq_codel, pie, red come later).
pub mod droptail;
pub use droptail::DropTail;
