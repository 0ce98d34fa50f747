//! Thin PyO3 bindings of iwlab-core: parse/validate scenarios, run them, hand back columns.
//! No simulation logic lives here.

mod parquet_files;
mod prefix;

use iwlab_core::engine::SimTime;
use iwlab_core::metrics::headline::Headline;
use iwlab_core::metrics::iw_events::iw_event_table;
use iwlab_core::metrics::link::{link_records, link_table};
use iwlab_core::metrics::page::{page_table, queue_table};
use iwlab_core::metrics::{for_each_flow_chunk, Column, Results, Summary, Table};
use iwlab_core::scenario::policy_file::{policies_from_json, sim_host_addresses, PolicyFile};
use iwlab_core::scenario::{Scenario, ScenarioError as CoreError};
use iwlab_core::tcp::iw::{AnyIw, DstKey, IwConfig, IwContext, IwEvent, IwEventKind, IwPolicy};
use iwlab_core::trace::observer::PcapTrace;
use iwlab_core::trace::pcap::{PcapWriter, TraceFilter};
use parquet_files::ParquetTables;
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use std::collections::{BTreeMap, HashMap};

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

/// The JSON Schema of scenario files (`which = "scenario"`) or policy files (`"policy-file"`),
/// derived from the core's serde structs.
#[pyfunction]
#[pyo3(signature = (which = "scenario"))]
fn schema(which: &str) -> PyResult<String> {
    let v = match which {
        "scenario" => iwlab_core::scenario::schema::scenario_schema(),
        "policy-file" => iwlab_core::scenario::schema::policy_file_schema(),
        other => {
            return Err(PyValueError::new_err(format!("which = {other:?}; expected \"scenario\" or \"policy-file\"")))
        }
    };
    Ok(serde_json::to_string_pretty(&v).expect("a schema serialises"))
}

/// Names of the TCP profiles (`tcp.profile`).
#[pyfunction]
fn tcp_profile_names() -> Vec<&'static str> {
    iwlab_core::scenario::profile::NAMES.to_vec()
}

/// The `[tcp]` table of TCP profile `name`, as TOML text (scenario/profile.rs).
#[pyfunction]
fn tcp_profile_toml(name: &str) -> PyResult<&'static str> {
    iwlab_core::scenario::profile::toml_text(name)
        .map_err(|e| PyValueError::new_err(format!("tcp.profile = {name:?} is not allowed; expected {e}")))
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

/// Rows per chunk handed to a sink, and so per Parquet row group of `iwlab run`. A chunk in
/// flight costs ~1.2 kB per row at its peak (the flow rows, their table with a `String` per
/// label, the Arrow buffers, the Parquet writer's pages): at 65 536 rows a run of up to 65 536
/// flows paid that for every flow (1 920 B per extra flow, web-search at 1 Gb/s, 847 → 13 065
/// flows); at 4 096 it is a fixed ~5 MB (bench/README.md, "Memory per flow").
const CHUNK: usize = 1 << 12;

/// Arrow's LSB-first validity/boolean bit packing.
fn bitmap(bits: impl ExactSizeIterator<Item = bool>) -> Vec<u8> {
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, b) in bits.enumerate() {
        if b {
            out[i >> 3] |= 1 << (i & 7);
        }
    }
    out
}

fn bytes_of<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain numbers (u64, i64, f64, i32) have no padding; the slice covers exactly
    // their memory, read as bytes in the machine's order, which is Arrow's.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// One column as Arrow buffers: `(kind, rows, data, validity or None, null_count, offsets or
