//! The receive window a Linux receiver advertises, and its autotuning (Linux 6.18,
//! net/ipv4/tcp_input.c and tcp_output.c, default sysctls):
//!
//! * The socket starts with `tcp_rmem[1]` = 128 KiB of receive buffer. The SYN-ACK offers the
//!   part of it the default scaling ratio (½, TCP_DEFAULT_SCALING_RATIO) turns into window,
//!   rounded down to whole segments: 65 160 bytes = 45 segments (`tcp_select_initial_window`).
//! * `window_clamp`, the most the receiver will ever offer, is the buffer times the scaling
//!   ratio measured on the first full segment (`tcp_measure_rcv_mss`: payload / skb truesize).
//!   The kernel backend's receiver measured 160/256 (`tcp:tcp_rcvbuf_grow` tracepoint on this
//!   machine's Linux 6.18 over TUN), so the clamp starts at 81 920 bytes.
//! * `rcv_ssthresh` is the window actually offered: every segment received grows it by two
//!   segments up to the clamp less what the out-of-order queue holds (`tcp_grow_window`), and
//!   each growth asks for an immediate ACK (`icsk_ack.quick |= 1`), so while the window opens
//!   every segment is acknowledged on its own.
//! * Once per receiver RTT the application's reads resize the buffer (dynamic right-sizing,
//!   `tcp_rcv_space_adjust` → `tcp_rcvbuf_grow`): if what was read in the last RTT, less what
//!   is still queued when the reader has copied its first segment, exceeds the last measure,
//!   the clamp becomes 2·copied, plus twice the relative growth of that (so the sender can
//!   double again in slow start), plus the span of the out-of-order queue — never
//!   less than before, never more than the scenario's `rwnd` (the largest window; the kernel backend
//!   sizes tcp_rmem so that tcp_rmem × ratio is that window).
//! * The receiver's RTT (`rcv_rtt_est`) comes from timestamp echoes (1 ms ticks, EWMA 1/8,
//!   `tcp_rcv_rtt_measure_ts`) and from the time one window takes to arrive (a minimum,
//!   `tcp_rcv_rtt_measure`); its first sample is the handshake's.
//! * The advertised right edge never moves left (`tcp_select_window`), and the window is
//!   rounded up to the window-scale unit (2^7 bytes for a 6 MiB buffer).
//!
//! * Every segment the out-of-order queue takes also runs `tcp_rcvbuf_grow` with the last
//!   measure (`tcp_data_queue_ofo`): the clamp covers 2·space plus the queue's span.
//!
//! Simplifications: the application reads everything at once, so only out-of-order data
//! occupies the buffer; no memory pressure; window-update ACKs sent from `tcp_cleanup_rbuf`
//! after a read are not modelled (the ACKs of arriving data carry the window).
use super::{ts_tick, MSS};
use crate::time::{Nanos, NS_PER_US};

/// sysctl tcp_rmem[2]'s default (6 MiB): the buffer an untouched host autotunes up to.
pub const RMEM_MAX_DEFAULT: u64 = 6 << 20;
/// The largest window such a host offers, tcp_win_from_space(tcp_rmem[2]) at the measured
/// scaling ratio: 3 932 160 bytes. The window cap when a scenario gives none.
pub const DEFAULT_WINDOW_CAP: u64 = (RMEM_MAX_DEFAULT * MEASURED_RATIO) >> RATIO_SHIFT;
/// sysctl tcp_rmem[1]: the receive buffer a socket starts with.
pub const RMEM_DEFAULT: u64 = 131_072;
/// TCP_RMEM_TO_WIN_SCALE: scaling ratios are in 1/256.
const RATIO_SHIFT: u32 = 8;
/// TCP_DEFAULT_SCALING_RATIO (½): the ratio before any segment has been measured.
const DEFAULT_RATIO: u64 = 1 << (RATIO_SHIFT - 1);
/// The scaling ratio the kernel backend's receiver measures (see the module comment).
pub const MEASURED_RATIO: u64 = 160;
/// Window-scale unit: a 6 MiB buffer needs rcv_wscale 7.
const WSCALE_UNIT: u64 = 1 << 7;

const MSS_B: u64 = MSS as u64;

