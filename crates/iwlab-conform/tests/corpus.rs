//! Every script of tests/conformance/ runs against the engine: it must pass, unless
//! known-divergences.toml lists it — then it must fail (an unexpected pass means the entry
//! is stale and must be removed).

use iwlab_conform::manifest::Manifest;
use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance")
}

fn scripts(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            scripts(&p, out);
        } else if p.extension().is_some_and(|e| e == "pkt") {
            out.push(p);
        }
    }
}

#[test]
fn every_corpus_script_passes_or_is_a_listed_divergence() {
    let dir = corpus_dir();
    let manifest = Manifest::parse(&std::fs::read_to_string(dir.join("known-divergences.toml")).unwrap()).unwrap();
    let mut files = Vec::new();
    scripts(&dir, &mut files);
    assert!(files.len() >= 10, "the corpus has only {} scripts", files.len());
    let mut problems = Vec::new();
    let mut names = Vec::new();
    for f in &files {
        let name = f.strip_prefix(&dir).unwrap().to_string_lossy().replace('\\', "/");
        names.push(name.clone());
        let r = iwlab_conform::run_file(f, None);
        let text = iwlab_conform::render_text(std::slice::from_ref(&r));
        match (r.result.is_err(), r.passed(), manifest.get(&name)) {
            (true, _, _) => problems.push(format!("{name} does not parse:\n{text}")),
            (false, true, Some(_)) => {
                problems.push(format!("{name} now passes: remove it from known-divergences.toml"))
            }
            (false, false, None) => problems.push(format!("{name} fails:\n{text}")),
            (false, false, Some(d)) => eprintln!("known divergence {name}: {} ({})", d.rule, d.why),
            (false, true, None) => {}
        }
    }
    let listed =
        manifest.divergence.iter().map(|d| &d.script).chain(manifest.kernel_unverified.iter().map(|u| &u.script));
    for script in listed {
        if !names.contains(script) {
            problems.push(format!("known-divergences.toml lists {script}, which is not in the corpus"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn send_flags_are_reported_as_not_modelled() {
    let f = corpus_dir().join("limited-transmit-one-segment-skbs.pkt");
    let r = iwlab_conform::run_file(&f, None);
    let notes = &r.result.as_ref().expect("parses").notes;
    assert!(notes.iter().any(|n| n.kind == "ignored" && n.message.contains("MSG_EOR")), "{notes:?}");
}
