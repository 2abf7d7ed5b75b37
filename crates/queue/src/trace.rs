//! Trace-driven links in Mahimahi's format: the link's capacity over time is a list of
//! *delivery opportunities*, one line per opportunity, each the time in whole milliseconds since
//! the start of the trace; the trace repeats with a period equal to its last timestamp.
//!
//! Semantics follow Mahimahi's `LinkQueue` (src/frontend/link_queue.cc, `rationalize`):
//! * one opportunity is a credit of [`OPPORTUNITY_BYTES`] bytes (one 1500-byte MTU packet;
//!   Mahimahi's PACKET_SIZE of 1504 also counts its TUN framing, which ccbench's IP-level byte
//!   counts do not have);
//! * the credit is spent on the queue's head packet: several small packets (ACKs) may share
//!   one opportunity, a packet larger than the credit left continues into later opportunities;
//! * a packet leaves at the time of the opportunity that completes it (no serialisation time
//!   beyond that: the trace *is* the timing);
//! * credit left at an opportunity when the queue has nothing more to send is lost, as is every
//!   opportunity that passes while the queue is empty;
//! * a repeated timestamp is several opportunities in the same millisecond; after the last
//!   line the trace starts over, shifted by its last timestamp (so a trace whose first line is
//!   0 has two opportunities at each period boundary, as in Mahimahi).
//!
//! [`TraceServer`] has the interface of the fixed-rate [`Transmitter`](crate::Transmitter)
//! plus [`TraceServer::ready_at`]: between opportunities a trace link cannot start a packet
//! even though it is idle, so the backends' served queues ask when it can and dequeue then.
use crate::Nanos;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// Bytes one delivery opportunity may carry.
pub const OPPORTUNITY_BYTES: u32 = 1500;
const NS_PER_MS: u64 = 1_000_000;
/// Largest timestamp accepted: 10^10 ms (about 116 days), far beyond any real trace, and small
/// enough that nanosecond times never overflow.
pub const MAX_TIMESTAMP_MS: u64 = 10_000_000_000;

/// A problem in a trace file; `line` is 1-based (0: the file as a whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub line: usize,
    pub problem: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.problem)
        } else {
            write!(f, "{}", self.problem)
        }
    }
}

impl std::error::Error for TraceError {}

fn err(line: usize, problem: String) -> TraceError {
    TraceError { line, problem }
}

/// Read a Mahimahi trace: one whole number of milliseconds per line, never decreasing. Blank
/// lines and `#` comments (a whole line, or the rest of a line) are ignored (Mahimahi itself
/// refuses blank lines; ccbench is lenient there). The last timestamp is the period and must be
/// above 0.
pub fn parse_mahimahi(text: &str) -> Result<Vec<u64>, TraceError> {
    let mut out: Vec<u64> = Vec::new();
    let mut prev_line = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        if !body.bytes().all(|b| b.is_ascii_digit()) {
            let shown: String = body.chars().take(40).collect();
            return Err(err(line, format!("'{shown}' is not a whole number of milliseconds")));
        }
        let ms = body.parse::<u64>().ok().filter(|&v| v <= MAX_TIMESTAMP_MS).ok_or_else(|| {
            err(line, format!("{body} ms is above the largest timestamp accepted ({MAX_TIMESTAMP_MS} ms)"))
        })?;
        if let Some(&last) = out.last() {
            if ms < last {
                return Err(err(
                    line,
                    format!("{ms} ms is before the previous timestamp ({last} ms on line {prev_line}); timestamps never decrease"),
                ));
            }
        }
        out.push(ms);
        prev_line = line;
    }
    check_schedule(&out).map_err(|p| err(if out.is_empty() { 0 } else { prev_line }, p))?;
    Ok(out)
}