/// None)` — what `pyarrow.Array.from_buffers` takes, with no Python object per value.
fn column_buffers<'py>(py: Python<'py>, col: &Column) -> PyResult<Bound<'py, PyTuple>> {
    let none = || py.None().into_bound(py);
    let b = |x: &[u8]| PyBytes::new(py, x).into_any();
    let (kind, n, data, valid, nulls, offsets) = match col {
        Column::U64(v) => ("u64", v.len(), b(bytes_of(v)), none(), 0, none()),
        Column::I64(v) => ("i64", v.len(), b(bytes_of(v)), none(), 0, none()),
        Column::F64(v) => ("f64", v.len(), b(bytes_of(v)), none(), 0, none()),
        Column::OptF64(v) => {
            let nulls = v.iter().filter(|x| x.is_none()).count();
            let data: Vec<f64> = v.iter().map(|x| x.unwrap_or(0.0)).collect();
            let valid = if nulls > 0 { b(&bitmap(v.iter().map(Option::is_some))) } else { none() };
            ("opt_f64", v.len(), b(bytes_of(&data)), valid, nulls, none())
        }
        Column::Bool(v) => ("bool", v.len(), b(&bitmap(v.iter().copied())), none(), 0, none()),
        Column::Str(v) => {
            let mut offsets = Vec::with_capacity(v.len() + 1);
            let mut text = Vec::new();
            offsets.push(0i32);
            for s in v {
                text.extend_from_slice(s.as_bytes());
                let end = i32::try_from(text.len()).map_err(|_| PyValueError::new_err("string column over 2 GiB"))?;
                offsets.push(end);
            }
            ("str", v.len(), b(&text), none(), 0, b(bytes_of(&offsets)))
        }
    };
    PyTuple::new(
        py,
        [
            kind.into_pyobject(py)?.into_any(),
            n.into_pyobject(py)?.into_any(),
            data,
            valid,
            nulls.into_pyobject(py)?.into_any(),
            offsets,
        ],
    )
}

/// Hands `table` to `sink(name, columns)`, columns as `column_buffers` in table order.
fn to_sink(py: Python<'_>, sink: &PyObject, name: &str, table: &Table) -> PyResult<()> {
    let d = PyDict::new(py);
    for (col_name, col) in &table.columns {
        d.set_item(*col_name, column_buffers(py, col)?)?;
    }
    sink.call1(py, (name, d))?;
    Ok(())
}

/// Where the record chunks go: a Python sink (Arrow buffers, `to_sink`) or Parquet files
/// written here. Both see the same chunks, and the headline is read off them on the way.
enum Records {
    Sink(PyObject),
    Files(ParquetTables),
}

impl Records {
    fn take(&mut self, name: &str, table: &Table) -> PyResult<()> {
        match self {
            Records::Sink(sink) => Python::with_gil(|py| to_sink(py, sink, name, table)),
            Records::Files(files) => files.write(name, table).map_err(PyOSError::new_err),
        }
    }
}

