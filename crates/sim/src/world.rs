//! The event loop: hosts, links and timers of one run (the report at the end is assembled in
//! report/assemble.rs).
use crate::cc;
use crate::config::SimConfig;
use crate::event::EventQueue;
use crate::link::served::Next;
use crate::link::wifi::{Lost, Released};
use crate::link::Fate;
use crate::metrics::Histogram;
use crate::pcap::PcapWriter;
use crate::report::{LinkSeries, Series, SimReport};
use crate::rng::stream_seed;
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::{Sender, SenderParams};
use crate::tcp::{Pkt, PktKind, MSS};
use crate::time::{secs, tx_time, Nanos};
use crate::topology::{Dest, Dumbbell, BN_FWD, BN_REV, PING_FLOW};
use ccbench_wifi::{Dir, DropReason};
use std::collections::VecDeque;

/// Events between two polls of a run's abort hook (a few tens of milliseconds of work).
pub const POLL_EVENTS: u64 = 1 << 18;
/// The error of a run stopped by its abort hook.
pub const ABORTED: &str = "run aborted";

/// ICMP echo of 56 data bytes, as `ping` sends by default: 84 IP bytes.
const PING_BYTES: u32 = 84;

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// The head packet of a FIFO link's delivery pipe arrives at the far end.
    PipeHead(u32),
    /// A packet leaving a non-FIFO (reordering) link arrives at the far end.
    Arrive {
        link: u32,
        pkt: Pkt,
    },
    /// A packet reaches a link whose queue is served at dequeue time (link/served.rs).
    LinkEnqueue {
        link: u32,
        pkt: Pkt,
    },
    /// A served link's transmitter finished a packet (or a paced flow may send): dequeue.
    LinkTxDone(u32),
    /// The Wi-Fi hop asked to be run now (`Medium::next_event`).
    Medium,
    Start(u32),
    SenderTimer(u32),
    PacingWake(u32),
    /// The sending host's fq qdisc lets a packet released ahead of time leave (EDT).
    HostDepart(Pkt),
    DelackTimer(u32),
    Sample,
    PingSend,
}

/// What the event loop asks of a sender.
enum SenderCall<'a> {
    Start,
    Timer,
    Transmit,
    Ack(&'a Pkt),
}

/// A timer event is current only if it is the one the flow last scheduled (later
/// re-schedules leave superseded events in the queue); consume it if so.
fn take_due(slot: &mut Option<Nanos>, now: Nanos) -> bool {
    if *slot == Some(now) {
        *slot = None;
        true
    } else {
        false
    }
}

pub(crate) struct FlowState {
    pub(crate) sender: Sender,
    pub(crate) receiver: Receiver,
    pub(crate) start: Nanos,
    started: bool,
    timer_at: Option<Nanos>,
    pace_at: Option<Nanos>,
    delack_at: Option<Nanos>,
    pub(crate) dropped: u64,
    last_sample_bytes: u64,
    /// The flow's data crosses the reverse bottleneck link (sender on the right host).
    pub(crate) reverse: bool,
}

/// The packet is of the `ack` kind of the scenario's `impair` (a pure ACK or a ping reply);
/// data segments and ping requests are of the `data` kind.
#[inline(always)]
fn ack_kind(pkt: &Pkt) -> bool {
    matches!(pkt.kind, PktKind::Ack | PktKind::PingResp)
}

/// SYN and SYN-ACK with options: 20 IP + 40 TCP bytes.
const SYN_BYTES: u32 = 60;

/// Base RTT plus the serialisation of a SYN forward and a SYN-ACK back on every rate-limited
/// link of the path. Jitter is not applied (the handshake sees the base path).
fn handshake_rtt_ns(cfg: &SimConfig) -> Nanos {
    let base = cfg.bottleneck.rtt_ns + 4 * cfg.access.delay_ns;
    let mut ser = 2 * tx_time(SYN_BYTES, cfg.bottleneck.rate_bps);
    if let Some(r) = cfg.access.rate_bps {
        ser += 4 * tx_time(SYN_BYTES, r);
    }
    base + ser
}

