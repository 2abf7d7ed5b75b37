//! The forwarding thread of one direction of a wired bottleneck: read packets from one TUN
//! device, pass them through the path model (path.rs: the queue discipline at the bottleneck
//! rate, random loss, propagation delay + jitter) and write them to the other device when due.
//!
//! Each turn: (0) the AQM arm's transmitter takes every packet due by now, and with access
//! links (access.rs) every packet the hosts' entry links have sent by now enters the bottleneck;
//! (1) write every packet due from the delay line (with access links: through the host's exit
//! link first); (2) read a bounded batch (with --gso, TCP super-packets cut into wire packets
//! here); (3) take queue samples; (4) wait until shortly before the next deadline (idle.rs).
use crate::access::AccessStage;
use crate::config::DirConfig;
use crate::measured::Measured;
use crate::path::{DelayLine, Outcome, PathModel, Verdict};
use crate::port_losses::{count_loss, PortLosses};
use crate::realtime::{enter_realtime, now_ns, thread_cpu, Timing, BATCH};
use crate::report::DirReport;
use crate::served::Arrival;
use crate::settle::settle;
use crate::slab::{Slab, SLOT};
use crate::stats::Lateness;
use crate::stop::{stop, stopped};
use crate::{ecn, flowkey, gso, idle, tun};
use std::os::fd::RawFd;

/// Hand an arriving packet (already in `slot`) to the path model: the fast path needs only its
/// length, the AQM arm also its flow and ECN capability. `Ok`: the slot is taken.
#[inline]
fn offer(
    model: &mut PathModel,
    measured: &mut Measured,
    now: u64,
    slot: u32,
    pkt: &[u8],
    line: &mut DelayLine,
) -> Result<(), Verdict> {
    let len = pkt.len() as u32;
    let impaired = measured.impairs(pkt);
    let v = if model.is_served() {
        model.offer(
            now,
            Arrival {
                slot,
                len,
                flow: flowkey::of_packet(pkt),
                ect: ecn::is_ect(pkt),
                l4s: ecn::is_l4s(pkt),
                impaired,
            },
        )
    } else {
        model.arrive_impaired(now, len, impaired)
    };
    match v {
        Verdict::Deliver(t) => {
            line.push(t, slot, len);
            Ok(())
        }
        Verdict::Queued => Ok(()),
        v => Err(v),
    }
}

/// An arriving packet (already in `slot`) goes to its host's entry link when there are access
/// links, else straight to the path model. `Ok`: the slot is taken.
#[inline]
#[allow(clippy::too_many_arguments)]
fn admit(
    access: &mut Option<AccessStage>,
    model: &mut PathModel,
    measured: &mut Measured,
    now: u64,
    slot: u32,
    pkt: &[u8],
    line: &mut DelayLine,
) -> Result<(), Verdict> {
    match access {
        Some(a) => a.enter(now, pkt, slot).then_some(()).ok_or(Verdict::Dropped),
        None => offer(model, measured, now, slot, pkt, line),
    }
}

/// Write one packet to `fd_out` (with a zero virtio-net header when `vnet_out`): whether the
/// write succeeded.
#[inline]
fn write_packet(fd_out: RawFd, vnet_out: bool, pkt: &[u8]) -> bool {
    let r = if vnet_out {
        let zero_hdr = [0u8; tun::VNET_HDR_LEN];
        let iov = [
            libc::iovec { iov_base: zero_hdr.as_ptr() as *mut libc::c_void, iov_len: tun::VNET_HDR_LEN },
            libc::iovec { iov_base: pkt.as_ptr() as *mut libc::c_void, iov_len: pkt.len() },
        ];
        unsafe { libc::writev(fd_out, iov.as_ptr(), 2) }
    } else {
        unsafe { libc::write(fd_out, pkt.as_ptr() as *const libc::c_void, pkt.len()) }
    };
    r >= 0
}

