//! Where a queue model keeps the simulator's packets while a discipline (ccbench-queue) or the
//! Wi-Fi medium (ccbench-wifi) holds only small descriptors: one slot per held packet, named by
//! the descriptor's `id`, and a free list so slots are reused instead of growing the table.

pub struct Slots<T> {
    held: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots { held: Vec::new(), free: Vec::new() }
    }
}

impl<T> Slots<T> {
    /// A slot for the next packet: its id goes into the descriptor before the discipline
    /// decides; `fill` it if accepted, `release` it if refused.
    pub fn reserve(&mut self) -> u32 {
        match self.free.pop() {
            Some(s) => s,
            None => {
                self.held.push(None);
                (self.held.len() - 1) as u32
            }
        }
    }

    pub fn fill(&mut self, slot: u32, value: T) {
        debug_assert!(self.held[slot as usize].is_none(), "slot {slot} filled twice");
        self.held[slot as usize] = Some(value);
    }

    /// Give back a reserved slot that was never filled (the discipline refused the packet).
    pub fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// Take the packet out of `slot` (released, dequeued or dropped by the discipline) and free
    /// the slot. Panics naming `what` if the slot is empty: the descriptor and the table
    /// disagree, a bug.
    pub fn take(&mut self, slot: u64, what: &str) -> T {
        let v = self.held[slot as usize].take().unwrap_or_else(|| panic!("{what} packet was not held (slot {slot})"));
        self.free.push(slot as u32);
        v
    }

    /// The packets held, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.held.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::Slots;

    #[test]
    fn slots_are_reused_after_take_and_release() {
        let mut s: Slots<&str> = Slots::default();
        let a = s.reserve();
        s.fill(a, "a");
        let b = s.reserve();
        s.release(b); // refused
        let c = s.reserve();
        assert_eq!(c, b);
        s.fill(c, "c");
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), ["a", "c"]);
        assert_eq!(s.take(a as u64, "test"), "a");
        assert_eq!(s.reserve(), a);
        assert_eq!(s.iter().count(), 1);
    }

    #[test]
    #[should_panic(expected = "dropped packet was not held")]
    fn taking_an_empty_slot_is_a_bug() {
        let mut s: Slots<u8> = Slots::default();
        let a = s.reserve();
        s.release(a);
        s.take(a as u64, "dropped");
    }
}
