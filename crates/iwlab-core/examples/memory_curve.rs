//! Runs a scenario in steps of simulated time and prints, after each step, the flows opened,
//! the connections still live and the process's resident memory (issue 12: memory flat in
//! flows); then collects the records and prints the peak:
//! `cargo run --release -p iwlab-core --example memory_curve -- FILE [STEP_SECONDS]`.

use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::metrics::Results;
use iwlab_core::scenario::Scenario;
use std::time::Instant;

/// VmRSS and VmHWM of this process, MB (Linux /proc).
fn rss_mb() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: memory_curve FILE [STEP_SECONDS]");
    let step: f64 = args.next().map_or(10.0, |s| s.parse().expect("STEP_SECONDS is a number"));
    let scenario = Scenario::from_path(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let built = scenario.build(None).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let (end, warmup) = (built.end, built.warmup);
    let mut sim = built.sim;
    let wall = Instant::now();
    println!("sim_s\twall_s\tevents\tflows_opened\tlive_conns\trss_mb\tpeak_rss_mb");
    let mut t = SimTime::ZERO;
    loop {
        t = (t + SimDuration::from_secs_f64(step)).min(end);
        sim.run_until(t);
        let (rss, hwm) = rss_mb();
        let c = &sim.core;
        println!(
            "{:.0}\t{:.1}\t{}\t{}\t{}\t{rss:.1}\t{hwm:.1}",
            t.as_secs_f64(),
            wall.elapsed().as_secs_f64(),
            c.events_processed(),
            c.conns.len(),
            c.live_connections()
        );
        if t >= end {
            break;
        }
    }
    sim.finish();
    let run_s = wall.elapsed().as_secs_f64();
    sim.check_accounting().expect("accounting");
    let now = sim.core.now();
    let links: u64 = sim.core.topo.ports.iter().map(|p| p.counters_at(now).packets).sum();
    let (rss, hwm) = rss_mb();
    println!("# engine run: {run_s:.1} s wall, {:.2} M events/s, {:.2} M link transmissions/s; RSS {rss:.1} MB, peak {hwm:.1} MB",
        sim.core.events_processed() as f64 / run_s / 1e6, links as f64 / run_s / 1e6);
    let r = Results::collect(&sim, end, warmup);
    let (rss, hwm) = rss_mb();
    println!(
        "# records collected: {} flows ({} completed); RSS {rss:.1} MB, peak {hwm:.1} MB",
        r.summary.flows, r.summary.flows_completed
    );
}
