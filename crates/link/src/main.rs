//! ccbench-link: a userspace bottleneck between two TUN devices.
//!
//! Side A is the sender's side (data enters here), side B the receiver's. Each direction has
//! its own thread: read packets from one TUN, pass them through the path model (the scenario's
//! queue discipline at the bottleneck rate → random loss → propagation delay + jitter), write
//! them to the other TUN when due; a packet the discipline marked CE has its ECN field
//! rewritten (ecn.rs) on the way out of the queue. The thread sleeps with ppoll until `spin_us` before the next deadline, then
//! spins (still reading arrivals) so packets leave within a few µs of their due time. At the end
//! (SIGTERM, SIGINT, stdin closed, or --duration-s) it prints one JSON report to stdout.
//!
//! With `bottleneck.wifi` the hop is one 802.11n medium shared by both directions: a single
//! thread serves both devices through it (wifi.rs, wifi_loop.rs) and the report gains a `wifi`
//! object with the medium's statistics.
mod config;
mod ecn;
mod flowkey;
mod gso;
mod idle;
mod measured;
mod path;
mod propagation;
mod served;
mod stats;
mod tun;
mod wifi;
mod wifi_loop;

use config::{DirConfig, LinkConfig};
use measured::Measured;
use path::{DelayLine, Outcome, PathModel, Verdict};
use served::Arrival;
use serde_json::json;
use stats::Lateness;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

#[inline]
fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

const USAGE: &str = "usage: ccbench-link --config FILE|JSON [options]
  --config FILE|-|JSON   normalised scenario JSON (crates/sim/src/config.rs) or its bottleneck object
  --netns-a NS --tun-a NAME   sender side: namespace (name under /var/run/netns or a path) and TUN name
  --netns-b NS --tun-b NAME   receiver side
  --spin-us N            spin this long before each deadline instead of sleeping (default 40)
  --max-busy-us N        after this long without sleeping, rest (sleep) so that normal tasks (the
  --rest-us N            TCP applications) get the CPU and the kernel never has to throttle the
                         real-time thread for tens of ms (defaults 1000 and 100)
  --rt-prio N            SCHED_FIFO priority of the forwarding threads, 0 = off (default 10)
  --duration-s S         stop by itself after S seconds (default: run until SIGTERM/SIGINT/stdin EOF)
  --ignore-stdin         do not stop when stdin reaches end of file
  --gso                  sender-side TUN with IFF_VNET_HDR + TSO: read TCP super-packets and cut
                         them into wire packets here (fewer reads; experimental, IPv4 TCP)
  --check-config         parse and validate the config, print the two directions, exit
Prints {\"ready\": true, ...} on stdout once the devices exist, and the JSON report at the end.";

struct Args {
    config: String,
    netns: [Option<String>; 2],
    tun: [String; 2],
    spin_us: u64,
    max_busy_us: u64,
    rest_us: u64,
    rt_prio: i32,
    duration_s: Option<f64>,
    ignore_stdin: bool,
    check_only: bool,
    gso: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        config: String::new(),
        netns: [None, None],
        tun: ["ccbla".into(), "ccblb".into()],
        spin_us: 40,
        max_busy_us: 1000,
        rest_us: 100,
        rt_prio: 10,
        duration_s: None,
        ignore_stdin: false,
        check_only: false,
        gso: false,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    let val = |i: &mut usize| -> Result<String, String> {
        *i += 1;
        argv.get(*i).cloned().ok_or_else(|| format!("{} needs a value", argv[*i - 1]))
    };
    while i < argv.len() {
        match argv[i].as_str() {
            "--config" => a.config = val(&mut i)?,
            "--netns-a" => a.netns[0] = Some(val(&mut i)?),
            "--netns-b" => a.netns[1] = Some(val(&mut i)?),
            "--tun-a" => a.tun[0] = val(&mut i)?,
            "--tun-b" => a.tun[1] = val(&mut i)?,
            "--spin-us" => a.spin_us = val(&mut i)?.parse().map_err(|e| format!("--spin-us: {e}"))?,
            "--rest-us" => a.rest_us = val(&mut i)?.parse().map_err(|e| format!("--rest-us: {e}"))?,
            "--max-busy-us" => a.max_busy_us = val(&mut i)?.parse().map_err(|e| format!("--max-busy-us: {e}"))?,
            "--rt-prio" => a.rt_prio = val(&mut i)?.parse().map_err(|e| format!("--rt-prio: {e}"))?,
            "--duration-s" => {
                a.duration_s = Some(val(&mut i)?.parse().map_err(|e| format!("--duration-s: {e}"))?)
            }
            "--ignore-stdin" => a.ignore_stdin = true,
            "--gso" => a.gso = true,
            "--check-config" => a.check_only = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument '{other}'")),
        }
        i += 1;
    }
    if a.config.is_empty() {
        return Err("--config is required".into());
    }
    Ok(a)
}

fn read_config(arg: &str) -> Result<LinkConfig, String> {
    let text = if arg.trim_start().starts_with('{') {
        arg.to_string()
    } else if arg == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| e.to_string())?;
        s
    } else {
        std::fs::read_to_string(arg).map_err(|e| format!("{arg}: {e}"))?
    };
    LinkConfig::from_json(&text)
}

