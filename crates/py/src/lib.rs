//! PyO3 bindings: the only place Python meets the simulator.
//! The contract is JSON in (the normalised scenario, see `ccbench_sim::config`) and JSON out
//! (see `ccbench_sim::report`), so the Rust core stays free of Python types.
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Run one normalised scenario (JSON text) and return the result as JSON text.
/// The GIL is released while the simulation runs, so threads can run simulations in parallel.
#[pyfunction]
fn run_json(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let owned = scenario_json.to_owned();
    py.allow_threads(move || ccbench_sim::run_json(&owned))
        .map_err(PyValueError::new_err)
}

/// Names of the congestion-control algorithms the simulator implements, with the Linux
/// version each follows, as JSON text: [{"name": .., "linux": .., "notes": ..}].
#[pyfunction]
fn algorithms_json() -> String {
    ccbench_sim::algorithms_json()
}

#[pymodule]
fn _sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms_json, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
