//! Finds a field path (`apps[2].think.hi`) in TOML text, so that every error — schema or
//! range — can point at a line and column. Best effort: the deepest part of the path that
//! exists in the text is located.

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use toml::Spanned;

/// A TOML value with the spans of every key and value in it.
enum Node {
    Table(BTreeMap<String, (Range<usize>, Sp)>),
    Array(Vec<Sp>),
    Scalar,
}

/// A node with its span where the TOML deserializer gives one: tables that only a dotted
/// header defines (`iw` of `[iw.policies]`) come as plain maps, without a span.
struct Sp {
    span: Option<Range<usize>>,
    node: Node,
}

const SPAN_NAME: &str = "$__serde_spanned_private_Spanned";
const SPAN_START: &str = "$__serde_spanned_private_start";
const SPAN_END: &str = "$__serde_spanned_private_end";
const SPAN_VALUE: &str = "$__serde_spanned_private_value";

impl<'de> Deserialize<'de> for Sp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Sp;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any TOML value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Sp, A::Error> {
                let Some(first) = map.next_key::<String>()? else {
                    return Ok(Sp { span: None, node: Node::Table(BTreeMap::new()) });
                };
                if first != SPAN_START {
                    // A plain table: `first` is its first key (no key spans either).
                    let mut t = BTreeMap::new();
                    let mut k = Some(first);
                    while let Some(key) = k {
                        let v = map.next_value::<Sp>()?;
                        t.insert(key, (0..0, v));
                        k = map.next_key::<String>()?;
                    }
                    return Ok(Sp { span: None, node: Node::Table(t) });
                }
                let start: usize = map.next_value()?;
                let (mut end, mut node) = (start, Node::Scalar);
                while let Some(k) = map.next_key::<String>()? {
                    match k.as_str() {
                        SPAN_END => end = map.next_value()?,
                        SPAN_VALUE => node = map.next_value()?,
                        _ => {
                            let _ = map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(Sp { span: Some(start..end), node })
            }
        }
        d.deserialize_struct(SPAN_NAME, &[SPAN_START, SPAN_END, SPAN_VALUE], V)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any TOML value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Node, E> {
                Ok(Node::Scalar)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = seq.next_element::<Sp>()? {
                    v.push(x);
                }
                Ok(Node::Array(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut t = BTreeMap::new();
                while let Some(k) = map.next_key::<Spanned<String>>()? {
                    let v = map.next_value::<Sp>()?;
                    let span = k.span();
                    t.insert(k.into_inner(), (span, v));
                }
                Ok(Node::Table(t))
            }
        }
        d.deserialize_any(V)
    }
}

enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

fn segments(path: &str) -> Vec<Seg<'_>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            out.push(Seg::Key(key));
        }
        while let Some(r) = rest.strip_prefix('[') {
            let Some((n, tail)) = r.split_once(']') else { break };
            if let Ok(i) = n.parse() {
                out.push(Seg::Index(i));
            }
            rest = tail;
        }
    }
    out
}

/// Byte offset of the deepest part of `path` found in `text` (a key's position where the
/// path ends at a key), or `None` if the text does not parse or nothing matches.
pub(crate) fn locate(text: &str, path: &str) -> Option<usize> {
    let root: Node = toml::from_str(text).ok()?;
    let mut node = &root;
    let mut best: Option<usize> = None;
    for seg in segments(path) {
        match (seg, node) {
            (Seg::Key(k), Node::Table(t)) => match t.get(k) {
                Some((key_span, v)) => {
                    if key_span.end > 0 {
                        best = Some(key_span.start);
                    }
                    node = &v.node;
                }
                None => break,
            },
            (Seg::Index(i), Node::Array(a)) => match a.get(i) {
                Some(v) => {
                    best = v.span.as_ref().map(|s| s.start).or(best);
                    node = &v.node;
                }
                None => break,
            },
            _ => break,
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_keys_in_tables_arrays_and_inline_tables() {
        let text = "a = 1\n[b]\nc = { d = 2 }\n[[e]]\nf = 1\n[[e]]\ng = [1, 2]\n";
        let at = |p: &str| locate(text, p).map(|o| crate::scenario::error::line_col(text, o));
        assert_eq!(at("a"), Some((1, 1)));
        assert_eq!(at("b.c.d"), Some((3, 7)));
        assert_eq!(at("e[1].g"), Some((7, 1)));
        assert_eq!(at("e[1].zzz").map(|l| l.0), Some(6));
        assert_eq!(at("nope"), None);
        assert_eq!(locate("= broken", "a"), None);
        // Tables that only a dotted header defines have no span of their own.
        let text = "[iw.policies]\nten = { kind = \"fixed\" }\n[[routes]]\nprefix = \"x\"\n";
        let at = |p: &str| locate(text, p).map(|o| crate::scenario::error::line_col(text, o));
        assert_eq!(at("iw.policies.ten.kind"), Some((2, 9)));
        assert_eq!(at("routes[0].prefix"), Some((4, 1)));
    }
}
