//! Quantities with units, as scenario files write them: `"1.5Mbps"`, `"50ms"`, `"1MB"`,
//! `"11seg"`, `"25pkt"`, `"60%"`.
//!
//! * Numbers are decimals (`1.5`, `250`, `1e6`) parsed **exactly** (no float rounding): the
//!   result must be a whole number of the base unit (bits/s, nanoseconds, bytes), so
//!   `"0.5ns"` and `"1.5B"` are errors, not silently rounded.
//! * Prefixes are SI (k = 10³, M = 10⁶, G = 10⁹) — `"1MB"` is 1 000 000 bytes; the binary
//!   prefixes are spelled `KiB`, `MiB`, `GiB` (2¹⁰, 2²⁰, 2³⁰).
//! * A bare number (no unit, TOML integer or float) is in the base unit: bits per second,
//!   **seconds**, bytes, packets.
//! * Whitespace between number and unit is allowed (`"1.5 Mbps"`).
//! * Written back (serialisation), every quantity takes its canonical form: the largest unit
//!   in which it is a whole number (`1460` B → `"1460B"`, 0.2 s → `"200ms"`, 10⁶ B →
//!   `"1MB"`); rates may keep up to three decimals (`1_500_000` b/s → `"1.5Mbps"`). Parsing
//!   the canonical form gives the same value back.
//!
//! ```
//! use iwlab_core::scenario::units::{Bytes, Duration, QueueLimit, Rate};
//! assert_eq!("1.5Mbps".parse::<Rate>().unwrap().bps(), 1_500_000);
//! assert_eq!("50ms".parse::<Duration>().unwrap().as_nanos(), 50_000_000);
//! assert_eq!("1MB".parse::<Bytes>().unwrap().get(), 1_000_000);
//! assert_eq!("1MiB".parse::<Bytes>().unwrap().get(), 1 << 20);
//! assert_eq!("25pkt".parse::<QueueLimit>().unwrap().to_string(), "25pkt");
//! assert_eq!(Rate::new(1_500_000).to_string(), "1.5Mbps");
//! ```

use crate::engine::SimDuration;
use crate::net::queue::Limit;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Rate units (case-insensitive): name → bits per second.
const RATE_UNITS: &[(&str, u64)] = &[
    ("bps", 1),
    ("b/s", 1),
    ("kbps", 1_000),
    ("kb/s", 1_000),
    ("mbps", 1_000_000),
    ("mb/s", 1_000_000),
    ("gbps", 1_000_000_000),
    ("gb/s", 1_000_000_000),
];
const RATE_CANON: &[(&str, u64)] = &[("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("kbps", 1_000), ("bps", 1)];
const RATE_HELP: &str = "bps, kbps, Mbps, Gbps (SI, case-insensitive; also b/s, kb/s, Mb/s, Gb/s)";

/// Duration units (case-sensitive): name → nanoseconds.
const TIME_UNITS: &[(&str, u64)] =
    &[("ns", 1), ("us", 1_000), ("µs", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000), ("min", 60_000_000_000)];
const TIME_CANON: &[(&str, u64)] = &[("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1)];
const TIME_HELP: &str = "ns, us, ms, s, min";

/// Byte units (case-sensitive: `kb`/`Mb` would be bits): name → bytes.
const BYTE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("byte", 1),
    ("bytes", 1),
    ("kB", 1_000),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
];
const BYTE_CANON: &[(&str, u64)] = &[("GB", 1_000_000_000), ("MB", 1_000_000), ("kB", 1_000), ("B", 1)];
const BYTE_HELP: &str = "B, kB, MB, GB (SI: 10^3) or KiB, MiB, GiB (2^10)";

/// Segment units: a size counted in MSS-sized segments.
const SEG_UNITS: &[&str] = &["seg", "segs", "segment", "segments"];
/// Packet units of a queue limit.
const PKT_UNITS: &[&str] = &["pkt", "pkts", "packet", "packets", "p"];

/// An exact non-negative decimal: `mant · 10^exp`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Decimal {
    mant: u128,
    exp: i32,
}

impl Decimal {
    /// `self · mult` as a whole number, if it is one and fits in a u64.
    fn times(self, mult: u64) -> Result<u64, &'static str> {
        let mut v = self.mant.checked_mul(mult as u128).ok_or("is too large")?;
        if self.exp >= 0 {
            for _ in 0..self.exp {
                v = v.checked_mul(10).ok_or("is too large")?;
            }
        } else {
            for _ in 0..(-self.exp) {
                if v % 10 != 0 {
                    return Err("is not a whole number of");
                }
                v /= 10;
            }
        }
        u64::try_from(v).map_err(|_| "is too large")
    }

    fn to_f64(self) -> f64 {
        self.mant as f64 * 10f64.powi(self.exp)
    }
}

/// Splits `"1.5 Mbps"` into the exact number and the unit (`"Mbps"`, maybe empty).
fn split(s: &str) -> Result<(Decimal, &str), String> {
    let t = s.trim();
    let bytes = t.as_bytes();
    let mut i = 0;
    let mut mant: u128 = 0;
    let mut exp: i32 = 0;
    let mut digits = 0usize;
    let push = |mant: &mut u128, d: u8| -> Result<(), String> {
        *mant = mant
            .checked_mul(10)
            .and_then(|m| m.checked_add(d as u128))
            .ok_or_else(|| "has too many digits".to_string())?;
        Ok(())
    };
    if bytes.first() == Some(&b'+') {
        i += 1;
    }
    if bytes.get(i) == Some(&b'-') {
        return Err("is negative".into());
    }
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        push(&mut mant, bytes[i] - b'0')?;
        digits += 1;
        i += 1;
    }
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            push(&mut mant, bytes[i] - b'0')?;
            exp -= 1;
            digits += 1;
            i += 1;
        }
    }
    if digits == 0 {
        return Err("does not start with a number".into());
    }
    // An exponent: `e` or `E`, an optional sign, digits (not the start of a unit like "exa").
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        let neg = match bytes.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let start = j;
        let mut e: i32 = 0;
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            e = e.saturating_mul(10).saturating_add((bytes[j] - b'0') as i32);
            j += 1;
        }
        if j > start {
            if e > 40 {
                return Err("has an exponent out of range".into());
            }
            exp += if neg { -e } else { e };
            i = j;
        }
    }
    Ok((Decimal { mant, exp }, t[i..].trim_start()))
}