/// A table `CHUNK` rows at a time (at least one chunk, empty for no rows), built from `rows` by
/// `table_of`.
fn chunked<T>(
    rows: &[T],
    table_of: impl Fn(&[T]) -> Table,
    mut each: impl FnMut(Table) -> PyResult<()>,
) -> PyResult<()> {
    for chunk in rows.chunks(CHUNK) {
        each(table_of(chunk))?;
    }
    if rows.is_empty() {
        each(table_of(&[]))?;
    }
    Ok(())
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
/// None) are written to that file; with `keylog` as well, the TLS secrets of the QUIC connections
/// go to that file (SSLKEYLOGFILE format) and the pcap carries the QUIC datagrams' bytes (the
/// same for the same seed), so Wireshark decrypts them. With `iw_events`, every IW decision and policy event is
/// recorded and returned as the "iw_events" table (metrics/iw_events.rs).
/// With `sink`, the tables are not returned: each goes to `sink(name, columns)` as it is read
/// off the engine, in chunks of at most 4 096 rows (at least one chunk per table), every
/// column as Arrow buffers (`column_buffers`); the dict then holds only "summary". With `out`
/// (a folder, created if need be) instead, the tables are written to `out/NAME.parquet` here,
/// chunk by chunk (`parquet_files`); the dict then holds "summary" and "tables" (the names of
/// the files written). Either way the summary ends with the headline (`headline`): the medians
/// and the bottleneck's figures, read off the tables on the way.
#[pyfunction]
#[pyo3(signature = (text, format = "json", seed = None, pcap = None, flows = None, iw_events = false, sink = None, out = None, keylog = None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    format: &str,
    seed: Option<u64>,
    pcap: Option<String>,
    flows: Option<Vec<u32>>,
    iw_events: bool,
    sink: Option<PyObject>,
    out: Option<String>,
    keylog: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    if sink.is_some() && out.is_some() {
        return Err(PyValueError::new_err("run: give `sink` or `out`, not both"));
    }
    let scenario = parse(text, format)?;
    let mut built = scenario.build(seed).map_err(scenario_error)?;
    if iw_events {
        built.sim.core.iw.iter_mut().for_each(AnyIw::record);
    }
    let instances = built.iw.clone();
    let addresses = sim_host_addresses(&built.groups);
    let mut trace = None;
    if let Some(path) = &pcap {
        let file = std::fs::File::create(path).map_err(|e| PyOSError::new_err(format!("pcap = {path:?}: {e}")))?;
        let writer = PcapWriter::new(std::io::BufWriter::new(file))
            .map_err(|e| PyOSError::new_err(format!("pcap = {path:?}: {e}")))?;
        let writer = Arc::new(Mutex::new(writer));
        let filter = flows.map_or_else(TraceFilter::all, TraceFilter::only);
        let ports = Some(vec![built.bottleneck_forward, built.bottleneck_reverse]);
        let obs = PcapTrace::new(writer.clone(), ports, filter);
        // With a key log the QUIC datagrams are written as sent, for Wireshark to decrypt.
        let obs = if keylog.is_some() { obs.with_datagrams() } else { obs };
        let err = obs.error_slot();
        built.sim.core.add_observer(Box::new(obs));
        trace = Some((writer, err));
    }
    let (end, warmup, seed) = (built.end, built.warmup, built.seed);
    let records = match (sink, &out) {
        (_, Some(dir)) => Some(Records::Files(ParquetTables::new(std::path::Path::new(dir)))),
        (Some(sink), None) => Some(Records::Sink(sink)),
        (None, None) => None,
    };
    let streaming = records.is_some();
    // The engine runs without the GIL; the records go to the sink chunk by chunk while the
    // simulation is still alive (they are read off it), and the simulation is freed before
    // the tables return to Python (when there is no sink).
    let (results, summary, iw_table, wall, cpu, headline, tables) = py.allow_threads(move || -> PyResult<_> {
        let (t, c) = (std::time::Instant::now(), thread_cpu_seconds());
        let sim = match &keylog {
            Some(path) => {
                let (sim, log) = iwlab_core::quic::with_key_log(|| built.run());
                std::fs::write(path, log).map_err(|e| PyOSError::new_err(format!("keylog = {path:?}: {e}")))?;
                sim
            }
            None => built.run(),
        };
        let (wall, cpu) = (t.elapsed().as_secs_f64(), thread_cpu_seconds() - c);
        sim.check_accounting()
            .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("accounting identity broken: {e}")))?;
        let iw_table = iw_events.then(|| iw_event_table(&instances, &sim.core.iw, &addresses));
        let Some(mut records) = records else {
            let results = Results::collect(&sim, end, warmup);
            let summary = results.summary.clone();
            let mut headline = Headline::default();
            for (name, t) in [("flows", &results.flows), ("pages", &results.pages), ("links", &results.links)] {
                headline.see(name, t);
            }
            return Ok((Some(results), summary, iw_table, wall, cpu, headline.finish(), None));
        };
        let core = &sim.core;
        let mut headline = Headline::default();
        let mut take = |name: &str, t: Table| {
            headline.see(name, &t);
            records.take(name, &t)
        };
        let completed = for_each_flow_chunk(core, warmup, CHUNK, |t| take("flows", t))?;
        chunked(&core.records.pages, |rows| page_table(rows, warmup), |t| take("pages", t))?;
        chunked(&link_records(core, end), link_table, |t| take("links", t))?;
        chunked(&core.records.queue, queue_table, |t| take("queues", t))?;
        if let Some(t) = &iw_table {
            records.take("iw_events", t)?;
        }
        let tables = match records {
            Records::Files(files) => Some(files.finish().map_err(PyOSError::new_err)?),
            Records::Sink(_) => None,
        };
        let summary = Summary::of(&sim, end, warmup, completed);
        Ok((None, summary, iw_table, wall, cpu, headline.finish(), tables))
    })?;
    if let Some((writer, err)) = trace {
        if let Some(e) = err.lock().unwrap().take() {
            return Err(PyOSError::new_err(e));
        }
        writer.lock().unwrap().flush().map_err(|e| PyOSError::new_err(format!("pcap: {e}")))?;
    }
    let out = PyDict::new(py);
    let types = PyDict::new(py);
    if let Some(results) = &results {
        out.set_item("types", &types)?;
        out.set_item("flows", table_to_dict(py, &results.flows)?)?;
        out.set_item("pages", table_to_dict(py, &results.pages)?)?;
        out.set_item("links", table_to_dict(py, &results.links)?)?;
        out.set_item("queues", table_to_dict(py, &results.queues)?)?;
        types.set_item("flows", table_types(py, &results.flows)?)?;
        types.set_item("pages", table_types(py, &results.pages)?)?;
        types.set_item("links", table_types(py, &results.links)?)?;
        types.set_item("queues", table_types(py, &results.queues)?)?;
    }
    if let Some(t) = &iw_table {
        if !streaming {
            out.set_item("iw_events", table_to_dict(py, t)?)?;
            types.set_item("iw_events", table_types(py, t)?)?;
        }
    }
    let s = &summary;
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
    for (key, value) in headline {
        summary.set_item(key, value)?;
    }
    out.set_item("summary", summary)?;
    if let Some(tables) = tables {
        out.set_item("tables", tables)?;
    }
    Ok(out)
}