/// The rules a schedule must meet (shared by the parser and [`Trace::from_ms`]).
fn check_schedule(ms: &[u64]) -> Result<(), String> {
    match ms.last() {
        None => Err("no timestamps: a trace needs at least one delivery opportunity".into()),
        Some(0) => {
            Err("the last timestamp is 0 ms: a trace must last more than 0 ms (its last timestamp is its period)"
                .into())
        }
        Some(&last) if last > MAX_TIMESTAMP_MS => Err(format!("{last} ms is above the largest timestamp accepted")),
        Some(_) if ms.windows(2).any(|w| w[1] < w[0]) => Err("timestamps must never decrease".into()),
        Some(_) => Ok(()),
    }
}

/// A validated schedule of delivery opportunities, in nanoseconds within one period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    at_ns: Vec<Nanos>,
    period_ns: Nanos,
}

impl Trace {
    /// From millisecond timestamps (as [`parse_mahimahi`] returns them, or as the scenario JSON
    /// carries them).
    pub fn from_ms(ms: &[u64]) -> Result<Trace, String> {
        check_schedule(ms)?;
        let at_ns: Vec<Nanos> = ms.iter().map(|&m| m * NS_PER_MS).collect();
        let period_ns = *at_ns.last().expect("checked non-empty");
        Ok(Trace { at_ns, period_ns })
    }

    /// Delivery opportunities per period.
    pub fn opportunities(&self) -> usize {
        self.at_ns.len()
    }

    pub fn period_ns(&self) -> Nanos {
        self.period_ns
    }

    /// Delivery opportunities at or before `t` (ns after the trace's origin), over all periods.
    pub fn opportunities_until(&self, t: Nanos) -> u64 {
        let k = t / self.period_ns;
        let rest = t - k * self.period_ns;
        k * self.at_ns.len() as u64 + self.at_ns.partition_point(|&a| a <= rest) as u64
    }

    /// Mean capacity in bits per second: opportunities × 1500 B × 8 / period, rounded down
    /// (the scenario's nominal `rate_bps`; Python computes the same integer).
    pub fn mean_rate_bps(&self) -> u64 {
        mean_rate_bps(self.at_ns.len() as u64, self.period_ns / NS_PER_MS)
    }
}

/// opportunities × 1500 B × 8 bit per `period_ms`, in bit/s, rounded down.
pub fn mean_rate_bps(opportunities: u64, period_ms: u64) -> u64 {
    (opportunities as u128 * OPPORTUNITY_BYTES as u128 * 8 * 1000 / period_ms as u128) as u64
}

/// The traces of a bottleneck as the scenario JSON carries them (`bottleneck.trace`):
/// millisecond timestamps of one period for the data direction, and for the ACK direction if
/// it has its own (default: the same trace).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Forward bottleneck link (sender → receiver: the data of forward flows).
    pub fwd_ms: Vec<u64>,
    /// Reverse bottleneck link (receiver → sender: the ACKs); None = the same as `fwd_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev_ms: Option<Vec<u64>>,
}

impl TraceConfig {
    /// Both directions' schedules, checked: [forward, reverse]. Errors name the key.
    pub fn traces(&self) -> Result<[Arc<Trace>; 2], String> {
        let fwd = Arc::new(Trace::from_ms(&self.fwd_ms).map_err(|e| format!("bottleneck.trace.fwd_ms: {e}"))?);
        let rev = match &self.rev_ms {
            None => fwd.clone(),
            Some(ms) => Arc::new(Trace::from_ms(ms).map_err(|e| format!("bottleneck.trace.rev_ms: {e}"))?),
        };
        Ok([fwd, rev])
    }
}

/// The transmitter of a trace-driven link (see the module documentation).
#[derive(Debug, Clone)]
pub struct TraceServer {
    trace: Arc<Trace>,
    /// The next unused opportunity: its index in the trace and the start of its period.
    next: usize,
    cycle_start: Nanos,
    /// Credit left from the opportunity at `credit_at`; only a packet that starts then uses it.
    credit: u32,
    credit_at: Nanos,
    /// When the last packet given to the server leaves.
    busy_until: Nanos,
}

