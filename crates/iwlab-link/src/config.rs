//! Command line and JSON config, both turned into one [`Plan`].
//!
//! Per-direction flags (`--rate`, `--delay`, `--queue`, `--loss`) are given either once (every
//! `--tun` gets the value) or once per `--tun`, in the same order.

use crate::link::LinkParams;
use crate::spec::{self, QUEUE_GRAMMAR};
use clap::Parser;
use iwlab_core::engine::SimDuration;
use serde::Deserialize;
use std::path::PathBuf;

/// User-space link emulator: reads IP packets from TUN devices and writes each back to the same
/// device after loss → queue discipline → serialisation at --rate → propagation --delay.
#[derive(Parser, Debug, Clone, Default)]
#[command(name = "iwlab-link", version, after_help = AFTER_HELP)]
pub struct Args {
    /// TUN device of one direction (repeat for the other direction). Attached to if it exists
    /// (`ip tuntap add NAME mode tun`), created otherwise.
    #[arg(long = "tun", value_name = "NAME")]
    pub tun: Vec<String>,
    /// Link rate in bits/s: 1.5Mbps, 10Mbit, 100M, 1Gbps (once, or once per --tun).
    #[arg(long, value_name = "RATE")]
    pub rate: Vec<String>,
    /// One-way propagation delay: 25ms, 250us, 0 (once, or once per --tun). Default 0.
    #[arg(long, value_name = "DURATION")]
    pub delay: Vec<String>,
    /// Queue discipline (once, or once per --tun). Default droptail:100pkt.
    #[arg(long, value_name = "SPEC", long_help = format!("Queue discipline (once, or once per --tun). Default droptail:100pkt.\n{QUEUE_GRAMMAR}"))]
    pub queue: Vec<String>,
    /// Mark ECN-capable packets CE instead of dropping them (red and codel).
    #[arg(long)]
    pub ecn: bool,
    /// Bernoulli loss probability before the queue, 0..=1 (once, or once per --tun).
    #[arg(long, value_name = "P")]
    pub loss: Vec<f64>,
    /// Seed of the loss and RED random streams (one stream per direction).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write counters and lateness percentiles here on exit, SIGINT/SIGTERM, and SIGUSR1.
    #[arg(long, value_name = "PATH")]
    pub stats_json: Option<PathBuf>,
    /// Read everything above from a JSON file instead (see the README).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["tun", "rate", "delay", "queue", "ecn", "loss"])]
    pub config: Option<PathBuf>,
    /// Sleep until this long before the next event, then poll without sleeping. Default 50us.
    #[arg(long, value_name = "DURATION")]
    pub spin: Option<String>,
    /// Packet buffers preallocated (arrivals beyond are dropped and counted). Default 8192.
    #[arg(long, value_name = "N")]
    pub pool_slots: Option<usize>,
    /// Exit by itself after this long.
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<String>,
    /// SCHED_FIFO priority of the relay (1..=99); 0 keeps normal scheduling. Default 10.
    #[arg(long, value_name = "N")]
    pub rt_priority: Option<u32>,
    /// Pin the relay to this CPU.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
}

const AFTER_HELP: &str = "Example (router namespace with TUNs tcs and tsc, see the README for the routing):
  iwlab-link --tun tcs --tun tsc --rate 10Mbps --delay 25ms --queue droptail:25pkt --stats-json s.json";

/// The JSON config: the same settings, one object per direction.
/// `{"seed": 1, "stats_json": "s.json", "links": [{"tun": "tcs", "rate": "10Mbps", "delay": "25ms",
///   "queue": "codel", "ecn": true, "loss": 0.01}, ...]}`
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub seed: Option<u64>,
    pub stats_json: Option<PathBuf>,
    pub spin: Option<String>,
    pub pool_slots: Option<usize>,
    pub duration: Option<String>,
    pub rt_priority: Option<u32>,
    pub cpu: Option<usize>,
    pub links: Vec<FileLink>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct FileLink {
    pub tun: String,
    pub rate: String,
    #[serde(default)]
    pub delay: Option<String>,
    #[serde(default)]
    pub queue: Option<String>,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default)]
    pub loss: f64,
}

/// Everything the relay needs, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub links: Vec<(String, LinkParams)>,
    pub seed: u64,
    pub stats_json: Option<PathBuf>,
    pub spin: SimDuration,
    pub pool_slots: usize,
    pub duration: Option<SimDuration>,
    pub rt_priority: u32,
    pub cpu: Option<usize>,
}

pub const DEFAULT_QUEUE: &str = "droptail:100pkt";
pub const DEFAULT_SPIN: &str = "50us";
pub const DEFAULT_POOL_SLOTS: usize = 8192;
pub const DEFAULT_RT_PRIORITY: u32 = 10;

