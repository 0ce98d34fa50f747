//! Parsing of the link parameters written on the command line or in a JSON config:
//! rates (`1.5Mbps`), durations (`25ms`), queue disciplines (`droptail:25pkt`, `red:…`,
//! `codel:…`) and loss probabilities. Every error names the field, the value and what is allowed.

use iwlab_core::engine::SimDuration;
use iwlab_core::net::queue::{CodelConfig, Limit, QueueConfig, RedConfig};

/// Splits `"1.5Mbps"` into `(1.5, "Mbps")`.
fn number_and_unit(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    v.is_finite().then_some((v, unit.trim()))
}

/// A rate in bits per second. Units (SI, all *bits*): `bps`/`bit`, `kbps`/`kbit`/`k`,
/// `Mbps`/`Mbit`/`M`, `Gbps`/`Gbit`/`G`, also written `Mb/s`; a bare number is bits/s.
/// Valid: 1 bit/s up to 10¹² bit/s.
pub fn parse_rate(field: &str, s: &str) -> Result<u64, String> {
    let err = || {
        format!("{field} = {s:?} is not a rate; write e.g. 1.5Mbps, 10Mbit, 100M (bits per second, 1 bit/s ..= 1Tbps)")
    };
    let (v, unit) = number_and_unit(s).ok_or_else(err)?;
    let unit = unit.to_ascii_lowercase().replace("/s", "ps");
    let mult = match unit.as_str() {
        "" | "bps" | "bit" | "b" => 1e0,
        "k" | "kbps" | "kbit" | "kb" => 1e3,
        "m" | "mbps" | "mbit" | "mb" => 1e6,
        "g" | "gbps" | "gbit" | "gb" => 1e9,
        "t" | "tbps" | "tbit" | "tb" => 1e12,
        _ => return Err(err()),
    };
    let bps = (v * mult).round();
    if !(1.0..=1e12).contains(&bps) {
        return Err(err());
    }
    Ok(bps as u64)
}

/// A duration: `50ms`, `250us`, `1.5s`, `100ns`; `0` alone needs no unit. Valid: 0 ..= 1 hour.
pub fn parse_duration(field: &str, s: &str) -> Result<SimDuration, String> {
    let err = || format!("{field} = {s:?} is not a duration; write e.g. 25ms, 250us, 1.5s, 0 (0 ..= 3600s)");
    let (v, unit) = number_and_unit(s).ok_or_else(err)?;
    let ns_per = match unit {
        "" if v == 0.0 => 1.0,
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(err()),
    };
    let ns = (v * ns_per).round();
    if !(0.0..=3600e9).contains(&ns) {
        return Err(err());
    }
    Ok(SimDuration::from_nanos(ns as u64))
}

/// A probability in `0..=1`.
pub fn parse_probability(field: &str, v: f64) -> Result<f64, String> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{field} = {v} is out of range; allowed: 0..=1"))
    }
}

/// A queue limit: `25pkt` (or `25p`, or a bare `25`) packets, `30000B`, `64kB`, `1MB` bytes.
pub fn parse_limit(field: &str, s: &str) -> Result<Limit, String> {
    let err = || format!("{field} = {s:?} is not a queue limit; write e.g. 25pkt, 30000B, 64kB (≥ 1)");
    let (v, unit) = number_and_unit(s).ok_or_else(err)?;
    if v < 1.0 {
        return Err(err());
    }
    match unit {
        "" | "p" | "pkt" | "pkts" | "packets" if v.fract() == 0.0 && v <= u32::MAX as f64 => {
            Ok(Limit::Packets(v as u32))
        }
        "B" | "bytes" => Ok(Limit::Bytes(v as u64)),
        "kB" | "KB" => Ok(Limit::Bytes((v * 1e3) as u64)),
        "MB" => Ok(Limit::Bytes((v * 1e6) as u64)),
        _ => Err(err()),
    }
}

/// The queue grammar, for error messages and `--help`.
pub const QUEUE_GRAMMAR: &str = "droptail[:LIMIT] | red[:limit=LIMIT,min=5,max=15,maxp=0.1,wq=0.002,\
gentle=1,mean=1000,bytes=0,ecn=0] | codel[:limit=LIMIT,target=5ms,interval=100ms,mtu=1514,ecn=0]; \
LIMIT = 25pkt | 30000B | 64kB";

