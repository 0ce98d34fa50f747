//! Runs packetdrill scripts from the command line and times them:
//! `cargo run --release -p iwlab-conform --example conform -- [--json] [--repeat N] FILE.pkt…`
//! (the user-facing command is `iwlab conform`; this is for benchmarks and debugging).

use std::path::Path;
use std::time::Instant;

fn main() {
    let mut json = false;
    let mut repeat = 1u32;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json = true,
            "--repeat" => repeat = args.next().and_then(|n| n.parse().ok()).unwrap_or(1).max(1),
            _ => files.push(a),
        }
    }
    let t0 = Instant::now();
    let mut reports = Vec::new();
    for _ in 0..repeat {
        reports = files.iter().map(|f| iwlab_conform::run_file(Path::new(f), None)).collect();
    }
    let per_run = t0.elapsed() / repeat;
    if json {
        println!("{}", iwlab_conform::render_json(&reports));
    } else {
        print!("{}", iwlab_conform::render_text(&reports));
    }
    if repeat > 1 {
        eprintln!(
            "{} script(s), {repeat} runs: {:.3} ms per run (parse + run)",
            files.len(),
            per_run.as_secs_f64() * 1e3
        );
    }
    std::process::exit(iwlab_conform::exit_code(&reports));
}
