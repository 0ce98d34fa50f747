//! The 100-flow scenario of `examples/bulk100.rs` for 5 simulated seconds: 100 long-lived
//! NewReno/SACK flows (IW 10) over a 100 Mb/s bottleneck. Throughput is events processed.
//!
//! `bench_files/*`: the scenario files of `bench/scenarios/` that run in well under a second
//! (B at IW 10 and IW 3, 60 s; C, 360 s; A for 10 s), built as `iwlab run` builds them. On a
//! shared machine prefer these to single wall-clock runs when comparing two builds.
//!
//! `scale_files/*`: the million-flow and 10 Gb/s scenarios, scaled down.
//! `bench_files_bdp/D-2s`: bench D (`bulk-bdp.toml`: 4 CUBIC + SACK flows at 1 Gb/s, 20 ms,
//! windows of thousands of segments) for 2 simulated seconds — slow start overshoots, and the
//! loss episode of ~10 000 segments is where a per-ACK cost that grows with the window shows.
//!
//! `cargo bench -p iwlab-core --bench scenario`

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion, Throughput};
use iwlab_core::engine::SimDuration;
use iwlab_core::scenario::Scenario;
use std::time::Duration;

#[allow(dead_code)]
#[path = "../examples/bulk100.rs"]
mod bulk100;

fn bulk100_5s(c: &mut Criterion) {
    let params = bulk100::Params { duration: SimDuration::from_secs(5), ..bulk100::Params::default() };
    // One untimed run to learn how many events a run processes (runs are deterministic).
    let mut probe = bulk100::build(&params);
    probe.run();
    probe.sim.check_accounting().expect("accounting");
    let events = probe.sim.core.events_processed();
    drop(probe);

    let mut g = c.benchmark_group("scenario");
    g.throughput(Throughput::Elements(events));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.bench_function("bulk100_5s", |b| {
        b.iter_batched(
            || bulk100::build(&params),
            |mut sc| {
                sc.run();
                sc
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

/// Times runs of the scenario `text` (seed 1); throughput is its events.
fn bench_text(g: &mut BenchmarkGroup<WallTime>, name: &str, text: &str) {
    let scenario = Scenario::from_toml_str(text).expect("valid scenario");
    let events = scenario.build(Some(1)).expect("builds").run().core.events_processed();
    g.throughput(Throughput::Elements(events));
    g.bench_function(name, |b| {
        b.iter_batched(|| scenario.build(Some(1)).expect("builds"), |built| built.run(), BatchSize::PerIteration)
    });
}

fn bench_files(c: &mut Criterion) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/scenarios/");
    let mut g = c.benchmark_group("bench_files");
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(10));
    for (name, file, duration) in [
        ("B-iw10", "short-flows.toml", None),
        ("B-iw3", "short-flows-iw3.toml", None),
        ("C", "rfc2415.toml", None),
        ("A-10s", "bulk.toml", Some("10s")),
    ] {
        bench_file(&mut g, name, &format!("{dir}{file}"), duration);
    }
    g.finish();
    // D's iterations take seconds: fewer samples, in a group of their own.
    let mut g = c.benchmark_group("bench_files_bdp");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(30));
    bench_file(&mut g, "D-2s", &format!("{dir}bulk-bdp.toml"), Some("2s"));
    g.finish();
}

/// Benchmarks one scenario file, its `duration = "…"` line replaced when `duration` is given.
fn bench_file(g: &mut BenchmarkGroup<WallTime>, name: &str, path: &str, duration: Option<&str>) {
    let mut text = std::fs::read_to_string(path).expect("bench scenario file");
    if let Some(d) = duration {
        text = text
            .lines()
            .map(|l| if l.starts_with("duration = ") { format!("duration = \"{d}\"") } else { l.to_string() })
            .collect::<Vec<_>>()
            .join("\n");
    }
    bench_text(g, name, &text);
}

/// The million-flow and 10 Gb/s scenarios scaled down: `million-flows.toml` for its first 20 000 flows (4 s)
/// and `10g-10k.toml` for its first 0.5 s (10 000 flows in slow start at 10 Gb/s).
fn scale_files(c: &mut Criterion) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/scenarios/");
    let mut g = c.benchmark_group("scale_files");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    for (name, file, edits) in [
        (
            "million-flows-20k",
            "million-flows.toml",
            [("duration = \"205s\"", "duration = \"4s\""), ("flows = 1000000", "flows = 20000")],
        ),
        ("10g-10k-0.5s", "10g-10k.toml", [("duration = \"60s\"", "duration = \"0.5s\""), ("", "")]),
    ] {
        let mut text = std::fs::read_to_string(format!("{dir}{file}")).expect("bench scenario file");
        for (from, to) in edits.into_iter().filter(|(f, _)| !f.is_empty()) {
            assert!(text.contains(from), "{file}: {from}");
            text = text.replace(from, to);
        }
        bench_text(&mut g, name, &text);
    }
    g.finish();
}

criterion_group!(benches, bulk100_5s, bench_files, scale_files);
criterion_main!(benches);
