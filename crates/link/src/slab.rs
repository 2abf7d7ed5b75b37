//! Packet buffers of a forwarding thread: one slab of fixed-size slots that only grows, plus a
//! free list, so that no packet costs an allocation. A slot's index is the packet's id in the
//! queue discipline and the delay line.

/// Bytes per slot: more than any packet a TUN device hands over at MTU 1500.
pub const SLOT: usize = 2048;

pub struct Slab {
    bytes: Vec<u8>,
    free: Vec<u32>,
    nslots: u32,
}

impl Slab {
    pub fn new() -> Self {
        let mut s = Slab { bytes: Vec::new(), free: Vec::new(), nslots: 0 };
        s.grow();
        s
    }

    /// Double the slots (at least 1024 more); the new ones are free, lowest index first out.
    fn grow(&mut self) {
        let add = self.nslots.max(1024);
        self.bytes.resize((self.nslots + add) as usize * SLOT, 0);
        self.free.extend((self.nslots..self.nslots + add).rev());
        self.nslots += add;
    }

    /// A free slot, not yet taken off the free list: fill it, then `take` it if the packet
    /// stays.
    pub fn peek_free(&mut self) -> u32 {
        if self.free.is_empty() {
            self.grow();
        }
        *self.free.last().unwrap()
    }

    /// Take the slot `peek_free` returned off the free list.
    pub fn take(&mut self) {
        self.free.pop();
    }

    /// Return a slot to the free list.
    pub fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// The whole slot, to read a packet into.
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let off = slot as usize * SLOT;
        &mut self.bytes[off..off + SLOT]
    }

    /// The packet of `len` bytes in `slot`.
    #[inline]
    pub fn packet(&self, slot: u32, len: u32) -> &[u8] {
        let off = slot as usize * SLOT;
        &self.bytes[off..off + len as usize]
    }

    #[inline]
    pub fn packet_mut(&mut self, slot: u32, len: u32) -> &mut [u8] {
        let off = slot as usize * SLOT;
        &mut self.bytes[off..off + len as usize]
    }
}
