//! Scenario files: what to simulate, as data (TOML or JSON), validated, then built into a
//! running [`Simulation`](crate::sim::Simulation).
//!
//! The format is documented field by field on the types of [`model`] (and in
//! `docs/scenario-format.md` with a complete example). In short:
//!
//! ```toml
//! name = "tiny"
//! duration = "10s"
//!
//! [topology]
//! kind = "dumbbell"
//! bottleneck = { rate = "1.5Mbps", delay = "50ms", queue = { kind = "drop-tail", limit = "25pkt" } }
//! left = [{ name = "clients", count = 2, access = { rate = "10Mbps", delay = "1ms" } }]
//! right = [{ name = "servers", count = 2, access = { rate = "10Mbps", delay = "1ms" } }]
//!
//! [tcp]
//! recovery = "newreno"
//!
//! [iw]
//! default = "iw10"
//! policies.iw10 = { kind = "fixed", segments = 10 }
//!
//! [[apps]]
//! kind = "ftp"
//! clients = "clients"
//! servers = "servers"
//! count = 2
//! size = "1MB"
//! ```
//!
//! ```
//! # let text = r#"
//! # name = "tiny"
//! # duration = "10s"
//! # [topology]
//! # kind = "dumbbell"
//! # bottleneck = { rate = "1.5Mbps", delay = "50ms", queue = { kind = "drop-tail", limit = "25pkt" } }
//! # left = [{ name = "clients", count = 2, access = { rate = "10Mbps", delay = "1ms" } }]
//! # right = [{ name = "servers", count = 2, access = { rate = "10Mbps", delay = "1ms" } }]
//! # [iw]
//! # default = "iw10"
//! # policies.iw10 = { kind = "fixed", segments = 10 }
//! # [[apps]]
//! # kind = "ftp"
//! # clients = "clients"
//! # servers = "servers"
//! # count = 2
//! # "#;
//! use iwlab_core::scenario::Scenario;
//! let s = Scenario::from_toml_str(text).unwrap();
//! let built = s.build(Some(7)).unwrap();
//! assert_eq!(built.groups[0].nodes.len(), 2);
//! let again = Scenario::from_toml_str(&s.to_toml_string().unwrap()).unwrap();
//! assert_eq!(again, s);
//!
//! let err = Scenario::from_toml_str(&text.replace("\"10s\"", "\"0s\"")).unwrap_err();
//! assert_eq!(err.message(), "duration = 0s is not allowed; expected > 0");
//! ```
//!
//! Layout: [`units`] (quantities with units), [`dist`] (distributions, fixed-or-drawn
//! fields), [`model`] (the serde structs), [`apps`] (application entries), `validate`
//! (ranges and references), [`build`] (scenario → simulation), [`error`], [`schema`] (the
//! JSON Schema derived from the serde structs, from which `iwlab schema`, the Python models
//! and the field reference of docs/scenario-format.md are generated).

pub mod apps;
mod arrivals;
pub mod build;
pub mod dist;
pub mod error;
mod locate;
pub mod model;
pub mod policy_file;
pub mod profile;
pub mod quic;
pub mod schema;
mod tagged;
mod tcp;
pub mod units;
mod validate;

pub use build::{Built, BuiltApp, GroupNodes, HostAccess, IwInstance};
pub use error::{ErrorKind, ScenarioError};
pub use model::Scenario;
pub use validate::{GroupSide, MAX_HOSTS, MAX_INSTANCES};

/// The engine's TCP options for one `[tcp]` table (profile resolved, defaults filled in), as
/// a scenario would build them; errors name the field as `tcp.<field>`. For drivers of a
/// single endpoint (the packetdrill interpreter in iwlab-conform).
pub fn tcp_config(spec: &model::TcpSpec) -> Result<crate::tcp::config::TcpConfig, ScenarioError> {
    tcp::tcp_config(&model::TcpSpec::default(), spec, &|f| format!("tcp.{f}"))
}

use error::line_col;
use std::path::Path;
use tagged::path_string;

