//! The layering of `src/tcp/`, read from the source: no two files import each other through
//! any chain (`use` items and `crate::tcp::…` / `super::…` paths, test modules aside), no
//! file in `recovery/` names the sender, and only `ca_state.rs` moves the CA state.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn tcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tcp")
}

/// Every `.rs` file under `src/tcp` by module path ("" for `tcp/mod.rs`, "cc::cubic", …),
/// with its text up to its test module.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = tcp_dir();
    let mut files = vec![];
    walk(&root, &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|l| l == "mod") {
                parts.pop();
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let code = match text.find("#[cfg(test)]\nmod tests") {
                Some(i) => text[..i].to_string(),
                None => text,
            };
            let code: String = code.lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n");
            (parts.join("::"), code)
        })
        .collect()
}

/// `use a::{b, c::{d}}` → ["a::b", "a::c::d"].
fn expand(u: &str) -> Vec<String> {
    let Some(i) = u.find('{') else { return vec![u.to_string()] };
    let (pre, body) = (&u[..i], &u[i + 1..u.rfind('}').unwrap()]);
    let (mut out, mut depth, mut cur) = (vec![], 0, String::new());
    for ch in body.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    out.push(cur);
    out.into_iter().filter(|s| !s.is_empty()).flat_map(|s| expand(&format!("{pre}{s}"))).collect()
}

/// The file a path from module `cur` leads to (the longest prefix that is a file).
fn resolve(mods: &BTreeMap<String, String>, cur: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = path.split("::").collect();
    let mut base: Vec<&str> = if cur.is_empty() { vec![] } else { cur.split("::").collect() };
    match parts[0] {
        "crate" => {
            if parts.get(1) != Some(&"tcp") {
                return None;
            }
            base.clear();
            parts.drain(..2);
        }
        "super" | "self" => {
            while parts.first() == Some(&"super") {
                base.pop();
                parts.remove(0);
            }
            if parts.first() == Some(&"self") {
                parts.remove(0);
            }
        }
        child => {
            let m = base.iter().chain([&child]).copied().collect::<Vec<_>>().join("::");
            if !mods.contains_key(&m) {
                return None;
            }
        }
    }
    (0..=parts.len()).rev().map(|k| base.iter().chain(&parts[..k]).copied().collect::<Vec<_>>().join("::")).find(|m| mods.contains_key(m))
}

fn edges(mods: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    mods.iter()
        .map(|(m, code)| {
            let mut deps = BTreeSet::new();
            let mut paths = vec![];
            let mut rest = code.as_str();
            while let Some(i) = rest.find("use ") {
                let before = rest[..i].chars().last();
                rest = &rest[i + 4..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let end = rest.find(';').unwrap_or(rest.len());
                let u: String = rest[..end].chars().filter(|c| !c.is_whitespace()).collect();
                paths.extend(expand(&u).into_iter().map(|p| p.split(" as ").next().unwrap().to_string()));
            }
            let bytes = code.as_bytes();
            for prefix in ["crate::", "super::"] {
                let mut from = 0;
                while let Some(i) = code[from..].find(prefix) {
                    let s = from + i;
                    from = s + prefix.len();
                    if s > 0 && (bytes[s - 1].is_ascii_alphanumeric() || bytes[s - 1] == b':' || bytes[s - 1] == b'_') {
                        continue;
                    }
                    let len = code[s..].find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(code.len() - s);
                    paths.push(code[s..s + len].trim_end_matches(':').to_string());
                }
            }
            for p in paths {
                if let Some(t) = resolve(mods, m, &p) {
                    if &t != m {
                        deps.insert(t);
                    }
                }
            }
            (m.clone(), deps)
        })
        .collect()
}

#[test]
fn no_file_in_tcp_reaches_itself_through_its_imports() {
    let mods = modules();
    let g = edges(&mods);
    assert!(g["sender"].contains("tcb") && g["recovery::sack"].contains("recovery::ops"), "the reader sees imports");
    for start in g.keys() {
        // Depth-first from each file's imports: reaching the file again is a circle.
        let mut stack: Vec<(String, Vec<String>)> = g[start].iter().map(|d| (d.clone(), vec![d.clone()])).collect();
        let mut seen = BTreeSet::new();
        while let Some((m, path)) = stack.pop() {
            assert!(&m != start, "import circle: {start} -> {}", path.join(" -> "));
            if seen.insert(m.clone()) {
                for d in &g[&m] {
                    let mut p = path.clone();
                    p.push(d.clone());
                    stack.push((d.clone(), p));
                }
            }
        }
    }
}

#[test]
fn recovery_files_do_not_name_the_sender_and_only_ca_state_moves_the_state() {
    let mods = modules();
    let g = edges(&mods);
    for (m, deps) in &g {
        if m == "recovery" || m.starts_with("recovery::") {
            assert!(!deps.contains("sender") && !deps.contains("ca_state"), "{m} imports {deps:?}");
            assert!(!mods[m].contains("Sender"), "{m} names the sender");
        }
    }
    for (m, code) in &mods {
        if m != "ca_state" {
            assert!(!code.contains(".ca = "), "{m} moves the CA state");
        }
    }
    assert!(mods["ca_state"].matches(".ca = CaState::").count() >= 4);
}
