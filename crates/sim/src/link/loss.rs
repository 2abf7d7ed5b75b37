//! Random loss models applied on a link after its queue (the packet used the link, then was
//! lost on the wire, as with radio loss).
use crate::config::LossConfig;
use crate::rng::Rng;

#[derive(Debug, Clone)]
pub enum LossModel {
    None,
    Bernoulli {
        p: f64,
    },
    /// Gilbert–Elliott: `bad` is the current state.
    Gilbert {
        p: f64,
        r: f64,
        h: f64,
        k: f64,
        bad: bool,
    },
}

impl LossModel {
    pub fn from_config(c: &LossConfig) -> Self {
        match *c {
            LossConfig::None => LossModel::None,
            LossConfig::Bernoulli { p } if p <= 0.0 => LossModel::None,
            LossConfig::Bernoulli { p } => LossModel::Bernoulli { p },
            LossConfig::Gilbert { p, r, h, k } => LossModel::Gilbert { p, r, h, k, bad: false },
        }
    }

    pub fn is_none(&self) -> bool {
        matches!(self, LossModel::None)
    }

    /// Decide the fate of one packet: true = lost.
    #[inline]
    pub fn lose(&mut self, rng: &mut Rng) -> bool {
        match self {
            LossModel::None => false,
            LossModel::Bernoulli { p } => rng.chance(*p),
            LossModel::Gilbert { p, r, h, k, bad } => {
                // netem (loss_gilbert_elliott): the state may change, and the packet's fate is
                // drawn with the delivery probability of the state it arrived in.
                let was_bad = *bad;
                if was_bad {
                    if rng.chance(*r) {
                        *bad = false;
                    }
                } else if rng.chance(*p) {
                    *bad = true;
                }
                let deliver_p = if was_bad { *h } else { *k };
                rng.next_f64() >= deliver_p
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bernoulli_rate() {
        let mut m = LossModel::from_config(&LossConfig::Bernoulli { p: 0.01 });
        let mut rng = Rng::new(3);
        let n = 400_000;
        let lost = (0..n).filter(|_| m.lose(&mut rng)).count() as f64;
        // 99.9 % binomial interval: 0.01 ± 3.3 * sqrt(p(1-p)/n) ≈ ±0.00052
        assert!((lost / n as f64 - 0.01).abs() < 0.0006, "rate {}", lost / n as f64);
    }

    #[test]
    fn gilbert_stationary_loss_and_bursts() {
        // Simple Gilbert (h = 0, k = 1): stationary loss = p / (p + r), mean burst = 1 / r.
        let (p, r) = (0.01, 0.25);
        let mut m = LossModel::from_config(&LossConfig::Gilbert { p, r, h: 0.0, k: 1.0 });
        let mut rng = Rng::new(9);
        let n = 1_000_000;
        let fates: Vec<bool> = (0..n).map(|_| m.lose(&mut rng)).collect();
        let rate = fates.iter().filter(|&&l| l).count() as f64 / n as f64;
        let expect = p / (p + r);
        assert!((rate - expect).abs() < 0.1 * expect, "rate {rate} vs {expect}");
        let bursts = fates.windows(2).filter(|w| w[1] && !w[0]).count() as f64;
        let mean_burst = fates.iter().filter(|&&l| l).count() as f64 / bursts;
        assert!((mean_burst - 1.0 / r).abs() < 0.15 / r, "mean burst {mean_burst}");
    }
}
