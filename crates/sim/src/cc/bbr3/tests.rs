use crate::config::{BottleneckConfig, FlowConfig, LossConfig, SimConfig};
const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

fn cfg(rate: u64, rtt_ms: u64, bdp: f64, loss: f64, ccs: &[&str], secs: u64) -> SimConfig {
    let mut b = BottleneckConfig::droptail(rate, rtt_ms * MS, bdp);
    if loss > 0.0 {
        b.loss = LossConfig::Bernoulli { p: loss };
    }
    let flows = ccs.iter().enumerate().map(|(i, cc)| FlowConfig { group: i as u32, ..FlowConfig::bulk(i as u32, cc, 64 << 20) }).collect();
    let mut c = SimConfig::new("bbr3", secs * S, b, flows);
    c.sample_interval_ns = 10 * MS;
    c
}

#[test]
fn explore() {
    for (name, c) in [
        ("clean", cfg(50_000_000, 50, 1.0, 0.0, &["bbr3"], 20)),
        ("loss1", cfg(50_000_000, 50, 1.0, 0.01, &["bbr3"], 20)),
        ("loss1v1", cfg(50_000_000, 50, 1.0, 0.01, &["bbr"], 20)),
        ("loss5", cfg(50_000_000, 50, 1.0, 0.05, &["bbr3"], 20)),
        ("loss5v1", cfg(50_000_000, 50, 1.0, 0.05, &["bbr"], 20)),
        ("deep", cfg(50_000_000, 50, 10.0, 0.0, &["bbr3", "bbr3"], 20)),
        ("deepv1", cfg(50_000_000, 50, 10.0, 0.0, &["bbr", "bbr"], 20)),
        ("shallow", cfg(50_000_000, 50, 0.25, 0.0, &["bbr3"], 20)),
        ("shallowv1", cfg(50_000_000, 50, 0.25, 0.0, &["bbr"], 20)),
    ] {
        let r = crate::run(&c).unwrap();
        let f = &r.flows[0];
        let q: Vec<u64> = r.link_series.queue_bytes.clone();
        let qmean = q.iter().sum::<u64>() as f64 / q.len() as f64 / 1500.0;
        let qmax = *q.iter().max().unwrap() as f64 / 1500.0;
        println!("{name}: util {:.3} gp {:.2} retx {} sent {} rate {:.4} cwnd {:.1} rtt {:?} qmean {:.1} qmax {:.1}", r.run.link_utilisation, f.goodput_bps/1e6, f.retransmits, f.data_sent, f.retransmits as f64 / f.data_sent as f64, f.cwnd_mean, f.rtt_mean_ms, qmean, qmax);
        let s = &r.series;
        let mut last = String::new();
        for i in 0..s.t_s.len() {
            if s.flow_id[i] == 0 && s.cc_state[i] != last {
                last = s.cc_state[i].clone();
                if name == "clean" || name == "loss1" { println!("  t={:.2} {} cwnd {}", s.t_s[i], last, s.cwnd_pkts[i]); }
            }
        }
    }
}
