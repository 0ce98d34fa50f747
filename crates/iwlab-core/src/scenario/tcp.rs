//! `[tcp]` tables → the engine's [`TcpConfig`]: engine defaults ← the scenario's `[tcp]` ←
//! an application's `tcp`, field by field, with each error naming the table the bad value
//! came from (`tcp.min_rto` or `apps[3].tcp.min_rto`).

use super::error::ScenarioError;
use super::model::{DelayedAckSpec, FlagOr, Switch, SynLossSpec, TcpSpec};
use super::profile;
use super::units::{Duration, Size};
use crate::engine::SimDuration;
use crate::tcp::cc::cubic::{CubicArithmetic, SsthreshFrom};
use crate::tcp::cc::hystart::HyStartKind;
use crate::tcp::cc::CcConfig;
use crate::tcp::config::{DelayedAck, RecoveryKind, SynLossRule, TcpConfig};
use crate::tcp::pacing::PacerRule;
use crate::tcp::recovery::prr::ReductionBound;
use crate::tcp::rto::RtoRule;
use crate::tcp::timers::TimerClock;

type R<T> = Result<T, ScenarioError>;

/// Calls macro `$m` with every field of [`TcpSpec`], listed once here.
macro_rules! tcp_spec_fields {
    ($m:ident) => {
        $m!(
            mss,
            cc,
            cubic,
            recovery,
            tlp,
            sack,
            timestamps,
            delayed_ack,
            rcv_wnd,
            initial_rcv_wnd,
            initial_rto,
            min_rto,
            max_rto,
            granularity,
            hz,
            dupthresh,
            limited_transmit,
            abc_l,
            syn_loss,
            restart_after_idle,
            ecn,
            initial_ssthresh,
            syn_retries,
            pacing,
            pacing_ss_ratio,
            pacing_ca_ratio,
            paced_iw,
            pacer,
            profile,
            prr,
            hystart,
            quickack,
            timers,
            rto_ssthresh,
            cwnd_growth,
            idle_restart,
            fin,
            rto_window,
            reordering,
            frto,
            dsack,
            undo
        )
    };
}

/// Is field `f` set in `spec`? (To say which layer a bad TCP value came from.)
pub(crate) fn field_set(spec: &TcpSpec, f: &str) -> bool {
    macro_rules! set {
        ($($f:ident),*) => { match f { $(stringify!($f) => spec.$f.is_some(),)* _ => false } };
    }
    tcp_spec_fields!(set)
}

/// `over` on top of `base`, field by field.
fn merge(base: &TcpSpec, over: &TcpSpec) -> TcpSpec {
    macro_rules! m {
        ($($f:ident),*) => { TcpSpec { $($f: over.$f.clone().or_else(|| base.$f.clone())),* } };
    }
    tcp_spec_fields!(m)
}

/// A `true | false | "name"` field: `true` = the RFC's variant `on`, `false` = off.
fn variant<T>(
    v: &Option<FlagOr>,
    path: String,
    on: T,
    names: &[&str],
    by_name: fn(&str) -> Result<T, String>,
) -> R<Option<T>> {
    match v {
        None | Some(FlagOr::Flag(false)) => Ok(None),
        Some(FlagOr::Flag(true)) => Ok(Some(on)),
        Some(FlagOr::Name(n)) => by_name(n)
            .map(Some)
            .map_err(|_| ScenarioError::value(path, format!("{n:?}"), format!("true, false or one of {names:?}"))),
    }
}

