//! Checks every discipline must pass through the `Qdisc` trait: no packet is lost or
//! duplicated (each accepted packet leaves exactly once, by `dequeue` or by `take_dropped`),
//! the backlog counters match the packets held, and the stats add up.
#![cfg(test)]
use crate::*;
use std::collections::HashSet;

fn all() -> Vec<(&'static str, Box<dyn Qdisc>)> {
    vec![
        ("droptail", Box::new(DropTail::new(Limit::Packets(50)))),
        ("codel", Box::new(Codel::new(CodelConfig { limit_packets: 60, ..Default::default() }))),
        (
            "codel-ecn",
            Box::new(Codel::new(CodelConfig {
                params: CodelParams { ecn: true, ..Default::default() },
                limit_packets: 60,
            })),
        ),
        ("fq_codel", Box::new(FqCodel::new(FqCodelConfig { limit_packets: 80, ..Default::default() }))),
        ("pie", Box::new(Pie::new(PieConfig { limit_packets: 70, ..Default::default() }, 0))),
        ("red", Box::new(Red::new(RedConfig::for_buffer(90_000, 12_000_000)))),
        ("step", Box::new(Step::new(StepConfig { k: Threshold::Packets(20), limit: Limit::Packets(60) }))),
        ("step-bytes", Box::new(Step::new(StepConfig { k: Threshold::Bytes(20_000), limit: Limit::Bytes(80_000) }))),
        ("fq", Box::new(Fq::new(FqConfig { plimit: 80, flow_plimit: 30, ..Default::default() }))),
    ]
}

#[test]
fn every_packet_leaves_exactly_once_and_backlog_adds_up() {
    for (name, mut q) in all() {
        let mut held: HashSet<u64> = HashSet::new();
        let mut held_bytes = 0u64;
        let (mut out, mut dropped) = (0u64, vec![]);
        let mut x = 0x9E37_79B9u64;
        let mut t = 0u64;
        for id in 0..60_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // 0.9 ms between arrivals on average, and as many dequeue attempts (0–2 per
            // arrival, 1 ms apart): the backlog wanders like a random walk into the limits.
            t += x % 1_800_000;
            let len = [1500u32, 64, 1500, 900][(x >> 20) as usize % 4];
            let mut p = Pkt::new(id, len, flow_hash(x % 6)).ect(x.is_multiple_of(3));
            if name == "fq" && x.is_multiple_of(5) {
                p.send_at_ns = t + 3_000_000;
            }
            match q.enqueue(t, p) {
                Verdict::Dropped => {}
                _ => {
                    held.insert(id);
                    held_bytes += len as u64;
                }
            }
            let mut due = t;
            for _ in 0..(x >> 40) % 3 {
                due += 1_000_000;
                if let Some(p) = q.dequeue(due) {
                    assert!(held.remove(&p.id), "{name}: {} left twice or was never queued", p.id);
                    assert!(!p.ce || p.ect, "{name}: CE on a Not-ECT packet");
                    held_bytes -= p.len as u64;
                    out += 1;
                }
            }
            q.take_dropped(&mut dropped);
            for p in dropped.drain(..) {
                assert!(held.remove(&p.id), "{name}: dropped {} not held", p.id);
                held_bytes -= p.len as u64;
            }
            assert_eq!(q.backlog_packets(), held.len() as u64, "{name}: backlog packets");
            assert_eq!(q.backlog_bytes(), held_bytes, "{name}: backlog bytes");
        }
        let s = q.stats().clone();
        assert_eq!(s.dequeued, out, "{name}");
        assert!(s.enqueued >= out + held.len() as u64, "{name}");
        assert!(s.max_backlog_packets >= held.len() as u64, "{name}");
        // The backlog reaches the limits, so every discipline must have signalled.
        assert!(s.drops() + s.marks > 0, "{name}: no congestion signal under overload");
    }
}
