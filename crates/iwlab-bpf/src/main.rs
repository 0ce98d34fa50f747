//! `iwlab-bpf`: loads iwlab's per-flow IW programs into a cgroup, pins them, reports on them and
//! removes them. Python (`iwlab flow-iw`, python/iwlab/deploy/flow_iw.py)
//! calls it and reads the JSON it prints; run as root. Exit codes: 0 done, 1 the kernel refused
//! (message on stderr, with the verifier's log when it is the verifier), 2 bad arguments.
mod evidence;
mod flow_iw;
mod layout;
mod summary;
mod sys;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug)]
pub enum Error {
    Usage(String),
    Kernel(String),
}

#[derive(Parser)]
#[command(name = "iwlab-bpf", about = "Per-flow initial window: iwlab's eBPF programs on a cgroup")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Load both programs (the verifier runs) and attach nothing.
    Check,
    /// Attach to CGROUP (a cgroup2 directory, never the root) and pin under PINS (on bpffs; must not exist).
    Attach {
        #[arg(long)]
        cgroup: PathBuf,
        #[arg(long)]
        pins: PathBuf,
        /// IW (segments) set at establishment on every connection of the cgroup; 0: the route's.
        #[arg(long, default_value_t = 0)]
        default_iw: u32,
        /// Largest IW an application may ask for.
        #[arg(long)]
        max_iw: u32,
        /// Record that iwlab created the cgroup (the caller may remove it after detach).
        #[arg(long)]
        created_cgroup: bool,
        #[command(flatten)]
        pacing: Pacing,
    },
    /// Change the default IW, the largest accepted hint and the pacing.
    Configure {
        #[arg(long)]
        pins: PathBuf,
        #[arg(long)]
        default_iw: u32,
        #[arg(long)]
        max_iw: u32,
        #[command(flatten)]
        pacing: Pacing,
    },
    Status {
        #[arg(long)]
        pins: PathBuf,
    },
    /// Detach and unpin everything under PINS.
    Detach {
        #[arg(long)]
        pins: PathBuf,
    },
    /// The cgroup id (inode) of a cgroup2 directory.
    CgroupId { cgroup: PathBuf },
    /// Attach the IW-loss evidence program to CGROUP (never the root) and print its records as
    /// JSON lines until killed or stdout closes; nothing is pinned, nothing outlives the process.
    Evidence {
        #[arg(long)]
        cgroup: PathBuf,
        /// Seconds between two `stats` lines (the program's counters).
        #[arg(long, default_value_t = 1.0)]
        stats_every: f64,
        /// Milliseconds to let records gather after a wake-up (0..=100).
        #[arg(long, default_value_t = 5)]
        batch_ms: u64,
        /// A route of the watcher's policy, KEY=MODE (KEY a CIDR or `default`; MODE `sum`: clean
        /// closes summed per prefix, `each`: a line per connection). Without: a line per record.
        #[arg(long = "prefix")]
        prefixes: Vec<String>,
        /// Milliseconds between two writes of the per-prefix sums (10..=10000).
        #[arg(long, default_value_t = 200)]
        summary_ms: u64,
    },
}

/// What the sock_ops program paces (a policy file's `[tcp]`).
#[derive(clap::Args, Clone, Copy)]
struct Pacing {
    /// Linux's internal pacing on every connection (SO_MAX_PACING_RATE turns it on).
    #[arg(long)]
    pacing: bool,
    /// The first flight at IW·MSS per handshake RTT, lifted at the first RTT sample (needs --pacing).
    #[arg(long)]
    paced_iw: bool,
}

impl Pacing {
    fn flags(self) -> Result<u32, Error> {
        if self.paced_iw && !self.pacing {
            return Err(Error::Usage(
                "--paced-iw: allowed only with --pacing (Linux keeps pacing a socket once its max pacing rate was set)"
                    .into(),
            ));
        }
        Ok(if self.pacing { layout::CFG_PACING } else { 0 } | if self.paced_iw { layout::CFG_PACED_IW } else { 0 })
    }
}

fn check_iw(default_iw: u32, max_iw: u32) -> Result<(), Error> {
    // TCP_BPF_IW takes any positive int; 1 000 segments is far above any IW in use (CDNs: 10–46).
    if !(1..=1000).contains(&max_iw) {
        return Err(Error::Usage(format!("--max-iw = {max_iw}: allowed 1..=1000 segments")));
    }
    if default_iw > max_iw {
        return Err(Error::Usage(format!(
            "--default-iw = {default_iw}: allowed 0 (the route's) or 1..=--max-iw ({max_iw})"
        )));
    }
    Ok(())
}

fn run(cmd: Cmd) -> Result<serde_json::Value, Error> {
    match cmd {
        Cmd::Evidence { cgroup, stats_every, batch_ms, prefixes, summary_ms } => {
            if !(0.01..=3600.0).contains(&stats_every) {
                return Err(Error::Usage(format!("--stats-every = {stats_every}: allowed 0.01..=3600 seconds")));
            }
            if batch_ms > 100 {
                return Err(Error::Usage(format!("--batch-ms = {batch_ms}: allowed 0..=100")));
            }
            if !(10..=10_000).contains(&summary_ms) {
                return Err(Error::Usage(format!("--summary-ms = {summary_ms}: allowed 10..=10000")));
            }
            let table = if prefixes.is_empty() { None } else { Some(summary::Table::parse(&prefixes)?) };
            evidence::stream(
                &cgroup,
                std::time::Duration::from_secs_f64(stats_every),
                std::time::Duration::from_millis(batch_ms),
                table,
                std::time::Duration::from_millis(summary_ms),
            )?;
            Ok(serde_json::json!({"kind": "end"}))
        }
        Cmd::Check => flow_iw::check(),
        Cmd::Attach { cgroup, pins, default_iw, max_iw, created_cgroup, pacing } => {
            check_iw(default_iw, max_iw)?;
            let flags = if created_cgroup { layout::CFG_CREATED_CGROUP } else { 0 } | pacing.flags()?;
            let config = layout::Config { default_iw, max_iw, flags, reserved: 0 };
            flow_iw::attach(&flow_iw::AttachArgs { cgroup, pins, config })
        }
        Cmd::Configure { pins, default_iw, max_iw, pacing } => {
            check_iw(default_iw, max_iw)?;
            flow_iw::configure(&pins, default_iw, max_iw, pacing.flags()?)
        }
        Cmd::Status { pins } => flow_iw::status(&pins),
        Cmd::Detach { pins } => flow_iw::detach(&pins),
        Cmd::CgroupId { cgroup } => flow_iw::cgroup_id(&cgroup).map(|id| serde_json::json!({"cgroup_id": id})),
    }
}

fn main() {
    let cli = Cli::parse();
    match run(cli.cmd) {
        Ok(v) => println!("{v}"),
        Err(Error::Usage(m)) => {
            eprintln!("iwlab-bpf: {m}");
            std::process::exit(2);
        }
        Err(Error::Kernel(m)) => {
            eprintln!("iwlab-bpf: {m}");
            std::process::exit(1);
        }
    }
}
