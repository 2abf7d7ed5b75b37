//! PyO3 bindings: the only place Python meets the simulator.
//! The contract is JSON in (the normalised scenario, see `ccbench_sim::config`) and JSON out
//! (see `ccbench_sim::report`), so the Rust core stays free of Python types.
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Run `sim` (a simulator call taking an abort hook) with the GIL released, so threads can
/// run simulations in parallel. Every `POLL_EVENTS` events the run takes the GIL back for a
/// moment to run pending signal handlers: Ctrl-C raises KeyboardInterrupt (and a handler's
/// exception, e.g. for SIGTERM or a SIGALRM timeout, propagates) within a fraction of a
/// second, even in a long run.
fn run_interruptible<T: Send>(
    py: Python<'_>,
    sim: impl FnOnce(&mut dyn FnMut() -> bool) -> Result<T, String> + Send,
) -> PyResult<T> {
    let mut pending: Option<PyErr> = None;
    let out = py.allow_threads(|| {
        let mut check_signals = || {
            Python::with_gil(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    pending = Some(e);
                    true
                }
            })
        };
        sim(&mut check_signals)
    });
    if let Some(e) = pending {
        return Err(e);
    }
    out.map_err(PyValueError::new_err)
}

/// Run one normalised scenario (JSON text) and return the result as JSON text
/// (interruptible, GIL released: see `run_interruptible`).
#[pyfunction]
fn run_json(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let owned = scenario_json.to_owned();
    run_interruptible(py, move |abort| ccbench_sim::run_json_with(&owned, abort))
}

/// Run one normalised scenario (JSON text) and return the report as columns:
/// `(header_json, blob)`, the layout of `ccbench_sim::columns` (the flows, series and
/// link_series tables as Arrow buffers in one bytes object; python/ccbench/backends/sim.py
/// wraps them without parsing). Interruptible, GIL released: see `run_interruptible`.
#[pyfunction]
fn run_columns(py: Python<'_>, scenario_json: &str) -> PyResult<(String, Py<PyBytes>)> {
    let owned = scenario_json.to_owned();
    let cols = run_interruptible(py, move |abort| ccbench_sim::run_columns_with(&owned, abort))?;
    Ok((cols.header, PyBytes::new(py, &cols.blob).unbind()))
}

/// The scenario JSON as the simulator reads it, serialised back: flow groups expanded into one
/// `flows` entry per connection (`ccbench_sim::config`). For tests that compare the
/// simulator's expansion with the Python one.
#[pyfunction]
fn config_json(scenario_json: &str) -> PyResult<String> {
    ccbench_sim::config_json(scenario_json).map_err(PyValueError::new_err)
}

/// Names of the congestion-control algorithms the simulator implements, with the Linux
/// version each follows, as JSON text: [{"name": .., "linux": .., "notes": ..}].
#[pyfunction]
fn algorithms_json() -> String {
    ccbench_sim::algorithms_json()
}

/// `WifiConfig::default()` as JSON text: the `[wifi]` defaults (Python checks its own
/// against these).
#[pyfunction]
fn wifi_defaults_json() -> String {
    serde_json::to_string(&ccbench_wifi::WifiConfig::default()).expect("serialisable")
}

/// Parse and check a `[wifi]` table (JSON text of `WifiConfig`); ValueError naming the key.
fn wifi_config(config_json: &str) -> PyResult<ccbench_wifi::WifiConfig> {
    let cfg: ccbench_wifi::WifiConfig =
        serde_json::from_str(config_json).map_err(|e| PyValueError::new_err(format!("wifi: {e}")))?;
    cfg.validate().map_err(PyValueError::new_err)?;
    Ok(cfg)
}

/// Check a `[wifi]` table (JSON text); ValueError with the medium's message (naming the key).
#[pyfunction]
fn wifi_check(config_json: &str) -> PyResult<()> {
    wifi_config(config_json).map(|_| ())
}

/// The nominal PHY rate (bit/s) of a `[wifi]` table's MCS, width and guard interval: the
/// `rate_bps` Python fills in for a Wi-Fi bottleneck.
#[pyfunction]
fn wifi_phy_rate_bps(config_json: &str) -> PyResult<u64> {
    Ok(ccbench_wifi::phy_rate_bps(&wifi_config(config_json)?))
}

#[pymodule]
fn _sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms_json, m)?)?;
    m.add_function(wrap_pyfunction!(run_columns, m)?)?;
    m.add_function(wrap_pyfunction!(config_json, m)?)?;
    m.add_function(wrap_pyfunction!(wifi_defaults_json, m)?)?;
    m.add_function(wrap_pyfunction!(wifi_check, m)?)?;
    m.add_function(wrap_pyfunction!(wifi_phy_rate_bps, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
