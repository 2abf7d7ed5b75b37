//! Windowed running max / min filter, behaving like Linux lib/win_minmax.c (Kathleen Nichols'
//! algorithm, as used by BBR for its bandwidth filter and by tcp_min_rtt).
//!
//! Followed: Linux 6.6 lib/win_minmax.c (unchanged since 4.9). Written from the behaviour,
//! not copied.
//!
//! The filter keeps three candidate samples (best, second best, third best) whose times are
//! non-decreasing, so that when the best one ages out of the window a recent runner-up can take
//! over without storing every sample. Time is whatever unit the caller uses (BBR: round count),
//! compared with wrapping arithmetic like the kernel's u32 stamps.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MinmaxSample {
    pub t: u32,
    pub v: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Minmax {
    pub s: [MinmaxSample; 3],
}

impl Minmax {
    /// Current best value.
    #[inline]
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forget everything; the new sample becomes all three candidates.
    pub fn reset(&mut self, t: u32, v: u64) -> u64 {
        let s = MinmaxSample { t, v };
        self.s = [s, s, s];
        v
    }

    /// Time has moved on: age the candidates so that the window keeps spread-out choices.
    fn subwin_update(&mut self, win: u32, val: MinmaxSample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The best sample left the window: promote the runners-up, the new sample is third.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                // The promoted one may be out of the window as well.
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter window without a new best: take a second choice from this quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half a window without a new best: take a third choice from the second half.
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// Add a measurement to a running-max filter of window `win`; returns the max.
    pub fn running_max(&mut self, win: u32, t: u32, meas: u64) -> u64 {
        let val = MinmaxSample { t, v: meas };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Add a measurement to a running-min filter of window `win`; returns the min.
    pub fn running_min(&mut self, win: u32, t: u32, meas: u64) -> u64 {
        let val = MinmaxSample { t, v: meas };
        if val.v <= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v <= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_holds_for_window_then_falls_to_runner_up() {
        let mut m = Minmax::default();
        m.reset(0, 0);
        assert_eq!(m.running_max(10, 0, 100), 100);
        // Smaller samples do not displace the max while it is within the window.
        for t in 1..=10 {
            assert_eq!(m.running_max(10, t, 50 + t as u64), 100, "t={t}");
        }
        // At t = 11 the max (t=0) is 11 rounds old (> 10): a runner-up takes over, and it is
        // one of the later, smaller samples — never the expired 100.
        let v = m.running_max(10, 11, 40);
        assert!((50..100).contains(&v), "after expiry got {v}");
    }

    #[test]
    fn new_max_resets_immediately() {
        let mut m = Minmax::default();
        m.running_max(10, 0, 100);
        m.running_max(10, 1, 90);
        assert_eq!(m.running_max(10, 2, 120), 120);
        assert_eq!(m.s, [MinmaxSample { t: 2, v: 120 }; 3]);
    }

    #[test]
    fn min_filter_tracks_minimum_and_expires() {
        let mut m = Minmax::default();
        m.reset(0, 1000);
        assert_eq!(m.running_min(100, 0, 500), 500);
        assert_eq!(m.running_min(100, 30, 700), 500);
        assert_eq!(m.running_min(100, 60, 800), 500);
        // 500 is 101 old at t=101: the second choice (700, t=30) takes over.
        assert_eq!(m.running_min(100, 101, 900), 700);
    }

    #[test]
    fn whole_window_without_samples_resets_to_new_value() {
        let mut m = Minmax::default();
        m.running_max(10, 0, 100);
        // Nothing at all in the window any more: reset to the new (smaller) value.
        assert_eq!(m.running_max(10, 25, 7), 7);
    }
}
