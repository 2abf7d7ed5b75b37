//! The sender with fq's EDT pacing (host_queue.rs, Linux 6.18 `tcp_write_xmit` with
//! SK_PACING_FQ and `tcp_small_queue_check`) against TCP's internal pacing
//! (`tcp_pacing_check`), on a hand-set window and pacing rate.
use super::tests::test_params;
use super::*;
use crate::cc;
use crate::tcp::INIT_CWND;
use crate::time::NS_PER_SEC;

/// 10 Mbit/s in bytes per second: TSQ's 1 ms of it (1220 B) is under two packets, so the
/// TSQ limit is two packets.
const RATE: u64 = 1_250_000;

/// A sender of `cc_name` (paced) that has sent its initial window at t = 0 and now has room
/// for ten more packets at `RATE`.
fn after_initial_window(cc_name: &str) -> Sender {
    let mut s = Sender::new(SenderParams { pacing: true, ..test_params() }, cc::make(cc_name, 1).unwrap());
    // The first ten segments are not paced (tcp_update_skb_after_send from the 11th on).
    assert_eq!(s.start(0).len(), INIT_CWND as usize);
    s.sk.cwnd = INIT_CWND + 10;
    s.sk.pacing_rate = RATE;
    s
}

/// One MSS at `RATE`.
fn gap() -> Nanos {
    MSS as u64 * NS_PER_SEC / RATE
}

#[test]
fn edt_releases_ahead_of_the_pacing_time_up_to_the_tsq_limit() {
    let mut s = after_initial_window("prague");
    let l = gap();
    // TSO skbs of 2 segments (tcp_tso_segs: 1220 B is under one MSS, so the minimum 2). skb 1 leaves
    // now; skb 2 at 2 gaps (the wstamp after skb 1), skb 3 at 4 gaps, with 2 then 4 packets
    // waiting; before skb 4, 4 packets wait, more than the 2-packet limit: TSQ stops.
    let departs: Vec<Nanos> = s.transmit(0).iter().map(|p| p.depart_ns).collect();
    assert_eq!(departs, [0, 0, 2 * l, 2 * l, 4 * l, 4 * l]);
    // Released packets count in flight at once, and the RTT clock starts at the departure.
    assert_eq!(s.in_flight(), INIT_CWND + 6);
    assert_eq!(s.seg(INIT_CWND as u64 + 2).xmit, 2 * l);
    // The sender wakes when skb 2 leaves fq (tcp_wfree), then 2 packets wait: skb 4 goes,
    // stamped at 6 gaps.
    assert_eq!(s.pacing_wakeup(0), Some(2 * l));
    let departs: Vec<Nanos> = s.transmit(2 * l).iter().map(|p| p.depart_ns).collect();
    assert_eq!(departs, [6 * l, 6 * l]);
}

#[test]
fn internal_pacing_holds_packets_in_tcp_until_their_time() {
    // CUBIC does not ask for fq: tcp_pacing_check stops the loop once the wstamp is ahead, so
    // only skb 1 goes now, with no departure stamp, and the sender wakes at 2 gaps.
    let mut s = after_initial_window("cubic");
    let departs: Vec<Nanos> = s.transmit(0).iter().map(|p| p.depart_ns).collect();
    assert_eq!(departs, [0, 0]);
    assert_eq!(s.in_flight(), INIT_CWND + 2);
    assert_eq!(s.pacing_wakeup(0), Some(2 * gap()));
}