impl Scenario {
    /// Parses and validates TOML text.
    pub fn from_toml_str(text: &str) -> Result<Scenario, ScenarioError> {
        let s = Self::parse_toml_str(text)?;
        s.validate().map_err(|e| locate_in(text, e))?;
        Ok(s)
    }

    /// Parses TOML text without validating ranges and references (`validate()` does that).
    pub fn parse_toml_str(text: &str) -> Result<Scenario, ScenarioError> {
        // Syntax first, so that a syntax error is reported as such (with line and column).
        if let Err(e) = text.parse::<toml::Table>() {
            let loc = e.span().map(|s| line_col(text, s.start));
            return Err(ScenarioError::new(ErrorKind::Syntax, "", e.message().trim(), loc));
        }
        let de = toml::Deserializer::new(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = path_string(e.path());
            let inner = e.into_inner();
            let loc = inner.span().map(|s| line_col(text, s.start));
            locate_in(text, schema_error(path, inner.message().trim(), loc))
        })
    }

    /// Parses and validates JSON text (the same model; quantities are strings or numbers).
    pub fn from_json_str(text: &str) -> Result<Scenario, ScenarioError> {
        let s = Self::parse_json_str(text)?;
        s.validate()?;
        Ok(s)
    }

    /// Parses JSON text without validating ranges and references.
    pub fn parse_json_str(text: &str) -> Result<Scenario, ScenarioError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let s: Scenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = path_string(e.path());
            let inner = e.into_inner();
            let loc = (inner.line() > 0).then(|| (inner.line(), inner.column()));
            let msg = strip_json_location(&inner.to_string());
            if inner.is_syntax() || inner.is_eof() {
                ScenarioError::new(ErrorKind::Syntax, "", msg, loc)
            } else {
                schema_error(path, &msg, loc)
            }
        })?;
        de.end().map_err(|e| {
            ScenarioError::new(ErrorKind::Syntax, "", strip_json_location(&e.to_string()), Some((e.line(), e.column())))
        })?;
        Ok(s)
    }

    /// Reads a `.toml` or `.json` file (by extension; anything else is read as TOML) and
    /// validates it. Relative paths inside it (empirical CDF files) are resolved against
    /// its folder.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ScenarioError::new(ErrorKind::Io, "", format!("cannot read scenario file {}: {e}", path.display()), None)
        })?;
        let is_json = path.extension().is_some_and(|x| x.eq_ignore_ascii_case("json"));
        let mut s = if is_json { Self::parse_json_str(&text)? } else { Self::parse_toml_str(&text)? };
        s.base_dir = path.parent().map(Path::to_path_buf);
        s.validate().map_err(|e| if is_json { e } else { locate_in(&text, e) })?;
        Ok(s)
    }

    /// The scenario as TOML, every quantity in its canonical unit form.
    pub fn to_toml_string(&self) -> Result<String, ScenarioError> {
        toml::to_string(self).map_err(|e| ScenarioError::new(ErrorKind::Serialize, "", e.to_string(), None))
    }

    /// The scenario as JSON (pretty-printed).
    pub fn to_json_string(&self) -> Result<String, ScenarioError> {
        serde_json::to_string_pretty(self)
            .map_err(|e| ScenarioError::new(ErrorKind::Serialize, "", e.to_string(), None))
    }
}

/// Points `e` at its field in TOML `text`, where the field can be found.
fn locate_in(text: &str, e: ScenarioError) -> ScenarioError {
    match locate::locate(text, e.path()) {
        Some(offset) => e.at(line_col(text, offset)),
        None => e,
    }
}

/// A schema error at `path` (the message may carry a deeper path, see `tagged`).
fn schema_error(path: String, msg: &str, loc: Option<(usize, usize)>) -> ScenarioError {
    let (path, msg) = tagged::split_error(&path, msg);
    let message = if path.is_empty() { msg } else { format!("{path}: {msg}") };
    ScenarioError::new(ErrorKind::Schema, path, message, loc)
}

/// serde_json appends " at line L column C"; the location is kept apart.
fn strip_json_location(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}
