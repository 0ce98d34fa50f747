//! The 100-flow scenario of `examples/bulk100.rs` for 5 simulated seconds: 100 long-lived
//! NewReno/SACK flows (IW 10) over a 100 Mb/s bottleneck. Throughput is events processed.
//!
//! `cargo bench -p iwlab-core --bench scenario`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use iwlab_core::engine::SimDuration;
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

criterion_group!(benches, bulk100_5s);
criterion_main!(benches);
