//! Queue drops and random losses per TCP source port, so the kernel backend can attribute them
//! to flows (the report's `tcp_sport_dropped_lost`).
use crate::path::Verdict;
use std::collections::HashMap;

/// Source port → (dropped by the queue, lost on the wire).
pub type PortLosses = HashMap<u16, (u64, u64)>;

/// TCP source port of an IPv4 packet (None for anything else).
#[inline]
fn tcp_sport(p: &[u8]) -> Option<u16> {
    if p.len() < 20 || p[0] >> 4 != 4 || p[9] != 6 {
        return None;
    }
    let ihl = (p[0] & 0x0f) as usize * 4;
    (p.len() >= ihl + 2).then(|| u16::from_be_bytes([p[ihl], p[ihl + 1]]))
}

/// Count a packet that did not make it (`Dropped` or `Lost`) against its source port.
pub fn count_loss(map: &mut PortLosses, pkt: &[u8], v: Verdict) {
    if let Some(port) = tcp_sport(pkt) {
        let e = map.entry(port).or_insert((0, 0));
        match v {
            Verdict::Dropped => e.0 += 1,
            Verdict::Lost => e.1 += 1,
            Verdict::Deliver(_) | Verdict::Queued => {}
        }
    }
}
