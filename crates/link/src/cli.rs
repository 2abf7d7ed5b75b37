//! The command line. The kernel backend (python/ccbench/backends/kernel/topology.py) builds it; the
//! flags are the ones it passes plus those for running the emulator by hand.
use clap::Parser;

/// A userspace bottleneck link between two TUN devices. Prints {"ready": true, ...} on stdout
/// once the devices exist, and the JSON report at the end.
#[derive(Parser, Debug)]
#[command(name = "ccbench-link", args_override_self = true)]
pub struct Args {
    /// Normalised scenario JSON (crates/sim/src/config/mod.rs) or its bottleneck object: a file,
    /// - for stdin, or the JSON text itself
    #[arg(long, value_name = "FILE|-|JSON", allow_hyphen_values = true)]
    pub config: String,
    /// Sender side: network namespace (name under /var/run/netns or a path)
    #[arg(long, value_name = "NS")]
    pub netns_a: Option<String>,
    /// Receiver side: network namespace
    #[arg(long, value_name = "NS")]
    pub netns_b: Option<String>,
    /// Sender side: TUN device name
    #[arg(long, value_name = "NAME", default_value = "ccbla")]
    pub tun_a: String,
    /// Receiver side: TUN device name
    #[arg(long, value_name = "NAME", default_value = "ccblb")]
    pub tun_b: String,
    /// Spin this long before each deadline instead of sleeping
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub spin_us: u64,
    /// After this long without sleeping, rest (sleep) so that normal tasks (the TCP
    /// applications) get the CPU and the kernel never throttles the real-time thread for tens
    /// of ms
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_busy_us: u64,
    /// How long such a rest lasts
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub rest_us: u64,
    /// SCHED_FIFO priority of the forwarding threads, 0 = off
    #[arg(long, value_name = "N", default_value_t = 10, allow_negative_numbers = true)]
    pub rt_prio: i32,
    /// Stop by itself after S seconds (default: run until SIGTERM/SIGINT/stdin EOF)
    #[arg(long, value_name = "S")]
    pub duration_s: Option<f64>,
    /// Do not stop when stdin reaches end of file
    #[arg(long)]
    pub ignore_stdin: bool,
    /// Sender-side TUN with IFF_VNET_HDR + TSO: read TCP super-packets and cut them into wire
    /// packets here (fewer reads; experimental, IPv4 TCP)
    #[arg(long)]
    pub gso: bool,
    /// Parse and validate the config, print the two directions, exit
    #[arg(long = "check-config")]
    pub check_only: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_backends_command_line_parses() {
        let a = Args::try_parse_from([
            "ccbench-link",
            "--config",
            "/tmp/c.json",
            "--netns-a",
            "/run/netns/s",
            "--tun-a",
            "ta",
            "--netns-b",
            "/run/netns/r",
            "--tun-b",
            "tb",
            "--rt-prio",
            "0",
            "--spin-us",
            "20",
            "--gso",
        ])
        .unwrap();
        assert_eq!(
            (a.config.as_str(), a.netns_a.as_deref(), a.tun_a.as_str()),
            ("/tmp/c.json", Some("/run/netns/s"), "ta")
        );
        assert_eq!((a.netns_b.as_deref(), a.tun_b.as_str()), (Some("/run/netns/r"), "tb"));
        assert_eq!((a.rt_prio, a.spin_us, a.gso), (0, 20, true));
        assert_eq!(
            (a.max_busy_us, a.rest_us, a.duration_s, a.ignore_stdin, a.check_only),
            (1000, 100, None, false, false)
        );
    }

    #[test]
    fn defaults_stdin_config_and_the_remaining_flags() {
        let a = Args::try_parse_from(["ccbench-link", "--config", "-"]).unwrap();
        assert_eq!(
            (a.config.as_str(), a.tun_a.as_str(), a.tun_b.as_str(), a.spin_us, a.rt_prio),
            ("-", "ccbla", "ccblb", 40, 10)
        );
        let a = Args::try_parse_from([
            "ccbench-link",
            "--config",
            "{\"rate_bps\": 1}",
            "--duration-s",
            "2.5",
            "--ignore-stdin",
            "--check-config",
            "--max-busy-us",
            "500",
            "--rest-us",
            "50",
        ])
        .unwrap();
        assert_eq!(
            (a.duration_s, a.ignore_stdin, a.check_only, a.max_busy_us, a.rest_us),
            (Some(2.5), true, true, 500, 50)
        );
        assert!(Args::try_parse_from(["ccbench-link"]).is_err(), "--config is required");
        assert!(Args::try_parse_from(["ccbench-link", "--config", "x", "--bogus"]).is_err());
    }
}