fn lookup(unit: &str, table: &[(&str, u64)], case_insensitive: bool) -> Option<u64> {
    table
        .iter()
        .find(|(n, _)| if case_insensitive { n.eq_ignore_ascii_case(unit) } else { *n == unit })
        .map(|&(_, m)| m)
}

/// `v` in the largest canonical unit where it is ≥ 1 with at most three decimals (with
/// `decimals`) or a whole number (without).
#[allow(clippy::manual_is_multiple_of)] // u128::is_multiple_of needs Rust 1.87
fn canonical(v: u64, units: &[(&str, u64)], zero: &str, decimals: bool) -> String {
    if v == 0 {
        return format!("0{zero}");
    }
    let scale: u128 = if decimals { 1000 } else { 1 };
    for &(name, m) in units {
        if v >= m && (v as u128 * scale) % m as u128 == 0 {
            let (int, rem) = (v / m, v % m);
            if rem == 0 {
                return format!("{int}{name}");
            }
            let frac = format!("{:03}", (rem as u128 * 1000 / m as u128) as u64);
            return format!("{int}.{}{name}", frac.trim_end_matches('0'));
        }
    }
    let (name, _) = units.last().expect("non-empty unit table");
    format!("{v}{name}")
}

fn parse_with(s: &str, what: &str, table: &[(&str, u64)], ci: bool, base: &str, help: &str) -> Result<u64, String> {
    let err = |why: &str| format!("{s:?} {why}; expected {what}: a number >= 0 with a unit, one of {help}");
    let (d, unit) = split(s).map_err(|e| err(&e))?;
    let unit = if unit.is_empty() { base } else { unit };
    let m = lookup(unit, table, ci).ok_or_else(|| err(&format!("has an unknown unit {unit:?}")))?;
    d.times(m).map_err(|e| match e {
        "is not a whole number of" => err(&format!("is not a whole number of {}", table[0].0)),
        other => err(other),
    })
}

/// The factor from `unit` to the base unit of a quantity, for a distribution's `unit` field.
fn factor(unit: &str, table: &[(&str, u64)], ci: bool, per_base: f64, what: &str, help: &str) -> Result<f64, String> {
    lookup(unit.trim(), table, ci)
        .map(|m| m as f64 / per_base)
        .ok_or_else(|| format!("{unit:?} is not a unit of {what}; expected one of {help}"))
}

