//! Runs a scenario in steps of simulated time and prints, after each step, the flows opened,
//! the connections still live and the process's resident memory (memory flat in
//! flows) and what the connection records take (the entries of the connection table, a
//! retired connection's endpoint records inside its entry; unused table capacity aside); then
//! collects the records and prints the peak. Times are wall and CPU (user + system) seconds;
//! the allocator is the system's (glibc malloc; the Python extension uses mimalloc);
//! END_SECONDS stops the run early:
//! `cargo run --release -p iwlab-core --example memory_curve -- FILE [STEP_SECONDS [END_SECONDS]]`.

use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::metrics::Results;
use iwlab_core::scenario::Scenario;
use iwlab_core::sim::core::Conn;
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

/// CPU seconds (user + system) of this process (Linux /proc, 100 ticks per second).
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which ends with ')'): utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    f.get(10).zip(f.get(11)).map_or(f64::NAN, |(u, s)| (u + s) / 100.0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: memory_curve FILE [STEP_SECONDS]");
    let step: f64 = args.next().map_or(10.0, |s| s.parse().expect("STEP_SECONDS is a number"));
    let stop: Option<f64> = args.next().map(|s| s.parse().expect("END_SECONDS is a number"));
    let scenario = Scenario::from_path(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let built = scenario.build(None).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let (mut end, warmup) = (built.end, built.warmup);
    if let Some(s) = stop {
        end = end.min(SimTime::ZERO + SimDuration::from_secs_f64(s));
    }
    let mut sim = built.sim;
    let wall = Instant::now();
    let cpu0 = cpu_s();
    // A retired connection's two endpoint records are inside its table entry.
    let record_bytes = |c: &iwlab_core::sim::Core| c.conns.len() * std::mem::size_of::<Conn>();
    println!("sim_s\twall_s\tcpu_s\tevents\tflows_opened\tlive_conns\trss_mb\tpeak_rss_mb\trecords_mb");
    let mut t = SimTime::ZERO;
    loop {
        t = (t + SimDuration::from_secs_f64(step)).min(end);
        sim.run_until(t);
        let (rss, hwm) = rss_mb();
        let c = &sim.core;
        println!(
            "{:.0}\t{:.1}\t{:.1}\t{}\t{}\t{}\t{rss:.1}\t{hwm:.1}\t{:.1}",
            t.as_secs_f64(),
            wall.elapsed().as_secs_f64(),
            cpu_s() - cpu0,
            c.events_processed(),
            c.conns.len(),
            c.live_connections(),
            record_bytes(c) as f64 / (1 << 20) as f64
        );
        if t >= end {
            break;
        }
    }
    sim.finish();
    let run_s = wall.elapsed().as_secs_f64();
    let run_cpu = cpu_s() - cpu0;
    sim.check_accounting().expect("accounting");
    let now = sim.core.now();
    let links: u64 = sim.core.topo.ports.iter().map(|p| p.counters_at(now).packets).sum();
    let (rss, hwm) = rss_mb();
    let (ev, sim_s) = (sim.core.events_processed() as f64, end.as_secs_f64());
    println!(
        "# engine run: {sim_s:.0} s simulated in {run_s:.1} s wall ({run_cpu:.1} s CPU); {:.0} M events, {:.2} M events/s \
         ({:.2} M per CPU second); {:.0} M link transmissions, {:.2} M per second ({:.2} M per CPU second); \
         RSS {rss:.1} MB, peak {hwm:.1} MB",
        ev / 1e6,
        ev / run_s / 1e6,
        ev / run_cpu / 1e6,
        links as f64 / 1e6,
        links as f64 / run_s / 1e6,
        links as f64 / run_cpu / 1e6
    );
    let r = Results::collect(&sim, end, warmup);
    let (rss, hwm) = rss_mb();
    println!(
        "# records collected: {} flows ({} completed); RSS {rss:.1} MB, peak {hwm:.1} MB",
        r.summary.flows, r.summary.flows_completed
    );
}
