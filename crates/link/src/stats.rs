//! What the link counts: packets and bytes in and out of one direction, its random losses and
//! CE marks (`Counters`; the queue's own drops and backlog maxima are the discipline's
//! `QueueStats`), and how late packets left (`Lateness`).

/// Counters of one direction of the path outside the queue discipline's own statistics.
#[derive(Debug, Default, Clone)]
pub struct Counters {
    pub packets_in: u64,
    pub bytes_in: u64,
    pub packets_out: u64,
    pub bytes_out: u64,
    /// Removed by the random loss model.
    pub lost: u64,
    /// Packets the queue discipline marked Congestion Experienced instead of dropping them
    /// (counted when they leave the queue, as the simulator's `ce_marked`).
    pub ce_marked: u64,
    pub write_errors: u64,
}

/// Lateness histogram: 1 µs buckets up to 100 ms (no per-packet allocation), exact maximum.
pub struct Lateness {
    buckets: Vec<u64>,
    pub count: u64,
    pub sum_ns: u128,
    pub max_ns: u64,
}

const NB: usize = 100_001;

impl Lateness {
    pub fn new() -> Self {
        Lateness { buckets: vec![0; NB], count: 0, sum_ns: 0, max_ns: 0 }
    }
    #[inline]
    pub fn add(&mut self, ns: u64) {
        let b = ((ns / 1000) as usize).min(NB - 1);
        self.buckets[b] += 1;
        self.count += 1;
        self.sum_ns += ns as u128;
        if ns > self.max_ns {
            self.max_ns = ns;
        }
    }
    /// Percentile in µs (upper edge of the bucket), None when empty.
    pub fn percentile_us(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let target = ((q / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            acc += c;
            if acc >= target {
                return Some(((i + 1) as f64).min(self.max_ns as f64 / 1000.0));
            }
        }
        Some(self.max_ns as f64 / 1000.0)
    }
    pub fn mean_us(&self) -> Option<f64> {
        if self.count == 0 {
            None
        } else {
            Some(self.sum_ns as f64 / self.count as f64 / 1000.0)
        }
    }
    /// Fraction of packets later than `us` microseconds.
    pub fn frac_over_us(&self, us: usize) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let over: u64 = self.buckets[us.min(NB - 1)..].iter().sum();
        Some(over as f64 / self.count as f64)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn percentiles() {
        let mut l = super::Lateness::new();
        for i in 0..100u64 {
            l.add(i * 1000 + 500);
        }
        assert_eq!(l.percentile_us(50.0), Some(50.0));
        assert_eq!(l.percentile_us(99.0), Some(99.0));
        assert_eq!(l.percentile_us(100.0), Some(99.5));
    }
}
