//! Serde glue for tables tagged by a `kind` key, with error paths that reach inside them.
//!
//! serde's derived internally-tagged enums buffer the table before choosing the variant, and
//! every error inside loses its field path (`apps[2]` instead of `apps[2].think.hi`). So a
//! `kind`-tagged type serialises with serde's internal tagging but deserialises through
//! [`deserialize`]: the table is read into a `serde_json::Value`, re-shaped into serde's
//! external tagging (`{ "<kind>": { …fields } }`), and deserialised into an externally
//! tagged mirror with `serde_path_to_error`. The inner path travels in the error message
//! (between two [`MARK`]s) and the parse functions join it to the outer one.

use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// Delimits a field path carried inside an error message.
const MARK: char = '\u{1}';

/// `message` with the field path `path` (relative to the value being deserialised) attached.
pub(crate) fn encode(path: &str, message: &str) -> String {
    format!("{MARK}{path}{MARK}{message}")
}

/// Splits a message made by [`encode`] into (path, message).
pub(crate) fn decode(message: &str) -> Option<(&str, &str)> {
    let rest = message.strip_prefix(MARK)?;
    rest.split_once(MARK)
}

/// `outer` then `inner` (`apps[2]` + `think.hi`, `apps` + `[2]`).
pub(crate) fn join(outer: &str, inner: &str) -> String {
    if inner.is_empty() {
        outer.to_string()
    } else if outer.is_empty() {
        inner.to_string()
    } else if inner.starts_with('[') {
        format!("{outer}{inner}")
    } else {
        format!("{outer}.{inner}")
    }
}

/// A path as `a.b[3].c`, without enum variant names (they are the `kind`, not a field).
pub(crate) fn path_string(p: &serde_path_to_error::Path) -> String {
    let mut s = String::new();
    for seg in p {
        match seg {
            serde_path_to_error::Segment::Seq { index } => {
                let _ = write!(s, "[{index}]");
            }
            serde_path_to_error::Segment::Map { key } => s = join(&s, key),
            serde_path_to_error::Segment::Enum { .. } => {}
            serde_path_to_error::Segment::Unknown => s = join(&s, "?"),
        }
    }
    s
}

/// The full path and the bare message of an error whose message may carry an inner path.
pub(crate) fn split_error(outer: &str, message: &str) -> (String, String) {
    match decode(message) {
        Some((inner, msg)) => (join(outer, inner), msg.to_string()),
        None => (outer.to_string(), message.to_string()),
    }
}

/// Deserialises a `kind`-tagged table into `M`, the externally tagged mirror of the type.
pub(crate) fn deserialize<'de, M: DeserializeOwned, D: Deserializer<'de>>(d: D) -> Result<M, D::Error> {
    let mut table = match Value::deserialize(d)? {
        Value::Object(m) => m,
        other => {
            return Err(D::Error::custom(format!(
                "invalid type: {}, expected a table with a `kind`",
                type_name(&other)
            )))
        }
    };
    let kind = match table.remove("kind") {
        Some(Value::String(k)) => k,
        Some(other) => {
            return Err(D::Error::custom(encode(
                "kind",
                &format!("invalid type: {}, expected a string", type_name(&other)),
            )))
        }
        None => return Err(D::Error::custom("missing field `kind`")),
    };
    let external = Value::Object(Map::from_iter([(kind, Value::Object(table))]));
    serde_path_to_error::deserialize(external).map_err(|e| {
        let path = path_string(e.path());
        let msg = e.into_inner().to_string();
        let (path, msg) = split_error(&path, &msg);
        let path = if path.is_empty() && msg.starts_with("unknown variant") { "kind".to_string() } else { path };
        D::Error::custom(encode(&path, &msg))
    })
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "table",
    }
}

/// Defines a `kind`-tagged enum of struct variants: the public enum serialises with
/// `tag = "kind"`; deserialisation goes through a hidden externally tagged mirror (see the
/// module documentation). Variant and field attributes apply to both.
macro_rules! kind_enum {
    (
        $(#[$em:meta])*
        pub enum $E:ident via $M:ident {
            $(
                $(#[$vm:meta])*
                $V:ident { $( $(#[$fm:meta])* $f:ident : $t:ty ),* $(,)? }
            ),* $(,)?
        }
    ) => {
        $(#[$em])*
        #[derive(serde::Serialize, schemars::JsonSchema)]
        #[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
        pub enum $E {
            $( $(#[$vm])* $V { $( $(#[$fm])* $f : $t ),* } ),*
        }

        #[derive(serde::Deserialize)]
        #[serde(rename_all = "kebab-case", deny_unknown_fields)]
        enum $M {
            $( $(#[$vm])* $V { $( $(#[$fm])* $f : $t ),* } ),*
        }

        impl<'de> serde::Deserialize<'de> for $E {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let m: $M = $crate::scenario::tagged::deserialize(d)?;
                Ok(match m {
                    $( $M::$V { $($f),* } => $E::$V { $($f),* } ),*
                })
            }
        }
    };
}

pub(crate) use kind_enum;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_and_travel_in_messages() {
        assert_eq!(join("apps", "[2]"), "apps[2]");
        assert_eq!(join("apps[2]", "think.hi"), "apps[2].think.hi");
        assert_eq!(join("", "x"), "x");
        let m = encode("think.hi", "bad");
        assert_eq!(split_error("apps[2]", &m), ("apps[2].think.hi".to_string(), "bad".to_string()));
        assert_eq!(split_error("apps[2]", "plain"), ("apps[2]".to_string(), "plain".to_string()));
    }
}