fn link(
    tun: &str,
    rate: &str,
    delay: Option<&str>,
    queue: Option<&str>,
    ecn: bool,
    loss: f64,
) -> Result<LinkParams, String> {
    let mut q = spec::parse_queue(queue.unwrap_or(DEFAULT_QUEUE)).map_err(|e| format!("{tun}: {e}"))?;
    if ecn {
        spec::enable_ecn(&mut q).map_err(|e| format!("{tun}: {e}"))?;
    }
    Ok(LinkParams {
        rate_bps: spec::parse_rate(&format!("{tun}: rate"), rate)?,
        delay: match delay {
            Some(d) => spec::parse_duration(&format!("{tun}: delay"), d)?,
            None => SimDuration::ZERO,
        },
        queue: q,
        loss: spec::parse_probability(&format!("{tun}: loss"), loss)?,
    })
}

/// The settings that are not per direction, each still optional.
#[derive(Default)]
struct Globals<'a> {
    seed: Option<u64>,
    stats_json: Option<PathBuf>,
    spin: Option<&'a str>,
    pool_slots: Option<usize>,
    duration: Option<&'a str>,
    rt_priority: Option<u32>,
    cpu: Option<usize>,
}

impl<'a> Globals<'a> {
    fn of_args(a: &'a Args) -> Self {
        Globals {
            seed: a.seed,
            stats_json: a.stats_json.clone(),
            spin: a.spin.as_deref(),
            pool_slots: a.pool_slots,
            duration: a.duration.as_deref(),
            rt_priority: a.rt_priority,
            cpu: a.cpu,
        }
    }
    fn of_file(f: &'a FileConfig) -> Self {
        Globals {
            seed: f.seed,
            stats_json: f.stats_json.clone(),
            spin: f.spin.as_deref(),
            pool_slots: f.pool_slots,
            duration: f.duration.as_deref(),
            rt_priority: f.rt_priority,
            cpu: f.cpu,
        }
    }
    /// Values set here win over those of `base`.
    fn over(self, base: Globals<'a>) -> Self {
        Globals {
            seed: self.seed.or(base.seed),
            stats_json: self.stats_json.or(base.stats_json),
            spin: self.spin.or(base.spin),
            pool_slots: self.pool_slots.or(base.pool_slots),
            duration: self.duration.or(base.duration),
            rt_priority: self.rt_priority.or(base.rt_priority),
            cpu: self.cpu.or(base.cpu),
        }
    }

    fn plan(self, links: Vec<(String, LinkParams)>) -> Result<Plan, String> {
        let mut names: Vec<&str> = links.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("tun = {:?} is given twice; each direction needs its own TUN device", w[0]));
        }
        let pool_slots = self.pool_slots.unwrap_or(DEFAULT_POOL_SLOTS);
        if !(16..=1 << 24).contains(&pool_slots) {
            return Err(format!("pool_slots = {pool_slots} is out of range; allowed: 16..=16777216"));
        }
        let rt_priority = self.rt_priority.unwrap_or(DEFAULT_RT_PRIORITY);
        if rt_priority > 99 {
            return Err(format!("rt_priority = {rt_priority} is out of range; allowed: 0 (off) or 1..=99"));
        }
        Ok(Plan {
            links,
            seed: self.seed.unwrap_or(1),
            stats_json: self.stats_json,
            spin: spec::parse_duration("spin", self.spin.unwrap_or(DEFAULT_SPIN))?,
            pool_slots,
            duration: self.duration.map(|d| spec::parse_duration("duration", d)).transpose()?,
            rt_priority,
            cpu: self.cpu,
        })
    }
}

/// The value of a per-direction flag for direction `i` of `n`.
fn nth<'a, T>(flag: &str, v: &'a [T], i: usize, n: usize) -> Result<Option<&'a T>, String> {
    match v.len() {
        0 => Ok(None),
        1 => Ok(v.first()),
        k if k == n => Ok(v.get(i)),
        k => Err(format!("--{flag} is given {k} times for {n} --tun; give it once, or once per --tun")),
    }
}

impl Plan {
    pub fn from_args(a: &Args) -> Result<Plan, String> {
        if let Some(path) = &a.config {
            let text = std::fs::read_to_string(path).map_err(|e| format!("config {}: {e}", path.display()))?;
            // Flags that are not per direction may still be given beside --config, and win.
            return Plan::parse_json(&text, Globals::of_args(a)).map_err(|e| format!("config {}: {e}", path.display()));
        }
        let n = a.tun.len();
        if n == 0 {
            return Err("no --tun given; name one TUN device per direction (or use --config)".into());
        }
        let mut links = Vec::with_capacity(n);
        for (i, tun) in a.tun.iter().enumerate() {
            let rate = nth("rate", &a.rate, i, n)?.ok_or("--rate is required (bits/s, e.g. 10Mbps)")?;
            let delay = nth("delay", &a.delay, i, n)?.map(String::as_str);
            let queue = nth("queue", &a.queue, i, n)?.map(String::as_str);
            let loss = nth("loss", &a.loss, i, n)?.copied().unwrap_or(0.0);
            links.push((tun.clone(), link(tun, rate, delay, queue, a.ecn, loss)?));
        }
        Globals::of_args(a).plan(links)
    }

    pub fn from_json(text: &str) -> Result<Plan, String> {
        Plan::parse_json(text, Globals::default())
    }

