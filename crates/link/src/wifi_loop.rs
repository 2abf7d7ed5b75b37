//! The forwarding thread of a Wi-Fi bottleneck: one thread serves both TUN devices through one
//! shared medium (wifi.rs), because the two directions contend for the same airtime and cannot
//! be forwarded independently as the wire's two threads do.
//!
//! Each turn: with access links (access.rs), every packet the hosts' entry links have sent by
//! now reaches its station; run the medium up to now and settle what it released or dropped
//! (into the direction's delay line, or free the slot); write every packet due from both delay
//! lines (with access links: through the host's exit link); read a bounded batch from each
//! device (enqueued at its station, or its entry link, at its arrival time); take queue
//! samples. Then wait (ppoll on both devices) until the earliest of the medium's next
//! event, either delay line's next due time and the next sample, spinning the last `spin_us`
//! as the wire's threads do, and resting after `max_busy_us` without sleep.
use crate::access::AccessStage;
use crate::config::{DirConfig, WifiConfig};
use crate::measured::Measured;
use crate::path::{DelayLine, Outcome, Verdict};
use crate::port_losses::{count_loss, PortLosses};
use crate::realtime::{enter_realtime, now_ns, thread_cpu, Timing, BATCH};
use crate::report::{DirReport, WifiJson};
use crate::served::Arrival;
use crate::settle::settle;
use crate::slab::{Slab, SLOT};
use crate::stats::Lateness;
use crate::stop::{stop, stopped};
use crate::wifi::WifiPath;
use crate::{ecn, flowkey, idle};
use ccbench_wifi::{Dir, MediumStats};
use std::os::fd::RawFd;

/// Per direction: what the thread measures besides the path's own counters.
struct DirIo {
    line: DelayLine,
    late: Lateness,
    samples: Vec<(u64, u64, u64)>,
    per_port: PortLosses,
    read_errors: u64,
    oversize: u64,
}

impl DirIo {
    fn new() -> Self {
        DirIo {
            line: DelayLine::new(),
            late: Lateness::new(),
            samples: Vec::new(),
            per_port: PortLosses::new(),
            read_errors: 0,
            oversize: 0,
        }
    }
}

/// Settle the medium's outcomes, each in its direction (settle.rs).
fn settle_all(outcomes: &[(Dir, Outcome)], slab: &mut Slab, io: &mut [DirIo; 2]) {
    for (dir, o) in outcomes {
        let io = &mut io[*dir as usize];
        settle(o, slab, &mut io.line, &mut io.per_port);
    }
}

/// A packet (in `slot`) reaches station `dir` at `now`: `Queued` (the slot is the path's) or
/// `Dropped`.
#[inline]
fn to_station(path: &mut WifiPath, measured: &mut Measured, now: u64, dir: Dir, slot: u32, pkt: &[u8]) -> Verdict {
    let impaired = measured.impairs(pkt);
    let len = pkt.len() as u32;
    let a =
        Arrival { slot, len, flow: flowkey::of_packet(pkt), ect: ecn::is_ect(pkt), l4s: ecn::is_l4s(pkt), impaired };
    path.offer(now, dir, a)
}