impl TraceServer {
    /// A server whose trace starts at `origin` on the caller's clock (0 in the simulator, the
    /// emulator's start in ccbench-link).
    pub fn new(trace: Arc<Trace>, origin: Nanos) -> TraceServer {
        TraceServer { trace, next: 0, cycle_start: origin, credit: 0, credit_at: 0, busy_until: 0 }
    }

    /// Move the trace's start to `origin` (before the first packet: ccbench-link starts it
    /// when the emulator starts).
    pub fn set_origin(&mut self, origin: Nanos) {
        debug_assert!(self.busy_until == 0 && self.next == 0, "the origin moves before the first packet");
        self.cycle_start = origin;
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The first opportunity at or after `t`, as (index, start of its period), from the
    /// cursor on (every earlier opportunity is used or lost). O(1) when the cursor is already
    /// there, O(log n) after an idle spell.
    fn locate(&self, t: Nanos) -> (usize, Nanos) {
        let at = &self.trace.at_ns;
        let period = self.trace.period_ns;
        let (mut i, mut c) = (self.next, self.cycle_start);
        if c + at[i] >= t {
            return (i, c);
        }
        // Skip whole periods that ended before t (a period's last opportunity is at c + period).
        if c + period < t {
            c += (t - c - period).div_ceil(period) * period;
            i = 0;
        }
        // c + period >= t now, so an opportunity at or after t exists in this period.
        (i + at[i..].partition_point(|&a| c + a < t), c)
    }

    /// The earliest time at or after `now` at which a packet can start: at once if credit is
    /// left from an opportunity now, else at the next opportunity (not before `busy_until`).
    pub fn ready_at(&self, now: Nanos) -> Nanos {
        let t = now.max(self.busy_until);
        if self.credit > 0 && t == self.credit_at {
            return t;
        }
        let (i, c) = self.locate(t);
        c + self.trace.at_ns[i]
    }

    /// Give the server a packet of `bytes` no earlier than `now`: returns (start, end), `start`
    /// the opportunity (or leftover credit) it begins with, `end` the time of the opportunity
    /// that completes it, when it leaves the link.
    pub fn send(&mut self, now: Nanos, bytes: u32) -> (Nanos, Nanos) {
        let t = now.max(self.busy_until);
        let mut need = bytes;
        let start;
        if self.credit > 0 && t == self.credit_at {
            start = t;
            let used = need.min(self.credit);
            self.credit -= used;
            need -= used;
            if need == 0 {
                self.busy_until = t;
                return (t, t);
            }
        } else {
            let (i, c) = self.locate(t);
            self.next = i;
            self.cycle_start = c;
            start = c + self.trace.at_ns[i];
        }
        // Spend whole opportunities until the packet is complete; what the last one has left
        // stays as credit at its time.
        loop {
            let at = self.cycle_start + self.trace.at_ns[self.next];
            self.next += 1;
            if self.next == self.trace.at_ns.len() {
                self.next = 0;
                self.cycle_start += self.trace.period_ns;
            }
            if need <= OPPORTUNITY_BYTES {
                self.credit = OPPORTUNITY_BYTES - need;
                self.credit_at = at;
                self.busy_until = at;
                return (start, at);
            }
            need -= OPPORTUNITY_BYTES;
        }
    }

    pub fn busy_until(&self) -> Nanos {
        self.busy_until
    }

    /// A packet given to the server has not left yet at `now`.
    pub fn is_busy(&self, now: Nanos) -> bool {
        self.busy_until > now
    }

    /// The trace's mean capacity (bit/s).
    pub fn rate_bps(&self) -> u64 {
        self.trace.mean_rate_bps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = NS_PER_MS;

    fn server(ms: &[u64]) -> TraceServer {
        TraceServer::new(Arc::new(Trace::from_ms(ms).unwrap()), 0)
    }

    #[test]
    fn parser_skips_comments_and_blank_lines_and_keeps_repeats() {
        let text = "# a comment\n\n1\n1   # two opportunities in ms 1\n  3\r\n\n#end\n7\n";
        assert_eq!(parse_mahimahi(text).unwrap(), vec![1, 1, 3, 7]);
    }

    #[test]
    fn parser_errors_name_the_line() {
        let e = parse_mahimahi("1\n5\n3\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.problem.contains("before the previous timestamp (5 ms on line 2)"), "{e}");
        let e = parse_mahimahi("1\n\n2.5\n").unwrap_err();
        assert_eq!((e.line, e.to_string().starts_with("line 3: '2.5' is not a whole number")), (3, true), "{e}");
        for bad in ["-1", "+1", "1e3", "x", "1 2"] {
            assert_eq!(parse_mahimahi(&format!("0\n{bad}\n")).unwrap_err().line, 2, "{bad}");
        }
        assert_eq!(parse_mahimahi("99999999999999999999999\n").unwrap_err().line, 1);
        let e = parse_mahimahi("# nothing\n\n").unwrap_err();
        assert_eq!(e.line, 0);
        assert!(e.problem.contains("no timestamps"));
        let e = parse_mahimahi("0\n0\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.problem.contains("more than 0 ms"), "{e}");
    }

    #[test]
    fn mean_rate_is_opportunities_times_mtu_over_period() {
        // 4 opportunities per 2 ms = 2 per ms = 2 × 1500 × 8 × 1000 bit/s = 24 Mbit/s.
        assert_eq!(Trace::from_ms(&[0, 1, 2, 2]).unwrap().mean_rate_bps(), 24_000_000);
        assert_eq!(mean_rate_bps(1, 3), 4_000_000); // 12 000 bit per 3 ms
        assert_eq!(mean_rate_bps(2, 3), 8_000_000);
        assert_eq!(mean_rate_bps(1, 7), 1_714_285, "rounded down");
    }

    #[test]
    fn one_mtu_packet_per_opportunity_and_repeats_carry_several() {
        let mut s = server(&[2, 2, 5]);
        // idle link: the first packet waits for the opportunity at 2 ms
        assert_eq!(s.ready_at(0), 2 * MS);
        assert_eq!(s.send(0, 1500), (2 * MS, 2 * MS));
        // the same millisecond's second opportunity carries the next one at once
        assert_eq!(s.ready_at(2 * MS), 2 * MS);
        assert_eq!(s.send(2 * MS, 1500), (2 * MS, 2 * MS));
        assert_eq!(s.send(2 * MS, 1500), (5 * MS, 5 * MS));
        // looping: the period is 5 ms, the next opportunities are at 7, 7, 10 ms
        assert_eq!(s.send(5 * MS, 1500), (7 * MS, 7 * MS));
        assert_eq!(s.send(7 * MS, 1500), (7 * MS, 7 * MS));
        assert_eq!(s.send(7 * MS, 1500), (10 * MS, 10 * MS));
    }

    #[test]
    fn small_packets_share_an_opportunity_large_ones_span_several() {
        let mut s = server(&[1, 2, 3, 4]);
        // 28 ACKs of 52 bytes = 1456 bytes fit in the opportunity at 1 ms; the 29th does not
        for _ in 0..28 {
            assert_eq!(s.send(0, 52), (MS, MS));
        }
        assert_eq!(s.send(MS, 52), (MS, 2 * MS), "44 bytes left at 1 ms, the rest at 2 ms");
        // credit left at 2 ms (1500 - 8) is lost if the next packet comes later
        assert_eq!(s.send(2 * MS + 1, 1500), (3 * MS, 3 * MS));
        // a 4000-byte packet (a GSO-like super-packet) needs three opportunities: 4, 5, 6 ms
        assert_eq!(s.send(3 * MS, 4000), (4 * MS, 6 * MS));
        assert!(s.is_busy(5 * MS) && !s.is_busy(6 * MS));
        // 500 bytes of credit are left at 6 ms
        assert_eq!(s.send(6 * MS, 500), (6 * MS, 6 * MS));
        assert_eq!(s.send(6 * MS, 1), (7 * MS, 7 * MS));
    }

    #[test]
    fn idle_spells_lose_their_opportunities_and_skip_whole_periods() {
        let mut s = server(&[0, 3, 3, 10]);
        // first period at 0: opportunities 0, 3, 3, 10; the next period's at 10, 13, 13, 20, …
        assert_eq!(s.send(4 * MS, 1500), (10 * MS, 10 * MS));
        // 1 s later: period k starts at 10k ms; 1003 ms is in the period starting at 1000
        assert_eq!(s.ready_at(1001 * MS), 1003 * MS);
        assert_eq!(s.send(1001 * MS, 1500), (1003 * MS, 1003 * MS));
        assert_eq!(s.send(1003 * MS, 1500), (1003 * MS, 1003 * MS));
        // exactly at a period boundary there are two opportunities (the last of one period and
        // the first of the next, as Mahimahi's base += last timestamp gives)
        assert_eq!(s.send(2000 * MS, 1500), (2000 * MS, 2000 * MS));
        assert_eq!(s.send(2000 * MS, 1500), (2000 * MS, 2000 * MS));
        assert_eq!(s.send(2000 * MS, 1500), (2003 * MS, 2003 * MS));
    }

    #[test]
    fn origin_shifts_the_trace() {
        let mut s = TraceServer::new(Arc::new(Trace::from_ms(&[5]).unwrap()), 1_000 * MS);
        assert_eq!(s.ready_at(0), 1_005 * MS);
        assert_eq!(s.send(1_007 * MS, 100), (1_010 * MS, 1_010 * MS));
    }

    #[test]
    fn saturated_server_delivers_the_mean_rate() {
        // Saturated with MTU packets, every opportunity carries one: 1000 periods of a trace
        // with n opportunities carry 1000·n packets, whatever their spacing. (No opportunity at
        // 0, so period k's opportunities lie in (30k, 30k + 30] ms.)
        let ms = [1, 1, 2, 4, 4, 4, 9, 20, 21, 30];
        let mut s = server(&ms);
        let (mut now, mut sent) = (0, 0u64);
        loop {
            let (_, end) = s.send(now, 1500);
            if end > 1000 * 30 * MS {
                break;
            }
            now = end;
            sent += 1;
        }
        assert_eq!(sent, 1000 * 10);
        assert_eq!(s.rate_bps(), mean_rate_bps(10, 30));
    }

    #[test]
    fn opportunities_until_counts_every_period() {
        let t = Trace::from_ms(&[0, 3, 3, 10]).unwrap();
        // period k: 10k, 10k + 3 (twice), 10k + 10
        assert_eq!(t.opportunities_until(0), 1);
        assert_eq!(t.opportunities_until(3 * MS - 1), 1);
        assert_eq!(t.opportunities_until(3 * MS), 3);
        assert_eq!(t.opportunities_until(10 * MS), 5, "the last of period 0 and the first of period 1");
        assert_eq!(t.opportunities_until(1003 * MS), 100 * 4 + 3);
    }

    #[test]
    fn config_reverse_defaults_to_forward() {
        let c: TraceConfig = TraceConfig { fwd_ms: vec![1, 2], rev_ms: None };
        let [f, r] = c.traces().unwrap();
        assert!(Arc::ptr_eq(&f, &r));
        let c = TraceConfig { fwd_ms: vec![1, 2], rev_ms: Some(vec![0]) };
        assert!(c.traces().unwrap_err().starts_with("bottleneck.trace.rev_ms:"));
    }
}
