//! Sojourn time of a link's queue: how long each packet waited between its arrival and the
//! start of its transmission (RFC 8289's "sojourn time"; for drop-tail the time behind the
//! packets ahead of it). Kept for the forward bottleneck only: a histogram for the run's
//! percentiles and a running sum for the mean of each sampling interval.
use crate::metrics::Histogram;
use crate::time::Nanos;

#[derive(Debug, Default)]
pub struct SojournMeter {
    /// Sojourn times in microseconds.
    hist: Histogram,
    interval_sum_ns: u64,
    interval_n: u64,
}

impl SojournMeter {
    #[inline]
    pub fn record(&mut self, sojourn_ns: Nanos) {
        self.hist.record(sojourn_ns / 1000);
        self.interval_sum_ns += sojourn_ns;
        self.interval_n += 1;
    }

    /// The q-quantile in milliseconds; None before any packet was sent.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        self.hist.quantile(q).map(|us| us / 1000.0)
    }

    /// Mean sojourn (ms) of the packets sent since the last call; None if none was.
    pub fn take_interval_mean_ms(&mut self) -> Option<f64> {
        let n = std::mem::take(&mut self.interval_n);
        let sum = std::mem::take(&mut self.interval_sum_ns);
        (n > 0).then(|| sum as f64 / n as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_interval_means() {
        let mut m = SojournMeter::default();
        assert_eq!(m.quantile_ms(0.5), None);
        for ms in 1..=100u64 {
            m.record(ms * 1_000_000);
        }
        let p50 = m.quantile_ms(0.5).unwrap();
        assert!((p50 - 50.0).abs() < 0.5, "{p50}"); // histogram buckets within 0.8 %
        assert!((m.take_interval_mean_ms().unwrap() - 50.5).abs() < 1e-9);
        assert_eq!(m.take_interval_mean_ms(), None, "interval restarts");
    }
}