/// Serve both directions: `fds[0]` is the sender side (data in, ACKs out), `fds[1]` the
/// receiver side. Returns the two directions' reports and the medium's statistics.
pub fn forward_wifi(
    wifi: WifiConfig,
    cfgs: [DirConfig; 2],
    fds: [RawFd; 2],
    t0: u64,
    tm: Timing,
) -> ([DirReport; 2], WifiJson) {
    let Timing { spin_ns, max_busy_ns, rest_ns, rt_prio, deadline } = tm;
    let rt = enter_realtime(rt_prio);
    let mut path = WifiPath::new(&wifi, &cfgs, t0);
    let mut measured = [Measured::new(&cfgs[0].measured_tcp_ports), Measured::new(&cfgs[1].measured_tcp_ports)];
    let mut io = [DirIo::new(), DirIo::new()];
    let stage = |c: &DirConfig| c.access.clone().map(|spec| AccessStage::new(spec, &c.measured_tcp_ports));
    let mut access = [stage(&cfgs[0]), stage(&cfgs[1])];
    // The latest time given to the medium: arrivals from the entry links join it in time order.
    let mut medium_at = 0u64;
    let mut slab = Slab::new();
    let mut outcomes: Vec<(Dir, Outcome)> = Vec::new();
    // The medium's counters at each sample instant (so the backend can take the run's window).
    let mut medium_samples: Vec<(u64, MediumStats)> = Vec::new();
    let sample_ns = cfgs[0].sample_interval_ns;
    let mut next_sample = if sample_ns > 0 { t0 } else { u64::MAX };
    let mut idler = idle::Idler::new(spin_ns, max_busy_ns, rest_ns);
    let mut pfds = [
        libc::pollfd { fd: fds[0], events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: fds[1], events: libc::POLLIN, revents: 0 },
    ];

    while !stopped() {
        // 0. What the hosts' entry links have sent reaches the stations at its due time (or
        // as soon after as the medium's clock allows).
        let now = now_ns();
        for (d, dir) in Dir::BOTH.into_iter().enumerate() {
            let Some(a) = access[d].as_mut() else { continue };
            while let Some((due, slot, len)) = a.pop_entering(now) {
                medium_at = medium_at.max(due);
                let pkt = slab.packet(slot, len);
                if to_station(&mut path, &mut measured[d], medium_at, dir, slot, pkt) != Verdict::Queued {
                    count_loss(&mut io[d].per_port, pkt, Verdict::Dropped);
                    slab.release(slot);
                }
            }
        }
        // The medium up to now: what the far stations released, what was dropped.
        medium_at = medium_at.max(now_ns());
        path.serve(medium_at);
        path.take_outcomes(&mut outcomes);
        settle_all(&outcomes, &mut slab, &mut io);
        // 1. Deliver everything due, in both directions (data to the receiver, ACKs back).
        for d in 0..2 {
            let fd_out = fds[1 - d];
            loop {
                let now = now_ns();
                // with access links: the delay line hands its packets to the exit links, and
                // those write what they have serialised
                let due_out = match access[d].as_mut() {
                    None => io[d].line.pop_due(now),
                    Some(a) => {
                        if let Some((due, slot, len)) = io[d].line.pop_due(now) {
                            let pkt = slab.packet(slot, len);
                            if !a.leave(due, pkt, slot) {
                                count_loss(&mut io[d].per_port, pkt, Verdict::Dropped);
                                slab.release(slot);
                            }
                            continue;
                        }
                        a.pop_leaving(now)
                    }
                };
                let Some((due, slot, len)) = due_out else { break };
                io[d].late.add(now - due);
                let pkt = slab.packet(slot, len);
                let r = unsafe { libc::write(fd_out, pkt.as_ptr() as *const libc::c_void, len as usize) };
                let c = &mut path.counters[d];
                if r < 0 {
                    c.write_errors += 1;
                } else {
                    c.packets_out += 1;
                    c.bytes_out += len as u64;
                }
                slab.release(slot);
            }
        }
        // 2. Take in what has arrived at either station (bounded batches).
        let mut got = 0;
        for (d, dir) in Dir::BOTH.into_iter().enumerate() {
            let mut n = 0;
            while n < BATCH {
                let slot = slab.peek_free();
                let buf = slab.slot_mut(slot);
                let r = unsafe { libc::read(fds[d], buf.as_mut_ptr() as *mut libc::c_void, SLOT) };
                if r < 0 {
                    let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                    if e != libc::EAGAIN && e != libc::EINTR {
                        io[d].read_errors += 1;
                    }
                    break;
                }
                if r == 0 {
                    break;
                }
                n += 1;
                let len = r as u32;
                if len as usize >= SLOT {
                    io[d].oversize += 1;
                    continue;
                }
                let now = now_ns();
                let pkt = slab.packet(slot, len);
                let v = match access[d].as_mut() {
                    Some(a) => {
                        if a.enter(now, pkt, slot) {
                            Verdict::Queued
                        } else {
                            Verdict::Dropped
                        }
                    }
                    None => {
                        medium_at = medium_at.max(now);
                        to_station(&mut path, &mut measured[d], medium_at, dir, slot, pkt)
                    }
                };
                match v {
                    Verdict::Queued => slab.take(),
                    v => count_loss(&mut io[d].per_port, pkt, v),
                }
            }
            got += n;
        }
        path.take_outcomes(&mut outcomes);
        settle_all(&outcomes, &mut slab, &mut io);
        let now = now_ns();
        // 3. Occupancy samples of both stations.
        while now >= next_sample {
            for (d, dir) in Dir::BOTH.into_iter().enumerate() {
                let s = (next_sample - t0, path.backlog_bytes(dir), path.departed_bytes(dir, next_sample));
                io[d].samples.push(s);
            }
            medium_samples.push((next_sample - t0, path.stats().clone()));
            next_sample += sample_ns;
        }
        if let Some(d) = deadline {
            if now >= d {
                stop();
                break;
            }
        }
        // 4. Wait for the earliest deadline (idle.rs).
        let mut wake = now + 50_000_000;
        let access_next = access.iter().flatten().filter_map(AccessStage::next_time);
        let lines = [io[0].line.next_time(), io[1].line.next_time(), path.next_service()];
        for t in lines.into_iter().flatten().chain(access_next) {
            wake = wake.min(t);
        }
        if next_sample != u64::MAX {
            wake = wake.min(next_sample);
        }
        idler.pause(now, got > 0, wake, &mut pfds);
    }
    let (u, s) = thread_cpu();
    let wifi_json = WifiJson::new(&path, now_ns(), &medium_samples);
    let [c0, c1] = cfgs;
    let [io0, io1] = io;
    let [a0, a1] = access;
    let report =
        |cfg: DirConfig, dir: Dir, io: DirIo, access: Option<AccessStage>, cpu: (f64, f64), spin: u64, rests: u64| {
            DirReport {
                cfg,
                counters: path.counters[dir as usize].clone(),
                queue: path.queue_stats(dir),
                bytes_served: path.bytes_released(dir),
                held: io.line.len() + path.held_packets(dir) as usize + access.as_ref().map_or(0, AccessStage::held),
                late: io.late,
                samples: io.samples,
                read_errors: io.read_errors,
                oversize: io.oversize,
                cpu_user_s: cpu.0,
                cpu_sys_s: cpu.1,
                rt,
                forced_rests: rests,
                spin_s: spin as f64 / 1e9,
                gso_super: 0,
                gso_errors: 0,
                per_port: io.per_port,
                access: access.as_ref().map(AccessStage::report),
            }
        };
    // One thread serves both directions: its CPU time, spinning and rests are reported on the
    // data direction (the ACK direction shows 0).
    let r0 = report(c0, Dir::Fwd, io0, a0, (u, s), idler.spin_total, idler.forced_rests);
    let r1 = report(c1, Dir::Rev, io1, a1, (0.0, 0.0), 0, 0);
    ([r0, r1], wifi_json)
}