/// A quantity a scenario field holds, fixed or drawn from a distribution
/// ([`super::dist::FixedOrDist`]): how distribution values map to it.
pub trait Quantity: Clone + fmt::Debug + PartialEq + Serialize + for<'de> Deserialize<'de> {
    /// What it is, for messages ("a rate").
    const WHAT: &'static str;
    /// The unit distribution parameters are in when the distribution names no `unit`.
    const BASE: &'static str;
    /// The factor that turns a value in `unit` into the base unit (`"ms"` → 0.001 for
    /// durations, whose base is seconds).
    fn unit_factor(unit: &str) -> Result<f64, String>;
    /// The value in the base unit.
    fn base_value(&self) -> f64;
}

macro_rules! serde_via_string {
    ($t:ty, $expecting:literal, $from_u64:expr, $from_f64:expr) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$t, E> {
                        v.parse().map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$t, E> {
                        #[allow(clippy::redundant_closure_call)]
                        ($from_u64)(v).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$t, E> {
                        match u64::try_from(v) {
                            Ok(u) => self.visit_u64(u),
                            Err(_) => Err(E::custom(format!("{v} is negative; expected {}", $expecting))),
                        }
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$t, E> {
                        if !(v.is_finite() && v >= 0.0) {
                            return Err(E::custom(format!("{v} is not allowed; expected {}", $expecting)));
                        }
                        #[allow(clippy::redundant_closure_call)]
                        ($from_f64)(v).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

/// A whole-number float, or an error.
fn whole(v: f64, what: &str) -> Result<u64, String> {
    if v.fract() == 0.0 && v <= u64::MAX as f64 {
        Ok(v as u64)
    } else {
        Err(format!("{v} is not a whole number of {what}"))
    }
}

/// A link rate or bit rate, bits per second. Bare numbers are bits per second.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(u64);

impl Rate {
    pub const fn new(bps: u64) -> Self {
        Rate(bps)
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
}

impl FromStr for Rate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_with(s, "a rate", RATE_UNITS, true, "bps", RATE_HELP).map(Rate)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&canonical(self.0, RATE_CANON, "bps", true))
    }
}

serde_via_string!(Rate, "a rate such as \"1.5Mbps\" (a bare number is bits/s)", |v| Ok::<_, String>(Rate(v)), |v| {
    whole(v, "bps").map(Rate)
});

impl Quantity for Rate {
    const WHAT: &'static str = "a rate";
    const BASE: &'static str = "bps";
    fn unit_factor(unit: &str) -> Result<f64, String> {
        factor(unit, RATE_UNITS, true, 1.0, "rate", RATE_HELP)
    }
    fn base_value(&self) -> f64 {
        self.0 as f64
    }
}

/// A span of time, nanosecond resolution. Bare numbers are **seconds**.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(SimDuration);

impl Duration {
    pub const ZERO: Duration = Duration(SimDuration::ZERO);
    pub const fn new(d: SimDuration) -> Self {
        Duration(d)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Duration(SimDuration::from_millis(ms))
    }
    pub const fn from_secs(s: u64) -> Self {
        Duration(SimDuration::from_secs(s))
    }
    pub const fn get(self) -> SimDuration {
        self.0
    }
    pub const fn as_nanos(self) -> u64 {
        self.0.as_nanos()
    }
}

impl FromStr for Duration {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_with(s, "a duration", TIME_UNITS, false, "s", TIME_HELP).map(|ns| Duration(SimDuration::from_nanos(ns)))
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&canonical(self.0.as_nanos(), TIME_CANON, "s", false))
    }
}

serde_via_string!(
    Duration,
    "a duration such as \"50ms\" (a bare number is seconds)",
    |v: u64| v
        .checked_mul(1_000_000_000)
        .map(|ns| Duration(SimDuration::from_nanos(ns)))
        .ok_or_else(|| format!("{v} s is too large")),
    |v: f64| if v * 1e9 < u64::MAX as f64 {
        Ok(Duration(SimDuration::from_secs_f64(v)))
    } else {
        Err(format!("{v} s is too large"))
    }
);

impl Quantity for Duration {
    const WHAT: &'static str = "a duration";
    const BASE: &'static str = "s";
    fn unit_factor(unit: &str) -> Result<f64, String> {
        factor(unit, TIME_UNITS, false, 1e9, "time", TIME_HELP)
    }
    fn base_value(&self) -> f64 {
        self.0.as_secs_f64()
    }
}

/// A number of bytes. Bare numbers are bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(u64);

impl Bytes {
    pub const fn new(b: u64) -> Self {
        Bytes(b)
    }
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl FromStr for Bytes {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_with(s, "a size in bytes", BYTE_UNITS, false, "B", BYTE_HELP).map(Bytes)
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&canonical(self.0, BYTE_CANON, "B", false))
    }
}