#[derive(Clone, Debug)]
pub struct RcvWindow {
    /// The largest window the scenario allows (`rwnd`, bytes).
    cap: u64,
    /// `window_clamp` (bytes of window).
    clamp: u64,
    /// `rcv_ssthresh` (bytes).
    ssthresh: u64,
    /// `rcv_wnd`: the window in the last ACK (bytes), counted from that ACK's rcv_nxt.
    rcv_wnd: u64,
    /// `rcvq_space`: bytes read in the RTT of the last growth, and where/when this RTT began
    /// (segment number, time; None before the first data).
    space: u64,
    space_seq: u64,
    space_time: Option<Nanos>,
    /// `rcv_rtt_est.rtt_us` (µs << 3; 0 = no sample) and the last TSecr sampled.
    rtt_us8: u64,
    last_tsecr: u64,
    /// `rcv_rtt_est.seq/time` of the window-based measure.
    rtt_seq: u64,
    rtt_time: Option<Nanos>,
}

impl RcvWindow {
    /// A connection whose window may grow to `cap_bytes`.
    pub fn new(cap_bytes: u64) -> Self {
        let initial = ((RMEM_DEFAULT * DEFAULT_RATIO) >> RATIO_SHIFT) / MSS_B * MSS_B;
        let initial = initial.min(cap_bytes);
        RcvWindow {
            cap: cap_bytes,
            clamp: ((RMEM_DEFAULT * MEASURED_RATIO) >> RATIO_SHIFT).min(cap_bytes),
            ssthresh: initial,
            rcv_wnd: initial,
            // tcp_init_buffer_space: min(rcv_wnd, TCP_INIT_CWND segments).
            space: initial.min(super::INIT_CWND as u64 * MSS_B),
            space_seq: 0,
            space_time: None,
            rtt_us8: 0,
            last_tsecr: 0,
            rtt_seq: 0,
            rtt_time: None,
        }
    }

    /// The window the SYN-ACK offers, in bytes.
    pub fn initial_bytes(&self) -> u64 {
        self.rcv_wnd
    }

    /// `window_clamp` in bytes (diagnostics and tests).
    pub fn clamp_bytes(&self) -> u64 {
        self.clamp
    }

    /// The receiver's RTT estimate in µs (0 = none).
    pub fn rtt_us(&self) -> u64 {
        self.rtt_us8 >> 3
    }

