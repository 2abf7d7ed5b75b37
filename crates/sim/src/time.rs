//! Simulated time: integer nanoseconds since the start of the run. Integers keep the event
//! order exact and the results byte-identical across machines.
pub type Nanos = u64;

pub const NS_PER_US: u64 = 1_000;
pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Time to serialise `bytes` at `rate_bps`, rounded up to a whole nanosecond.
#[inline]
pub fn tx_time(bytes: u32, rate_bps: u64) -> Nanos {
    let bits = bytes as u128 * 8 * NS_PER_SEC as u128;
    bits.div_ceil(rate_bps as u128) as Nanos
}

#[inline]
pub fn secs(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_SEC as f64
}

#[inline]
pub fn ms(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

/// Linux timer frequency modelled. CONFIG_HZ=250 on the machines this project validates
/// against (the kernel backend's referee); CUBIC's epoch clock and the coarse TCP timers
/// (RTO, RACK reorder timer slack) tick in jiffies of 1/HZ s.
pub const HZ: u64 = 250;
pub const NS_PER_JIFFY: u64 = NS_PER_SEC / HZ;

/// Jiffies elapsed at time `ns`.
#[inline]
pub fn jiffies(ns: Nanos) -> u64 {
    ns / NS_PER_JIFFY
}

/// Linux's `msecs_to_jiffies`: rounds up.
#[inline]
pub fn msecs_to_jiffies(ms: u64) -> u64 {
    (ms * HZ).div_ceil(1000)
}
