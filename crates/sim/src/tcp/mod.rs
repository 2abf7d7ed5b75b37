//! TCP sender and receiver, in segments, as Linux does it.

/// Payload bytes per segment: 1500 MTU - 20 IP - 20 TCP - 12 timestamp option.
pub const MSS: u32 = 1448;
/// IP packet size of a full segment; link rates and byte buffers count this.
pub const DATA_PKT_BYTES: u32 = 1500;
/// IP size of a pure ACK with timestamps (and room for SACK blocks is ignored: 52 bytes).
pub const ACK_PKT_BYTES: u32 = 52;