/// The engine's TCP options: engine defaults ← `base` ← `over`; `path_of(field)` names the
/// table a value came from.
pub(crate) fn tcp_config(base: &TcpSpec, over: &TcpSpec, path_of: &dyn Fn(&str) -> String) -> R<TcpConfig> {
    let s = merge(base, over);
    // A profile goes under every field set explicitly (engine defaults ← profile ← base ← over).
    let s = match &s.profile {
        None => s,
        Some(name) => {
            let mut p =
                profile::profile(name).map_err(|e| ScenarioError::value(path_of("profile"), format!("{name:?}"), e))?;
            if s.sack == Some(false) {
                // A profile's SACK-based recovery and PRR give way to an explicit sack = false
                // (Linux without SACK recovers NewReno-style).
                p.recovery = Some("newreno".into());
                p.prr = None;
                p.tlp = None;
            }
            if s.recovery.as_deref().is_some_and(|r| r != "sack" && r != "rack") {
                p.prr = None;
            }
            if s.cc.as_deref().is_some_and(|c| c != "cubic") {
                p.hystart = None; // Linux's HyStart is CUBIC's (tcp_cubic.c)
                p.cubic = None;
            }
            let mut merged = merge(&p, &s);
            // A `[tcp.cubic]` of the scenario overrides the profile's CUBIC fields one by one.
            if let (Some(mine), Some(profile_cubic)) = (merged.cubic.as_mut(), p.cubic.as_ref()) {
                mine.ssthresh_from = mine.ssthresh_from.clone().or_else(|| profile_cubic.ssthresh_from.clone());
                mine.arithmetic = mine.arithmetic.clone().or_else(|| profile_cubic.arithmetic.clone());
            }
            merged
        }
    };
    let mut c = TcpConfig::default();
    if let Some(m) = s.mss {
        if m.get() == 0 || m.get() > 65_000 {
            return Err(ScenarioError::value(path_of("mss"), m, "1..=65000 bytes"));
        }
        c.mss = m.get() as u32;
    }
    if let Some(name) = &s.cc {
        c.cc = CcConfig::by_name(name).map_err(|_| {
            ScenarioError::value(path_of("cc"), format!("{name:?}"), format!("one of {:?}", CcConfig::NAMES))
        })?;
    }
    if let Some(cu) = &s.cubic {
        let CcConfig::Cubic(cfg) = &mut c.cc else {
            return Err(ScenarioError::invalid(path_of("cubic"), "CUBIC parameters need cc = \"cubic\""));
        };
        if let Some(b) = cu.beta {
            if !(b > 0.0 && b < 1.0) {
                return Err(ScenarioError::value(format!("{}.beta", path_of("cubic")), b, "0 < beta < 1"));
            }
            cfg.beta = b;
        }
        if let Some(k) = cu.c {
            if !(k.is_finite() && k > 0.0) {
                return Err(ScenarioError::value(format!("{}.c", path_of("cubic")), k, "> 0"));
            }
            cfg.c = k;
        }
        cfg.fast_convergence = cu.fast_convergence.unwrap_or(cfg.fast_convergence);
        cfg.reno_friendly = cu.reno_friendly.unwrap_or(cfg.reno_friendly);
        if let Some(name) = &cu.ssthresh_from {
            cfg.ssthresh_from = SsthreshFrom::by_name(name).ok_or_else(|| {
                ScenarioError::value(
                    format!("{}.ssthresh_from", path_of("cubic")),
                    format!("{name:?}"),
                    format!("one of {:?}", SsthreshFrom::NAMES),
                )
            })?;
        }
        if let Some(name) = &cu.arithmetic {
            cfg.arithmetic = CubicArithmetic::by_name(name).ok_or_else(|| {
                ScenarioError::value(
                    format!("{}.arithmetic", path_of("cubic")),
                    format!("{name:?}"),
                    format!("one of {:?}", CubicArithmetic::NAMES),
                )
            })?;
        }
    }
    if let Some(name) = &s.recovery {
        c.recovery = RecoveryKind::by_name(name).map_err(|_| {
            ScenarioError::value(path_of("recovery"), format!("{name:?}"), format!("one of {:?}", RecoveryKind::NAMES))
        })?;
    }
    c.sack = s.sack.unwrap_or(c.sack);
    // RFC 8985: RACK comes with its Tail Loss Probe unless `tlp = false`.
    c.tlp = s.tlp.unwrap_or(c.recovery == RecoveryKind::Rack);
    c.timestamps = s.timestamps.unwrap_or(c.timestamps);
    match s.delayed_ack {
        None => {}
        Some(DelayedAckSpec::Off) => c.delayed_ack = None,
        Some(DelayedAckSpec::On { segments, timeout }) => {
            let p = path_of("delayed_ack");
            if segments == 0 {
                return Err(ScenarioError::value(format!("{p}.segments"), 0, ">= 1"));
            }
            if timeout.get() == SimDuration::ZERO {
                return Err(ScenarioError::value(format!("{p}.timeout"), timeout, "> 0"));
            }
            c.delayed_ack = Some(DelayedAck { segments, timeout: timeout.get() });
        }
    }
    let mss = c.mss;
    let at_least_mss = |v: Size, f: &str| -> R<u64> {
        let b = v.bytes(mss);
        if b < mss as u64 {
            return Err(ScenarioError::value(path_of(f), v, format!(">= one MSS ({mss} B)")));
        }
        Ok(b)
    };
    if let Some(w) = s.rcv_wnd {
        c.rcv_wnd = at_least_mss(w, "rcv_wnd")?;
    }
    match s.initial_rcv_wnd {
        None | Some(Switch::Off) => {}
        Some(Switch::On(w)) => c.initial_rcv_wnd = Some(at_least_mss(w, "initial_rcv_wnd")?),
    }
    if let Some(t) = s.initial_rto {
        if t.get() == SimDuration::ZERO {
            return Err(ScenarioError::value(path_of("initial_rto"), t, "> 0"));
        }
        c.initial_rto = t.get();
    }
    c.min_rto = s.min_rto.map_or(c.min_rto, Duration::get);
    c.max_rto = s.max_rto.map_or(c.max_rto, Duration::get);
    if c.min_rto > c.max_rto {
        let f = if field_set(over, "min_rto") || !field_set(over, "max_rto") { "min_rto" } else { "max_rto" };
        let (v, e) = if f == "min_rto" {
            (Duration::new(c.min_rto), format!("<= max_rto ({})", Duration::new(c.max_rto)))
        } else {
            (Duration::new(c.max_rto), format!(">= min_rto ({})", Duration::new(c.min_rto)))
        };
        return Err(ScenarioError::value(path_of(f), v, e));
    }
    c.granularity = s.granularity.map_or(c.granularity, Duration::get);
    if let Some(hz) = s.hz {
        if hz != 0 && !TimerClock::LINUX_HZ.contains(&hz) {
            let allowed = format!("0 (exact) or one of {:?}", TimerClock::LINUX_HZ);
            return Err(ScenarioError::value(path_of("hz"), hz, allowed));
        }
        c.hz = hz;
    }
    if let Some(d) = s.dupthresh {
        if d == 0 {
            return Err(ScenarioError::value(path_of("dupthresh"), 0, ">= 1"));
        }
        c.dupthresh = d;
    }
    c.limited_transmit = s.limited_transmit.unwrap_or(c.limited_transmit);
    if let Some(l) = s.abc_l {
        c.abc_l = (l > 0).then_some(l);
    }
    if let Some(r) = s.syn_loss {
        c.syn_loss = match r {
            SynLossSpec::ReduceToOne => SynLossRule::ReduceToOne,
            SynLossSpec::Rfc6928 => SynLossRule::Rfc6928,
        };
    }
    c.restart_after_idle = s.restart_after_idle.unwrap_or(c.restart_after_idle);
    c.frto = s.frto.unwrap_or(c.frto);
    c.dsack = s.dsack.unwrap_or(c.dsack);
    c.undo = s.undo.unwrap_or(c.undo);
    c.ecn = s.ecn.unwrap_or(c.ecn);
    match s.initial_ssthresh {
        None => {}
        Some(Switch::Off) => c.initial_ssthresh = u64::MAX,
        Some(Switch::On(v)) => {
            if v.is_zero() {
                return Err(ScenarioError::value(path_of("initial_ssthresh"), v, "> 0, or false (arbitrarily high)"));
            }
            c.initial_ssthresh = v.bytes(mss);
        }
    }
    c.syn_retries = s.syn_retries.unwrap_or(c.syn_retries);
    c.pacing.enabled = s.pacing.unwrap_or(c.pacing.enabled);
    c.pacing.paced_iw = s.paced_iw.unwrap_or(c.pacing.paced_iw);
    if let Some(name) = &s.pacer {
        c.pacing.rule = PacerRule::by_name(name).ok_or_else(|| {
            ScenarioError::value(path_of("pacer"), format!("{name:?}"), "one of [\"exact\", \"linux\"]")
        })?;
    }
    for (f, v, slot) in [
        ("pacing_ss_ratio", s.pacing_ss_ratio, &mut c.pacing.ss_ratio),
        ("pacing_ca_ratio", s.pacing_ca_ratio, &mut c.pacing.ca_ratio),
    ] {
        if let Some(r) = v {
            if !(1..=10_000).contains(&r) {
                return Err(ScenarioError::value(path_of(f), r, "1..=10000 (percent of cwnd/SRTT)"));
            }
            *slot = r;
        }
    }
    c.prr = variant(&s.prr, path_of("prr"), ReductionBound::SlowStart, ReductionBound::NAMES, ReductionBound::by_name)?;
    c.hystart =
        variant(&s.hystart, path_of("hystart"), HyStartKind::Rfc9406, HyStartKind::NAMES, HyStartKind::by_name)?;
    c.quickack = s.quickack.unwrap_or(c.quickack);
    if let Some(name) = &s.timers {
        c.timers = match name.as_str() {
            "rfc" => RtoRule::Rfc6298,
            "linux" => RtoRule::Linux,
            _ => {
                return Err(ScenarioError::value(path_of("timers"), format!("{name:?}"), "one of [\"rfc\", \"linux\"]"))
            }
        };
    }
    if let Some(name) = &s.rto_ssthresh {
        c.rto_keeps_reduced_ssthresh = match name.as_str() {
            "each-expiry" => false,
            "once-per-window" => true,
            _ => {
                return Err(ScenarioError::value(
                    path_of("rto_ssthresh"),
                    format!("{name:?}"),
                    "one of [\"each-expiry\", \"once-per-window\"]",
                ))
            }
        };
    }
    if let Some(name) = &s.cwnd_growth {
        c.grow_only_cwnd_limited = match name.as_str() {
            "every-ack" => false,
            "cwnd-limited" => true,
            _ => {
                return Err(ScenarioError::value(
                    path_of("cwnd_growth"),
                    format!("{name:?}"),
                    "one of [\"every-ack\", \"cwnd-limited\"]",
                ))
            }
        };
    }
    if let Some(name) = &s.idle_restart {
        c.restart_halves_per_rto = match name.as_str() {
            "rfc5681" => false,
            "halve-per-rto" => true,
            _ => {
                return Err(ScenarioError::value(
                    path_of("idle_restart"),
                    format!("{name:?}"),
                    "one of [\"rfc5681\", \"halve-per-rto\"]",
                ))
            }
        };
    }
    if let Some(name) = &s.fin {
        c.fin_after_write = match name.as_str() {
            "with-write" => false,
            "after-write" => true,
            _ => {
                return Err(ScenarioError::value(
                    path_of("fin"),
                    format!("{name:?}"),
                    "one of [\"with-write\", \"after-write\"]",
                ))
            }
        };
    }
    if let Some(name) = &s.rto_window {
        c.rto_window_in_flight = match name.as_str() {
            "from-snd-una" => false,
            "packets-in-flight" => true,
            _ => {
                return Err(ScenarioError::value(
                    path_of("rto_window"),
                    format!("{name:?}"),
                    "one of [\"from-snd-una\", \"packets-in-flight\"]",
                ))
            }
        };
    }
    if let Some(name) = &s.reordering {
        c.reordering_learned = match name.as_str() {
            "fixed" => false,
            "learned" => true,
            _ => {
                return Err(ScenarioError::value(
                    path_of("reordering"),
                    format!("{name:?}"),
                    "one of [\"fixed\", \"learned\"]",
                ))
            }
        };
    }
    if c.prr.is_some() && !matches!(c.recovery, RecoveryKind::Sack | RecoveryKind::Rack) {
        return Err(ScenarioError::value(
            path_of("prr"),
            format!("{:?}", s.prr),
            "false unless recovery = \"sack\" or \"rack\" (PRR runs in SACK-based recovery)",
        ));
    }
    if c.recovery == RecoveryKind::Sack && !c.sack {
        return Err(ScenarioError::value(
            path_of("recovery"),
            "\"sack\"",
            "sack = true with it (SACK recovery needs SACK)",
        ));
    }
    if c.recovery == RecoveryKind::Rack && !c.sack {
        return Err(ScenarioError::value(path_of("recovery"), "\"rack\"", "sack = true with it (RACK needs SACK)"));
    }
    if c.tlp && !c.sack {
        return Err(ScenarioError::value(path_of("tlp"), "true", "sack = true with it (TLP needs SACK)"));
    }
    // The engine's own check, as a backstop (its messages say `tcp.<field>`).
    c.validate().map_err(|m| ScenarioError::invalid_msg(path_of(""), m))?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(spec: TcpSpec) -> R<TcpConfig> {
        tcp_config(&TcpSpec::default(), &spec, &|f| format!("tcp.{f}"))
    }

    #[test]
    fn rack_turns_tlp_on_unless_tlp_is_false() {
        let rack = || TcpSpec { recovery: Some("rack".into()), sack: Some(true), ..TcpSpec::default() };
        let c = resolved(rack()).unwrap();
        assert_eq!((c.recovery, c.tlp), (RecoveryKind::Rack, true));
        let c = resolved(TcpSpec { tlp: Some(false), ..rack() }).unwrap();
        assert!(!c.tlp);
        // TLP alone, with RFC 6675 recovery.
        let c = resolved(TcpSpec {
            recovery: Some("sack".into()),
            sack: Some(true),
            tlp: Some(true),
            ..TcpSpec::default()
        })
        .unwrap();
        assert_eq!((c.recovery, c.tlp), (RecoveryKind::Sack, true));
        // Neither is on by default.
        let c = resolved(TcpSpec::default()).unwrap();
        assert_eq!((c.recovery, c.tlp), (RecoveryKind::NewReno, false));
    }
}
