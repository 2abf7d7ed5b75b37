//! What happens to a packet after the bottleneck's transmitter: random loss "on the wire" (a
//! lost packet has used its transmission time), then the delay line's due time (propagation
//! delay + jitter; netem-like independent per-packet delays when `reorder`, else never before
//! the previous packet). One per direction; the wire path (path.rs) and the Wi-Fi path
//! (wifi.rs) both use it, so a direction's loss and jitter draw from the same named streams.
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
            loss_rng: Rng::stream(c.seed, &format!("link.{}.loss", c.name)),
            jitter_rng: Rng::stream(c.seed, &format!("link.{}.jitter", c.name)),
        }
    }

    /// The delivery time of a packet whose transmission ends at `tx_end_ns`, or None if the
    /// loss model removes it.
    #[inline]
    pub fn after(&mut self, tx_end_ns: u64) -> Option<u64> {
        if self.loss.lose(&mut self.loss_rng) {
            return None;
        }
        let d = match &self.jitter {
            Some(j) => j.sample(self.delay_ns, &mut self.jitter_rng),
            None => self.delay_ns,
        };
        let mut t = tx_end_ns + d;
        if !self.reorder {
            t = t.max(self.last_delivery_ns);
        }
        self.last_delivery_ns = self.last_delivery_ns.max(t);
        Some(t)
    }
}
