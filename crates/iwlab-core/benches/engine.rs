//! Engine micro-benchmarks.
//!
//! - `scheduler/hold`: the classic "hold" model of an event queue. `pending` events wait in the
//!   queue; each step pops the earliest and schedules one new event at now + a random delay
//!   drawn from a fixed-seed stream, with a mix like the simulator's (serialisation times,
//!   propagation delays, TCP timers). Throughput is pop+push pairs per second.
//! - `packet_path/bulk1`: one long bulk TCP flow over a small dumbbell (1 Gb/s access links,
//!   100 Mb/s 10 ms bottleneck) for 5 simulated seconds. Throughput is packets created.
//!
//! `cargo bench -p iwlab-core --bench engine`

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use iwlab_core::engine::{RngStreams, Scheduler, SimDuration, SimRng, SimTime, StreamKind};
use rand::Rng;
use std::hint::black_box;
use std::time::Duration;

#[allow(dead_code)]
#[path = "../examples/bulk100.rs"]
mod bulk100;

/// An event the size of the simulator's (a tag, a port id and a packet key).
type Ev = (u32, u32, usize);

/// A delay mix: 60 % serialisation-like (1–120 µs), 35 % propagation-like (1–20 ms),
/// 5 % timer-like (200 ms – 1 s).
fn delay(rng: &mut SimRng) -> SimDuration {
    let ns = match rng.gen_range(0..100u32) {
        0..=59 => rng.gen_range(1_000..=120_000),
        60..=94 => rng.gen_range(1_000_000..=20_000_000),
        _ => rng.gen_range(200_000_000..=1_000_000_000),
    };
    SimDuration::from_nanos(ns)
}

/// Pop/push steps per timed iteration.
const STEPS: u64 = 100_000;

fn scheduler(c: &mut Criterion) {
    let mut g = c.benchmark_group("scheduler/hold");
    g.throughput(Throughput::Elements(STEPS));
    for pending in [1_000usize, 10_000, 100_000] {
        let mut rng = RngStreams::new(42).stream(StreamKind::Scenario, 0);
        let mut s: Scheduler<Ev> = Scheduler::new();
        for i in 0..pending {
            s.schedule(SimTime::ZERO + delay(&mut rng), (0, i as u32, i));
        }
        g.bench_with_input(BenchmarkId::from_parameter(pending), &pending, |b, _| {
            // The queue carries over between iterations: it stays at `pending` events and
            // its time distribution at steady state.
            b.iter(|| {
                for _ in 0..STEPS {
                    let (now, (tag, port, key)) = s.pop().expect("queue never empties");
                    s.schedule(now + delay(&mut rng), (tag ^ 1, port, black_box(key)));
                }
            })
        });
    }
    g.finish();
}

fn packet_path(c: &mut Criterion) {
    let params = bulk100::Params {
        flows: 1,
        bottleneck_bps: 100_000_000,
        duration: SimDuration::from_secs(5),
        start_window: SimDuration::ZERO,
        seed: 1,
    };
    // One untimed run to learn how many packets a run creates (runs are deterministic).
    let mut probe = bulk100::build(&params);
    probe.run();
    probe.sim.check_accounting().expect("accounting");
    let packets = probe.sim.core.acct.created;
    assert!(packets > 10_000, "the bulk flow barely ran: {packets} packets");
    drop(probe);

    let mut g = c.benchmark_group("packet_path");
    g.throughput(Throughput::Elements(packets));
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("bulk1_5s", |b| {
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

criterion_group!(benches, scheduler, packet_path);
criterion_main!(benches);
