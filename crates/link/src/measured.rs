//! Which packets meet the scenario's random loss and jitter: the ones the simulator has too.
//!
//! The simulator's link carries only the measured flows' data segments and ACKs (and the ping
//! probe); the kernel backend's also carries iperf3's control connection, each data
//! connection's handshake, its 37-byte cookie and teardown, and IPv6 neighbour discovery on the
//! TUN devices. Drawing loss and jitter for those as well shifts the random streams the two
//! backends share (about 13 draws before the first data segment), so that the same seed loses
//! different segments on each, and lets the scenario's loss hit a handshake or the cookie — an
//! event of the test tool (a lost cookie costs a tail loss probe and halves cwnd before data
//! flows) that a simulated connection cannot have.
//!
//! With the measured connections' client ports configured (`measured_tcp_ports`, from the
//! kernel backend), a packet is impaired when it is
//! * a segment of a measured connection carrying at least `MIN_DATA_BYTES` of payload, or
//! * a pure ACK of one that acknowledges more than the first `SETUP_BYTES` of the peer's stream
//!   (past the cookie), counted from the first acknowledgement seen in this direction,
//! * or not TCP over IPv4 at all (the ICMP ping probe, which the simulator's link impairs too),
//!
//! and not when it is IPv6, a SYN, FIN or RST, a short segment (the cookie), or TCP of any other
//! connection. Without configured ports every packet is impaired (the emulator used on its own).

/// Payload of a data segment (the cookie is 37 bytes, a full segment 1448).
const MIN_DATA_BYTES: usize = 512;
/// The stream's setup bytes an ACK may cover and still be setup (the cookie).
const SETUP_BYTES: u32 = 64;

const TCP: u8 = 6;
const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const ACK: u8 = 0x10;

pub struct Measured {
    ports: Vec<u16>,
    /// Per measured connection: the first acknowledgement number seen in this direction.
    base_ack: Vec<Option<u32>>,
}

impl Measured {
    pub fn new(ports: &[u16]) -> Self {
        Measured { ports: ports.to_vec(), base_ack: vec![None; ports.len()] }
    }

    /// Whether the scenario's loss and jitter apply to this IP packet.
    pub fn impairs(&mut self, p: &[u8]) -> bool {
        if self.ports.is_empty() {
            return true;
        }
        match p.first().map(|b| b >> 4) {
            Some(4) if p.len() >= 20 => {}
            Some(6) => return false,
            _ => return true,
        }
        let ihl = (p[0] & 0x0f) as usize * 4;
        if p[9] != TCP {
            return true;
        }
        if p.len() < ihl + 20 {
            return false;
        }
        let t = &p[ihl..];
        let (sport, dport) = (u16::from_be_bytes([t[0], t[1]]), u16::from_be_bytes([t[2], t[3]]));
        let Some(i) = self.ports.iter().position(|&q| q == sport || q == dport) else {
            return false;
        };
        let flags = t[13];
        let ack = u32::from_be_bytes([t[8], t[9], t[10], t[11]]);
        if flags & ACK != 0 && self.base_ack[i].is_none() {
            self.base_ack[i] = Some(ack);
        }
        if flags & (SYN | FIN | RST) != 0 {
            return false;
        }
        let total = u16::from_be_bytes([p[2], p[3]]) as usize;
        let payload = total.saturating_sub(ihl + (t[12] >> 4) as usize * 4);
        if payload >= MIN_DATA_BYTES {
            return true;
        }
        if payload > 0 {
            return false;
        }
        let base = self.base_ack[i].unwrap_or(ack);
        ack.wrapping_sub(base) as i32 > SETUP_BYTES as i32
    }
}

/// The buffer slots of held packets that are not impaired (few: setup packets), for a queue
/// that decides their fate later (the served arm of path.rs, the Wi-Fi hop).
#[derive(Default)]
pub struct UnimpairedSlots(Vec<u32>);