fn parse_bool(field: &str, v: &str) -> Result<bool, String> {
    match v {
        "" | "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err(format!("{field} = {v:?} is not a boolean; allowed: 1/0, true/false, on/off")),
    }
}

fn parse_f64(field: &str, v: &str) -> Result<f64, String> {
    v.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| format!("{field} = {v:?} is not a number"))
}

/// `key=value` pairs after the colon; a bare `key` means `key=1`.
fn pairs(params: &str) -> impl Iterator<Item = (&str, &str)> {
    params.split(',').filter(|p| !p.is_empty()).map(|p| p.split_once('=').unwrap_or((p, "")))
}

/// A queue discipline spec: see [`QUEUE_GRAMMAR`]. Defaults are the core's (`RedConfig::default`,
/// `CodelConfig::default`); `droptail` alone holds 100 packets.
pub fn parse_queue(s: &str) -> Result<QueueConfig, String> {
    let (name, params) = s.trim().split_once(':').unwrap_or((s.trim(), ""));
    let unknown = |k: &str| Err(format!("queue {name}: unknown parameter {k:?}; the queue grammar is {QUEUE_GRAMMAR}"));
    match name {
        "droptail" | "fifo" => {
            let limit = if params.is_empty() { Limit::Packets(100) } else { parse_limit("droptail limit", params)? };
            Ok(QueueConfig::DropTail { limit })
        }
        "red" => {
            let mut c = RedConfig::default();
            for (k, v) in pairs(params) {
                let f = |n: &str| format!("red {n}");
                match k {
                    "limit" => c.limit = parse_limit(&f(k), v)?,
                    "min" | "min_th" => c.min_th = parse_f64(&f(k), v)?,
                    "max" | "max_th" => c.max_th = parse_f64(&f(k), v)?,
                    "maxp" | "max_p" => c.max_p = parse_f64(&f(k), v)?,
                    "wq" | "w_q" => c.w_q = parse_f64(&f(k), v)?,
                    "gentle" => c.gentle = parse_bool(&f(k), v)?,
                    "ecn" => c.ecn = parse_bool(&f(k), v)?,
                    "bytes" | "byte_mode" => c.byte_mode = parse_bool(&f(k), v)?,
                    "mean" | "mean_pkt_size" => {
                        let m = parse_f64(&f(k), v)?;
                        if !(1.0..=65535.0).contains(&m) {
                            return Err(format!("red mean = {v} is out of range; allowed: 1..=65535 bytes"));
                        }
                        c.mean_pkt_size = m as u32;
                    }
                    _ => return unknown(k),
                }
            }
            c.validate()?;
            Ok(QueueConfig::Red(c))
        }
        "codel" => {
            let mut c = CodelConfig::default();
            for (k, v) in pairs(params) {
                let f = |n: &str| format!("codel {n}");
                match k {
                    "limit" => c.limit = parse_limit(&f(k), v)?,
                    "target" => c.target = parse_duration(&f(k), v)?,
                    "interval" => c.interval = parse_duration(&f(k), v)?,
                    "ecn" => c.ecn = parse_bool(&f(k), v)?,
                    "mtu" => {
                        let m = parse_f64(&f(k), v)?;
                        if !(68.0..=65535.0).contains(&m) {
                            return Err(format!("codel mtu = {v} is out of range; allowed: 68..=65535 bytes"));
                        }
                        c.mtu = m as u32;
                    }
                    _ => return unknown(k),
                }
            }
            c.validate()?;
            Ok(QueueConfig::Codel(c))
        }
        _ => Err(format!("queue = {s:?}: unknown discipline {name:?}; allowed: {QUEUE_GRAMMAR}")),
    }
}

