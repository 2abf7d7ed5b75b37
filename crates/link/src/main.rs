//! ccbench-link: a userspace bottleneck between two TUN devices.
//!
//! Side A is the sender's side (data enters here), side B the receiver's. Each direction has
//! its own thread (wire_loop.rs): read packets from one TUN, pass them through the path model
//! (the scenario's queue discipline at the bottleneck rate → random loss → propagation delay +
//! jitter), write them to the other TUN when due; a packet the discipline marked CE has its
//! ECN field rewritten (ecn.rs) on the way out of the queue. The thread sleeps with ppoll until
//! `spin_us` before the next deadline, then spins (still reading arrivals) so packets leave
//! within a few µs of their due time. At the end (SIGTERM, SIGINT, stdin closed, or
//! --duration-s; stop.rs) it prints one JSON report to stdout (report.rs).
//!
//! With `bottleneck.wifi` the hop is one 802.11n medium shared by both directions: a single
//! thread serves both devices through it (wifi.rs, wifi_loop.rs) and the report gains a `wifi`
//! object with the medium's statistics.
//!
//! With `access.rate` each host also has its own access links in front of and behind the
//! bottleneck, as in the simulator (access.rs).
//!
//! This file only orchestrates: arguments (cli.rs), config, devices, threads, the report.
mod access;
mod cli;
mod config;
mod ecn;
mod flowkey;
mod gso;
mod hostof;
mod idle;
mod measured;
mod path;
mod port_losses;
mod propagation;
mod realtime;
mod report;
mod served;
mod settle;
mod slab;
mod stats;
mod stop;
mod tun;
mod wifi;
mod wifi_loop;
mod wire_loop;

use clap::Parser;
use cli::Args;
use config::LinkConfig;
use realtime::{now_ns, Timing};
use report::{DirReport, RunReport, WifiJson};
use serde_json::json;
use std::io::{Read, Write};
use std::os::fd::RawFd;
use std::thread::JoinHandle;
use std::time::Duration;

/// The config from `--config`: JSON text, `-` for stdin, or a file name.
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

fn print_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn spawn<T: Send + 'static>(name: &str, f: impl FnOnce() -> T + Send + 'static) -> Result<JoinHandle<T>, String> {
    std::thread::Builder::new().name(name.into()).spawn(f).map_err(|e| e.to_string())
}

fn wait_for_stop() {
    while !stop::stopped() {
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn run() -> Result<(), String> {
    let args = Args::parse();
    let cfg = read_config(&args.config)?;
    let dirs = cfg.directions();
    if args.check_only {
        println!("{:#?}", dirs);
        return Ok(());
    }
    if args.gso && cfg.wifi().is_some() {
        return Err("--gso: not with bottleneck.wifi (the Wi-Fi thread reads plain packets)".into());
    }
    let fd_a = tun::create_tun_in(args.netns_a.as_deref(), &args.tun_a, args.gso).map_err(|e| e.to_string())?;
    let fd_b = tun::create_tun_in(args.netns_b.as_deref(), &args.tun_b, false).map_err(|e| e.to_string())?;
    stop::install_signal_handlers();
    let t0 = now_ns();
    print_line(
        &json!({"ready": true, "pid": std::process::id(), "tun_a": args.tun_a, "tun_b": args.tun_b,
                "clock_monotonic_start_ns": t0})
        .to_string(),
    );
    if !args.ignore_stdin {
        stop::stop_at_stdin_eof();
    }
    let timing = || Timing {
        spin_ns: args.spin_us * 1000,
        max_busy_ns: args.max_busy_us * 1000,
        rest_ns: args.rest_us * 1000,
        rt_prio: args.rt_prio,
        deadline: args.duration_s.map(|s| t0 + (s * 1e9) as u64),
    };
    let ([r0, r1], wifi): ([DirReport; 2], Option<WifiJson>) = match cfg.wifi().cloned() {
        // The Wi-Fi bottleneck: one thread serves both devices through the shared medium.
        Some(wifi) => {
            let (tm, fds) = (timing(), [fd_a, fd_b]);
            let h = spawn("wifi", move || wifi_loop::forward_wifi(wifi, dirs, fds, t0, tm))?;
            wait_for_stop();
            let (reports, medium) = h.join().map_err(|_| "wifi thread panicked")?;
            (reports, Some(medium))
        }
        // The wire: one thread per direction; with --gso the sender-side device carries
        // virtio-net headers (read on the data direction, written on the ACK direction).
        None => {
            let [d0, d1] = dirs;
            let (tm0, tm1, gso) = (timing(), timing(), args.gso);
            let h0 = spawn("data", move || wire_loop::forward(d0, fd_a, fd_b, t0, tm0, gso, false))?;
            let h1 = spawn("ack", move || wire_loop::forward(d1, fd_b, fd_a, t0, tm1, false, gso))?;
            wait_for_stop();
            let r0 = h0.join().map_err(|_| "data thread panicked")?;
            let r1 = h1.join().map_err(|_| "ack thread panicked")?;
            ([r0, r1], None)
        }
    };
    let end = now_ns();
    let report = RunReport {
        clock_monotonic_start_ns: t0,
        duration_s: (end - t0) as f64 / 1e9,
        sample_interval_ns: cfg.sample_interval_ns,
        spin_us: args.spin_us,
        directions: [r0.json(), r1.json()],
        wifi,
    };
    print_line(&report.to_json_line());
    close([fd_a, fd_b]);
    Ok(())
}

fn close(fds: [RawFd; 2]) {
    for fd in fds {
        unsafe { libc::close(fd) };
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("ccbench-link: error: {e}");
        std::process::exit(2);
    }
}
