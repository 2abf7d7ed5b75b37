//! The receiver's block-ack reordering buffer: MPDUs go up the stack in sequence order; a hole
//! waits until the MPDU arrives or the sender gives it up (802.11-2016 10.24.7.6, mac80211
//! net/mac80211/rx.c ieee80211_sta_manage_reorder_buf).
use ccbench_queue::Pkt;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Reorder {
    /// The next sequence number to release (the window start, WinStartB).
    next: u64,
    /// Received (`Some`) or given-up (`None`) MPDUs at or beyond `next`.
    held: BTreeMap<u64, Option<Pkt>>,
}

impl Reorder {
    /// An MPDU received correctly.
    pub fn receive(&mut self, seq: u64, pkt: Pkt, out: &mut Vec<Pkt>) {
        debug_assert!(seq >= self.next && !self.held.contains_key(&seq), "duplicate MPDU {seq}");
        self.held.insert(seq, Some(pkt));
        self.release(out);
    }
    /// The sender dropped `seq` after its retry limit: the receiver moves its window past it
    /// (the block-ack request ath9k sends after a drop, ath_send_bar in xmit.c).
    pub fn skip(&mut self, seq: u64, out: &mut Vec<Pkt>) {
        self.held.insert(seq, None);
        self.release(out);
    }
    fn release(&mut self, out: &mut Vec<Pkt>) {
        while let Some(entry) = self.held.first_entry() {
            if *entry.key() != self.next {
                break;
            }
            if let Some(p) = entry.remove() {
                out.push(p);
            }
            self.next += 1;
        }
    }
    /// MPDUs held back by a hole.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_in_order_and_past_skipped_holes() {
        let p = |id| Pkt::new(id, 100, 0);
        let mut r = Reorder::default();
        let mut out = vec![];
        r.receive(1, p(1), &mut out);
        r.receive(2, p(2), &mut out);
        assert!(out.is_empty(), "held behind the hole at 0");
        r.receive(0, p(0), &mut out);
        assert_eq!(out.iter().map(|p| p.id).collect::<Vec<_>>(), vec![0, 1, 2]);
        out.clear();
        r.receive(4, p(4), &mut out);
        assert!(out.is_empty());
        r.skip(3, &mut out);
        assert_eq!(out.iter().map(|p| p.id).collect::<Vec<_>>(), vec![4]);
        assert_eq!(r.held(), 0);
    }
}