/// What one direction's thread hands back.
struct DirReport {
    cfg: DirConfig,
    // What the path model counted (the model itself stays in its thread: a queue discipline
    // is a `Box<dyn Qdisc>`, not `Send`).
    counters: path::Counters,
    queue: ccbench_queue::QueueStats,
    bytes_served: u64,
    late: Lateness,
    samples: Vec<(u64, u64, u64)>,
    held: usize,
    read_errors: u64,
    oversize: u64,
    cpu_user_s: f64,
    cpu_sys_s: f64,
    rt: bool,
    forced_rests: u64,
    spin_s: f64,
    gso_super: u64,
    gso_errors: u64,
    per_port: HashMap<u16, (u64, u64)>,
}

const SLOT: usize = 2048;

/// TCP source port of an IPv4 packet (None for anything else).
#[inline]
fn tcp_sport(p: &[u8]) -> Option<u16> {
    if p.len() < 20 || p[0] >> 4 != 4 || p[9] != 6 {
        return None;
    }
    let ihl = (p[0] & 0x0f) as usize * 4;
    (p.len() >= ihl + 2).then(|| u16::from_be_bytes([p[ihl], p[ihl + 1]]))
}
const BATCH: usize = 64;

/// Drops and random losses per TCP source port, so the backend can attribute them to flows.
fn count_loss(map: &mut HashMap<u16, (u64, u64)>, pkt: &[u8], v: Verdict) {
    if let Some(port) = tcp_sport(pkt) {
        let e = map.entry(port).or_insert((0, 0));
        match v {
            Verdict::Dropped => e.0 += 1,
            Verdict::Lost => e.1 += 1,
            Verdict::Deliver(_) | Verdict::Queued => {}
        }
    }
}

/// The packet in slot `slot` of the slab.
#[inline]
fn slot_bytes(slab: &mut [u8], slot: u32, len: u32) -> &mut [u8] {
    let off = slot as usize * SLOT;
    &mut slab[off..off + len as usize]
}

/// What the AQM arm decided about packets it held: deliver (with the ECN field set to CE if
/// marked) into the delay line, or count the drop/loss per port and free the slot.
fn settle(
    outcomes: &[Outcome],
    slab: &mut [u8],
    free: &mut Vec<u32>,
    line: &mut DelayLine,
    per_port: &mut HashMap<u16, (u64, u64)>,
) {
    for o in outcomes {
        let pkt = slot_bytes(slab, o.slot, o.len);
        match o.verdict {
            Verdict::Deliver(t) => {
                if o.ce {
                    ecn::set_ce(pkt);
                }
                line.push(t, o.slot, o.len);
            }
            v => {
                count_loss(per_port, pkt, v);
                free.push(o.slot);
            }
        }
    }
}

