//! Criterion benchmark of whole simulator runs. Throughput is reported in simulated data
//! packets; run `make bench` for the summary table in benchmarks/simulator/RESULTS.md.
use ccbench_sim::bench_scenarios;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn runs(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim_run");
    g.sample_size(10);
    for (name, _desc, cfg) in bench_scenarios::all() {
        let packets = ccbench_sim::run(&cfg).unwrap().run.data_packets;
        g.throughput(Throughput::Elements(packets));
        g.bench_function(name, |b| b.iter(|| ccbench_sim::run(&cfg).unwrap()));
    }
    g.finish();
}

criterion_group!(benches, runs);
criterion_main!(benches);