/// Parses and validates a policy file (TOML text); returns its canonical JSON: `policies`
/// (canonical specs by name), `default`, `routes` (prefix text or None for the default
/// route, policy, initrwnd, congctl, line). Raises ScenarioError.
#[pyfunction]
fn parse_policy_file(text: &str) -> PyResult<String> {
    PolicyFile::from_toml_str(text).map(|f| f.to_json_string()).map_err(scenario_error)
}

/// The simulator's IW policies (`iwlab_core::tcp::iw`), one instance per policy name, with
/// destinations given as strings (route prefixes), interned to the core's opaque keys.
#[pyclass(module = "iwlab._core")]
struct PolicyEngine {
    configs: BTreeMap<String, IwConfig>,
    policies: BTreeMap<String, AnyIw>,
    keys: HashMap<String, DstKey>,
    names: Vec<String>,
}

impl PolicyEngine {
    fn policy(&mut self, name: &str) -> PyResult<&mut AnyIw> {
        let known: Vec<&String> = self.policies.keys().collect();
        let msg = format!("policy = {name:?}: allowed one of {known:?}");
        self.policies.get_mut(name).ok_or_else(|| PyKeyError::new_err(msg))
    }
    fn key(&mut self, dst: &str) -> DstKey {
        if let Some(&k) = self.keys.get(dst) {
            return k;
        }
        let k = self.names.len() as DstKey;
        self.names.push(dst.to_string());
        self.keys.insert(dst.to_string(), k);
        k
    }
}

#[pymethods]
impl PolicyEngine {
    /// `policies_json`: `{"name": {"kind": …, …}}`, validated by the scenario code.
    #[new]
    fn new(policies_json: &str) -> PyResult<Self> {
        let configs = policies_from_json(policies_json).map_err(scenario_error)?;
        let policies = configs.iter().map(|(k, c)| (k.clone(), c.build())).collect();
        Ok(PolicyEngine { configs, policies, keys: HashMap::new(), names: Vec::new() })
    }

    /// The policy names.
    fn policies(&self) -> Vec<String> {
        self.policies.keys().cloned().collect()
    }

