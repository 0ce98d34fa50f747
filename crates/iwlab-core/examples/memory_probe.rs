//! Where the heap of a long run goes (memory flat in flows): runs a scenario in steps
//! of simulated time under a counting allocator and prints, after each step, the live heap,
//! the connection records in it, the event queue's buffers, the packet slab, and the rest;
//! beside the process's resident memory (the allocator's free lists and fragmentation are
//! RSS − heap).
//! `cargo run --release -p iwlab-core --example memory_probe -- FILE [STEP_SECONDS [END_SECONDS]]`.

use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::scenario::Scenario;
use iwlab_core::sim::core::Conn;
use std::sync::atomic::Ordering;

#[path = "../tests/common/counting.rs"]
mod counting;
use counting::{Counting, LIVE_ALLOCS, LIVE_BYTES};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: memory_probe FILE [STEP_SECONDS [END_SECONDS]]");
    let step: f64 = args.next().map_or(10.0, |s| s.parse().expect("STEP_SECONDS is a number"));
    let stop: Option<f64> = args.next().map(|s| s.parse().expect("END_SECONDS is a number"));
    let built = Scenario::from_path(&path).and_then(|s| s.build(None)).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let mut end = built.end;
    if let Some(s) = stop {
        end = end.min(SimTime::ZERO + SimDuration::from_secs_f64(s));
    }
    let mut sim = built.sim;
    let mb = |b: f64| b / (1u64 << 20) as f64;
    println!("sim_s\tflows\tlive\theap_mb\trecords_mb\tconns_cap_mb\tsched_mb\tpackets_mb\trest_mb\tallocs\trss_mb\trss-heap_mb");
    let mut t = SimTime::ZERO;
    loop {
        t = (t + SimDuration::from_secs_f64(step)).min(end);
        sim.run_until(t);
        let c = &sim.core;
        // A retired connection's two endpoint records are inside its table entry.
        let records = (c.conns.len() * std::mem::size_of::<Conn>()) as f64;
        let conns_spare = ((c.conns.capacity() - c.conns.len()) * std::mem::size_of::<Conn>()) as f64;
        let heap = LIVE_BYTES.load(Ordering::Relaxed) as f64;
        let (sched, packets) = (c.scheduler_heap_bytes() as f64, c.packet_heap_bytes() as f64);
        let rest = heap - records - conns_spare - sched - packets;
        let rss = rss_mb();
        println!(
            "{:.0}\t{}\t{}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{:.1}\t{}\t{rss:.1}\t{:.1}",
            t.as_secs_f64(),
            c.conns.len(),
            c.live_connections(),
            mb(heap),
            mb(records),
            mb(conns_spare),
            mb(sched),
            mb(packets),
            mb(rest),
            LIVE_ALLOCS.load(Ordering::Relaxed),
            rss - mb(heap)
        );
        if t >= end {
            break;
        }
    }
}