    fn parse_json(text: &str, over: Globals) -> Result<Plan, String> {
        let f: FileConfig = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if f.links.is_empty() {
            return Err("links is empty; give one object per direction".into());
        }
        let links = f
            .links
            .iter()
            .map(|l| Ok((l.tun.clone(), link(&l.tun, &l.rate, l.delay.as_deref(), l.queue.as_deref(), l.ecn, l.loss)?)))
            .collect::<Result<Vec<_>, String>>()?;
        over.over(Globals::of_file(&f)).plan(links)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iwlab_core::net::queue::{CodelConfig, Limit, QueueConfig};

    fn args(cmd: &str) -> Args {
        Args::try_parse_from(std::iter::once("iwlab-link").chain(cmd.split_whitespace())).unwrap()
    }

    #[test]
    fn flags_given_once_apply_to_every_direction() {
        let p =
            Plan::from_args(&args("--tun tcs --tun tsc --rate 1.5Mbps --delay 50ms --queue droptail:25pkt")).unwrap();
        assert_eq!(p.links.len(), 2);
        for (_, l) in &p.links {
            assert_eq!(l.rate_bps, 1_500_000);
            assert_eq!(l.delay, SimDuration::from_millis(50));
            assert_eq!(l.queue, QueueConfig::DropTail { limit: Limit::Packets(25) });
            assert_eq!(l.loss, 0.0);
        }
        assert_eq!((p.seed, p.pool_slots, p.spin), (1, 8192, SimDuration::from_micros(50)));
        assert_eq!((p.rt_priority, p.cpu), (10, None));
    }

    #[test]
    fn flags_given_per_direction_apply_in_order() {
        let p = Plan::from_args(&args(
            "--tun up --tun down --rate 1Mbps --rate 10Mbps --delay 10ms --queue codel --ecn --loss 0.01 --loss 0 --seed 9",
        ))
        .unwrap();
        assert_eq!((p.links[0].1.rate_bps, p.links[1].1.rate_bps), (1_000_000, 10_000_000));
        assert_eq!((p.links[0].1.loss, p.links[1].1.loss), (0.01, 0.0));
        assert_eq!(p.links[1].1.queue, QueueConfig::Codel(CodelConfig { ecn: true, ..CodelConfig::default() }));
        assert_eq!(p.seed, 9);
    }

    #[test]
    fn bad_command_lines_say_what_is_wrong() {
        let err = |cmd: &str| Plan::from_args(&args(cmd)).unwrap_err();
        assert!(err("--rate 1Mbps").contains("no --tun"));
        assert!(err("--tun t1").contains("--rate is required"));
        assert!(err("--tun t1 --tun t2 --tun t3 --rate 1M --rate 2M").contains("--rate is given 2 times for 3 --tun"));
        assert!(err("--tun t1 --tun t1 --rate 1M").contains("given twice"));
        assert!(err("--tun t1 --rate 1M --loss 1.5").contains("t1: loss = 1.5 is out of range"));
        assert!(err("--tun t1 --rate 1M --ecn").contains("ecn = true needs an AQM"));
        assert!(err("--tun t1 --rate 1M --delay 5").contains("t1: delay = \"5\" is not a duration"));
        assert!(err("--tun t1 --rate 1M --rt-priority 100").contains("rt_priority = 100 is out of range"));
    }

    #[test]
    fn json_config_matches_the_flags() {
        let json = r#"{"seed": 3, "stats_json": "/tmp/s.json", "links": [
            {"tun": "tcs", "rate": "10Mbps", "delay": "25ms", "queue": "droptail:25pkt"},
            {"tun": "tsc", "rate": "10Mbps", "delay": "25ms", "queue": "droptail:25pkt"}]}"#;
        let from_json = Plan::from_json(json).unwrap();
        let from_flags = Plan::from_args(&args(
            "--tun tcs --tun tsc --rate 10Mbps --delay 25ms --queue droptail:25pkt --seed 3 --stats-json /tmp/s.json",
        ))
        .unwrap();
        assert_eq!(from_json, from_flags);
        assert!(Plan::from_json(r#"{"links": [{"tun": "x", "rate": "1M", "colour": "red"}]}"#)
            .unwrap_err()
            .contains("unknown field `colour`"));
        assert!(Plan::from_json(r#"{"links": []}"#).unwrap_err().contains("links is empty"));
    }

    #[test]
    fn flags_beside_config_override_the_file() {
        let path = std::env::temp_dir().join(format!("iwlab-link-config-{}.json", std::process::id()));
        std::fs::write(
            &path,
            r#"{"seed": 3, "rt_priority": 0, "links": [{"tun": "t1", "rate": "1Mbps", "queue": "red"}]}"#,
        )
        .unwrap();
        let p = Plan::from_args(&args(&format!("--config {} --seed 4 --cpu 1", path.display()))).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!((p.seed, p.rt_priority, p.cpu), (4, 0, Some(1)));
        assert_eq!(p.links[0].1.rate_bps, 1_000_000);
        assert!(
            Args::try_parse_from(["iwlab-link", "--config", "x.json", "--tun", "t1"]).is_err(),
            "per-link flags conflict"
        );
    }
}