/// Hand an arriving packet (already in `slot`) to the path model: the fast path needs only its
/// length, the AQM arm also its flow and ECN capability. `true`: the slot is taken.
#[inline]
fn offer(
    model: &mut PathModel,
    measured: &mut Measured,
    now: u64,
    slot: u32,
    pkt: &[u8],
    line: &mut DelayLine,
) -> Result<bool, Verdict> {
    let len = pkt.len() as u32;
    let impaired = measured.impairs(pkt);
    let v = if model.is_served() {
        model.offer(now, Arrival { slot, len, flow: flowkey::of_packet(pkt), ect: ecn::is_ect(pkt), impaired })
    } else {
        model.arrive_impaired(now, len, impaired)
    };
    match v {
        Verdict::Deliver(t) => {
            line.push(t, slot, len);
            Ok(true)
        }
        Verdict::Queued => Ok(true),
        v => Err(v),
    }
}

fn thread_cpu() -> (f64, f64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

fn set_rt(prio: i32) -> bool {
    if prio <= 0 {
        return false;
    }
    let p = libc::sched_param { sched_priority: prio };
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}

struct Timing {
    vnet_in: bool,
    vnet_out: bool,
    spin_ns: u64,
    max_busy_ns: u64,
    rest_ns: u64,
    rt_prio: i32,
    deadline: Option<u64>,
}

fn forward(cfg: DirConfig, fd_in: RawFd, fd_out: RawFd, t0: u64, tm: Timing) -> DirReport {
    let Timing { spin_ns, max_busy_ns, rest_ns, rt_prio, deadline, vnet_in, vnet_out } = tm;
    let zero_hdr = [0u8; tun::VNET_HDR_LEN];
    let mut big = if vnet_in { vec![0u8; 256 * 1024] } else { Vec::new() };
    let mut gso_super = 0u64;
    let mut per_port: HashMap<u16, (u64, u64)> = HashMap::new();
    let mut gso_errors = 0u64;
    let mut idler = idle::Idler::new(spin_ns, max_busy_ns, rest_ns);
    let rt = set_rt(rt_prio);
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    let mut model = PathModel::new(&cfg);
    let mut measured = Measured::new(&cfg.measured_tcp_ports);
    model.start_trace_at(t0);
    let mut line = DelayLine::new();
    let mut late = Lateness::new();
    // Packet buffers: a slab that only grows, plus a free list — no allocation per packet.
    let mut slab: Vec<u8> = Vec::new();
    let mut free: Vec<u32> = Vec::new();
    let mut nslots: u32 = 0;
    let grow = |slab: &mut Vec<u8>, free: &mut Vec<u32>, nslots: &mut u32| {
        let add = (*nslots).max(1024);
        slab.resize((*nslots + add) as usize * SLOT, 0);
        for s in (*nslots..*nslots + add).rev() {
            free.push(s);
        }
        *nslots += add;
    };
    grow(&mut slab, &mut free, &mut nslots);
    let mut samples = Vec::new();
    let sample_ns = cfg.sample_interval_ns;
    let mut next_sample = if sample_ns > 0 { t0 } else { u64::MAX };
    let mut read_errors = 0u64;
    let mut oversize = 0u64;
    let mut pfd = libc::pollfd { fd: fd_in, events: libc::POLLIN, revents: 0 };
    let mut outcomes: Vec<Outcome> = Vec::new();

    while !STOP.load(Ordering::Relaxed) {
        // 0. AQM arm: the transmitter takes every packet due by now from the discipline.
        if model.is_served() {
            model.serve(now_ns());
            model.take_outcomes(&mut outcomes);
            settle(&outcomes, &mut slab, &mut free, &mut line, &mut per_port);
        }
        // 1. Deliver everything that is due.
        loop {
            let now = now_ns();
            let Some((due, slot, len)) = line.pop_due(now) else { break };
            late.add(now - due);
            let off = slot as usize * SLOT;
            let r = if vnet_out {
                let iov = [
                    libc::iovec { iov_base: zero_hdr.as_ptr() as *mut libc::c_void, iov_len: tun::VNET_HDR_LEN },
                    libc::iovec { iov_base: slab[off..].as_ptr() as *mut libc::c_void, iov_len: len as usize },
                ];
                unsafe { libc::writev(fd_out, iov.as_ptr(), 2) }
            } else {
                unsafe { libc::write(fd_out, slab[off..].as_ptr() as *const libc::c_void, len as usize) }
            };
            if r < 0 {
                model.counters.write_errors += 1;
            } else {
                model.counters.packets_out += 1;
                model.counters.bytes_out += len as u64;
            }
            free.push(slot);
        }
        // 2. Take in what has arrived (bounded batch so deliveries are not starved).
        let mut got = 0;
        while got < BATCH {
            if vnet_in {
                // GSO path: one read may carry a TCP super-packet; cut it into wire packets.
                let r = unsafe { libc::read(fd_in, big.as_mut_ptr() as *mut libc::c_void, big.len()) };
                if r < 0 {
                    let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                    if e != libc::EAGAIN && e != libc::EINTR {
                        read_errors += 1;
                    }
                    break;
                }
                if (r as usize) <= tun::VNET_HDR_LEN {
                    break;
                }
                got += 1;
                let now = now_ns();
                let h = gso::VnetHdr::parse(&big[..tun::VNET_HDR_LEN]);
                let pkt = &mut big[tun::VNET_HDR_LEN..r as usize];
                let mut take = |seg: &[u8]| {
                    if seg.len() >= SLOT {
                        oversize += 1;
                        return;
                    }
                    if free.is_empty() {
                        grow(&mut slab, &mut free, &mut nslots);
                    }
                    let slot = *free.last().unwrap();
                    let off = slot as usize * SLOT;
                    slab[off..off + seg.len()].copy_from_slice(seg);
                    match offer(&mut model, &mut measured, now, slot, seg, &mut line) {
                        Ok(_) => {
                            free.pop();
                        }
                        Err(v) => count_loss(&mut per_port, seg, v),
                    }
                };
                match h.gso_type & !gso::VIRTIO_NET_HDR_GSO_ECN {
                    gso::VIRTIO_NET_HDR_GSO_NONE => {
                        if h.flags & gso::VIRTIO_NET_HDR_F_NEEDS_CSUM != 0
                            && !gso::complete_csum(pkt, h.csum_start as usize, h.csum_offset as usize)
                        {
                            gso_errors += 1;
                            continue;
                        }
                        take(pkt);
                    }
                    gso::VIRTIO_NET_HDR_GSO_TCPV4 => {
                        gso_super += 1;
                        if !gso::segment_tcp4(pkt, h.gso_size as usize, &mut take) {
                            gso_errors += 1;
                        }
                    }
                    _ => gso_errors += 1,
                }
                continue;
            }
            if free.is_empty() {
                grow(&mut slab, &mut free, &mut nslots);
            }
            let slot = *free.last().unwrap();
            let off = slot as usize * SLOT;
            let r = unsafe { libc::read(fd_in, slab[off..].as_mut_ptr() as *mut libc::c_void, SLOT) };
            if r < 0 {
                let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                if e != libc::EAGAIN && e != libc::EINTR {
                    read_errors += 1;
                }
                break;
            }
            if r == 0 {
                break;
            }
            got += 1;
            let len = r as u32;
            if len as usize >= SLOT {
                oversize += 1;
                continue;
            }
            let now = now_ns();
            match offer(&mut model, &mut measured, now, slot, &slab[off..off + len as usize], &mut line) {
                Ok(_) => {
                    free.pop();
                }
                Err(v) => count_loss(&mut per_port, &slab[off..off + len as usize], v),
            }
        }
        // The AQM arm's verdicts on held packets (this batch's drops, sends since step 0).
        if model.is_served() {
            model.take_outcomes(&mut outcomes);
            settle(&outcomes, &mut slab, &mut free, &mut line, &mut per_port);
        }
        let now = now_ns();
        // 3. Queue occupancy samples.
        while now >= next_sample {
            samples.push((next_sample - t0, model.backlog_bytes(next_sample), model.departed_bytes(next_sample)));
            next_sample += sample_ns;
        }
        if let Some(d) = deadline {
            if now >= d {
                STOP.store(true, Ordering::SeqCst);
                break;
            }
        }
        // 4. Wait until shortly before the next deadline (idle.rs).
        let mut wake = line.next_time().unwrap_or(now + 50_000_000).min(now + 50_000_000);
        if let Some(t) = model.next_service() {
            wake = wake.min(t);
        }
        if next_sample != u64::MAX {
            wake = wake.min(next_sample);
        }
        idler.pause(now, got > 0, wake, std::slice::from_mut(&mut pfd));
    }
    let (u, s) = thread_cpu();
    DirReport {
        cfg,
        held: line.len() + model.held_packets() as usize,
        counters: model.counters.clone(),
        queue: model.queue_stats(),
        bytes_served: model.bytes_served(),
        late,
        samples,
        read_errors,
        oversize,
        cpu_user_s: u,
        cpu_sys_s: s,
        rt,
        forced_rests: idler.forced_rests,
        spin_s: idler.spin_total as f64 / 1e9,
        gso_super,
        gso_errors,
        per_port,
    }
}

fn dir_json(r: &DirReport) -> serde_json::Value {
    let c = &r.counters;
    let q = &r.queue;
    json!({
        "name": r.cfg.name,
        "aqm": r.cfg.aqm,
        "rate_bps": r.cfg.rate_bps,
        "delay_ns": r.cfg.delay_ns,
        "jitter_ns": r.cfg.jitter_ns,
        "packets_in": c.packets_in,
        "bytes_in": c.bytes_in,
        "packets_out": c.packets_out,
        "bytes_out": c.bytes_out,
        // every queue drop: over a limit, and the discipline's own (CoDel, PIE, RED; FQ-CoDel's
        // drops from the fattest flow count as over the limit, as Linux counts them)
        "dropped": q.drops(),
        "dropped_overlimit": q.drops_overlimit,
        "dropped_aqm": q.drops_aqm,
        "ce_marked": c.ce_marked,
        "bytes_served": r.bytes_served,
        "lost": c.lost,
        "held_at_end": r.held,
        "write_errors": c.write_errors,
        "read_errors": r.read_errors,
        "oversize": r.oversize,
        "max_backlog_bytes": q.max_backlog_bytes,
        "max_backlog_packets": q.max_backlog_packets,
        "lateness_us": {
            "count": r.late.count,
            "mean": r.late.mean_us(),
            "p50": r.late.percentile_us(50.0),
            "p99": r.late.percentile_us(99.0),
            "p999": r.late.percentile_us(99.9),
            "max": if r.late.count > 0 { Some(r.late.max_ns as f64 / 1000.0) } else { None },
            "frac_over_1ms": r.late.frac_over_us(1000),
        },
        "queue_samples": {
            "t_ns": r.samples.iter().map(|s| s.0).collect::<Vec<_>>(),
            "bytes": r.samples.iter().map(|s| s.1).collect::<Vec<_>>(),
            "departed_bytes": r.samples.iter().map(|s| s.2).collect::<Vec<_>>(),
        },
        "cpu_user_s": r.cpu_user_s,
        "cpu_sys_s": r.cpu_sys_s,
        "realtime": r.rt,
        "forced_rests": r.forced_rests,
        "spin_s": r.spin_s,
        "gso_super_packets": r.gso_super,
        "gso_errors": r.gso_errors,
        "tcp_sport_dropped_lost": r.per_port.iter().map(|(k, v)| (k.to_string(), json!([v.0, v.1])))
            .collect::<serde_json::Map<String, serde_json::Value>>(),
    })
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let cfg = read_config(&args.config)?;
    let dirs = cfg.directions();
    if args.check_only {
        println!("{:#?}", dirs);
        return Ok(());
    }
    if args.gso && cfg.wifi().is_some() {
        return Err("--gso: not with bottleneck.wifi (the Wi-Fi thread reads plain packets)".into());
    }
    let fd_a = tun::create_tun_in(args.netns[0].as_deref(), &args.tun[0], args.gso).map_err(|e| e.to_string())?;
    let fd_b = tun::create_tun_in(args.netns[1].as_deref(), &args.tun[1], false).map_err(|e| e.to_string())?;
    unsafe {
        libc::signal(libc::SIGTERM, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let t0 = now_ns();
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "{}",
            json!({"ready": true, "pid": std::process::id(), "tun_a": args.tun[0], "tun_b": args.tun[1],
                   "clock_monotonic_start_ns": t0})
        );
        let _ = out.flush();
    }
    if !args.ignore_stdin {
        std::thread::spawn(|| {
            let mut buf = [0u8; 256];
            let mut stdin = std::io::stdin();
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            STOP.store(true, Ordering::SeqCst);
        });
    }
    let deadline = args.duration_s.map(|s| t0 + (s * 1e9) as u64);
    if let Some(wifi) = cfg.wifi().cloned() {
        return run_wifi(wifi, dirs, [fd_a, fd_b], t0, &args, deadline, cfg.sample_interval_ns);
    }
    let tm = |dir: usize| Timing {
        vnet_in: args.gso && dir == 0,
        vnet_out: args.gso && dir == 1,
        spin_ns: args.spin_us * 1000,
        max_busy_ns: args.max_busy_us * 1000,
        rest_ns: args.rest_us * 1000,
        rt_prio: args.rt_prio,
        deadline,
    };
    let (tm0, tm1) = (tm(0), tm(1));
    let [d0, d1] = dirs;
    let h0 = std::thread::Builder::new()
        .name("data".into())
        .spawn(move || forward(d0, fd_a, fd_b, t0, tm0))
        .map_err(|e| e.to_string())?;
    let h1 = std::thread::Builder::new()
        .name("ack".into())
        .spawn(move || forward(d1, fd_b, fd_a, t0, tm1))
        .map_err(|e| e.to_string())?;
    while !STOP.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let r0 = h0.join().map_err(|_| "data thread panicked")?;
    let r1 = h1.join().map_err(|_| "ack thread panicked")?;
    let end = now_ns();
    let report = json!({
        "clock_monotonic_start_ns": t0,
        "duration_s": (end - t0) as f64 / 1e9,
        "sample_interval_ns": cfg.sample_interval_ns,
        "spin_us": args.spin_us,
        "directions": [dir_json(&r0), dir_json(&r1)],
    });
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{report}");
    let _ = out.flush();
    unsafe {
        libc::close(fd_a);
        libc::close(fd_b);
    }
    Ok(())
}

/// The Wi-Fi bottleneck: one thread serves both devices through the shared medium.
fn run_wifi(
    wifi: config::WifiConfig,
    dirs: [DirConfig; 2],
    fds: [RawFd; 2],
    t0: u64,
    args: &Args,
    deadline: Option<u64>,
    sample_interval_ns: u64,
) -> Result<(), String> {
    let tm = Timing {
        vnet_in: false,
        vnet_out: false,
        spin_ns: args.spin_us * 1000,
        max_busy_ns: args.max_busy_us * 1000,
        rest_ns: args.rest_us * 1000,
        rt_prio: args.rt_prio,
        deadline,
    };
    let h = std::thread::Builder::new()
        .name("wifi".into())
        .spawn(move || wifi_loop::forward_wifi(wifi, dirs, fds, t0, tm))
        .map_err(|e| e.to_string())?;
    while !STOP.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let ([r0, r1], medium) = h.join().map_err(|_| "wifi thread panicked")?;
    let end = now_ns();
    let report = json!({
        "clock_monotonic_start_ns": t0,
        "duration_s": (end - t0) as f64 / 1e9,
        "sample_interval_ns": sample_interval_ns,
        "spin_us": args.spin_us,
        "directions": [dir_json(&r0), dir_json(&r1)],
        "wifi": medium,
    });
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{report}");
    let _ = out.flush();
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("ccbench-link: error: {e}");
        eprintln!("{USAGE}");
        std::process::exit(2);
    }
}
