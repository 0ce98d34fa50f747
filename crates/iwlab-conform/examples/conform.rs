//! `cargo run -p iwlab-conform --example conform -- [--json] [--tolerance-usecs=N] SCRIPT.pkt…`: the interpreter without
//! Python, for working on it (`iwlab conform` is the command users run).

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let json = paths.iter().any(|p| p == "--json");
    let tol = paths.iter().find_map(|p| p.strip_prefix("--tolerance-usecs=")).and_then(|v| v.parse().ok());
    let reports: Vec<_> = paths
        .iter()
        .filter(|p| !p.starts_with("--"))
        .map(|p| iwlab_conform::run_file(std::path::Path::new(p), tol))
        .collect();
    if json {
        println!("{}", iwlab_conform::render_json(&reports));
    } else {
        print!("{}", iwlab_conform::render_text(&reports));
    }
    std::process::exit(iwlab_conform::exit_code(&reports));
}
