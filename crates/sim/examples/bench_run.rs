//! Whole-run benchmark: runs each bench scenario `reps` times on one thread and prints one
//! JSON line per scenario with the best wall time, events/s and data packets/s.
use ccbench_sim::bench_scenarios;
use std::time::Instant;

fn main() {
    let reps: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    for (name, desc, cfg) in bench_scenarios::all() {
        let mut best = f64::MAX;
        let mut report = None;
        for _ in 0..reps {
            let t0 = Instant::now();
            let r = ccbench_sim::run(&cfg).unwrap();
            best = best.min(t0.elapsed().as_secs_f64());
            report = Some(r);
        }
        let r = report.unwrap();
        println!(
            "{}",
            serde_json::json!({
                "name": name, "description": desc, "wall_s": best,
                "events": r.run.events, "data_packets": r.run.data_packets,
                "events_per_s": r.run.events as f64 / best,
                "data_packets_per_s": r.run.data_packets as f64 / best,
                "utilisation": r.run.link_utilisation,
            })
        );
    }
}
