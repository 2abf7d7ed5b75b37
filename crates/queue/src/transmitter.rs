//! A fixed-rate transmitter: how long a packet occupies the link, and when the link is free;
//! and [`Server`], the transmitter of a served queue: fixed-rate or trace-driven.
use crate::trace::TraceServer;
use crate::Nanos;

const NS_PER_SEC: u128 = 1_000_000_000;

/// How a packet's serialisation time is rounded to whole nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// Each packet's time rounded up on its own (the simulator's `time::tx_time`).
    CeilPerPacket,
    /// Truncated, the division's remainder carried to the next packet, so the rate is exact on
    /// average (ccbench-link, which paces real packets against CLOCK_MONOTONIC).
    CarryRemainder,
}

#[derive(Debug, Clone)]
pub struct Transmitter {
    pub rate_bps: u64,
    rounding: Rounding,
    /// Remainder of the last division (bit·ns units), for `CarryRemainder`.
    carry: u128,
    /// When the link finishes the last packet given to it.
    busy_until: Nanos,
}

impl Transmitter {
    pub fn new(rate_bps: u64, rounding: Rounding) -> Transmitter {
        assert!(rate_bps > 0, "a transmitter needs a positive rate");
        Transmitter { rate_bps, rounding, carry: 0, busy_until: 0 }
    }

    /// Serialisation time of `bytes` (advances the carried remainder).
    #[inline]
    pub fn tx_time(&mut self, bytes: u32) -> Nanos {
        let bits = bytes as u128 * 8 * NS_PER_SEC;
        match self.rounding {
            Rounding::CeilPerPacket => bits.div_ceil(self.rate_bps as u128) as Nanos,
            Rounding::CarryRemainder => {
                let b = bits + self.carry;
                self.carry = b % self.rate_bps as u128;
                (b / self.rate_bps as u128) as Nanos
            }
        }
    }

    /// Put a packet on the link no earlier than `now`: returns (start, end) of its transmission.
    #[inline]
    pub fn send(&mut self, now: Nanos, bytes: u32) -> (Nanos, Nanos) {
        let start = self.busy_until.max(now);
        let end = start + self.tx_time(bytes);
        self.busy_until = end;
        (start, end)
    }

    #[inline]
    pub fn busy_until(&self) -> Nanos {
        self.busy_until
    }

    /// The link is still sending at `now`.
    #[inline]
    pub fn is_busy(&self, now: Nanos) -> bool {
        self.busy_until > now
    }
}

/// What serves a link's queue: a fixed-rate [`Transmitter`] or a trace-driven
/// [`TraceServer`]. Both backends' served queues hold one.
#[derive(Debug, Clone)]
pub enum Server {
    Fixed(Transmitter),
    Trace(TraceServer),
}

impl Server {
    /// Put a packet on the link no earlier than `now`: (start, end) of its transmission.
    #[inline]
    pub fn send(&mut self, now: Nanos, bytes: u32) -> (Nanos, Nanos) {
        match self {
            Server::Fixed(t) => t.send(now, bytes),
            Server::Trace(t) => t.send(now, bytes),
        }
    }

    /// When the last packet given to the link has left it.
    #[inline]
    pub fn busy_until(&self) -> Nanos {
        match self {
            Server::Fixed(t) => t.busy_until(),
            Server::Trace(t) => t.busy_until(),
        }
    }

    #[inline]
    pub fn is_busy(&self, now: Nanos) -> bool {
        self.busy_until() > now
    }

    /// The earliest time at or after `now` a packet can start: when the link is free for a
    /// fixed rate, the next delivery opportunity (or credit left now) for a trace.
    #[inline]
    pub fn ready_at(&self, now: Nanos) -> Nanos {
        match self {
            Server::Fixed(t) => t.busy_until().max(now),
            Server::Trace(t) => t.ready_at(now),
        }
    }

    /// The rate (a trace's mean capacity).
    pub fn rate_bps(&self) -> u64 {
        match self {
            Server::Fixed(t) => t.rate_bps,
            Server::Trace(t) => t.rate_bps(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_rounds_each_packet_up_carry_is_exact_on_average() {
        // 3 bytes at 7 bit/s: 24/7 s = 3.428… s per packet.
        let mut ceil = Transmitter::new(7, Rounding::CeilPerPacket);
        let mut carry = Transmitter::new(7, Rounding::CarryRemainder);
        let n = 7;
        let ceil_total: u64 = (0..n).map(|_| ceil.tx_time(3)).sum();
        let carry_total: u64 = (0..n).map(|_| carry.tx_time(3)).sum();
        // 7 packets = 24 s exactly; carrying the remainder hits it, rounding each up overshoots
        // by up to 1 ns per packet (here 24e9/7 is not an integer, so every packet rounds).
        assert_eq!(carry_total, 24_000_000_000);
        assert_eq!(ceil_total, 24_000_000_000 + 3, "24e9/7 = 3428571428.57…, ceil adds 0.43 ns × 7");
    }

    #[test]
    fn send_waits_for_the_link() {
        let mut t = Transmitter::new(12_000_000, Rounding::CeilPerPacket); // 1 ms per 1500 B
        assert_eq!(t.send(0, 1500), (0, 1_000_000));
        assert_eq!(t.send(500_000, 1500), (1_000_000, 2_000_000), "starts when the link frees");
        assert_eq!(t.send(5_000_000, 1500), (5_000_000, 6_000_000), "idle link starts at once");
    }
}