serde_via_string!(Bytes, "a size such as \"1MB\" (a bare number is bytes)", |v| Ok::<_, String>(Bytes(v)), |v| whole(
    v, "bytes"
)
.map(Bytes));

impl Quantity for Bytes {
    const WHAT: &'static str = "a size";
    const BASE: &'static str = "B";
    fn unit_factor(unit: &str) -> Result<f64, String> {
        factor(unit, BYTE_UNITS, false, 1.0, "size", BYTE_HELP)
    }
    fn base_value(&self) -> f64 {
        self.0 as f64
    }
}

/// A plain count (objects per page): a bare integer; distributions take no unit.
impl Quantity for u32 {
    const WHAT: &'static str = "a count";
    const BASE: &'static str = "";
    fn unit_factor(unit: &str) -> Result<f64, String> {
        Err(format!("{unit:?} is not allowed; a count has no unit"))
    }
    fn base_value(&self) -> f64 {
        *self as f64
    }
}

/// A size in bytes or in segments (`"11seg"`), the latter resolved against the MSS of the
/// endpoint that uses it (RFC 2415's "maximum window 11 packets" is `rcv_wnd = "11seg"`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    Bytes(u64),
    Segments(u64),
}

impl Size {
    /// Bytes, with segments of `mss` bytes.
    pub fn bytes(self, mss: u32) -> u64 {
        match self {
            Size::Bytes(b) => b,
            Size::Segments(n) => n.saturating_mul(mss as u64),
        }
    }
    /// Is it zero (bytes or segments)?
    pub fn is_zero(self) -> bool {
        matches!(self, Size::Bytes(0) | Size::Segments(0))
    }
}

impl FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Ok((d, unit)) = split(s) {
            if SEG_UNITS.contains(&unit) {
                return d
                    .times(1)
                    .map(Size::Segments)
                    .map_err(|e| format!("{s:?} {e} segments; expected a whole number of segments"));
            }
        }
        parse_with(s, "a size", BYTE_UNITS, false, "B", "B, kB, MB, GB, KiB, MiB, GiB, or seg (segments of one MSS)")
            .map(Size::Bytes)
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match *self {
            Size::Bytes(b) => Bytes(b).fmt(f),
            Size::Segments(n) => write!(f, "{n}seg"),
        }
    }
}

serde_via_string!(
    Size,
    "a size such as \"1MB\" or \"11seg\" (a bare number is bytes)",
    |v| Ok::<_, String>(Size::Bytes(v)),
    |v| whole(v, "bytes").map(Size::Bytes)
);

/// A queue capacity in packets (`"25pkt"`) or bytes (`"64kB"`). Bare numbers are packets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QueueLimit(pub Limit);

impl QueueLimit {
    pub const fn packets(n: u32) -> Self {
        QueueLimit(Limit::Packets(n))
    }
    pub fn is_zero(self) -> bool {
        matches!(self.0, Limit::Packets(0) | Limit::Bytes(0))
    }
}

impl FromStr for QueueLimit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let help = "pkt (packets) or B, kB, MB, KiB, MiB";
        let (d, unit) =
            split(s).map_err(|e| format!("{s:?} {e}; expected a queue limit: a number with a unit, one of {help}"))?;
        if unit.is_empty() || PKT_UNITS.contains(&unit) {
            let n = d.times(1).map_err(|e| format!("{s:?} {e} packets; expected a whole number of packets"))?;
            let n =
                u32::try_from(n).map_err(|_| format!("{s:?} is too large; expected at most {} packets", u32::MAX))?;
            return Ok(QueueLimit(Limit::Packets(n)));
        }
        parse_with(s, "a queue limit", BYTE_UNITS, false, "B", help).map(|b| QueueLimit(Limit::Bytes(b)))
    }
}

