//! The 100-flow scenario of `examples/bulk100.rs` for 5 simulated seconds: 100 long-lived
//! NewReno/SACK flows (IW 10) over a 100 Mb/s bottleneck. Throughput is events processed.
//!
//! `bench_files/*`: the scenario files of `bench/scenarios/` that run in well under a second
//! (B at IW 10 and IW 3, 60 s; C, 360 s; A for 10 s), built as `iwlab run` builds them. On a
//! shared machine prefer these to single wall-clock runs when comparing two builds.
//!
//! `bench_files_bdp/D-2s`: bench D (`bulk-bdp.toml`: 4 CUBIC + SACK flows at 1 Gb/s, 20 ms,
//! windows of thousands of segments) for 2 simulated seconds — slow start overshoots, and the
//! loss episode of ~10 000 segments is where a per-ACK cost that grows with the window shows.
//!
//! `cargo bench -p iwlab-core --bench scenario`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
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
fn bench_file(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    path: &str,
    duration: Option<&str>,
) {
    let mut text = std::fs::read_to_string(path).expect("bench scenario file");
    if let Some(d) = duration {
        text = text
            .lines()
            .map(|l| if l.starts_with("duration = ") { format!("duration = \"{d}\"") } else { l.to_string() })
            .collect::<Vec<_>>()
            .join("\n");
    }
    let scenario = Scenario::from_toml_str(&text).expect("valid scenario");
    let events = scenario.build(Some(1)).expect("builds").run().core.events_processed();
    g.throughput(Throughput::Elements(events));
    g.bench_function(name, |b| {
        b.iter_batched(|| scenario.build(Some(1)).expect("builds"), |built| built.run(), BatchSize::PerIteration)
    });
}

criterion_group!(benches, bulk100_5s, bench_files);
criterion_main!(benches);
