//! Feed a captured packet arrival sequence into the simulator's receiver and print its
//! counters: the same data segments, at the same times and with the same TSvals, as a Linux
//! receiver got them (tests/kernel/test_kernel_paws_replay.py captures them on the kernel backend's
//! receiving TUN). What the receiver then does — PAWS discards, out-of-order queueing, its own
//! ACK decisions and timers — is the simulator's.
//!
//! Input (stdin), one arrival per line, in arrival order: `t_ns segment tsval`, with the
//! segment number counted from the first data segment (0) and the TSval in 1 ms ticks, ≥ 1.
//! Output: `name value` lines, the receiver's MIB counters.
use ccbench_sim::tcp::receiver::Receiver;
use ccbench_sim::tcp::Pkt;
use std::io::{self, BufRead};

fn main() {
    let mut rcv = Receiver::new(0, None, true);
    // REPLAY_TRACE=1: one line per arrival on stderr, `i acked ack_seq` (acked: an ACK left
    // at once), plus `timer t ack_seq` for ACKs the timers sent.
    let trace = std::env::var_os("REPLAY_TRACE").is_some();
    for (n, line) in io::stdin().lock().lines().enumerate() {
        let line = line.expect("stdin");
        let f: Vec<u64> = line
            .split_whitespace()
            .map(|x| x.parse().unwrap_or_else(|_| panic!("line {}: not a number: {x:?}", n + 1)))
            .collect();
        let &[t, seg, tsval] = f.as_slice() else {
            panic!("line {}: expected `t_ns segment tsval`, got {line:?}", n + 1);
        };
        // the receiver's timers that fell due before this arrival
        while let Some(d) = rcv.timer_deadline().filter(|&d| d <= t) {
            if let (Some(a), true) = (rcv.on_delack_timer(d), trace) {
                eprintln!("timer {d} {}", a.seq);
            }
        }
        let paws_before = rcv.mib.paws_estab;
        let ack = rcv.on_data(t, &Pkt::data(0, seg, tsval));
        if trace {
            let paws = rcv.mib.paws_estab - paws_before;
            eprintln!("{n} {} {} {paws}", ack.is_some() as u8, ack.map_or(0, |a| a.seq));
        }
    }
    for (name, value) in rcv.mib.named() {
        println!("{name} {value}");
    }
}
