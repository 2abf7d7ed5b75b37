//! The receiver's SACK block list, Linux's `tp->selective_acks` (`tcp_sack_new_ofo_skb`,
//! `tcp_sack_maybe_coalesce`, `tcp_sack_remove`): at most TCP_NUM_SACKS blocks, the most
//! recently changed first (RFC 2018 §4). A range that falls off the end is not reported
//! again until new data extends a listed block into it.
use crate::tcp::SackBlock;

/// TCP_NUM_SACKS: SACK blocks the receiver remembers.
const NUM_SACKS: usize = 4;

#[derive(Clone, Default)]
pub(super) struct SackList {
    blocks: [SackBlock; NUM_SACKS],
    len: usize,
}

impl SackList {
    /// The listed blocks, most recently changed first.
    pub(super) fn blocks(&self) -> &[SackBlock] {
        &self.blocks[..self.len]
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// First half of `tcp_sack_new_ofo_skb`: the index of the listed block that `seq` touches
    /// or overlaps, grown to cover it in place (`tcp_sack_extend`); None if there is none.
    pub(super) fn extend(&mut self, seq: u64) -> Option<usize> {
        let i = (0..self.len).find(|&i| {
            let (s, e) = self.blocks[i];
            s <= seq + 1 && seq <= e
        })?;
        let b = &mut self.blocks[i];
        b.0 = b.0.min(seq);
        b.1 = b.1.max(seq + 1);
        Some(i)
    }

    /// Second half of `tcp_sack_new_ofo_skb`: an extended block moves to the front and absorbs
    /// the listed blocks it now touches (`tcp_sack_maybe_coalesce`); otherwise a new block
    /// [seq, seq+1) goes to the front and, in a full list, the last one is forgotten.
    pub(super) fn place(&mut self, found: Option<usize>, seq: u64) {
        match found {
            Some(i) => {
                self.blocks[..=i].rotate_right(1);
                let mut j = 1;
                while j < self.len {
                    let (s, e) = self.blocks[j];
                    let f = &mut self.blocks[0];
                    if f.0 <= e && s <= f.1 {
                        f.0 = f.0.min(s);
                        f.1 = f.1.max(e);
                        self.blocks.copy_within(j + 1..self.len, j);
                        self.len -= 1;
                    } else {
                        j += 1;
                    }
                }
            }
            None => {
                let keep = self.len.min(NUM_SACKS - 1);
                self.blocks.copy_within(0..keep, 1);
                self.blocks[0] = (seq, seq + 1);
                self.len = keep + 1;
            }
        }
    }

    /// `tcp_sack_remove` with out-of-order data still queued: drop the blocks that start at or
    /// below `rcv_nxt`.
    pub(super) fn remove_covered(&mut self, rcv_nxt: u64) {
        let mut j = 0;
        while j < self.len {
            if self.blocks[j].0 <= rcv_nxt {
                self.blocks.copy_within(j + 1..self.len, j);
                self.len -= 1;
            } else {
                j += 1;
            }
        }
    }

    /// `tcp_sack_remove` once the out-of-order queue is empty: no blocks left.
    pub(super) fn clear(&mut self) {
        self.len = 0;
    }
}