/// Whether a packet of a new connection waits behind the bottleneck's whole backlog: true for
/// single-queue disciplines, false for the fair-queueing ones (a new flow's first packet is served
/// in its own queue at once).
fn fifo_backlog(aqm: &str) -> bool {
    !matches!(aqm, "fq" | "fq_codel")
}

/// The 50th and 95th percentiles (ms, nearest rank as `Histogram::quantile`) of the ping RTTs
/// (µs) received in one sample interval, which are cleared; None without a reply.
fn interval_percentiles_ms(rtts_us: &mut Vec<u64>) -> (Option<f64>, Option<f64>) {
    if rtts_us.is_empty() {
        return (None, None);
    }
    rtts_us.sort_unstable();
    let n = rtts_us.len();
    let at = |q: f64| rtts_us[((q * n as f64).ceil() as usize).clamp(1, n) - 1] as f64 / 1000.0;
    let out = (Some(at(0.50)), Some(at(0.95)));
    rtts_us.clear();
    out
}

/// One run's hosts, links, flows and pending events. The fields the report reads at the end
/// (report/assemble.rs) are crate-visible.
pub struct World<'a> {
    pub(crate) cfg: &'a SimConfig,
    q: EventQueue<Ev>,
    pub(crate) net: Dumbbell,
    pipes: Vec<VecDeque<(Nanos, Pkt)>>,
    pub(crate) flows: Vec<FlowState>,
    now: Nanos,
    pub(crate) end: Nanos,
    buf: Vec<Pkt>,
    /// Scratch for the drops of served queues.
    dropped_buf: Vec<Pkt>,
    pub(crate) ping_hist: Histogram,
    /// RTT (µs) of the latest ping reply since the last sample.
    ping_last_us: Option<u64>,
    /// RTTs (µs) of every ping reply since the last sample (for the interval's percentiles).
    ping_interval_us: Vec<u64>,
    pub(crate) series: Series,
    pub(crate) link_series: LinkSeries,
    /// Scratch for what the Wi-Fi hop released and lost.
    wifi_released: Vec<Released>,
    wifi_lost: Vec<Lost>,
    /// Scenario `[output] pcap`: flow 0's data as it leaves its sender and ACKs as they reach it.
    pcap: Option<PcapWriter>,
}

/// The flow whose packets `[output] pcap` captures.
const PCAP_FLOW: usize = 0;

/// The station that transmits onto bottleneck link `l` (BN_FWD or BN_REV).
#[inline]
fn station_of(l: u32) -> Dir {
    if l == BN_FWD {
        Dir::Fwd
    } else {
        Dir::Rev
    }
}

/// The bottleneck link whose delay line follows station `dir`'s transmissions.
#[inline]
fn link_of(dir: Dir) -> u32 {
    match dir {
        Dir::Fwd => BN_FWD,
        Dir::Rev => BN_REV,
    }
}

