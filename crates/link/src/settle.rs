//! What a served queue (the AQM arm, or the Wi-Fi medium) decided about a packet it held:
//! deliver it into the delay line, with the ECN field set to CE if it was marked, or count the
//! drop or loss against its port and free its slot. Shared by both forwarding loops.
use crate::ecn;
use crate::path::{DelayLine, Outcome, Verdict};
use crate::port_losses::{count_loss, PortLosses};
use crate::slab::Slab;

pub fn settle(o: &Outcome, slab: &mut Slab, line: &mut DelayLine, per_port: &mut PortLosses) {
    match o.verdict {
        Verdict::Deliver(t) => {
            if o.ce {
                ecn::set_ce(slab.packet_mut(o.slot, o.len));
            }
            line.push(t, o.slot, o.len);
        }
        v => {
            count_loss(per_port, slab.packet(o.slot, o.len), v);
            slab.release(o.slot);
        }
    }
}