impl fmt::Display for QueueLimit {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            Limit::Packets(n) => write!(f, "{n}pkt"),
            Limit::Bytes(b) => Bytes(b).fmt(f),
        }
    }
}

serde_via_string!(
    QueueLimit,
    "a queue limit such as \"25pkt\" or \"64kB\" (a bare number is packets)",
    |v: u64| u32::try_from(v).map(|n| QueueLimit(Limit::Packets(n))).map_err(|_| format!("{v} packets is too large")),
    |v: f64| whole(v, "packets")
        .and_then(|n| u32::try_from(n).map_err(|_| format!("{v} packets is too large")))
        .map(|n| QueueLimit(Limit::Packets(n)))
);

/// A rate given absolutely (`"600kbps"`) or as a share of the bottleneck (`"60%"`).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum RateOrShare {
    Rate(Rate),
    /// Percent of the bottleneck rate (60.0 for `"60%"`).
    Percent(f64),
}

impl FromStr for RateOrShare {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if let Some(num) = t.strip_suffix('%') {
            let (d, rest) = split(num).map_err(|e| format!("{s:?} {e}; expected a percentage such as \"60%\""))?;
            if !rest.is_empty() {
                return Err(format!("{s:?} is not a percentage; expected a number followed by %, such as \"60%\""));
            }
            return Ok(RateOrShare::Percent(d.to_f64()));
        }
        t.parse::<Rate>()
            .map(RateOrShare::Rate)
            .map_err(|e| format!("{e}, or a share of the bottleneck such as \"60%\""))
    }
}

impl fmt::Display for RateOrShare {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            RateOrShare::Rate(r) => r.fmt(f),
            RateOrShare::Percent(p) => write!(f, "{p}%"),
        }
    }
}

serde_via_string!(
    RateOrShare,
    "a rate such as \"600kbps\" or a share of the bottleneck such as \"60%\"",
    |v| Ok::<_, String>(RateOrShare::Rate(Rate(v))),
    |v| whole(v, "bps").map(|b| RateOrShare::Rate(Rate(b)))
);

/// A share of the bottleneck written as a percentage (`"10%"`); bare numbers are refused, so
/// that 10 and 0.1 cannot be mistaken for each other.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Share(f64);

impl Share {
    /// From a percentage (10.0 for 10 %).
    pub fn percent(p: f64) -> Self {
        Share(p)
    }
    /// The share as a fraction (0.1 for `"10%"`).
    pub fn fraction(self) -> f64 {
        self.0 / 100.0
    }
}

impl FromStr for Share {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let num = s
            .trim()
            .strip_suffix('%')
            .ok_or_else(|| format!("{s:?} is not a percentage; expected a share of the bottleneck such as \"10%\""))?;
        let (d, rest) = split(num).map_err(|e| format!("{s:?} {e}; expected a percentage such as \"10%\""))?;
        if !rest.is_empty() {
            return Err(format!("{s:?} is not a percentage; expected a number followed by %, such as \"10%\""));
        }
        Ok(Share(d.to_f64()))
    }
}

impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}%", self.0)
    }
}

serde_via_string!(
    Share,
    "a share of the bottleneck such as \"10%\"",
    |v: u64| Err::<Share, _>(format!("{v} is not a percentage; expected a share of the bottleneck such as \"10%\"")),
    |v: f64| Err::<Share, _>(format!("{v} is not a percentage; expected a share of the bottleneck such as \"10%\""))
);

// --- JSON Schema (`super::schema`) --------------------------------------------------------

/// The schema of a quantity: a string, a number then one of `units` (the base unit when none),
/// or (`bare`) a number ≥ 0 in the base unit. The pattern checks the shape only; `FromStr`
/// above stays the one authority on values.
fn quantity_schema(description: &str, units: &[&str], ci: bool, bare: bool, unit_required: bool) -> schemars::Schema {
    let alts: Vec<String> = units
        .iter()
        .map(|u| {
            u.chars()
                .map(|c| match c {
                    c if ci && c.is_ascii_alphabetic() => format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase()),
                    '/' | '%' | '.' => format!("\\{c}"),
                    c => c.to_string(),
                })
                .collect()
        })
        .collect();
    let unit = format!("({}){}", alts.join("|"), if unit_required { "" } else { "?" });
    let pattern = format!(r"^\s*\+?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*{unit}\s*$");
    let text = schemars::json_schema!({ "type": "string", "pattern": pattern });
    if bare {
        schemars::json_schema!({
            "description": description,
            "anyOf": [text, { "type": "number", "minimum": 0 }],
        })
    } else {
        let mut s = text;
        s.insert("description".into(), description.into());
        s
    }
}

