//! Per-packet delay variation, netem-like: the delay of each packet is base ± a random
//! deviation, clipped at zero. The mean delay stays the base delay (up to the clipping).
use crate::config::JitterDist;
use crate::rng::Rng;
use crate::time::Nanos;

#[derive(Debug, Clone)]
pub struct Jitter {
    pub dist: JitterDist,
    pub jitter_ns: Nanos,
}

/// Pareto shape used for `pareto` jitter. 3 is the smallest integer shape with a finite
/// variance; the scale is chosen so that the standard deviation equals the jitter.
const PARETO_SHAPE: f64 = 3.0;

impl Jitter {
    /// One packet's delay around `base`.
    #[inline]
    pub fn sample(&self, base: Nanos, rng: &mut Rng) -> Nanos {
        let j = self.jitter_ns as f64;
        let dev = match self.dist {
            JitterDist::Uniform => (rng.next_f64() * 2.0 - 1.0) * j,
            JitterDist::Normal => rng.normal() * j,
            JitterDist::Pareto => {
                // X = xm / U^(1/a): mean a·xm/(a-1), sd = xm·sqrt(a/((a-1)²(a-2))).
                let a = PARETO_SHAPE;
                let xm = j / (a / ((a - 1.0) * (a - 1.0) * (a - 2.0))).sqrt();
                let u = 1.0 - rng.next_f64();
                xm / u.powf(1.0 / a) - a * xm / (a - 1.0)
            }
        };
        let d = base as f64 + dev;
        if d <= 0.0 {
            0
        } else {
            d.round() as Nanos
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moments(dist: JitterDist) -> (f64, f64) {
        let jit = Jitter { dist, jitter_ns: 8_000_000 };
        let mut rng = Rng::new(5);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| jit.sample(25_000_000, &mut rng) as f64).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n as f64).sqrt();
        (m, sd)
    }

    #[test]
    fn uniform_sd_is_j_over_sqrt3() {
        let (m, sd) = moments(JitterDist::Uniform);
        assert!((m - 25e6).abs() < 0.05e6);
        // The kernel-emulation notes measured 4.70 ms for ±8 ms; theory 8/sqrt(3) = 4.62 ms.
        assert!((sd - 8e6 / 3f64.sqrt()).abs() < 0.05e6, "sd {sd}");
    }

    #[test]
    fn normal_and_pareto_sd_is_j() {
        let (m, sd) = moments(JitterDist::Normal);
        assert!((m - 25e6).abs() < 0.1e6 && (sd - 8e6).abs() < 0.15e6, "normal {m} {sd}");
        let (m, sd) = moments(JitterDist::Pareto);
        // Heavy tail: the sample sd converges slowly; allow 15 %.
        assert!((m - 25e6).abs() < 0.3e6 && (sd - 8e6).abs() < 1.2e6, "pareto {m} {sd}");
    }
}