impl<'a> World<'a> {
    pub fn new(cfg: &'a SimConfig) -> Self {
        let net = Dumbbell::build(cfg);
        let pipes = (0..net.links.len()).map(|_| VecDeque::new()).collect();
        let flows = cfg
            .flows
            .iter()
            .map(|f| {
                let total_segs = f.size_bytes.map(|b| b.div_ceil(MSS as u64).max(1));
                let algo =
                    cc::make(&f.cc, stream_seed(cfg.seed, &format!("cc/{}", f.id))).expect("validated algorithm");
                // TCP_CONG_NEEDS_ECN (DCTCP): ECN is negotiated whatever the scenario says, and
                // the receiving host, running the same algorithm, echoes CE its way.
                let needs_ecn = algo.needs_ecn();
                let ecn = f.ecn || needs_ecn;
                let mut receiver = Receiver::new(f.id, total_segs, f.timestamps).with_rwnd(f.rwnd_bytes);
                // BBRv3 (bbr_precise_ece_ack): on an ECN connection the receiving host echoes
                // CE per segment the same way as DCTCP's.
                let precise_echo = needs_ecn || (ecn && algo.wants_precise_ce_echo());
                receiver = if algo.needs_accecn() {
                    receiver.with_accecn()
                } else if precise_echo {
                    receiver.with_dctcp_ecn()
                } else {
                    receiver.with_ecn(ecn)
                };
                receiver.set_rtt(handshake_rtt_ns(cfg));
                FlowState {
                    sender: Sender::new(
                        SenderParams {
                            flow: f.id,
                            total_segs,
                            // The SYN-ACK's window; the receiver's ACKs open it from there.
                            rwnd_segs: receiver.initial_window_bytes() / MSS as u64,
                            pacing: f.pacing,
                            handshake_rtt_us: Some(handshake_rtt_ns(cfg) / 1000),
                            timestamps: f.timestamps,
                            ecn,
                        },
                        algo,
                    ),
                    receiver,
                    start: f.start_ns,
                    started: false,
                    timer_at: None,
                    pace_at: None,
                    delack_at: None,
                    dropped: 0,
                    last_sample_bytes: 0,
                    reverse: !f.direction.is_forward(),
                }
            })
            .collect();
        World {
            cfg,
            q: EventQueue::new(),
            net,
            pipes,
            flows,
            now: 0,
            end: cfg.duration_ns,
            buf: Vec::with_capacity(64),
            dropped_buf: Vec::new(),
            ping_hist: Histogram::default(),
            ping_last_us: None,
            ping_interval_us: Vec::new(),
            series: Series::default(),
            link_series: LinkSeries::default(),
            wifi_released: Vec::new(),
            wifi_lost: Vec::new(),
            pcap: None,
        }
    }