fn names<'a>(table: &[(&'a str, u64)]) -> Vec<&'a str> {
    table.iter().map(|(n, _)| *n).collect()
}

macro_rules! quantity_json_schema {
    ($t:ty, $name:literal, $description:expr, $units:expr, $ci:expr, $bare:expr, $unit_required:expr) => {
        impl schemars::JsonSchema for $t {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                quantity_schema($description, &$units, $ci, $bare, $unit_required)
            }
        }
    };
}

quantity_json_schema!(
    Rate,
    "Rate",
    &format!("A rate such as \"1.5Mbps\" ({RATE_HELP}); a bare number is bits/s."),
    names(RATE_UNITS),
    true,
    true,
    false
);
quantity_json_schema!(
    Duration,
    "Duration",
    &format!("A duration such as \"50ms\" ({TIME_HELP}); a bare number is seconds."),
    names(TIME_UNITS),
    false,
    true,
    false
);
quantity_json_schema!(
    Bytes,
    "Bytes",
    &format!("A size such as \"1MB\" ({BYTE_HELP}); a bare number is bytes."),
    names(BYTE_UNITS),
    false,
    true,
    false
);
quantity_json_schema!(
    Size,
    "Size",
    &format!("A size in bytes ({BYTE_HELP}) or in segments of the endpoint's MSS (\"11seg\"); a bare number is bytes."),
    [names(BYTE_UNITS), SEG_UNITS.to_vec()].concat(),
    false,
    true,
    false
);
quantity_json_schema!(
    QueueLimit,
    "QueueLimit",
    &format!("A queue limit in packets (\"25pkt\") or bytes (\"64kB\"; {BYTE_HELP}); a bare number is packets."),
    [PKT_UNITS.to_vec(), names(BYTE_UNITS)].concat(),
    false,
    true,
    false
);
quantity_json_schema!(
    RateOrShare,
    "RateOrShare",
    &format!("A rate such as \"600kbps\" ({RATE_HELP}; a bare number is bits/s) or a share of the bottleneck such as \"60%\"."),
    [names(RATE_UNITS), vec!["%"]].concat(),
    true,
    true,
    false
);
quantity_json_schema!(
    Share,
    "Share",
    "A share of the bottleneck such as \"10%\" (bare numbers are refused: 10 and 0.1 would be confused).",
    ["%"],
    false,
    false,
    true
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_si_and_case_insensitive() {
        assert_eq!("1.5Mbps".parse::<Rate>().unwrap().bps(), 1_500_000);
        assert_eq!("1.5 mbps".parse::<Rate>().unwrap().bps(), 1_500_000);
        assert_eq!("10Mb/s".parse::<Rate>().unwrap().bps(), 10_000_000);
        assert_eq!("1Gbps".parse::<Rate>().unwrap().bps(), 1_000_000_000);
        assert_eq!("56kbps".parse::<Rate>().unwrap().bps(), 56_000);
        assert_eq!("1e6bps".parse::<Rate>().unwrap().bps(), 1_000_000);
        assert_eq!("1200".parse::<Rate>().unwrap().bps(), 1200);
        let e = "1.5Xbps".parse::<Rate>().unwrap_err();
        assert!(e.contains("unknown unit \"Xbps\"") && e.contains("Mbps"), "{e}");
        assert!("-1Mbps".parse::<Rate>().unwrap_err().contains("negative"));
        assert!("0.5bps".parse::<Rate>().unwrap_err().contains("whole number of bps"));
    }

    #[test]
    fn durations_are_exact_nanoseconds() {
        assert_eq!("50ms".parse::<Duration>().unwrap().as_nanos(), 50_000_000);
        assert_eq!("0.2s".parse::<Duration>().unwrap().as_nanos(), 200_000_000);
        assert_eq!("360s".parse::<Duration>().unwrap().as_nanos(), 360_000_000_000);
        assert_eq!("1.5us".parse::<Duration>().unwrap().as_nanos(), 1_500);
        assert_eq!("2min".parse::<Duration>().unwrap().as_nanos(), 120_000_000_000);
        assert_eq!("3".parse::<Duration>().unwrap().as_nanos(), 3_000_000_000);
        assert!("0.5ns".parse::<Duration>().unwrap_err().contains("whole number of ns"));
        assert!("5MS".parse::<Duration>().unwrap_err().contains("unknown unit"));
        assert!("ms".parse::<Duration>().unwrap_err().contains("does not start with a number"));
    }

    #[test]
    fn bytes_are_si_with_binary_spelled_out() {
        assert_eq!("1MB".parse::<Bytes>().unwrap().get(), 1_000_000);
        assert_eq!("1MiB".parse::<Bytes>().unwrap().get(), 1_048_576);
        assert_eq!("200KB".parse::<Bytes>().unwrap().get(), 200_000);
        assert_eq!("200kB".parse::<Bytes>().unwrap().get(), 200_000);
        assert_eq!("250B".parse::<Bytes>().unwrap().get(), 250);
        assert_eq!("250".parse::<Bytes>().unwrap().get(), 250);
        assert!("1Mb".parse::<Bytes>().unwrap_err().contains("unknown unit \"Mb\""));
        assert!("1.5B".parse::<Bytes>().unwrap_err().contains("whole number of B"));
    }

    #[test]
    fn sizes_limits_and_shares() {
        assert_eq!("11seg".parse::<Size>().unwrap(), Size::Segments(11));
        assert_eq!("11seg".parse::<Size>().unwrap().bytes(1460), 16_060);
        assert_eq!("1MB".parse::<Size>().unwrap(), Size::Bytes(1_000_000));
        assert_eq!("25pkt".parse::<QueueLimit>().unwrap().0, Limit::Packets(25));
        assert_eq!("25".parse::<QueueLimit>().unwrap().0, Limit::Packets(25));
        assert_eq!("64kB".parse::<QueueLimit>().unwrap().0, Limit::Bytes(64_000));
        assert_eq!("60%".parse::<RateOrShare>().unwrap(), RateOrShare::Percent(60.0));
        assert_eq!("600kbps".parse::<RateOrShare>().unwrap(), RateOrShare::Rate(Rate(600_000)));
        assert!("60%%".parse::<RateOrShare>().is_err());
        assert_eq!("10%".parse::<Share>().unwrap().fraction(), 0.1);
        assert_eq!("4%".parse::<Share>().unwrap().to_string(), "4%");
        assert!("0.1".parse::<Share>().unwrap_err().contains("not a percentage"));
    }

    #[test]
    fn canonical_forms_parse_back_to_the_same_value() {
        assert_eq!(Rate(1_500_000).to_string(), "1.5Mbps");
        assert_eq!(Rate(1_234_567).to_string(), "1234.567kbps");
        assert_eq!(Rate(1).to_string(), "1bps");
        assert_eq!(Duration::from_millis(200).to_string(), "200ms");
        assert_eq!(Duration::from_millis(1500).to_string(), "1500ms");
        assert_eq!(Duration::from_secs(360).to_string(), "360s");
        assert_eq!(Duration::ZERO.to_string(), "0s");
        assert_eq!(Bytes(1460).to_string(), "1460B");
        assert_eq!(Bytes(200_000).to_string(), "200kB");
        assert_eq!(Bytes(1_048_576).to_string(), "1048576B");
        for v in [0u64, 1, 7, 999, 1000, 1001, 1_500_000, 123_456_789, u64::MAX] {
            assert_eq!(Rate(v).to_string().parse::<Rate>().unwrap(), Rate(v));
            assert_eq!(Bytes(v).to_string().parse::<Bytes>().unwrap(), Bytes(v));
            let d = Duration(SimDuration::from_nanos(v));
            assert_eq!(d.to_string().parse::<Duration>().unwrap(), d);
        }
    }

    #[test]
    fn distribution_unit_factors() {
        assert_eq!(Rate::unit_factor("Mbps").unwrap(), 1e6);
        assert_eq!(Duration::unit_factor("ms").unwrap(), 1e-3);
        assert_eq!(Bytes::unit_factor("kB").unwrap(), 1e3);
        assert!(Duration::unit_factor("parsecs").unwrap_err().contains("ns, us, ms, s"));
    }
}
