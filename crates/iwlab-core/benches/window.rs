//! Per-event cost as windows grow: `bench/scenarios/websearch-1g.toml`
//! (100 pairs, 1 Gb/s 10 ms bottleneck, 1 000-packet drop-tail, Poisson web-search flows at
//! load 0.6) for 10 simulated seconds, in three variants. Throughput is events processed, so
//! the report's elements/s compare directly; CUBIC + SACK should stay within ~80 % of
//! NewReno without SACK. A per-ACK walk of the outstanding segments (the scoreboard before it
//! became incremental) shows here as CUBIC + SACK falling to about a third.
//!
//! `cargo bench -p iwlab-core --bench window`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use iwlab_core::scenario::Scenario;
use std::time::Duration;

/// The scenario text of a variant: `edits` are (old, new) TOML snippets.
fn websearch_1g(duration: &str, edits: &[(&str, &str)]) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/scenarios/websearch-1g.toml");
    let mut text = std::fs::read_to_string(path).expect("bench scenario file");
    text = text.replace("duration = \"100s\"", &format!("duration = \"{duration}\""));
    for (from, to) in edits {
        assert!(text.contains(from), "{from:?} not in websearch-1g.toml");
        text = text.replacen(from, to, 1);
    }
    text
}

fn window(c: &mut Criterion) {
    let mut g = c.benchmark_group("window");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    let reno = ("cc = \"cubic\"", "cc = \"reno\"");
    let variants: [(&str, Vec<(&str, &str)>); 3] = [
        ("websearch-1g-10s/cubic-sack", vec![]),
        ("websearch-1g-10s/reno-sack", vec![reno]),
        (
            "websearch-1g-10s/newreno-nosack",
            vec![reno, ("sack = true", "sack = false"), ("recovery = \"sack\"", "recovery = \"newreno\"")],
        ),
    ];
    for (name, edits) in variants {
        let scenario = Scenario::from_toml_str(&websearch_1g("10s", &edits)).expect("valid scenario");
        let events = scenario.build(None).expect("builds").run().core.events_processed();
        g.throughput(Throughput::Elements(events));
        g.bench_function(name, |b| {
            b.iter_batched(|| scenario.build(None).expect("builds"), |built| built.run(), BatchSize::PerIteration)
        });
    }
    g.finish();
}

criterion_group!(benches, window);
criterion_main!(benches);
