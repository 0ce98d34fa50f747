//! iwlab-conform: runs packetdrill scripts (the language Linux's TCP developers test their
//! stack with) against one iwlab-core [`Endpoint`](iwlab_core::tcp::endpoint::Endpoint)
//! configured with `tcp.profile = "linux"`, and says per script PASS or FAIL with the line,
//! what the script expected and what the engine did.
//!
//! ```
//! let script = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 bind(3, ..., ...) = 0\n\
//!     +0 listen(3, 1) = 0\n+0 < S 0:0(0) win 65535 <mss 1000>\n+0 > S. 0:0(0) ack 1 <mss 1460>\n";
//! let r = iwlab_conform::run_text("inline.pkt", script, std::path::Path::new("."), None);
//! assert!(r.passed(), "{}", iwlab_conform::render_text(&[r]));
//! ```

pub mod code;
pub mod driver;
pub mod manifest;
pub mod parse;
pub mod script;
pub mod settings;

pub use driver::{Failure, Note, Outcome, DEFAULT_TOLERANCE_USECS};
pub use parse::ParseError;
use serde_json::json;
use std::path::Path;

/// One script's result: it ran (passed or failed), or it could not be read or parsed.
#[derive(Clone, Debug)]
pub struct ScriptReport {
    pub path: String,
    pub result: Result<Outcome, ParseError>,
}

impl ScriptReport {
    pub fn passed(&self) -> bool {
        matches!(&self.result, Ok(o) if o.failure.is_none())
    }
}

/// Runs script text; `dir` is where its shell lines find files (`defaults.sh`).
pub fn run_text(path: &str, text: &str, dir: &Path, tolerance_usecs: Option<u64>) -> ScriptReport {
    let result = parse::parse(text).map(|s| driver::run(&s, dir, tolerance_usecs));
    ScriptReport { path: path.to_string(), result }
}

/// Runs the script at `path`.
pub fn run_file(path: &Path, tolerance_usecs: Option<u64>) -> ScriptReport {
    let name = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => run_text(&name, &text, path.parent().unwrap_or(Path::new(".")), tolerance_usecs),
        Err(e) => {
            ScriptReport { path: name, result: Err(ParseError { line: 0, message: format!("cannot read: {e}") }) }
        }
    }
}

/// 0 when every script passed, 2 when one could not be parsed, else 1.
pub fn exit_code(reports: &[ScriptReport]) -> i32 {
    if reports.iter().any(|r| r.result.is_err()) {
        2
    } else if reports.iter().all(ScriptReport::passed) {
        0
    } else {
        1
    }
}

/// One line per passing script; the failing line, expectation and the engine's action for a
/// failing one; `FILE:LINE: message` for a script that cannot be parsed. Settings the engine
/// does not model are listed under the script.
pub fn render_text(reports: &[ScriptReport]) -> String {
    let mut s = String::new();
    for r in reports {
        match &r.result {
            Err(e) => s += &format!("{}:{}: {}\n", r.path, e.line, e.message),
            Ok(o) => {
                match &o.failure {
                    None => s += &format!("PASS {} ({} events)\n", r.path, o.events_run),
                    Some(f) => {
                        s += &format!("FAIL {}:{}: {}\n", r.path, f.line, f.event.lines().next().unwrap_or(""));
                        s += &format!("  expected: {}\n", f.expected);
                        s += &format!("  engine:   {}\n", f.actual);
                    }
                }
                for n in o.notes.iter().filter(|n| n.kind == "ignored") {
                    s += &format!("  note: line {}: {}\n", n.line, n.message);
                }
            }
        }
    }
    let pass = reports.iter().filter(|r| r.passed()).count();
    s += &format!("{pass} of {} scripts passed\n", reports.len());
    s
}

/// The report as JSON: `{"scripts": [{path, status, line, event, expected, actual, notes}], "passed", "failed", "errors"}`.
pub fn render_json(reports: &[ScriptReport]) -> String {
    let scripts: Vec<_> = reports
        .iter()
        .map(|r| match &r.result {
            Err(e) => json!({"path": r.path, "status": "ERROR", "line": e.line, "error": e.message}),
            Ok(o) => {
                let notes: Vec<_> =
                    o.notes.iter().map(|n| json!({"line": n.line, "kind": n.kind, "message": n.message})).collect();
                match &o.failure {
                    None => json!({"path": r.path, "status": "PASS", "events": o.events_run, "notes": notes}),
                    Some(f) => json!({"path": r.path, "status": "FAIL", "events": o.events_run, "line": f.line,
                        "event": f.event, "expected": f.expected, "actual": f.actual, "notes": notes}),
                }
            }
        })
        .collect();
    let passed = reports.iter().filter(|r| r.passed()).count();
    let errors = reports.iter().filter(|r| r.result.is_err()).count();
    serde_json::to_string_pretty(&json!({
        "scripts": scripts, "passed": passed, "failed": reports.len() - passed - errors, "errors": errors,
    }))
    .expect("JSON of plain values")
}
