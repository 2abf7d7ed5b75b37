//! ccbench-sim: a packet-level discrete-event simulator of Linux TCP congestion control.
//!
//! Pure Rust, no Python: `run(&SimConfig) -> SimReport`. The PyO3 crate (`crates/py`) wraps
//! `run_json` for the Python package.
pub mod bench_scenarios;
pub mod blake2b;
pub mod cc;
pub mod columns;
pub mod config;
pub mod event;
pub mod link;
pub mod metrics;
pub mod pcap;
pub mod report;
pub mod rng;
pub mod tcp;
#[cfg(test)]
mod test_support;
pub mod time;
pub mod topology;
pub mod world;

pub use config::SimConfig;
pub use report::SimReport;

/// Run a scenario.
pub fn run(cfg: &SimConfig) -> Result<SimReport, String> {
    run_with(cfg, &mut || false)
}

/// Run a scenario, polling `abort` every `world::POLL_EVENTS` events: when it returns true the
/// run stops with `Err(world::ABORTED)` (the Python bindings use it for Ctrl-C and SIGTERM).
pub fn run_with(cfg: &SimConfig, abort: &mut dyn FnMut() -> bool) -> Result<SimReport, String> {
    cfg.validate()?;
    world::World::new(cfg).run(abort)
}

/// JSON in, JSON out (the contract used by the Python bindings).
pub fn run_json(scenario_json: &str) -> Result<String, String> {
    run_json_with(scenario_json, &mut || false)
}

/// `run_json` with an abort hook (see `run_with`).
pub fn run_json_with(scenario_json: &str, abort: &mut dyn FnMut() -> bool) -> Result<String, String> {
    let cfg: SimConfig =
        serde_json::from_str(scenario_json).map_err(|e| format!("invalid simulator scenario JSON: {e}"))?;
    let report = run_with(&cfg, abort)?;
    serde_json::to_string(&report).map_err(|e| e.to_string())
}

/// JSON in, columns out: the report as raw Arrow-layout buffers plus a small JSON header
/// (`columns`), for runs with many flows where JSON text would cost more than the simulation.
/// `abort` as in `run_with`.
pub fn run_columns_with(scenario_json: &str, abort: &mut dyn FnMut() -> bool) -> Result<columns::Columns, String> {
    let cfg: SimConfig =
        serde_json::from_str(scenario_json).map_err(|e| format!("invalid simulator scenario JSON: {e}"))?;
    let report = run_with(&cfg, abort)?;
    columns::to_columns(&report)
}

/// The scenario JSON parsed (flow groups expanded, see `config`) and serialised again; the
/// config is not validated or run.
pub fn config_json(scenario_json: &str) -> Result<String, String> {
    let cfg: SimConfig =
        serde_json::from_str(scenario_json).map_err(|e| format!("invalid simulator scenario JSON: {e}"))?;
    serde_json::to_string(&cfg).map_err(|e| e.to_string())
}

/// `[{"name", "linux", "notes"}]` for `ccbench algorithms`.
pub fn algorithms_json() -> String {
    let rows: Vec<serde_json::Value> = cc::describe()
        .into_iter()
        .map(|(name, linux, notes)| serde_json::json!({"name": name, "linux": linux, "notes": notes}))
        .collect();
    serde_json::Value::Array(rows).to_string()
}
