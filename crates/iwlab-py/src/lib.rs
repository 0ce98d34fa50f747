//! Thin PyO3 bindings of iwlab-core: parse/validate scenarios, run them, hand back columns.
//! No simulation logic lives here.

use iwlab_core::metrics::{Column, Results, Table};
use iwlab_core::scenario::{Scenario, ScenarioError as CoreError};
use iwlab_core::trace::observer::PcapTrace;
use iwlab_core::trace::pcap::{PcapWriter, TraceFilter};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// CPU time of the calling thread, seconds: the engine's own, whatever else the machine runs.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write into; the clock id is a constant Linux knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
use std::sync::{Arc, Mutex};

create_exception!(_core, ScenarioError, PyValueError, "A scenario was rejected: args = (message, path, line, column).");

fn scenario_error(e: CoreError) -> PyErr {
    ScenarioError::new_err((e.to_string(), e.path().to_string(), e.line(), e.column()))
}

fn parse(text: &str, format: &str) -> PyResult<Scenario> {
    match format {
        "toml" => Scenario::from_toml_str(text),
        "json" => Scenario::from_json_str(text),
        other => return Err(PyValueError::new_err(format!("format = {other:?}; expected \"toml\" or \"json\""))),
    }
    .map_err(scenario_error)
}

/// Parses and validates a scenario; returns its canonical JSON (defaults filled in).
#[pyfunction]
#[pyo3(signature = (text, format = "toml"))]
fn normalize(text: &str, format: &str) -> PyResult<String> {
    parse(text, format)?.to_json_string().map_err(scenario_error)
}

/// Reads a scenario file (JSON if it ends in `.json`, else TOML) and validates it, relative
/// paths inside it (empirical CDF files) resolved against its folder; returns canonical JSON.
#[pyfunction]
fn normalize_path(path: &str) -> PyResult<String> {
    Scenario::from_path(path).and_then(|s| s.to_json_string()).map_err(scenario_error)
}

/// Canonical TOML of a scenario given as TOML or JSON.
#[pyfunction]
#[pyo3(signature = (text, format = "json"))]
fn to_toml(text: &str, format: &str) -> PyResult<String> {
    parse(text, format)?.to_toml_string().map_err(scenario_error)
}

fn table_to_dict<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        match col {
            Column::U64(v) => d.set_item(*name, v)?,
            Column::I64(v) => d.set_item(*name, v)?,
            Column::F64(v) => d.set_item(*name, v)?,
            Column::OptF64(v) => d.set_item(*name, v)?,
            Column::Bool(v) => d.set_item(*name, v)?,
            Column::Str(v) => d.set_item(*name, v)?,
        }
    }
    Ok(d)
}

/// The type of each column: "u64", "i64", "f64", "opt_f64", "bool" or "str".
fn table_types<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        let ty = match col {
            Column::U64(_) => "u64",
            Column::I64(_) => "i64",
            Column::F64(_) => "f64",
            Column::OptF64(_) => "opt_f64",
            Column::Bool(_) => "bool",
            Column::Str(_) => "str",
        };
        d.set_item(*name, ty)?;
    }
    Ok(d)
}

