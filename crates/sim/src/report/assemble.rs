//! The report of a finished run, read off the world's final state: per-flow summaries, the run
//! summary, the link counters and the per-host MIB counters.
use super::{FlowSummary, LinkCounters, RunSummary, SimReport, WifiSummary};
use crate::tcp::mib::{CounterRow, Mib};
use crate::time::secs;
use crate::topology::{BN_FWD, BN_REV};
use crate::world::World;
use ccbench_queue::aqm;
use ccbench_wifi::Dir;

impl World<'_> {
    /// The run's report, once the event loop has reached the end.
    pub(crate) fn into_report(mut self) -> SimReport {
        let end = self.end;
        let (in_net, held) = self.packets_in_network();

        let mut flows = Vec::with_capacity(self.flows.len());
        let mut total_goodput = 0.0;
        for (i, f) in self.flows.iter().enumerate() {
            let fc = &self.cfg.flows[i];
            let start = f.start.min(end);
            let done_at = f.receiver.completed_at;
            let stop = done_at.unwrap_or(end);
            let mut bytes = f.receiver.bytes_delivered();
            if let Some(size) = fc.size_bytes {
                bytes = bytes.min(size);
            }
            let dur = secs(stop.saturating_sub(start));
            let goodput = if dur > 0.0 { bytes as f64 * 8.0 / dur } else { 0.0 };
            total_goodput += if end > start { bytes as f64 * 8.0 / secs(end - start) } else { 0.0 };
            let h = &f.sender.rtt_hist;
            let to_ms = |v: f64| v / 1000.0;
            flows.push(FlowSummary {
                flow_id: fc.id,
                group: fc.group,
                cc: fc.cc.clone(),
                goodput_bps: goodput,
                bytes_acked: f.sender.bytes_acked().min(fc.size_bytes.unwrap_or(u64::MAX)),
                retransmits: f.sender.retransmits,
                loss_events: f.sender.loss_events,
                rtt_min_ms: h.min().map(|v| to_ms(v as f64)),
                rtt_mean_ms: h.mean().map(to_ms),
                rtt_p50_ms: h.quantile(0.50).map(to_ms),
                rtt_p95_ms: h.quantile(0.95).map(to_ms),
                rtt_p99_ms: h.quantile(0.99).map(to_ms),
                cwnd_mean: f.sender.cwnd_avg.mean_until(stop),
                start_s: secs(start),
                end_s: secs(stop),
                fct_s: done_at.map(|t| secs(t - f.start)),
                completed: done_at.is_some(),
                data_sent: f.sender.data_sent,
                data_received: f.receiver.data_received,
                data_dropped: f.dropped,
                data_in_network: in_net[i],
            });
        }

        let bn = &mut self.net.links[BN_FWD as usize];
        let util = match &self.net.wifi {
            // Wi-Fi: IP bytes the far station released / (PHY rate × duration).
            Some(hop) => {
                let capacity_bytes = self.cfg.bottleneck.rate_bps as f64 * secs(end) / 8.0;
                (hop.stats().dir[Dir::Fwd as usize].bytes_delivered as f64 / capacity_bytes).clamp(0.0, 1.0)
            }
            None => {
                // rate × duration, or a trace link's opportunities up to the end × 1500 B
                let capacity_bytes = bn.capacity_bytes(end).unwrap_or(secs(end) / 8.0);
                // Bytes whose transmission was scheduled but had not happened by the end.
                let pending_bytes = bn.bytes_pending(end) as f64;
                ((bn.bytes_sent() as f64 - pending_bytes) / capacity_bytes).clamp(0.0, 1.0)
            }
        };
        let drops = self.net.links.iter().map(|l| l.dropped_queue).sum::<u64>();
        // Random losses of the loss model; the Wi-Fi hop's retry-limit drops are counted as
        // losses of their link (conservation) but reported apart (wifi_retry_drops).
        let retry_drops = self.net.wifi.as_ref().map_or(0, |h| h.retry_drops.iter().sum::<u64>());
        let losses = self.net.links.iter().map(|l| l.dropped_loss).sum::<u64>() - retry_drops;
        let wifi_ce = |l: usize| self.net.wifi.as_ref().filter(|_| l <= BN_REV as usize).map_or(0, |h| h.ce_marked[l]);
        let link_ce = |l: usize, link: &crate::link::Link| link.served_ref().map_or(0, |q| q.ce_marked) + wifi_ce(l);
        let ce_marked = self.net.links.iter().enumerate().map(|(i, l)| link_ce(i, l)).sum::<u64>();
        let ping = &self.ping_hist;
        let sojourn = self.net.links[BN_FWD as usize].sojourn.as_ref();
        let b = &self.cfg.bottleneck;
        let run = RunSummary {
            sojourn_p50_ms: sojourn.and_then(|m| m.quantile_ms(0.50)),
            sojourn_p95_ms: sojourn.and_then(|m| m.quantile_ms(0.95)),
            sojourn_p99_ms: sojourn.and_then(|m| m.quantile_ms(0.99)),
            aqm: b.aqm.clone(),
            aqm_params: aqm::resolved(&b.aqm, &b.aqm_params, b.buffer, b.rate_bps),
            link_utilisation: util,
            drops,
            ce_marked,
            random_losses: losses,
            aggregate_goodput_bps: total_goodput,
            probe_rtt_p50_ms: ping.quantile(0.50).map(|v| v / 1000.0),
            probe_rtt_p95_ms: ping.quantile(0.95).map(|v| v / 1000.0),
            probe_rtt_p99_ms: ping.quantile(0.99).map(|v| v / 1000.0),
            duration_s: secs(end),
            events: self.events_processed(),
            data_packets: self.flows.iter().map(|f| f.sender.data_sent).sum(),
            wifi: self.net.wifi.as_ref().map(|h| WifiSummary::from_stats(h.stats(), end)),
        };
        let links = self
            .net
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| LinkCounters {
                name: l.name.clone(),
                arrived: l.arrived,
                departed: l.departed,
                dropped_queue: l.dropped_queue,
                dropped_loss: l.dropped_loss,
                held: held[i],
                ce_marked: link_ce(i, l),
            })
            .collect();
        // Per host, as the kernel backend's per-namespace counters: "sender" is the left host
        // (forward flows' senders, reverse flows' receivers), "receiver" the right one.
        let (mut snd, mut rcv) = (Mib::default(), Mib::default());
        for f in &self.flows {
            let (s, r) = if f.reverse { (&mut rcv, &mut snd) } else { (&mut snd, &mut rcv) };
            s.add(&f.sender.mib_counters());
            r.add(&f.receiver.mib);
        }
        let counters = vec![CounterRow { side: "sender", mib: snd }, CounterRow { side: "receiver", mib: rcv }];
        SimReport { flows, run, series: self.series, link_series: self.link_series, links, counters }
    }
}
