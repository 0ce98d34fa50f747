//! Runs a scenario file and prints its summary and the bottleneck's link row:
//! `cargo run --release -p iwlab-core --example run_scenario -- FILE [SEED]`.

use iwlab_core::metrics::Results;
use iwlab_core::scenario::Scenario;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: run_scenario FILE [SEED]");
    let seed = args.next().map(|s| s.parse::<u64>().expect("SEED is an integer"));
    let scenario = match Scenario::from_path(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let built = scenario.build(seed).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let (end, warmup, fwd, rev) = (built.end, built.warmup, built.bottleneck_forward, built.bottleneck_reverse);
    let t = std::time::Instant::now();
    let sim = built.run();
    let wall = t.elapsed().as_secs_f64();
    sim.check_accounting().expect("accounting");
    let r = Results::collect(&sim, end, warmup);
    println!("{:#?}", r.summary);
    println!("wall {wall:.3} s, {:.1} M events/s", r.summary.events as f64 / wall / 1e6);
    let csv = r.links.to_csv();
    let mut lines = csv.lines();
    println!("{}", lines.next().unwrap());
    for (i, l) in lines.enumerate() {
        if i as u32 == fwd || i as u32 == rev {
            println!("{l}");
        }
    }
}
