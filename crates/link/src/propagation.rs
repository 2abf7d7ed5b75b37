//! What happens to a packet after the bottleneck's transmitter: random loss "on the wire" (a
//! lost packet has used its transmission time), then the delay line's due time (propagation
//! delay + jitter; netem-like independent per-packet delays when `reorder`, else never before
//! the previous packet). One per direction; the wire path (path.rs) and the Wi-Fi path
//! (wifi.rs) both use it, so a direction's loss and jitter draw from the same named streams —
//! the simulator's own, so that the same seed gives the same draw sequence on both backends.
use crate::config::DirConfig;
use ccbench_sim::link::jitter::Jitter;
use ccbench_sim::link::loss::LossModel;
use ccbench_sim::rng::Rng;

pub struct Propagation {
    delay_ns: u64,
    jitter: Option<Jitter>,
    reorder: bool,
    loss: LossModel,
    last_delivery_ns: u64,
    loss_rng: Rng,
    jitter_rng: Rng,
}

impl Propagation {
    pub fn new(c: &DirConfig) -> Self {
        Propagation {
            delay_ns: c.delay_ns,
            jitter: (c.jitter_ns > 0).then_some(Jitter { dist: c.jitter_dist, jitter_ns: c.jitter_ns }),
            reorder: c.reorder,
            loss: LossModel::from_config(&c.loss),
            last_delivery_ns: 0,
            // the simulator's stream names (DirConfig::stream): the same draws per packet
            loss_rng: Rng::stream(c.seed, &format!("{}/loss", c.stream())),
            jitter_rng: Rng::stream(c.seed, &format!("{}/jitter", c.stream())),
        }
    }

    /// The delivery time of a packet whose transmission ends at `tx_end_ns`, or None if the
    /// loss model removes it. A packet that is not `impaired` (measured.rs) draws nothing: it
    /// is neither lost nor jittered, and the streams stay aligned with the simulator's.
    #[inline]
    pub fn after(&mut self, tx_end_ns: u64, impaired: bool) -> Option<u64> {
        if impaired && self.loss.lose(&mut self.loss_rng) {
            return None;
        }
        let d = match &self.jitter {
            Some(j) if impaired => j.sample(self.delay_ns, &mut self.jitter_rng),
            _ => self.delay_ns,
        };
        let mut t = tx_end_ns + d;
        if !self.reorder {
            t = t.max(self.last_delivery_ns);
        }
        self.last_delivery_ns = self.last_delivery_ns.max(t);
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LinkConfig;
    use ccbench_sim::link::{Fate, ImpairKinds, Link, LinkSpec};

    /// Common random numbers: with the same scenario seed, the n-th packet of each direction is
    /// lost, and delayed by jitter, by the same draws here as in the simulator's bottleneck
    /// link of that direction (ccbench_sim::topology names them bottleneck/fwd and /rev).
    #[test]
    fn draws_match_the_simulators_link_packet_by_packet() {
        let cfg = LinkConfig::from_json(
            r#"{"seed":7,"bottleneck":{"rate_bps":12000000,"rtt_ns":50000000,"jitter_ns":8000000,
                "jitter_dist":"uniform","reorder":true,"loss":{"model":"bernoulli","p":0.05},
                "impair":"both","buffer":{"packets":1000}}}"#,
        )
        .unwrap();
        for (i, d) in cfg.directions().iter().enumerate() {
            let mut ours = Propagation::new(d);
            let spec = LinkSpec {
                name: d.stream().into(),
                rate_bps: Some(d.rate_bps),
                buffer: d.buffer,
                delay_ns: d.delay_ns,
                jitter: Some(Jitter { dist: d.jitter_dist, jitter_ns: d.jitter_ns }),
                reorder: d.reorder,
                loss: LossModel::from_config(&d.loss),
                impair: ImpairKinds::ALL,
                qdisc: None,
                measure_sojourn: false,
                trace: None,
            };
            let mut sim = Link::new(spec, cfg.seed);
            let mut lost = 0;
            for n in 0..10_000u64 {
                // 2 ms apart: each 1 ms transmission finds the link idle
                let now = n * 2_000_000;
                let a = ours.after(now + 1_000_000, true);
                let b = match sim.offer(now, 1500, i == 1) {
                    Fate::Deliver(t) => Some(t),
                    Fate::Lost => None,
                    Fate::QueueDrop => panic!("the queue never fills"),
                };
                assert_eq!(a, b, "direction {} packet {n}", d.name);
                lost += a.is_none() as u32;
            }
            assert!((400..600).contains(&lost), "5 % of 10 000: {lost}");
        }
    }
}
