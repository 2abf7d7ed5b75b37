//! Which host's access link a packet crosses, as the simulator assigns them
//! (crates/sim/src/topology.rs `Dumbbell::host`): flow f's packets (data and ACKs, either
//! direction) cross host f's links, and the ping probe crosses host 0's.
//!
//! On the kernel backend flow f is the TCP connection whose client port is the f-th entry of
//! `measured_tcp_ports` (backend.py gives flow f the port BASE_CPORT + f), in either the source
//! or the destination port; an ICMP echo is the probe. Anything else (iperf3's control
//! connections, IPv6 neighbour discovery) has no host in the simulator and crosses no access
//! link's queue: it keeps the access delay but is not serialised, so that a flow's control
//! connection never waits behind another flow's data. With no ports configured (the emulator on
//! its own) every packet is host 0's.

const TCP: u8 = 6;
const ICMP: u8 = 1;

pub struct HostOf {
    ports: Vec<u16>,
}

impl HostOf {
    pub fn new(measured_tcp_ports: &[u16]) -> Self {
        HostOf { ports: measured_tcp_ports.to_vec() }
    }

    /// The host index of an IP packet, or None when it belongs to no simulated host.
    #[inline]
    pub fn of(&self, p: &[u8]) -> Option<usize> {
        if self.ports.is_empty() {
            return Some(0);
        }
        if p.len() < 20 || p[0] >> 4 != 4 {
            return None;
        }
        let ihl = (p[0] & 0x0f) as usize * 4;
        match p[9] {
            ICMP => Some(0),
            TCP if p.len() >= ihl + 4 => {
                let sport = u16::from_be_bytes([p[ihl], p[ihl + 1]]);
                let dport = u16::from_be_bytes([p[ihl + 2], p[ihl + 3]]);
                self.ports.iter().position(|&q| q == sport || q == dport)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// An IPv4 packet of `proto` with the given ports (ICMP: the echo id in place of ports).
    pub fn ipv4(proto: u8, sport: u16, dport: u16, len: usize) -> Vec<u8> {
        let mut p = vec![0u8; len.max(24)];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[9] = proto;
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p
    }

    #[test]
    fn flows_by_client_port_the_probe_on_host_0_the_rest_on_none() {
        let h = HostOf::new(&[40000, 40001, 40002]);
        // data one way, ACKs the other: the client port on either side
        assert_eq!(h.of(&ipv4(TCP, 40001, 5202, 1500)), Some(1));
        assert_eq!(h.of(&ipv4(TCP, 5202, 40001, 52)), Some(1));
        assert_eq!(h.of(&ipv4(TCP, 40002, 5203, 1500)), Some(2));
        assert_eq!(h.of(&ipv4(ICMP, 0x0800, 7, 84)), Some(0));
        // a control connection's ephemeral port, UDP, IPv6
        assert_eq!(h.of(&ipv4(TCP, 51234, 5201, 100)), None);
        assert_eq!(h.of(&ipv4(17, 40001, 5201, 100)), None);
        assert_eq!(h.of(&[0x60; 40]), None);
        // the emulator on its own: one host
        assert_eq!(HostOf::new(&[]).of(&[0x60; 40]), Some(0));
    }
}
