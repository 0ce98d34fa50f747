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

pub mod classify;
pub mod code;
pub mod driver;
pub mod manifest;
pub mod parse;
pub mod pyexpr;
pub mod script;
pub mod settings;
pub mod tcpinfo;

pub use driver::{Class, Failure, Note, Outcome, DEFAULT_TOLERANCE_USECS};
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

/// What became of a script.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Pass,
    /// The engine differs from what the script expects of Linux.
    Fail,
    /// The script needs something the interpreter or the engine does not model.
    Unsupported,
    /// The script cannot be read or parsed, or its Python is wrong.
    Error,
}

impl Status {
    pub const ALL: [Status; 4] = [Status::Pass, Status::Fail, Status::Unsupported, Status::Error];

    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Unsupported => "UNSUPPORTED",
            Status::Error => "ERROR",
        }
    }

    fn meaning(self) -> &'static str {
        match self {
            Status::Pass => "the engine did what Linux does",
            Status::Fail => "the engine differs from Linux",
            Status::Unsupported => "the script needs something not modelled",
            Status::Error => "the script cannot be parsed or run",
        }
    }
}

impl ScriptReport {
    pub fn status(&self) -> Status {
        match &self.result {
            Err(_) => Status::Error,
            Ok(o) => match &o.failure {
                None => Status::Pass,
                Some(f) => match f.class {
                    Class::Differs if self.unsupported_setting().is_some() => Status::Unsupported,
                    Class::Differs => Status::Fail,
                    Class::Unsupported => Status::Unsupported,
                    Class::ScriptError => Status::Error,
                },
            },
        }
    }

    /// A setting in force when the script failed that the engine does not model and that
    /// changes what Linux sends (fq pacing, …): its line and what it is.
    pub fn unsupported_setting(&self) -> Option<&Note> {
        let o = self.result.as_ref().ok()?;
        let f = o.failure.as_ref()?;
        o.notes.iter().find(|n| n.kind == "unsupported" && n.line <= f.line)
    }

    /// For an unsupported script, the construct it needs and its line.
    pub fn unsupported_because(&self) -> Option<(usize, String)> {
        let f = self.result.as_ref().ok()?.failure.as_ref()?;
        match f.class {
            Class::Unsupported => Some((f.line, f.actual.clone())),
            Class::Differs => self.unsupported_setting().map(|n| (n.line, n.message.clone())),
            Class::ScriptError => None,
        }
    }
}

/// 0 when every script passed; else 2 when one could not be parsed or run (its Python is
/// wrong), 1 when the engine differs in one, 3 when the rest need something not modelled.
pub fn exit_code(reports: &[ScriptReport]) -> i32 {
    let worst = |s: Status| reports.iter().any(|r| r.status() == s);
    if worst(Status::Error) {
        2
    } else if worst(Status::Fail) {
        1
    } else if worst(Status::Unsupported) {
        3
    } else {
        0
    }
}

fn count(reports: &[ScriptReport], s: Status) -> usize {
    reports.iter().filter(|r| r.status() == s).count()
}

/// One line per passing script; the failing line, expectation and the engine's action for a
/// failing one; the construct and its line for an unsupported one; `FILE:LINE: message` for a
/// script that cannot be parsed. Settings the engine does not model are listed under the
/// script, and a batch ends with a line per status.
pub fn render_text(reports: &[ScriptReport]) -> String {
    let mut s = String::new();
    for r in reports {
        let status = r.status();
        match &r.result {
            Err(e) => s += &format!("{}:{}: {}\n", r.path, e.line, e.message),
            Ok(o) => {
                match &o.failure {
                    None => s += &format!("PASS {} ({} events)\n", r.path, o.events_run),
                    Some(f) if f.class == Class::Unsupported => {
                        s += &format!("UNSUPPORTED {}:{}: {}\n", r.path, f.line, f.actual);
                    }
                    Some(f) if f.class == Class::ScriptError => {
                        s += &format!("ERROR {}:{}: {}\n", r.path, f.line, f.actual);
                    }
                    Some(f) => {
                        s += &format!(
                            "{} {}:{}: {}\n",
                            status.name(),
                            r.path,
                            f.line,
                            f.event.lines().next().unwrap_or("")
                        );
                        if let Some(n) = r.unsupported_setting() {
                            s += &format!("  needs: line {}: {}\n", n.line, n.message);
                        }
                        s += &format!("  expected: {}\n", f.expected);
                        s += &format!("  engine:   {}\n", f.actual);
                    }
                }
                for n in o.notes.iter().filter(|n| n.kind == "ignored" || n.kind == "unsupported") {
                    s += &format!("  note: line {}: {}\n", n.line, n.message);
                }
                if let Some(rule) = classify::classify(r) {
                    s += &format!("  rule: {}\n", rule.label());
                }
                if status != Status::Pass {
                    for n in o.notes.iter().filter(|n| n.kind == "print") {
                        s += &format!("  print: line {}: {}\n", n.line, n.message);
                    }
                }
            }
        }
    }
    if reports.len() > 1 {
        for st in Status::ALL {
            s += &format!("{:<12} {:>3}  ({})\n", format!("{}:", st.name()), count(reports, st), st.meaning());
        }
    }
    let pass = count(reports, Status::Pass);
    s += &format!("{pass} of {} scripts passed\n", reports.len());
    s
}

/// The report as JSON: `{"scripts": [{path, status, line, event, expected, actual, needs,
/// notes}], "summary": {PASS, FAIL, UNSUPPORTED, ERROR}, "passed", "failed", "unsupported",
/// "errors"}`.
pub fn render_json(reports: &[ScriptReport]) -> String {
    let scripts: Vec<_> = reports
        .iter()
        .map(|r| {
            let status = r.status().name();
            match &r.result {
                Err(e) => json!({"path": r.path, "status": status, "line": e.line, "error": e.message}),
                Ok(o) => {
                    let notes: Vec<_> =
                        o.notes.iter().map(|n| json!({"line": n.line, "kind": n.kind, "message": n.message})).collect();
                    let mut v = json!({"path": r.path, "status": status, "events": o.events_run, "notes": notes});
                    if let Some(f) = &o.failure {
                        v["line"] = json!(f.line);
                        v["event"] = json!(f.event);
                        v["expected"] = json!(f.expected);
                        v["actual"] = json!(f.actual);
                    }
                    if let Some((line, what)) = r.unsupported_because() {
                        v["needs"] = json!({"line": line, "what": what});
                    }
                    if let Some(rule) = classify::classify(r) {
                        v["rule"] = json!({"id": rule.id(), "label": rule.label(), "kernel": rule.kernel()});
                    }
                    v
                }
            }
        })
        .collect();
    let summary: serde_json::Map<String, serde_json::Value> =
        Status::ALL.iter().map(|&s| (s.name().to_string(), json!(count(reports, s)))).collect();
    serde_json::to_string_pretty(&json!({
        "scripts": scripts,
        "summary": summary,
        "passed": count(reports, Status::Pass),
        "failed": count(reports, Status::Fail),
        "unsupported": count(reports, Status::Unsupported),
        "errors": count(reports, Status::Error),
    }))
    .expect("JSON of plain values")
}