/// Runs a scenario (JSON or TOML text) with `seed` (the scenario's own if None). Returns a
/// dict with "flows", "pages", "links", "queues" (dicts of columns), "types" (per table, the
/// type of each column, so that empty tables keep their schema) and "summary".
/// With `pcap`, packets on the bottleneck (both directions) of the chosen `flows` (all if
/// None) are written to that file.
#[pyfunction]
#[pyo3(signature = (text, format = "json", seed = None, pcap = None, flows = None))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    format: &str,
    seed: Option<u64>,
    pcap: Option<String>,
    flows: Option<Vec<u32>>,
) -> PyResult<Bound<'py, PyDict>> {
    let scenario = parse(text, format)?;
    let mut built = scenario.build(seed).map_err(scenario_error)?;
    let mut trace = None;
    if let Some(path) = &pcap {
        let file = std::fs::File::create(path).map_err(|e| PyOSError::new_err(format!("pcap = {path:?}: {e}")))?;
        let writer = PcapWriter::new(std::io::BufWriter::new(file))
            .map_err(|e| PyOSError::new_err(format!("pcap = {path:?}: {e}")))?;
        let writer = Arc::new(Mutex::new(writer));
        let filter = flows.map_or_else(TraceFilter::all, TraceFilter::only);
        let ports = Some(vec![built.bottleneck_forward, built.bottleneck_reverse]);
        let obs = PcapTrace::new(writer.clone(), ports, filter);
        let err = obs.error_slot();
        built.sim.core.add_observer(Box::new(obs));
        trace = Some((writer, err));
    }
    let (end, warmup, seed) = (built.end, built.warmup, built.seed);
    let (results, wall, cpu) = py
        .allow_threads(move || {
            let (t, c) = (std::time::Instant::now(), thread_cpu_seconds());
            let sim = built.run();
            let (wall, cpu) = (t.elapsed().as_secs_f64(), thread_cpu_seconds() - c);
            sim.check_accounting().map(|_| (Results::collect(&sim, end, warmup), wall, cpu))
        })
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("accounting identity broken: {e}")))?;
    if let Some((writer, err)) = trace {
        if let Some(e) = err.lock().unwrap().take() {
            return Err(PyOSError::new_err(e));
        }
        writer.lock().unwrap().flush().map_err(|e| PyOSError::new_err(format!("pcap: {e}")))?;
    }
    let out = PyDict::new(py);
    out.set_item("flows", table_to_dict(py, &results.flows)?)?;
    out.set_item("pages", table_to_dict(py, &results.pages)?)?;
    out.set_item("links", table_to_dict(py, &results.links)?)?;
    out.set_item("queues", table_to_dict(py, &results.queues)?)?;
    let types = PyDict::new(py);
    types.set_item("flows", table_types(py, &results.flows)?)?;
    types.set_item("pages", table_types(py, &results.pages)?)?;
    types.set_item("links", table_types(py, &results.links)?)?;
    types.set_item("queues", table_types(py, &results.queues)?)?;
    out.set_item("types", types)?;
    let s = &results.summary;
    let summary = PyDict::new(py);
    summary.set_item("seed", seed)?;
    summary.set_item("duration", s.duration)?;
    summary.set_item("warmup", s.warmup)?;
    summary.set_item("events", s.events)?;
    summary.set_item("packets_created", s.packets_created)?;
    summary.set_item("packets_delivered", s.packets_delivered)?;
    summary.set_item("packets_dropped", s.packets_dropped)?;
    summary.set_item("packets_in_flight", s.packets_in_flight)?;
    summary.set_item("flows", s.flows)?;
    summary.set_item("flows_completed", s.flows_completed)?;
    summary.set_item("pages", s.pages)?;
    summary.set_item("pages_completed", s.pages_completed)?;
    summary.set_item("link_transmissions", s.link_transmissions)?;
    summary.set_item("wall_seconds", wall)?;
    summary.set_item("cpu_seconds", cpu)?;
    summary.set_item("core_version", env!("CARGO_PKG_VERSION"))?;
    summary.set_item("engine_id", env!("IWLAB_ENGINE_ID"))?;
    out.set_item("summary", summary)?;
    Ok(out)
}

/// The version of the simulator core.
#[pyfunction]
fn core_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Fingerprint of this engine build (its sources and locked dependencies, see build.rs): two
/// builds with the same id give bit-identical results for the same scenario and seed.
#[pyfunction]
fn engine_id() -> &'static str {
    env!("IWLAB_ENGINE_ID")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    m.add_function(wrap_pyfunction!(engine_id, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_path, m)?)?;
    m.add_function(wrap_pyfunction!(to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    Ok(())
}