    /// `tcp_rcv_rtt_update`: an EWMA of 1/8 for timestamp samples, a minimum for window ones.
    fn rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let m = sample_us.max(1);
        if self.rtt_us8 == 0 {
            self.rtt_us8 = m << 3;
        } else if !win_dep {
            self.rtt_us8 = self.rtt_us8 - (self.rtt_us8 >> 3) + m;
        } else if m << 3 < self.rtt_us8 {
            self.rtt_us8 = m << 3;
        }
    }

    /// The handshake's sample: the first data segments echo the SYN-ACK's TSval.
    pub fn handshake_rtt(&mut self, rtt: Nanos) {
        let ticks = ts_tick(rtt) - ts_tick(0);
        if ticks > 0 {
            self.rtt_update(ticks * 1000, false);
        }
    }

    /// `tcp_rcv_rtt_measure_ts`: a full segment echoing a TSecr not sampled before.
    pub fn on_tsecr(&mut self, now: Nanos, tsecr: u64) {
        if tsecr == 0 || tsecr == self.last_tsecr {
            return;
        }
        self.last_tsecr = tsecr;
        let ticks = ts_tick(now).saturating_sub(tsecr);
        if ticks > 0 {
            self.rtt_update(ticks * 1000, false);
        }
    }

    /// Window room left for `ooo_segs` queued out of order: the clamp less their bytes
    /// (`tcp_space`, with the application having read everything in order).
    fn free(&self, ooo_segs: u64) -> u64 {
        self.clamp.saturating_sub(ooo_segs * MSS_B)
    }

    /// `tcp_grow_window` for one received (queued) segment; true when rcv_ssthresh grew,
    /// which asks for a quick ACK.
    pub fn grow(&mut self, ooo_segs: u64) -> bool {
        let room = self.clamp.min(self.free(ooo_segs)).saturating_sub(self.ssthresh);
        if room == 0 {
            return false;
        }
        self.ssthresh += room.min(2 * MSS_B);
        true
    }

    /// In-order data arrived and the application reads it (`tcp_event_data_recv`'s
    /// `tcp_rcv_rtt_measure`, then `tcp_rcv_space_adjust`). `rcv_nxt` is the new next expected
    /// segment; `first_end` the end of the first segment the reader copies — the one that just
    /// arrived (the kernel backend's TUN delivers one segment per skb, and such skbs do not
    /// coalesce); `ooo_end` the end of the out-of-order queue, if any.
    ///
    /// `tcp_recvmsg` calls `tcp_rcv_space_adjust` after each skb it copies, so once an RTT has
    /// passed the measure is taken right after the first one, with the rest still queued: Linux
    /// 6.18 counts what was read since the last measure *less* what is still in the receive
    /// queue ("tcp: add receive queue awareness in tcp_rcv_space_adjust()"). When a
    /// retransmission fills a hole and releases many segments at once, that difference is small
    /// or negative and the buffer does not grow; the new measure starts at the reader's position.
    pub fn on_read(&mut self, now: Nanos, first_end: u64, rcv_nxt: u64, ooo_end: Option<u64>) {
        // Window-based RTT: the time for one advertised window to arrive.
        match self.rtt_time {
            None => {
                self.rtt_seq = rcv_nxt * MSS_B + self.rcv_wnd;
                self.rtt_time = Some(now);
            }
            Some(t) if rcv_nxt * MSS_B >= self.rtt_seq => {
                self.rtt_update((now - t) / NS_PER_US, true);
                self.rtt_seq = rcv_nxt * MSS_B + self.rcv_wnd;
                self.rtt_time = Some(now);
            }
            _ => {}
        }
        let Some(start) = self.space_time else {
            // tcp_init_buffer_space: the first RTT starts when the connection is set up.
            self.space_time = Some(now);
            return;
        };
        let rtt_ns = (self.rtt_us8 >> 3) * NS_PER_US;
        if self.rtt_us8 == 0 || now - start < rtt_ns {
            return;
        }
        let read = first_end - self.space_seq;
        let inq = rcv_nxt - first_end;
        if read > inq && (read - inq) * MSS_B > self.space {
            self.rcvbuf_grow((read - inq) * MSS_B, rcv_nxt, ooo_end);
        }
        self.space_seq = first_end;
        self.space_time = Some(now);
    }

    /// `tcp_data_queue_ofo` ends with `tcp_rcvbuf_grow(sk, rcvq_space.space)` for every
    /// segment it handles (queued or a duplicate): with the measure unchanged there is no
    /// slow-start growth, but the clamp must cover twice the last RTT's reads plus the span of
    /// the out-of-order queue, so holes do not shut the window while in-order reads stall.
    pub fn on_ofo(&mut self, rcv_nxt: u64, ooo_end: u64) {
        self.rcvbuf_grow(self.space, rcv_nxt, Some(ooo_end));
    }

    /// `tcp_rcvbuf_grow(sk, newval)` (Linux 6.18): "DRS is always one RTT late", so offer
    /// twice `newval`, and in slow start twice more its growth relative to the last measure;
    /// plus the out-of-order span. The clamp never goes down.
    fn rcvbuf_grow(&mut self, newval: u64, rcv_nxt: u64, ooo_end: Option<u64>) {
        let old = self.space;
        self.space = newval;
        let mut rcvwin = newval << 1;
        let grow = rcvwin * (newval - old) / old;
        rcvwin += grow << 1;
        if let Some(end) = ooo_end {
            rcvwin += (end - rcv_nxt) * MSS_B;
        }
        let clamp = rcvwin.min(self.cap);
        if clamp > self.clamp {
            self.clamp = clamp;
        }
    }

    /// `__tcp_select_window`: the window the free space allows now (bytes, before the
    /// never-shrink rule), and whether quick-ACK mode must end (free space below half the clamp).
    fn offer(&self, ooo_segs: u64) -> (u64, bool) {
        let free = self.free(ooo_segs) / WSCALE_UNIT * WSCALE_UNIT;
        let end_quick = free < self.clamp / 2;
        (free.min(self.ssthresh).div_ceil(WSCALE_UNIT) * WSCALE_UNIT, end_quick)
    }

    /// `__tcp_ack_snd_check`'s "right edge of window advances far enough":
    /// `__tcp_select_window() >= rcv_wnd`, and whether quick-ACK mode must end (the same call
    /// clears `icsk_ack.quick`). With the ssthresh at the clamp, any out-of-order data queued
    /// makes the free space, so the offer, smaller than the last window: false.
    pub fn advances(&self, ooo_segs: u64) -> (bool, bool) {
        let (win, end_quick) = self.offer(ooo_segs);
        (win >= self.rcv_wnd, end_quick)
    }

    /// `tcp_select_window` for an ACK carrying `rcv_nxt`, the previous ACK having carried
    /// `rcv_wup`: the window in bytes, and whether quick-ACK mode must end (free space below
    /// half the clamp, `__tcp_select_window`).
    pub fn select(&mut self, rcv_nxt: u64, rcv_wup: u64, ooo_segs: u64) -> (u32, bool) {
        let (mut win, end_quick) = self.offer(ooo_segs);
        // Never shrink the offered window (RFC 7323 §2.4; tcp_select_window).
        let cur = (rcv_wup * MSS_B + self.rcv_wnd).saturating_sub(rcv_nxt * MSS_B);
        if win < cur {
            win = cur.div_ceil(WSCALE_UNIT) * WSCALE_UNIT;
        }
        self.rcv_wnd = win;
        (win.min(u32::MAX as u64) as u32, end_quick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NS_PER_MS;

    /// The SYN-ACK window of a Linux 6.x receiver with default sysctls: 65 160 bytes.
    #[test]
    fn initial_window_is_linux_syn_ack_window() {
        let w = RcvWindow::new(6 << 20);
        assert_eq!(w.initial_bytes(), 65_160);
        assert_eq!(w.initial_bytes() / MSS_B, 45);
        assert_eq!(w.clamp_bytes(), 81_920);
        // A smaller rwnd caps both.
        let w = RcvWindow::new(20 * MSS_B);
        assert_eq!((w.initial_bytes(), w.clamp_bytes()), (20 * MSS_B, 20 * MSS_B));
    }

    /// rcv_ssthresh grows two segments per segment received, up to the clamp, and the
    /// out-of-order queue's bytes come off the room.
    #[test]
    fn ssthresh_grows_two_segments_per_segment_to_the_clamp() {
        let mut w = RcvWindow::new(6 << 20);
        let mut grew = 0;
        while w.grow(0) {
            grew += 1;
        }
        // 65 160 → 81 920 bytes in steps of 2896: 6 steps (the last one partial).
        assert_eq!(grew, 6);
        assert_eq!(w.ssthresh, 81_920);
        let (win, end_quick) = w.select(0, 0, 0);
        assert_eq!(win, 81_920);
        assert!(!end_quick);
        // 30 segments out of order: the free space (81 920 - 43 440) is below half the clamp.
        let (win, end_quick) = w.select(0, 0, 30);
        assert_eq!(win, 81_920, "the right edge never moves left");
        assert!(end_quick);
        assert!(!w.grow(30));
    }

    /// Dynamic right-sizing as the kernel traced it (tcp:tcp_rcvbuf_grow, CUBIC, 100 ms, 50
    /// Mbit/s): 18 segments read in an RTT after 12 gives 2·18 + 2·(2·18·(18−12)/12) = 72
    /// segments of clamp; then 40 after 18 gives 80 + 2·97.8 = 275.6 segments (the kernel's
    /// window_clamp 104 255 and 399 003 bytes, 72.0 and 275.6 segments).
    #[test]
    fn drs_follows_linux_rcvbuf_grow() {
        let mut w = RcvWindow::new(6 << 20);
        w.handshake_rtt(100 * NS_PER_MS);
        assert_eq!(w.rtt_us(), 100_000);
        w.space = 12 * MSS_B;
        w.on_read(0, 0, 0, None);
        // Within the RTT nothing changes.
        w.on_read(99 * NS_PER_MS, 18, 18, None);
        assert_eq!(w.clamp_bytes(), 81_920);
        w.on_read(100 * NS_PER_MS, 18, 18, None);
        assert_eq!(w.clamp_bytes(), 72 * MSS_B);
        assert!((72 * MSS_B).abs_diff(104_255) <= 2);
        w.on_read(200 * NS_PER_MS, 58, 58, None);
        let expect = 80 * MSS_B + 2 * (80 * MSS_B * 22 / 18);
        assert_eq!(w.clamp_bytes(), expect);
        assert!(expect.abs_diff(399_003) <= 2, "the kernel's clamp, to its byte rounding");
        // Reading no more than last time leaves the clamp alone; an out-of-order span adds.
        w.on_read(300 * NS_PER_MS, 98, 98, None);
        assert_eq!(w.clamp_bytes(), expect);
        // Capped at rwnd.
        let mut w = RcvWindow::new(100 * MSS_B);
        w.handshake_rtt(100 * NS_PER_MS);
        w.on_read(0, 0, 0, None);
        w.on_read(100 * NS_PER_MS, 400, 400, Some(500));
        assert_eq!(w.clamp_bytes(), 100 * MSS_B);
    }

    /// Linux 6.18's measure counts what was read less what is still queued, taken after the
    /// reader copies the first readable segment. A hole filled by a retransmission releases a
    /// burst: the kernel's trace (BBR, 50 ms, 5 % loss) shows copied 204 168 with inq 8 688
    /// giving space 195 480; a burst as large as what was read does not grow the buffer at all,
    /// and the next measure starts at the reader, so the burst counts once it has been read.
    #[test]
    fn drs_does_not_count_what_is_still_queued() {
        let mut w = RcvWindow::new(6 << 20);
        w.handshake_rtt(50 * NS_PER_MS);
        w.space = 20 * MSS_B;
        w.on_read(0, 0, 0, None);
        let clamp0 = w.clamp_bytes();
        // One RTT later a retransmission fills segment 30: segments 31..90 come with it.
        w.on_read(50 * NS_PER_MS, 31, 90, None);
        assert_eq!(w.clamp_bytes(), clamp0, "31 read, 59 queued: no growth");
        assert_eq!((w.space, w.space_seq), (20 * MSS_B, 31));
        // The next RTT, one segment at a time: 90 - 31 + 20 = 79 read since the last measure.
        w.on_read(100 * NS_PER_MS, 110, 110, None);
        assert_eq!(w.space, 79 * MSS_B);
        // The arithmetic of the kernel's trace, in bytes: 204 168 copied less 8 688 queued.
        let (copied, inq, space) = (204_168u64, 8_688u64, 83_408u64);
        assert_eq!(copied - inq, 195_480);
        let rcvwin = 2 * (copied - inq);
        let grown = rcvwin + 2 * (rcvwin * (copied - inq - space) / space) + 159_280;
        assert!(grown.abs_diff(1_600_873) <= 16, "the kernel's next window_clamp, to rounding");
    }

    /// Every segment queued out of order runs `tcp_rcvbuf_grow` with the last measure: the clamp
    /// covers twice that measure plus the out-of-order span, and never goes down.
    #[test]
    fn out_of_order_data_grows_the_clamp_by_its_span() {
        let mut w = RcvWindow::new(6 << 20);
        w.space = 100 * MSS_B;
        let before = w.clamp_bytes();
        w.on_ofo(1_000, 1_030);
        assert_eq!(before, 81_920);
        assert_eq!(w.clamp_bytes(), 230 * MSS_B);
        assert_eq!(w.space, 100 * MSS_B, "the measure is unchanged");
        w.on_ofo(1_000, 1_010);
        assert_eq!(w.clamp_bytes(), 230 * MSS_B, "never less than before");
        let mut small = RcvWindow::new(150 * MSS_B);
        small.space = 100 * MSS_B;
        small.on_ofo(0, 400);
        assert_eq!(small.clamp_bytes(), 150 * MSS_B, "capped at rwnd");
    }

    /// Timestamp samples are an EWMA of 1/8 in 1 ms ticks; a TSecr is sampled once.
    #[test]
    fn receiver_rtt_from_timestamp_echoes() {
        let mut w = RcvWindow::new(6 << 20);
        w.handshake_rtt(50 * NS_PER_MS);
        assert_eq!(w.rtt_us(), 50_000);
        let now = 1_000 * NS_PER_MS;
        w.on_tsecr(now, ts_tick(now - 130 * NS_PER_MS));
        assert_eq!(w.rtt_us(), 50_000 + 80_000 / 8);
        w.on_tsecr(now + NS_PER_MS, ts_tick(now - 130 * NS_PER_MS));
        assert_eq!(w.rtt_us(), 60_000, "the same TSecr is not sampled twice");
    }
}
