//! The CoDel state machine (RFC 8289 §5; Linux include/net/codel_impl.h, codel_dequeue and
//! codel_should_drop), shared by [`Codel`](crate::Codel) and, per flow, by
//! [`FqCodel`](crate::FqCodel).
//!
//! Differences from Linux, on purpose: times are nanoseconds (Linux counts 1024 ns units), and
//! the control law is computed exactly, `t + interval / sqrt(count)` as in the RFC's pseudocode,
//! where Linux keeps 1/sqrt(count) by one Newton step per change (codel_Newton_step), an
//! approximation within a few per cent that the RFC allows. The `ce_threshold` option is not
//! modelled.
use crate::stats::QueueStats;
use crate::{Nanos, Pkt};

pub const MS: Nanos = 1_000_000;
/// RFC 8289 §4.3 / codel_params_init: 5 ms.
pub const DEFAULT_TARGET_NS: Nanos = 5 * MS;
/// RFC 8289 §4.4 / codel_params_init: 100 ms.
pub const DEFAULT_INTERVAL_NS: Nanos = 100 * MS;
/// psched_mtu of an Ethernet device: 1500 + 14-byte header. CoDel does not drop while the
/// backlog is at most one MTU (codel_should_drop).
pub const DEFAULT_MTU: u32 = 1514;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodelParams {
    pub target_ns: Nanos,
    pub interval_ns: Nanos,
    /// Backlog (bytes) at or below which no drop happens (Linux `params->mtu`).
    pub mtu: u32,
    /// Mark ECT packets with CE instead of dropping them.
    pub ecn: bool,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams { target_ns: DEFAULT_TARGET_NS, interval_ns: DEFAULT_INTERVAL_NS, mtu: DEFAULT_MTU, ecn: false }
    }
}

/// Per-queue CoDel variables (struct codel_vars).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CodelVars {
    /// Drops (or marks) since entering the dropping state.
    pub count: u32,
    /// `count` when the dropping state was last entered (for the count memory).
    pub lastcount: u32,
    pub dropping: bool,
    /// When the sojourn time will have been above target for an interval (0 = below target).
    pub first_above_time: Nanos,
    /// When the next drop is due, in the dropping state.
    pub drop_next: Nanos,
    /// Sojourn time of the last packet looked at.
    pub ldelay: Nanos,
}

/// The queue CoDel pulls packets from (Linux's dequeue_func / drop_func callbacks).
pub(crate) trait CodelSource {
    /// Remove the head packet, updating every backlog count.
    fn pop(&mut self) -> Option<Pkt>;
    /// Backlog, in bytes, CoDel compares with the MTU (the whole qdisc's, after the pop).
    fn backlog_bytes(&self) -> u64;
    /// A packet CoDel dropped.
    fn drop_pkt(&mut self, pkt: Pkt);
}

/// RFC 8289 control_law: t + interval / sqrt(count).
#[inline]
pub fn control_law(t: Nanos, interval_ns: Nanos, count: u32) -> Nanos {
    t + (interval_ns as f64 / (count.max(1) as f64).sqrt()) as Nanos
}

/// codel_should_drop: is `pkt`'s sojourn above target for at least an interval?
fn should_drop(pkt: Option<&Pkt>, backlog: u64, p: &CodelParams, v: &mut CodelVars, now: Nanos) -> bool {
    let Some(pkt) = pkt else {
        v.first_above_time = 0;
        return false;
    };
    v.ldelay = now.saturating_sub(pkt.enq_ns);
    if v.ldelay < p.target_ns || backlog <= p.mtu as u64 {
        // Went (or stayed) below target: must stay above for a whole interval again.
        v.first_above_time = 0;
        return false;
    }
    if v.first_above_time == 0 {
        v.first_above_time = now + p.interval_ns;
        false
    } else {
        now > v.first_above_time
    }
}

/// codel_dequeue: take the head packet, dropping (or CE-marking) as the control law says.
pub(crate) fn codel_dequeue<S: CodelSource>(
    src: &mut S,
    p: &CodelParams,
    v: &mut CodelVars,
    stats: &mut QueueStats,
    now: Nanos,
) -> Option<Pkt> {
    let Some(mut pkt) = src.pop() else {
        v.dropping = false;
        return None;
    };
    let drop = should_drop(Some(&pkt), src.backlog_bytes(), p, v, now);
    if v.dropping {
        if !drop {
            // Sojourn time went below target: leave the dropping state.
            v.dropping = false;
        } else if now >= v.drop_next {
            // Time for the next drop(s); a large backlog may owe several at once.
            while v.dropping && now >= v.drop_next {
                v.count = v.count.wrapping_add(1);
                if p.ecn && pkt.set_ce() {
                    stats.marks += 1;
                    v.drop_next = control_law(v.drop_next, p.interval_ns, v.count);
                    return Some(pkt);
                }
                stats.drops_aqm += 1;
                src.drop_pkt(pkt);
                match src.pop() {
                    Some(next) => pkt = next,
                    None => {
                        should_drop(None, src.backlog_bytes(), p, v, now);
                        v.dropping = false;
                        return None;
                    }
                }
                if !should_drop(Some(&pkt), src.backlog_bytes(), p, v, now) {
                    v.dropping = false;
                } else {
                    v.drop_next = control_law(v.drop_next, p.interval_ns, v.count);
                }
            }
        }
    } else if drop {
        let out = if p.ecn && pkt.set_ce() {
            stats.marks += 1;
            Some(pkt)
        } else {
            stats.drops_aqm += 1;
            src.drop_pkt(pkt);
            let next = src.pop();
            // Linux re-evaluates here only to update first_above_time / ldelay.
            should_drop(next.as_ref(), src.backlog_bytes(), p, v, now);
            next
        };
        v.dropping = true;
        // Count memory: if we were dropping not long ago, resume near the drop rate that
        // controlled the queue then (RFC 8289 §5.5, "delta > 1 && now - drop_next < 16 intervals").
        let delta = v.count.wrapping_sub(v.lastcount);
        if delta > 1 && (now as i64 - v.drop_next as i64) < 16 * p.interval_ns as i64 {
            v.count = delta;
        } else {
            v.count = 1;
        }
        v.lastcount = v.count;
        v.drop_next = control_law(now, p.interval_ns, v.count);
        return out;
    }
    Some(pkt)
}