    /// Run to the end and report. `abort` is polled every `POLL_EVENTS` events (and nowhere
    /// else, so a run costs nothing extra between polls); when it returns true the run stops
    /// with `Err(ABORTED)`. A run that reaches `cfg.max_events` events stops with an error
    /// naming the cap.
    pub fn run(mut self, abort: &mut dyn FnMut() -> bool) -> Result<SimReport, String> {
        if let Some(path) = &self.cfg.pcap_path {
            self.pcap = Some(PcapWriter::create(path)?);
        }
        for f in 0..self.flows.len() {
            let s = self.flows[f].start;
            if s < self.end {
                self.q.push(s, Ev::Start(f as u32));
            }
        }
        if self.cfg.sample_interval_ns > 0 {
            self.q.push(self.cfg.sample_interval_ns.min(self.end), Ev::Sample);
        }
        if self.cfg.probe.ping_interval_ns > 0 {
            self.q.push(0, Ev::PingSend);
        }
        let max_events = self.cfg.max_events;
        // One comparison per event: the next poll or the cap, whichever comes first.
        let mut next_check = POLL_EVENTS.min(max_events);
        while let Some(t) = self.q.peek_time() {
            if t > self.end {
                break;
            }
            if self.q.processed() >= next_check {
                if self.q.processed() >= max_events {
                    return Err(format!(
                        "run exceeded {max_events} events (the simulator's per-run cap) at \
                         t = {:.3} s of {:.3} s; shorten the duration or lower the rate or \
                         the number of flows",
                        secs(self.now),
                        secs(self.end)
                    ));
                }
                if abort() {
                    return Err(ABORTED.into());
                }
                next_check = (next_check + POLL_EVENTS).min(max_events);
            }
            let (t, ev) = self.q.pop().unwrap();
            self.now = t;
            self.handle(ev);
        }
        self.now = self.end;
        if let Some(w) = self.pcap.take() {
            w.finish()?;
        }
        Ok(self.into_report())
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::PipeHead(l) => {
                let now = self.now;
                while let Some(&(at, pkt)) = self.pipes[l as usize].front() {
                    if at > now {
                        self.q.push(at, Ev::PipeHead(l));
                        break;
                    }
                    self.pipes[l as usize].pop_front();
                    self.net.links[l as usize].departed += 1;
                    let dest = self.net.next(l, &pkt);
                    self.dispatch(dest, pkt);
                }
            }
            Ev::Arrive { link, pkt } => {
                self.net.links[link as usize].departed += 1;
                let dest = self.net.next(link, &pkt);
                self.dispatch(dest, pkt);
            }
            Ev::LinkEnqueue { link, pkt } if self.is_wifi_link(link) => self.enqueue_wifi(link, pkt),
            Ev::LinkEnqueue { link, pkt } => self.enqueue_served(link, pkt),
            Ev::Medium => {
                let now = self.now;
                let hop = self.net.wifi.as_mut().expect("wifi hop");
                if take_due(&mut hop.event_at, now) {
                    self.run_wifi();
                }
            }
            Ev::LinkTxDone(l) => {
                let now = self.now;
                if self.net.links[l as usize].served().is_some_and(|q| q.take_tx_event(now)) {
                    self.serve(l);
                }
            }
            Ev::Start(f) => {
                self.handshake_at_start(f as usize);
                self.flows[f as usize].started = true;
                self.drive_sender(f as usize, SenderCall::Start);
            }
            Ev::SenderTimer(f) => {
                if take_due(&mut self.flows[f as usize].timer_at, self.now) {
                    self.drive_sender(f as usize, SenderCall::Timer);
                }
            }
            Ev::PacingWake(f) => {
                if take_due(&mut self.flows[f as usize].pace_at, self.now) {
                    self.drive_sender(f as usize, SenderCall::Transmit);
                }
            }
            Ev::HostDepart(pkt) => self.leave_host(pkt),
            Ev::DelackTimer(f) => {
                let fi = f as usize;
                if !take_due(&mut self.flows[fi].delack_at, self.now) {
                    return;
                }
                let now = self.now;
                if let Some(ack) = self.flows[fi].receiver.on_delack_timer(now) {
                    self.send_ack(fi, ack);
                }
                self.sync_flow(fi);
            }
            Ev::Sample => self.sample(),
            Ev::PingSend => {
                let pkt = Pkt {
                    flow: PING_FLOW,
                    kind: PktKind::PingReq,
                    bytes: PING_BYTES,
                    seq: 0,
                    ts: self.now,
                    tsecr: 0,
                    wnd: 0,
                    sack: [(0, 0); 3],
                    nsack: 0,
                    dsack: false,
                    delayed: false,
                    // An ICMP echo is not ECN-capable.
                    ect: false,
                    ce: false,
                    ece: false,
                    cwr: false,
                    ect1: false,
                    ace: 0,
                    depart_ns: 0,
                };
                self.send_fwd(pkt);
                self.q.push(self.now + self.cfg.probe.ping_interval_ns, Ev::PingSend);
            }
        }
    }

    /// A packet arrives at `dest` at the current time. At a host, data goes to its flow's
    /// receiver and ACKs to its flow's sender whichever side the flow runs on (a forward flow's
    /// receiver is on the right, a reverse flow's on the left).
    fn dispatch(&mut self, dest: Dest, pkt: Pkt) {
        match dest {
            Dest::Link(l) => self.offer(l, self.now, pkt),
            Dest::RightHost | Dest::LeftHost => match pkt.kind {
                PktKind::Data => {
                    let fi = pkt.flow as usize;
                    debug_assert_eq!(dest == Dest::RightHost, !self.flows[fi].reverse, "data at the wrong host");
                    let now = self.now;
                    let ack = self.flows[fi].receiver.on_data(now, &pkt);
                    if let Some(early) = self.flows[fi].receiver.take_early_ack() {
                        self.send_ack(fi, early);
                    }
                    if let Some(ack) = ack {
                        self.send_ack(fi, ack);
                    }
                    self.sync_flow(fi);
                }
                PktKind::Ack => {
                    if pkt.flow as usize == PCAP_FLOW {
                        if let Some(w) = self.pcap.as_mut() {
                            w.record(self.now, &pkt);
                        }
                    }
                    debug_assert_eq!(
                        dest == Dest::LeftHost,
                        !self.flows[pkt.flow as usize].reverse,
                        "ACK at the wrong host"
                    );
                    self.drive_sender(pkt.flow as usize, SenderCall::Ack(&pkt));
                }
                PktKind::PingReq => {
                    debug_assert_eq!(dest, Dest::RightHost, "ping requests travel forward");
                    let mut resp = pkt;
                    resp.kind = PktKind::PingResp;
                    self.send_rev(resp);
                }
                PktKind::PingResp => {
                    debug_assert_eq!(dest, Dest::LeftHost, "ping replies travel backward");
                    let rtt_us = (self.now - pkt.ts) / 1000;
                    self.ping_hist.record(rtt_us);
                    self.ping_last_us = Some(rtt_us);
                    self.ping_interval_us.push(rtt_us);
                }
            },
        }
    }

    /// Call the sender, forward the packets it sent and re-sync the flow's timers.
    fn drive_sender(&mut self, fi: usize, call: SenderCall) {
        let now = self.now;
        let sender = &mut self.flows[fi].sender;
        let out = match call {
            SenderCall::Start => sender.start(now),
            SenderCall::Timer => sender.on_timer(now),
            SenderCall::Transmit => sender.transmit(now),
            SenderCall::Ack(ack) => sender.on_ack(now, ack),
        };
        self.buf.clear();
        self.buf.extend_from_slice(out);
        let buf = std::mem::take(&mut self.buf);
        for &p in &buf {
            // A packet stamped with a later departure waits in the host's fq until then.
            if p.depart_ns > now {
                self.q.push(p.depart_ns, Ev::HostDepart(p));
            } else {
                self.leave_host(p);
            }
        }
        self.buf = buf;
        self.sync_flow(fi);
    }

    /// A sender's packet leaves its host now (recorded if `[output] pcap` captures its flow).
    fn leave_host(&mut self, pkt: Pkt) {
        let fi = pkt.flow as usize;
        if fi == PCAP_FLOW {
            if let Some(w) = self.pcap.as_mut() {
                w.record(self.now, &pkt);
            }
        }
        if self.flows[fi].reverse {
            self.send_rev(pkt);
        } else {
            self.send_fwd(pkt);
        }
    }

    /// Send flow `fi`'s receiver's ACK back towards its sender.
    fn send_ack(&mut self, fi: usize, ack: Pkt) {
        if self.flows[fi].reverse {
            self.send_fwd(ack);
        } else {
            self.send_rev(ack);
        }
    }

    /// A packet leaves the left host.
    fn send_fwd(&mut self, pkt: Pkt) {
        let (l, d) = self.net.fwd_entry(&pkt);
        self.offer(l, self.now + d, pkt);
    }

    /// A packet leaves the right host.
    fn send_rev(&mut self, pkt: Pkt) {
        let (l, d) = self.net.rev_entry(&pkt);
        self.offer(l, self.now + d, pkt);
    }

    /// Offer a packet to link `l`, arriving at time `at`.
    fn offer(&mut self, l: u32, at: Nanos, pkt: Pkt) {
        let wifi = self.is_wifi_link(l);
        let link = &mut self.net.links[l as usize];
        if wifi || link.is_served() {
            // A served queue decides at dequeue, so it takes the packet at its real arrival.
            link.arrived += 1;
            if at > self.now {
                self.q.push(at, Ev::LinkEnqueue { link: l, pkt });
            } else if wifi {
                self.enqueue_wifi(l, pkt);
            } else {
                self.enqueue_served(l, pkt);
            }
            return;
        }
        let fate = link.offer(at, pkt.bytes, ack_kind(&pkt));
        self.after_link(l, fate, pkt);
    }

    /// A packet arrives now at served link `l`: a transmission due now starts first (as the
    /// fast path counts a packet whose turn has come as gone), then the packet is enqueued and
    /// the transmitter, if idle, takes the next one.
    fn enqueue_served(&mut self, l: u32, pkt: Pkt) {
        self.serve(l);
        let now = self.now;
        let q = self.net.links[l as usize].served().expect("served link");
        q.enqueue(now, pkt);
        self.count_served_drops(l);
        self.serve(l);
    }

    /// If served link `l`'s transmitter is free, start its next packet (or arm the wake-up
    /// of a paced flow).
    fn serve(&mut self, l: u32) {
        let now = self.now;
        let link = &mut self.net.links[l as usize];
        let q = link.served().expect("served link");
        match q.next(now) {
            Next::Send { mut pkt, tx_end, sojourn, ce } => {
                // The discipline CE-marked an ECT packet instead of dropping it (counted by the
                // queue as ce_marked): the mark travels on to the receiver (RFC 3168 §5).
                if ce {
                    pkt.ce = true;
                }
                self.q.push(tx_end, Ev::LinkTxDone(l));
                let fate = link.sent_from_queue(sojourn, tx_end, ack_kind(&pkt));
                self.after_link(l, fate, pkt);
            }
            Next::Wake(t) => self.q.push(t, Ev::LinkTxDone(l)),
            Next::Idle => {}
        }
        self.count_served_drops(l);
    }

    /// Link `l` is a bottleneck link whose queue is the Wi-Fi hop's station.
    #[inline(always)]
    fn is_wifi_link(&self, l: u32) -> bool {
        l <= BN_REV && self.net.wifi.is_some()
    }

    /// A packet arrives now at the station that transmits onto bottleneck link `l`: the
    /// medium first runs up to now (a transmission due now starts first, as for served
    /// queues), then takes the packet; a refused one is a queue drop.
    fn enqueue_wifi(&mut self, l: u32, pkt: Pkt) {
        let now = self.now;
        if self.net.wifi.as_ref().and_then(|h| h.next_event()).is_some_and(|t| t <= now) {
            self.run_wifi();
        }
        let hop = self.net.wifi.as_mut().expect("wifi hop");
        if let Some(p) = hop.enqueue(now, station_of(l), pkt) {
            self.net.links[l as usize].dropped_queue += 1;
            if p.kind == PktKind::Data {
                self.flows[p.flow as usize].dropped += 1;
            }
        }
        let mut lost = std::mem::take(&mut self.wifi_lost);
        self.net.wifi.as_mut().unwrap().collect_lost(&mut lost);
        self.count_wifi_lost(&mut lost);
        self.wifi_lost = lost;
        self.schedule_wifi(self.now);
    }

    /// Run the Wi-Fi hop up to now: each packet a far station released continues through its
    /// direction's delay line (wired delay, jitter, loss), as a packet leaving a queue does.
    fn run_wifi(&mut self) {
        let now = self.now;
        let mut released = std::mem::take(&mut self.wifi_released);
        let mut lost = std::mem::take(&mut self.wifi_lost);
        self.net.wifi.as_mut().expect("wifi hop").advance(now, &mut released, &mut lost);
        for r in released.drain(..) {
            let l = link_of(r.dir);
            let fate = match self.net.links[l as usize].sent_from_queue(r.in_hop, r.at, ack_kind(&r.pkt)) {
                // Released earlier within this advance: never deliver into the past.
                Fate::Deliver(t) => Fate::Deliver(t.max(now)),
                f => f,
            };
            self.after_link(l, fate, r.pkt);
        }
        self.count_wifi_lost(&mut lost);
        self.wifi_released = released;
        self.wifi_lost = lost;
        // The medium has run up to now: its next event is later (1 ns guards against a loop).
        self.schedule_wifi(now + 1);
    }

    /// Count packets the hop lost after accepting them: the discipline's drops as queue drops,
    /// retry-limit drops as losses of the link.
    fn count_wifi_lost(&mut self, lost: &mut Vec<Lost>) {
        for x in lost.drain(..) {
            let link = &mut self.net.links[link_of(x.dir) as usize];
            match x.reason {
                DropReason::Queue => link.dropped_queue += 1,
                DropReason::RetryLimit => link.dropped_loss += 1,
            }
            if x.pkt.kind == PktKind::Data {
                self.flows[x.pkt.flow as usize].dropped += 1;
            }
        }
    }

    /// Make sure an `Ev::Medium` is pending for the hop's next event (not before `floor`).
    fn schedule_wifi(&mut self, floor: Nanos) {
        let hop = self.net.wifi.as_mut().expect("wifi hop");
        match hop.next_event().map(|t| t.max(floor)) {
            Some(t) if hop.event_at != Some(t) => {
                hop.event_at = Some(t);
                self.q.push(t, Ev::Medium);
            }
            Some(_) => {}
            None => hop.event_at = None,
        }
    }

    /// Count the packets served link `l`'s discipline dropped as queue drops.
    fn count_served_drops(&mut self, l: u32) {
        let link = &mut self.net.links[l as usize];
        let q = link.served().expect("served link");
        if !q.has_drops() {
            return;
        }
        q.take_drops(&mut self.dropped_buf);
        link.dropped_queue += self.dropped_buf.len() as u64;
        for p in self.dropped_buf.drain(..) {
            if p.kind == PktKind::Data {
                self.flows[p.flow as usize].dropped += 1;
            }
        }
    }

    /// Where a packet goes after link `l` decided its fate.
    #[inline]
    fn after_link(&mut self, l: u32, fate: Fate, pkt: Pkt) {
        let link = &self.net.links[l as usize];
        match fate {
            Fate::Deliver(t) => {
                if link.is_fifo() {
                    let pipe = &mut self.pipes[l as usize];
                    if pipe.is_empty() {
                        self.q.push(t, Ev::PipeHead(l));
                    }
                    pipe.push_back((t, pkt));
                } else {
                    self.q.push(t, Ev::Arrive { link: l, pkt });
                }
            }
            Fate::QueueDrop | Fate::Lost => {
                if pkt.kind == PktKind::Data {
                    self.flows[pkt.flow as usize].dropped += 1;
                }
            }
        }
    }

    /// Make sure the event queue holds the flow's next timer, pacing and delayed-ACK events.
    fn sync_flow(&mut self, fi: usize) {
        let now = self.now;
        let f = &mut self.flows[fi];
        if let Some((deadline, _)) = f.sender.timer {
            if f.timer_at.is_none_or(|t| deadline < t) {
                let at = deadline.max(now);
                f.timer_at = Some(at);
                self.q.push(at, Ev::SenderTimer(fi as u32));
            }
        }
        if let Some(w) = f.sender.pacing_wakeup(now) {
            if f.pace_at.is_none_or(|t| w < t) {
                f.pace_at = Some(w);
                self.q.push(w, Ev::PacingWake(fi as u32));
            }
        }
        if let Some(d) = f.receiver.timer_deadline() {
            if f.delack_at.is_none_or(|t| d < t) {
                f.delack_at = Some(d);
                self.q.push(d, Ev::DelackTimer(fi as u32));
            }
        }
    }

    /// The handshake's RTT sample as Linux takes it just before the flow's data: the base path
    /// (`handshake_rtt_ns`) plus the wait of the SYN, and of the handshake's last ACK, behind the
    /// data already queued at the bottleneck in the data's direction, and of the SYN-ACK behind
    /// the other direction's backlog. The sender's srtt and min RTT (BBR's first min_rtt) and the
    /// receiver's RTT estimate start from it: a flow that joins a standing queue takes it for
    /// path delay, as a Linux flow does (seen on the kernel backend with 10 BBR flows:
    /// docs/fidelity.md). Wire links only; the Wi-Fi hop and trace links keep the base value.
    fn handshake_at_start(&mut self, fi: usize) {
        let now = self.now;
        let cfg = self.cfg;
        if self.net.wifi.is_some() || cfg.bottleneck.trace.is_some() || !fifo_backlog(&cfg.bottleneck.aqm) {
            return;
        }
        let (data_link, ack_link) = if self.flows[fi].reverse { (BN_REV, BN_FWD) } else { (BN_FWD, BN_REV) };
        let links = &mut self.net.links;
        let mut wait = |l: u32| {
            let bytes = links[l as usize].queued_bytes(now);
            tx_time(bytes.min(u32::MAX as u64) as u32, cfg.bottleneck.rate_bps)
        };
        let queued = wait(data_link) + wait(ack_link);
        if queued == 0 {
            return;
        }
        let rtt = handshake_rtt_ns(cfg) + queued;
        let f = &mut self.flows[fi];
        f.receiver.set_rtt(rtt);
        f.sender.set_handshake_rtt_us(rtt / 1000);
    }

    fn sample(&mut self) {
        let now = self.now;
        let dt = self.cfg.sample_interval_ns;
        let queue = match &self.net.wifi {
            Some(hop) => hop.backlog_bytes(Dir::Fwd),
            None => self.net.links[BN_FWD as usize].queued_bytes(now),
        };
        let ls = &mut self.link_series;
        ls.t_s.push(secs(now));
        ls.queue_bytes.push(queue);
        ls.probe_rtt_ms.push(self.ping_last_us.take().map(|u| u as f64 / 1000.0));
        let (p50, p95) = interval_percentiles_ms(&mut self.ping_interval_us);
        ls.probe_rtt_p50_ms.push(p50);
        ls.probe_rtt_p95_ms.push(p95);
        let sojourn = self.net.links[BN_FWD as usize].sojourn.as_mut();
        ls.sojourn_ms.push(sojourn.and_then(|m| m.take_interval_mean_ms()));
        for (i, f) in self.flows.iter_mut().enumerate() {
            if !f.started {
                continue;
            }
            let bytes = f.receiver.bytes_delivered();
            let s = &mut self.series;
            s.flow_id.push(i as u32);
            s.t_s.push(secs(now));
            s.goodput_bps.push((bytes - f.last_sample_bytes) as f64 * 8.0 / secs(dt));
            f.last_sample_bytes = bytes;
            s.cwnd_pkts.push(f.sender.sk.cwnd);
            s.rtt_ms.push(f.sender.srtt_ms());
            s.pacing_bps.push(f.sender.pacing_bps());
            s.inflight_pkts.push(f.sender.in_flight());
            let label = f.sender.cc.state_label();
            s.cc_state.push(if label.is_empty() { format!("{:?}", f.sender.sk.ca_state) } else { label.to_string() });
            s.bw_est_bps.push(f.sender.cc.bw_estimate_bps());
            s.min_rtt_ms.push(f.sender.cc.min_rtt_estimate_us().map(|u| u as f64 / 1000.0));
            s.delivery_rate_bps.push(f.sender.delivery_rate_bps());
            s.retransmits.push(f.sender.retransmits);
        }
        if now + dt <= self.end {
            self.q.push(now + dt, Ev::Sample);
        }
    }

    /// Events handled so far.
    pub(crate) fn events_processed(&self) -> u64 {
        self.q.processed()
    }

    /// Packets still inside the network at the end, per flow (data only) and per link (all),
    /// found by looking at the delivery pipes, the pending events, the Wi-Fi hop and the
    /// served queues.
    pub(crate) fn packets_in_network(&self) -> (Vec<u64>, Vec<u64>) {
        let mut in_net = vec![0u64; self.flows.len()];
        let mut held = vec![0u64; self.net.links.len()];
        for (l, pipe) in self.pipes.iter().enumerate() {
            held[l] += pipe.len() as u64;
            for (_, p) in pipe {
                if p.kind == PktKind::Data {
                    in_net[p.flow as usize] += 1;
                }
            }
        }
        for ev in self.q.pending() {
            // Packets on their way out of a reordering link, or on their way into a served
            // queue (counted as arrived when offered).
            if let Ev::Arrive { link, pkt } | Ev::LinkEnqueue { link, pkt } = ev {
                held[*link as usize] += 1;
                if pkt.kind == PktKind::Data {
                    in_net[pkt.flow as usize] += 1;
                }
            }
        }
        if let Some(hop) = &self.net.wifi {
            for (p, dir) in hop.held() {
                held[link_of(dir) as usize] += 1;
                if p.kind == PktKind::Data {
                    in_net[p.flow as usize] += 1;
                }
            }
        }
        for (l, link) in self.net.links.iter().enumerate() {
            if let Some(q) = link.served_ref() {
                for p in q.held() {
                    held[l] += 1;
                    if p.kind == PktKind::Data {
                        in_net[p.flow as usize] += 1;
                    }
                }
            }
        }
        (in_net, held)
    }
}