/// Forward from `fd_in` to `fd_out` until the run stops. `vnet_in` / `vnet_out`: the device
/// carries a virtio-net header (--gso: the sender-side device).
pub fn forward(
    cfg: DirConfig,
    fd_in: RawFd,
    fd_out: RawFd,
    t0: u64,
    tm: Timing,
    vnet_in: bool,
    vnet_out: bool,
) -> DirReport {
    let Timing { spin_ns, max_busy_ns, rest_ns, rt_prio, deadline } = tm;
    let mut big = if vnet_in { vec![0u8; 256 * 1024] } else { Vec::new() };
    let mut gso_super = 0u64;
    let mut per_port = PortLosses::new();
    let mut gso_errors = 0u64;
    let mut idler = idle::Idler::new(spin_ns, max_busy_ns, rest_ns);
    let rt = enter_realtime(rt_prio);
    let mut model = PathModel::new(&cfg);
    let mut measured = Measured::new(&cfg.measured_tcp_ports);
    let mut access = cfg.access.clone().map(|spec| AccessStage::new(spec, &cfg.measured_tcp_ports));
    model.start_trace_at(t0);
    let mut line = DelayLine::new();
    let mut late = Lateness::new();
    let mut slab = Slab::new();
    let mut samples = Vec::new();
    let sample_ns = cfg.sample_interval_ns;
    let mut next_sample = if sample_ns > 0 { t0 } else { u64::MAX };
    let mut read_errors = 0u64;
    let mut oversize = 0u64;
    let mut pfd = libc::pollfd { fd: fd_in, events: libc::POLLIN, revents: 0 };
    let mut outcomes: Vec<Outcome> = Vec::new();

    while !stopped() {
        // 0. AQM arm: the transmitter takes every packet due by now from the discipline.
        if model.is_served() {
            model.serve(now_ns());
            model.take_outcomes(&mut outcomes);
            for o in &outcomes {
                settle(o, &mut slab, &mut line, &mut per_port);
            }
        }
        // 0b. Access links: what the entry links have sent by now enters the bottleneck at
        // its due time (the fast path's departures are then exact whatever the loop's delay).
        if let Some(a) = access.as_mut() {
            let now = now_ns();
            while let Some((due, slot, len)) = a.pop_entering(now) {
                if let Err(v) = offer(&mut model, &mut measured, due, slot, slab.packet(slot, len), &mut line) {
                    count_loss(&mut per_port, slab.packet(slot, len), v);
                    slab.release(slot);
                }
            }
        }
        // 1. Deliver everything that is due (with access links: to the host's exit link, which
        // hands it out when serialised).
        loop {
            let now = now_ns();
            let Some((due, slot, len)) = line.pop_due(now) else { break };
            let pkt = slab.packet(slot, len);
            if let Some(a) = access.as_mut() {
                if !a.leave(due, pkt, slot) {
                    count_loss(&mut per_port, pkt, Verdict::Dropped);
                    slab.release(slot);
                }
                continue;
            }
            late.add(now - due);
            if write_packet(fd_out, vnet_out, pkt) {
                model.counters.packets_out += 1;
                model.counters.bytes_out += len as u64;
            } else {
                model.counters.write_errors += 1;
            }
            slab.release(slot);
        }
        while let Some(a) = access.as_mut() {
            let now = now_ns();
            let Some((due, slot, len)) = a.pop_leaving(now) else { break };
            late.add(now - due);
            if write_packet(fd_out, vnet_out, slab.packet(slot, len)) {
                model.counters.packets_out += 1;
                model.counters.bytes_out += len as u64;
            } else {
                model.counters.write_errors += 1;
            }
            slab.release(slot);
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
                    let slot = slab.peek_free();
                    slab.slot_mut(slot)[..seg.len()].copy_from_slice(seg);
                    match admit(&mut access, &mut model, &mut measured, now, slot, seg, &mut line) {
                        Ok(()) => slab.take(),
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
            let slot = slab.peek_free();
            let buf = slab.slot_mut(slot);
            let r = unsafe { libc::read(fd_in, buf.as_mut_ptr() as *mut libc::c_void, SLOT) };
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
            match admit(&mut access, &mut model, &mut measured, now, slot, slab.packet(slot, len), &mut line) {
                Ok(()) => slab.take(),
                Err(v) => count_loss(&mut per_port, slab.packet(slot, len), v),
            }
        }
        // The AQM arm's verdicts on held packets (this batch's drops, sends since step 0).
        if model.is_served() {
            model.take_outcomes(&mut outcomes);
            for o in &outcomes {
                settle(o, &mut slab, &mut line, &mut per_port);
            }
        }
        let now = now_ns();
        // 3. Queue occupancy samples.
        while now >= next_sample {
            samples.push((next_sample - t0, model.backlog_bytes(next_sample), model.departed_bytes(next_sample)));
            next_sample += sample_ns;
        }
        if let Some(d) = deadline {
            if now >= d {
                stop();
                break;
            }
        }
        // 4. Wait until shortly before the next deadline (idle.rs).
        let mut wake = line.next_time().unwrap_or(now + 50_000_000).min(now + 50_000_000);
        for t in [model.next_service(), access.as_ref().and_then(AccessStage::next_time)].into_iter().flatten() {
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
        held: line.len() + model.held_packets() as usize + access.as_ref().map_or(0, AccessStage::held),
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
        access: access.as_ref().map(AccessStage::report),
    }
}