impl UnimpairedSlots {
    /// A packet entering the queue in `slot`.
    pub fn hold(&mut self, slot: u32, impaired: bool) {
        if !impaired {
            self.0.push(slot);
        }
    }

    /// The packet in `slot` left the queue (sent or dropped): whether it is impaired.
    pub fn release(&mut self, slot: u32) -> bool {
        match self.0.iter().position(|&s| s == slot) {
            Some(i) => {
                self.0.swap_remove(i);
                false
            }
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4/TCP packet: ports, flags, ack number, payload length.
    fn tcp(sport: u16, dport: u16, flags: u8, ack: u32, payload: usize) -> Vec<u8> {
        let total = 20 + 32 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[9] = TCP;
        let t = &mut p[20..];
        t[0..2].copy_from_slice(&sport.to_be_bytes());
        t[2..4].copy_from_slice(&dport.to_be_bytes());
        t[8..12].copy_from_slice(&ack.to_be_bytes());
        t[12] = 8 << 4; // 32-byte header (timestamps)
        t[13] = flags;
        p
    }

    /// One iperf3 data connection (client port 40001 → server 5201) as the two directions of
    /// the link see it: only the data segments and the ACKs of data are impaired.
    #[test]
    fn only_the_data_connections_data_and_its_acks_are_impaired() {
        let (mut fwd, mut rev) = (Measured::new(&[40001]), Measured::new(&[40001]));
        let isn = 1_000u32;
        // handshake, cookie and its ACK
        assert!(!fwd.impairs(&tcp(40001, 5201, SYN, 0, 0)));
        assert!(!rev.impairs(&tcp(5201, 40001, SYN | ACK, isn + 1, 0)));
        assert!(!fwd.impairs(&tcp(40001, 5201, ACK, 7, 0)));
        assert!(!fwd.impairs(&tcp(40001, 5201, ACK | 0x08, 7, 37)));
        assert!(!rev.impairs(&tcp(5201, 40001, ACK, isn + 1 + 37, 0)));
        // the control connection (ephemeral client port), whatever it carries
        assert!(!fwd.impairs(&tcp(51234, 5201, ACK, 9, 1448)));
        assert!(!rev.impairs(&tcp(5201, 51234, ACK, 99_999, 0)));
        // data and the ACKs of data
        assert!(fwd.impairs(&tcp(40001, 5201, ACK, 7, 1448)));
        assert!(rev.impairs(&tcp(5201, 40001, ACK, isn + 1 + 37 + 1448, 0)));
        // teardown
        assert!(!fwd.impairs(&tcp(40001, 5201, FIN | ACK, 7, 0)));
        // IPv6 never; the ICMP probe always
        assert!(!fwd.impairs(&[0x60; 40]));
        let mut icmp = vec![0u8; 84];
        icmp[0] = 0x45;
        icmp[9] = 1;
        assert!(fwd.impairs(&icmp));
    }

    /// A reverse flow (iperf3 -R): data from the server, ACKs from the client, whose first
    /// acknowledgement (the handshake's) is the base.
    #[test]
    fn reverse_flows_are_classified_alike() {
        let (mut fwd, mut rev) = (Measured::new(&[40001]), Measured::new(&[40001]));
        let sisn = 5_000u32;
        assert!(!rev.impairs(&tcp(5201, 40001, SYN | ACK, 1, 0)));
        assert!(!fwd.impairs(&tcp(40001, 5201, ACK, sisn + 1, 0)));
        assert!(!fwd.impairs(&tcp(40001, 5201, ACK, sisn + 1, 37)));
        assert!(rev.impairs(&tcp(5201, 40001, ACK, 38, 1448)));
        assert!(fwd.impairs(&tcp(40001, 5201, ACK, sisn + 1 + 1448, 0)));
    }

    #[test]
    fn without_configured_ports_everything_is_impaired() {
        let mut m = Measured::new(&[]);
        assert!(m.impairs(&tcp(51234, 5201, SYN, 0, 0)));
        assert!(m.impairs(&[0x60; 40]));
    }
}
