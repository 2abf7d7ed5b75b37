//! The sending host's fq qdisc in Earliest Departure Time mode, for algorithms that ask for it
//! (`CongestionControl::wants_edt_fq`), after Linux 6.18 `net/ipv4/tcp_output.c`
//! (`tcp_update_skb_after_send`, `tcp_small_queue_check`, `tcp_pacing_check`) and
//! `net/sched/sch_fq.c` (`fq_dequeue`'s `time_next_packet`).
//!
//! With fq, `sk_pacing_status` is SK_PACING_FQ, so `tcp_pacing_check` never holds a packet
//! back: TCP stamps each skb with its departure time (`skb->tstamp = tcp_wstamp_ns`, which
//! `tcp_update_skb_after_send` then moves on by the skb's length at the pacing rate), counts it
//! in `packets_out` at once, and fq releases it to the device at that time. What bounds the
//! packets waiting in the host is TCP Small Queues: `tcp_small_queue_check` stops the sender
//! while more than max(2 · skb->truesize, sk_pacing_rate >> sk_pacing_shift) bytes of the
//! socket sit below TCP (doubled for a retransmission), and a packet leaving (`tcp_wfree`)
//! calls it back.
//!
//! Modelled: a packet's truesize is its MSS (the skb's overhead is left out), and
//! `tcp_small_queue_check`'s exception for a retransmission queue of at most one skb is left
//! out (the limit of two packets already lets a lone skb go).
use std::collections::VecDeque;

use crate::tcp::MSS;
use crate::time::Nanos;

/// sk_pacing_shift: TSQ lets about 2^-10 s of the pacing rate wait below TCP.
const TSQ_PACING_SHIFT: u32 = 10;
/// `2 * skb->truesize`: TSQ always lets two packets wait.
const TSQ_MIN_PACKETS: u64 = 2;

/// Departure times of the packets TCP released to fq that have not left yet.
#[derive(Default)]
pub(super) struct HostQueue {
    departures: VecDeque<Nanos>,
}

impl HostQueue {
    /// A packet released now that fq sends at `depart` (later than now) joins the queue;
    /// those whose departure has come have left.
    pub(super) fn release(&mut self, now: Nanos, depart: Nanos) {
        self.drain(now);
        if depart > now {
            self.departures.push_back(depart);
        }
    }

    fn drain(&mut self, now: Nanos) {
        while self.departures.front().is_some_and(|&t| t <= now) {
            self.departures.pop_front();
        }
    }

    /// Packets still waiting in fq at `now`.
    pub(super) fn waiting(&self, now: Nanos) -> u64 {
        self.departures.iter().filter(|&&t| t > now).count() as u64
    }

    /// `tcp_small_queue_check`: more than the TSQ limit waits below TCP, so the sender stops
    /// until a packet leaves. `retransmit`: the limit is doubled (factor 1).
    pub(super) fn tsq_throttled(&self, now: Nanos, pacing_rate: u64, retransmit: bool) -> bool {
        let limit = tsq_limit_bytes(pacing_rate) << u32::from(retransmit);
        self.waiting(now) * MSS as u64 > limit
    }

    /// The next departure after `now`: when a packet leaves and TSQ lets TCP send again
    /// (`tcp_wfree` → `tcp_tsq_handler`).
    pub(super) fn next_departure(&self, now: Nanos) -> Option<Nanos> {
        self.departures.iter().copied().find(|&t| t > now)
    }
}

/// `tcp_small_queue_check`'s limit: max(two packets, 1/1024 s of the pacing rate) bytes. With
/// fq (SK_PACING_FQ) the sysctl tcp_limit_output_bytes cap does not apply.
pub(super) fn tsq_limit_bytes(pacing_rate: u64) -> u64 {
    (TSQ_MIN_PACKETS * MSS as u64).max(pacing_rate >> TSQ_PACING_SHIFT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsq_limit_is_two_packets_at_low_rates_and_a_millisecond_at_high_ones() {
        // 10 Mbit/s = 1.25e6 B/s: 1.25e6 >> 10 = 1220 B < 2 MSS, so two packets.
        assert_eq!(tsq_limit_bytes(1_250_000), 2 * MSS as u64);
        // 100 Mbit/s = 12.5e6 B/s: 12.5e6 / 1024 = 12207 B (floor), about 8 packets.
        assert_eq!(tsq_limit_bytes(12_500_000), 12_207);
    }

    #[test]
    fn throttles_above_the_limit_and_doubles_it_for_retransmissions() {
        let mut q = HostQueue::default();
        // At 10 Mbit/s the limit is two packets: the third waiting one exceeds it.
        for i in 1..=2 {
            q.release(0, i * 1_000);
        }
        assert!(!q.tsq_throttled(0, 1_250_000, false));
        q.release(0, 3_000);
        assert!(q.tsq_throttled(0, 1_250_000, false));
        // A retransmission may find four waiting.
        assert!(!q.tsq_throttled(0, 1_250_000, true));
        // Once the first has left, two wait: not throttled; the next to leave goes at 2 µs.
        assert!(!q.tsq_throttled(1_000, 1_250_000, false));
        assert_eq!(q.next_departure(1_000), Some(2_000));
    }

    #[test]
    fn a_packet_due_now_does_not_wait() {
        let mut q = HostQueue::default();
        q.release(5, 5);
        assert_eq!(q.waiting(5), 0);
        assert_eq!(q.next_departure(5), None);
    }
}