/// Turns ECN marking on (`--ecn`). Drop-tail has nothing to mark with, so that is an error.
pub fn enable_ecn(q: &mut QueueConfig) -> Result<(), String> {
    match q {
        QueueConfig::Red(c) => c.ecn = true,
        QueueConfig::Codel(c) => c.ecn = true,
        QueueConfig::DropTail { .. } => {
            return Err("ecn = true needs an AQM that marks; allowed with queue red or codel, not droptail".into())
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_bits_per_second() {
        assert_eq!(parse_rate("rate", "1.5Mbps"), Ok(1_500_000));
        assert_eq!(parse_rate("rate", "10Mbit"), Ok(10_000_000));
        assert_eq!(parse_rate("rate", "100M"), Ok(100_000_000));
        assert_eq!(parse_rate("rate", "64kbps"), Ok(64_000));
        assert_eq!(parse_rate("rate", "1Gb/s"), Ok(1_000_000_000));
        assert_eq!(parse_rate("rate", "9600"), Ok(9600));
        assert!(parse_rate("rate", "0Mbps").unwrap_err().starts_with("rate = \"0Mbps\" is not a rate"));
        assert!(parse_rate("rate", "fast").is_err());
        assert!(parse_rate("rate", "10 furlongs").is_err());
    }

    #[test]
    fn durations_are_integer_nanoseconds() {
        assert_eq!(parse_duration("delay", "50ms"), Ok(SimDuration::from_millis(50)));
        assert_eq!(parse_duration("delay", "250us"), Ok(SimDuration::from_micros(250)));
        assert_eq!(parse_duration("delay", "1.5s"), Ok(SimDuration::from_millis(1500)));
        assert_eq!(parse_duration("delay", "0"), Ok(SimDuration::ZERO));
        assert!(parse_duration("delay", "50").is_err(), "a non-zero duration needs a unit");
        assert!(parse_duration("delay", "2h").is_err());
    }

    #[test]
    fn limits_in_packets_or_bytes() {
        assert_eq!(parse_limit("l", "25pkt"), Ok(Limit::Packets(25)));
        assert_eq!(parse_limit("l", "25"), Ok(Limit::Packets(25)));
        assert_eq!(parse_limit("l", "30000B"), Ok(Limit::Bytes(30000)));
        assert_eq!(parse_limit("l", "64kB"), Ok(Limit::Bytes(64000)));
        assert!(parse_limit("l", "0pkt").is_err());
        assert!(parse_limit("l", "12 parsecs").is_err());
    }

    #[test]
    fn queue_specs_build_the_core_configs() {
        assert_eq!(parse_queue("droptail:25pkt"), Ok(QueueConfig::DropTail { limit: Limit::Packets(25) }));
        assert_eq!(parse_queue("droptail"), Ok(QueueConfig::DropTail { limit: Limit::Packets(100) }));
        assert_eq!(parse_queue("red"), Ok(QueueConfig::Red(RedConfig::default())));
        let red = parse_queue("red:limit=50pkt,min=10,max=30,maxp=0.2,wq=0.01,gentle=0,ecn").unwrap();
        assert_eq!(
            red,
            QueueConfig::Red(RedConfig {
                limit: Limit::Packets(50),
                min_th: 10.0,
                max_th: 30.0,
                max_p: 0.2,
                w_q: 0.01,
                gentle: false,
                ecn: true,
                ..RedConfig::default()
            })
        );
        let codel = parse_queue("codel:target=2ms,interval=40ms,limit=200pkt").unwrap();
        assert_eq!(
            codel,
            QueueConfig::Codel(CodelConfig {
                target: SimDuration::from_millis(2),
                interval: SimDuration::from_millis(40),
                limit: Limit::Packets(200),
                ..CodelConfig::default()
            })
        );
    }

    #[test]
    fn queue_errors_name_the_field_and_the_allowed_values() {
        assert!(parse_queue("pie").unwrap_err().contains("unknown discipline \"pie\""));
        assert!(parse_queue("red:min=20,max=10").unwrap_err().contains("RED max_th = 10 is out of range"));
        assert!(parse_queue("codel:target=200ms").unwrap_err().contains("CoDel target"));
        assert!(parse_queue("codel:foo=1").unwrap_err().contains("unknown parameter \"foo\""));
        let mut dt = parse_queue("droptail:10pkt").unwrap();
        assert!(enable_ecn(&mut dt).is_err());
        let mut codel = parse_queue("codel").unwrap();
        enable_ecn(&mut codel).unwrap();
        assert!(matches!(codel, QueueConfig::Codel(CodelConfig { ecn: true, .. })));
    }
}