    /// The kind of a policy (`IwPolicy::name`).
    fn kind(&mut self, policy: &str) -> PyResult<&'static str> {
        Ok(self.policy(policy)?.name())
    }

    /// The IW in bytes `policy` gives a new connection to `dst` (`IwPolicy::initial_window`).
    #[pyo3(signature = (policy, dst, mss, now_ns, declared_size = None))]
    fn initial_window(
        &mut self,
        policy: &str,
        dst: &str,
        mss: u64,
        now_ns: u64,
        declared_size: Option<u64>,
    ) -> PyResult<u64> {
        if mss == 0 {
            return Err(PyValueError::new_err("mss = 0: allowed >= 1 byte"));
        }
        let dst = self.key(dst);
        let ctx = IwContext { mss, dst, declared_size, now: SimTime::from_nanos(now_ns) };
        Ok(self.policy(policy)?.initial_window(&ctx))
    }

    /// Feeds an event: `kind` "loss_in_initial_window" (bytes_sent) or "closed" (bytes_sent,
    /// loss, cwnd bytes at close, bytes_acked — bytes_sent if None —, retrans segments).
    #[pyo3(signature = (policy, dst, now_ns, kind, bytes_sent, loss = false, cwnd = 0, bytes_acked = None, retrans = 0))]
    #[allow(clippy::too_many_arguments)]
    fn learn(
        &mut self,
        policy: &str,
        dst: &str,
        now_ns: u64,
        kind: &str,
        bytes_sent: u64,
        loss: bool,
        cwnd: u64,
        bytes_acked: Option<u64>,
        retrans: u64,
    ) -> PyResult<()> {
        let kind = match kind {
            "loss_in_initial_window" => IwEventKind::LossInInitialWindow { bytes_sent },
            "closed" => {
                IwEventKind::Closed { bytes_sent, loss, cwnd, bytes_acked: bytes_acked.unwrap_or(bytes_sent), retrans }
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "kind = {other:?}: allowed \"loss_in_initial_window\" or \"closed\""
                )))
            }
        };
        self.policy(policy)?;
        let dst = self.key(dst);
        self.policy(policy)?.learn(&IwEvent { dst, now: SimTime::from_nanos(now_ns), kind });
        Ok(())
    }

    /// What `policy` holds about `dst` at `now_ns`, as JSON (`IwPolicy::describe`).
    fn describe(&mut self, policy: &str, dst: &str, now_ns: u64) -> PyResult<String> {
        let dst = self.key(dst);
        Ok(self.policy(policy)?.describe(dst, SimTime::from_nanos(now_ns)).to_string())
    }

    /// Every policy's learned state, as JSON (for `restore`).
    fn snapshot(&self) -> String {
        let policies: serde_json::Map<String, serde_json::Value> = self
            .policies
            .iter()
            .map(|(k, p)| (k.clone(), serde_json::json!({ "kind": p.name(), "state": p.export_state() })))
            .collect();
        serde_json::json!({ "format": SNAPSHOT_FORMAT, "destinations": self.names, "policies": policies }).to_string()
    }

    /// Restores a `snapshot()`. A policy absent from it, or whose kind changed, starts afresh;
    /// anything malformed raises ValueError (and leaves the engine unchanged).
    fn restore(&mut self, snapshot: &str) -> PyResult<()> {
        let bad = |why: String| PyValueError::new_err(format!("policy engine snapshot: {why}"));
        let v: serde_json::Value = serde_json::from_str(snapshot).map_err(|e| bad(e.to_string()))?;
        if v["format"] != SNAPSHOT_FORMAT {
            return Err(bad(format!("format = {}: allowed {SNAPSHOT_FORMAT:?}", v["format"])));
        }
        let names: Vec<String> = serde_json::from_value(v["destinations"].clone()).map_err(|e| bad(e.to_string()))?;
        let mut policies: BTreeMap<String, AnyIw> = self.configs.iter().map(|(k, c)| (k.clone(), c.build())).collect();
        for (name, p) in policies.iter_mut() {
            let saved = &v["policies"][name.as_str()];
            if saved["kind"] == p.name() {
                p.import_state(&saved["state"]).map_err(bad)?;
            }
        }
        self.policies = policies;
        self.keys = names.iter().enumerate().map(|(i, n)| (n.clone(), i as DstKey)).collect();
        self.names = names;
        Ok(())
    }
}

const SNAPSHOT_FORMAT: &str = "iwlab-policy-engine/1";

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

/// Runs packetdrill scripts against the engine (iwlab-conform): (exit code, text report,
/// JSON report). Exit 0 = all passed, 1 = some failed, 2 = some could not be parsed.
#[pyfunction]
#[pyo3(signature = (paths, tolerance_usecs=None))]
fn conform(py: Python<'_>, paths: Vec<String>, tolerance_usecs: Option<u64>) -> (i32, String, String) {
    py.allow_threads(|| {
        let reports: Vec<_> =
            paths.iter().map(|p| iwlab_conform::run_file(std::path::Path::new(p), tolerance_usecs)).collect();
        (iwlab_conform::exit_code(&reports), iwlab_conform::render_text(&reports), iwlab_conform::render_json(&reports))
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(core_version, m)?)?;
    m.add_function(wrap_pyfunction!(engine_id, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_path, m)?)?;
    m.add_function(wrap_pyfunction!(to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_profile_names, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_profile_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(conform, m)?)?;
    m.add_function(wrap_pyfunction!(parse_policy_file, m)?)?;
    prefix::register(m)?;
    m.add_class::<PolicyEngine>()?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    Ok(())
}
