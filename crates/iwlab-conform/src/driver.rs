//! Runs a parsed script against one engine [`Endpoint`], clock-free: inbound packets are
//! handed to `on_segment` at their script times, timers fire at `next_timeout()`, and every
//! segment the endpoint emits is queued with its time and matched, in order, against the
//! script's outbound packets (packetdrill's `run_packet.c` semantics: the next packet sent
//! must be the next one expected, within the time tolerance).

use crate::code;
use crate::script::*;
use crate::settings::{Applied, Settings};
use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::net::packet::Ecn;
use iwlab_core::tcp::endpoint::{Endpoint, Outbox, State};
use iwlab_core::tcp::iw::{AnyIw, IwConfig};
use iwlab_core::tcp::segment::{Flags, SackBlocks, Segment};
use std::collections::VecDeque;
use std::path::Path;

/// packetdrill's default `--tolerance_percent`: the tolerance of an event is at least this
/// share of the script time since the previous event (`verify_time()` in run.c).
const DEFAULT_TOLERANCE_PERCENT: f64 = 12.5;
/// packetdrill's default `--tolerance_usecs`.
pub const DEFAULT_TOLERANCE_USECS: u64 = 4_000;

/// Why a script stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// The engine did something other than the script expects of Linux.
    Differs,
    /// The script needs something the interpreter or the engine does not have.
    Unsupported,
    /// The script itself is wrong (a Python error in a `%{ }%` block).
    ScriptError,
}

/// Where a script stopped agreeing with the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub class: Class,
    pub line: usize,
    /// The script's text of the event.
    pub event: String,
    pub expected: String,
    /// What the engine did instead.
    pub actual: String,
}

/// Something the interpreter did not model, or a setting it applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub line: usize,
    /// `"applied"` (a setting modelled), `"ignored"` (not modelled, or no effect on the
    /// engine), `"unsupported"` (not modelled, and it changes what Linux sends: a failure
    /// while it is in force is classed unsupported), or `"print"` (a block's `print` output).
    pub kind: &'static str,
    pub message: String,
}

#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub failure: Option<Failure>,
    pub notes: Vec<Note>,
    /// Events run (all of them when the script passed).
    pub events_run: usize,
    /// Whether the connection uses SACK (both SYNs offered it), once it started.
    pub sack: Option<bool>,
    /// The peer advertised a zero window after the handshake.
    pub zero_window: bool,
}

struct Fail(Failure);
type R<T> = Result<T, Fail>;

fn secs(t: SimTime) -> String {
    format!("{:.6}", t.as_secs_f64())
}

fn at(s: f64) -> SimTime {
    SimTime::ZERO + SimDuration::from_secs_f64(s)
}

struct Sent {
    at: SimTime,
    seg: Segment,
    ecn: Ecn,
}

struct Driver<'a> {
    settings: Settings,
    dir: &'a Path,
    /// The tolerance of the event being run: max(`base_tol`, `tol_percent` of the script time
    /// since the previous event).
    tol: SimDuration,
    base_tol: SimDuration,
    tol_percent: f64,
    ep: Option<Endpoint>,
    iw: AnyIw,
    out: Outbox,
    now: SimTime,
    /// Time of the last event, the base of relative times.
    anchor: SimTime,
    sent: VecDeque<Sent>,
    listening: bool,
    client: bool,
    connect_at: SimTime,
    conn_fd: Option<i64>,
    remote_isn: u64,
    peer_wscale: u8,
    /// (script TSval, engine TSval) of matched outbound packets: inbound TSecr values are
    /// translated through it.
    ts_map: Vec<(u64, u32)>,
    consumed: u64,
    notes: Vec<Note>,
    line: usize,
    event: String,
    win_note: bool,
    wscale_note: bool,
    code: code::Interp,
    sack: Option<bool>,
    zero_window: bool,
    /// shutdown(SHUT_WR) or close() done: a write fails with EPIPE.
    wr_closed: bool,
    /// A blocking system call under way (`t1...t2`).
    pending: Option<Pending>,
}

/// What a blocking call waits for before it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// connect(): the handshake.
    Established,
    /// read()/recv(): bytes to read (up to this many).
    Data(u64),
}

struct Pending {
    line: usize,
    event: String,
    name: String,
    wait: Wait,
    /// When the script says it returns.
    end: SimTime,
    /// When the engine let it return.
    returned: Option<SimTime>,
}

fn flags_of(letters: &str) -> Flags {
    let mut f = Flags::default();
    for c in letters.chars() {
        f.insert(match c {
            'S' => Flags::SYN,
            'F' => Flags::FIN,
            'R' => Flags::RST,
            'P' => Flags::PSH,
            '.' => Flags::ACK,
            'E' => Flags::ECE,
            'W' => Flags::CWR,
            _ => Flags::default(),
        });
    }
    f
}

/// Flags in packetdrill's notation, PSH and URG left out (the engine does not model them).
fn letters(f: Flags) -> String {
    let mut s = String::new();
    for (flag, c) in [(Flags::SYN, 'S'), (Flags::FIN, 'F'), (Flags::RST, 'R'), (Flags::ECE, 'E'), (Flags::CWR, 'W')] {
        if f.contains(flag) {
            s.push(c);
        }
    }
    if f.contains(Flags::ACK) {
        s.push('.');
    }
    s
}

fn ecn_name(e: Ecn) -> &'static str {
    match e {
        Ecn::NotEct => "noecn",
        Ecn::Ect0 => "ect0",
        Ecn::Ce => "ce",
    }
}

impl Driver<'_> {
    fn fail<T>(&self, expected: impl Into<String>, actual: impl Into<String>) -> R<T> {
        self.fail_as(Class::Differs, expected, actual)
    }

    /// The script needs `what`, which the interpreter or the engine does not have.
    fn unsupported<T>(&self, what: impl Into<String>) -> R<T> {
        self.fail_as(Class::Unsupported, "something the interpreter runs", what)
    }

    fn fail_as<T>(&self, class: Class, expected: impl Into<String>, actual: impl Into<String>) -> R<T> {
        Err(Fail(Failure {
            class,
            line: self.line,
            event: self.event.clone(),
            expected: expected.into(),
            actual: actual.into(),
        }))
    }

    fn note(&mut self, kind: &'static str, message: String) {
        self.notes.push(Note { line: self.line, kind, message });
    }

    fn collect(&mut self, t: SimTime) {
        for (seg, ecn) in self.out.segments.drain(..) {
            self.sent.push_back(Sent { at: t, seg, ecn });
        }
        self.out.clear();
    }

    /// Fires the endpoint's timers due up to `to`, then sets the clock to `to`.
    fn advance(&mut self, to: SimTime) -> R<()> {
        let mut guard = 0u32;
        while let Some(t) = self.ep.as_ref().and_then(Endpoint::next_timeout) {
            if t > to {
                break;
            }
            self.fire(t)?;
            guard += 1;
            if guard > 1_000_000 {
                return self.fail("the engine's timers to settle", format!("a timer keeps firing at {}", secs(t)));
            }
        }
        self.now = self.now.max(to);
        Ok(())
    }

    fn fire(&mut self, t: SimTime) -> R<()> {
        let t = t.max(self.now);
        self.now = t;
        let ep = self.ep.as_mut().expect("timers only with an endpoint");
        ep.on_timer(t, &mut self.iw, &mut self.out);
        self.collect(t);
        Ok(())
    }

    fn new_endpoint(&mut self, peer_mss: Option<u32>, ts: bool, peer_sack: bool) -> R<Endpoint> {
        let cfg = match self.settings.config(peer_mss, ts, peer_sack) {
            Ok(c) => c,
            Err(e) => return self.fail("a valid engine configuration", e),
        };
        self.iw = IwConfig::Fixed { segments: self.settings.initcwnd }.build();
        Ok(if self.client { Endpoint::client(&cfg, 1, None) } else { Endpoint::server(&cfg, 1, None) })
    }

    fn map_ecr(&self, ecr: u64) -> u32 {
        if let Some(&(_, a)) = self.ts_map.iter().rev().find(|(s, _)| *s == ecr) {
            return a;
        }
        self.ts_map.iter().rev().find(|(s, _)| *s <= ecr).map_or(0, |&(_, a)| a)
    }

    fn inbound(&mut self, p: &PacketSpec, t: SimTime) -> R<()> {
        if let Some(what) = &p.unsupported {
            return self.unsupported(format!("{what}: not modelled by the engine"));
        }
        self.advance(t)?;
        let flags = flags_of(&p.flags);
        let syn = flags.contains(Flags::SYN);
        if syn {
            self.remote_isn = p.start;
        }
        let mut seg = Segment {
            seq: p.start.wrapping_sub(self.remote_isn) & 0xffff_ffff,
            ack: p.ack.unwrap_or(0),
            len: p.len as u32,
            flags,
            ..Default::default()
        };
        let mut peer_mss = None;
        for o in p.options.iter().flatten() {
            match *o {
                TcpOpt::Mss(m) => {
                    seg.mss = Some(m.min(u16::MAX as u32) as u16);
                    peer_mss = Some(m);
                }
                TcpOpt::SackOk => seg.sack_permitted = true,
                TcpOpt::Wscale(w) if syn => self.peer_wscale = w.min(14),
                TcpOpt::Ts { val, ecr } => seg.ts = Some((val as u32, self.map_ecr(ecr))),
                TcpOpt::Sack(ref blocks) => {
                    let mut sb = SackBlocks::default();
                    for &(a, b) in blocks {
                        if a < b {
                            sb.push(a, b);
                        }
                    }
                    seg.sack = sb;
                }
                _ => {}
            }
        }
        if syn {
            self.sack = Some(seg.sack_permitted && self.settings.spec.sack.unwrap_or(true));
        } else if p.win == Some(0) {
            self.zero_window = true;
        }
        let scale = if syn { 0 } else { self.peer_wscale };
        seg.wnd = p.win.unwrap_or(65_535) << scale;
        let ce = p.ecn == Some(EcnMark::Ce);
        if syn && !flags.contains(Flags::ACK) && self.ep.is_none() {
            if !self.listening {
                return self.fail("a listening socket for the SYN", "no listen() before it");
            }
            let ts = self.settings.timestamps() && seg.ts.is_some();
            self.ep = Some(self.new_endpoint(peer_mss, ts, seg.sack_permitted)?);
        } else if syn && self.client && self.ep.as_ref().is_some_and(|e| e.state == State::SynSent) {
            // The engine has one MSS: rebuild the client with the negotiated one and replay
            // its SYN (and any retransmissions of it) — the same segments at the same times.
            let ts = self.settings.timestamps() && seg.ts.is_some();
            let mut ep = self.new_endpoint(peer_mss, ts, seg.sack_permitted)?;
            let mut scratch = Outbox::default();
            ep.connect(self.connect_at, &mut scratch);
            while let Some(x) = ep.next_timeout().filter(|&x| x <= t) {
                ep.on_timer(x, &mut self.iw, &mut scratch);
                scratch.clear();
            }
            self.ep = Some(ep);
        }
        let Some(ep) = self.ep.as_mut() else {
            return self.fail("a connection for the inbound packet", "no socket has connected or received a SYN");
        };
        ep.on_segment(t, &seg, ce, &mut self.iw, &mut self.out);
        self.collect(t);
        self.progress(t);
        Ok(())
    }

    /// Lets a blocking call return once what it waits for has happened.
    fn progress(&mut self, t: SimTime) {
        let Some(p) = self.pending.as_mut().filter(|p| p.returned.is_none()) else { return };
        let ep = self.ep.as_ref();
        let ready = match p.wait {
            Wait::Established => ep.is_some_and(Endpoint::is_established),
            Wait::Data(_) => ep.is_some_and(|e| e.receiver.delivered() > self.consumed || e.receiver.fin_received()),
        };
        if ready {
            p.returned = Some(t);
            if let Wait::Data(n) = p.wait {
                let avail = ep.map_or(0, |e| e.receiver.delivered()) - self.consumed;
                self.consumed += avail.min(n);
            }
        }
    }

    /// Checks a blocking call whose return time `now` has reached: it must have returned
    /// within the tolerance of the time the script gives.
    fn settle(&mut self, now: SimTime) -> R<()> {
        let Some(p) = self.pending.as_ref() else { return Ok(()) };
        if now <= p.end + self.tol {
            return Ok(());
        }
        let p = self.pending.take().expect("checked");
        let (line, event) = (std::mem::replace(&mut self.line, p.line), std::mem::replace(&mut self.event, p.event));
        let want = format!("{}() returns at {} s (±{} µs)", p.name, secs(p.end), self.tol.as_nanos() / 1000);
        let r = match p.returned {
            Some(r) if r + self.tol >= p.end && r <= p.end + self.tol => Ok(()),
            Some(r) => self.fail(want, format!("the engine's {}() returned at {} s", p.name, secs(r))),
            None if now == SimTime::MAX => {
                self.fail(want, format!("the engine's {}() still waits at the end of the script", p.name))
            }
            None => self.fail(want, format!("the engine's {}() still waits at {} s", p.name, secs(now))),
        };
        (self.line, self.event) = (line, event);
        r
    }

    fn describe(&self, s: &Sent) -> String {
        let g = &s.seg;
        let end = g.seq + g.seq_len() - (g.is_syn() as u64) - (g.is_fin() as u64);
        let mut d = format!("{} {}:{}({})", letters(g.flags), g.seq, end, g.len);
        if g.has_ack() {
            d += &format!(" ack {}", (g.ack + self.remote_isn) & 0xffff_ffff);
        }
        let mut o = Vec::new();
        if g.mss.is_some() {
            o.push(format!("mss {}", self.settings.adv_mss()));
        }
        if g.sack_permitted {
            o.push("sackOK".into());
        }
        if let Some((v, e)) = g.ts {
            o.push(format!("TS val {v} ecr {e}"));
        }
        if !g.sack.is_empty() {
            let b: Vec<String> = g
                .sack
                .as_slice()
                .iter()
                .map(|&(a, z)| {
                    format!("{}:{}", (a + self.remote_isn) & 0xffff_ffff, (z + self.remote_isn) & 0xffff_ffff)
                })
                .collect();
            o.push(format!("sack {}", b.join(" ")));
        }
        if !o.is_empty() {
            d += &format!(" <{}>", o.join(","));
        }
        format!("{d} at {} s", secs(s.at))
    }

    fn outbound(&mut self, p: &PacketSpec, when: &When, t: Option<(SimTime, SimTime)>) -> R<SimTime> {
        if let Some(what) = &p.unsupported {
            return self.unsupported(format!("{what}: not modelled by the engine"));
        }
        let deadline = match t {
            Some((_, hi)) => hi + self.tol,
            None => self.now + SimDuration::from_secs(3600),
        };
        while self.sent.is_empty() {
            match self.ep.as_ref().and_then(Endpoint::next_timeout) {
                Some(x) if x <= deadline => self.fire(x)?,
                _ => break,
            }
        }
        let expect = |d: &Driver| -> String {
            let w = match t {
                Some((lo, hi)) if lo == hi => format!(" at {} s (±{} µs)", secs(lo), d.tol.as_nanos() / 1000),
                Some((lo, hi)) => format!(" between {} and {} s (±{} µs)", secs(lo), secs(hi), d.tol.as_nanos() / 1000),
                None => String::new(),
            };
            let _ = when;
            format!("{}{w}", d.event.trim_start_matches(|c: char| c != '>').trim_start_matches('>').trim())
        };
        let Some(first) = self.sent.pop_front() else {
            let next = self.ep.as_ref().and_then(Endpoint::next_timeout);
            let why = match next {
                Some(x) => format!("nothing sent by {} s (its next timer is at {} s)", secs(deadline), secs(x)),
                None => format!("nothing sent by {} s (no timer pending)", secs(deadline)),
            };
            return self.fail(expect(self), why);
        };
        if let Some((lo, hi)) = t {
            if first.at + self.tol < lo || first.at > hi + self.tol {
                let a = self.describe(&first);
                return self.fail(expect(self), format!("{a} (timing)"));
            }
        }
        // A packet longer than the engine's segments is a TSO burst: the consecutive segments
        // sent at that instant that cover its range.
        let mut parts = vec![first];
        let start = parts[0].seg.seq;
        let want_end = (p.start as i128 + p.len as i128) as u64;
        let mut end = start + parts[0].seg.len as u64;
        while p.len > 0 && start == p.start && end < want_end && parts[0].seg.len > 0 {
            match self.sent.front() {
                Some(n) if n.at == parts[0].at && n.seg.seq == end && n.seg.len > 0 => {
                    end += n.seg.len as u64;
                    parts.push(self.sent.pop_front().unwrap());
                }
                _ => break,
            }
        }
        let last = parts.last().unwrap();
        let mut merged = Sent { at: parts[0].at, seg: last.seg.clone(), ecn: parts[0].ecn };
        merged.seg.seq = start;
        merged.seg.len = (end - start) as u32;
        merged.seg.flags = Flags(last.seg.flags.0 | parts[0].seg.flags.0);
        let actual = self.describe(&merged);
        let mismatch = |what: &str| -> String { format!("{actual} ({what})") };
        let g = &merged.seg;
        let want_flags = flags_of(&p.flags);
        let strip = |f: Flags| Flags(f.0 & !(Flags::PSH.0 | 0x20));
        if strip(g.flags) != strip(want_flags) {
            return self.fail(expect(self), mismatch("flags"));
        }
        let g_end = g.seq + g.len as u64;
        if g.seq != p.start || g_end != (p.start + p.len) || g.len as u64 != p.len {
            return self.fail(expect(self), mismatch("sequence range"));
        }
        if let Some(a) = p.ack {
            if want_flags.contains(Flags::ACK) && (g.ack + self.remote_isn) & 0xffff_ffff != a & 0xffff_ffff {
                return self.fail(expect(self), mismatch("ack"));
            }
        }
        if p.win.is_some() && !self.win_note {
            self.win_note = true;
            self.note("ignored", "outbound `win` is not compared: the engine advertises its whole receive buffer (no receive-window auto-tuning or window scaling)".into());
        }
        if let Some(e) = p.ecn {
            let ok = match e {
                EcnMark::NoEcn => merged.ecn == Ecn::NotEct,
                EcnMark::Ect0 => merged.ecn == Ecn::Ect0,
                EcnMark::Ect1 => false, // the engine marks ECT(0) only
                EcnMark::Ce => merged.ecn == Ecn::Ce,
                EcnMark::Ect01 => merged.ecn == Ecn::Ect0,
            };
            if !ok {
                return self.fail(expect(self), mismatch(&format!("ECN {}", ecn_name(merged.ecn))));
            }
        }
        if p.any_options {
            // `<...>`: packetdrill does not check the options.
            return Ok(merged.at);
        }
        let opts = p.options.clone().unwrap_or_default();
        let want_mss = opts.iter().find_map(|o| if let TcpOpt::Mss(m) = o { Some(*m) } else { None });
        let got_mss = g.mss.map(|_| self.settings.adv_mss());
        if want_mss != got_mss {
            return self.fail(expect(self), mismatch("mss option"));
        }
        if opts.contains(&TcpOpt::SackOk) != g.sack_permitted {
            return self.fail(expect(self), mismatch("sackOK option"));
        }
        let want_ts = opts.iter().find_map(|o| if let TcpOpt::Ts { val, .. } = o { Some(*val) } else { None });
        match (want_ts, g.ts) {
            (Some(v), Some((a, _))) => self.ts_map.push((v, a)),
            (None, None) => {}
            _ => return self.fail(expect(self), mismatch("TS option")),
        }
        let want_sack: Vec<(u64, u64)> =
            opts.iter().find_map(|o| if let TcpOpt::Sack(b) = o { Some(b.clone()) } else { None }).unwrap_or_default();
        let got_sack: Vec<(u64, u64)> = g
            .sack
            .as_slice()
            .iter()
            .map(|&(a, z)| ((a + self.remote_isn) & 0xffff_ffff, (z + self.remote_isn) & 0xffff_ffff))
            .collect();
        if want_sack != got_sack {
            return self.fail(expect(self), mismatch("SACK blocks"));
        }
        if opts.iter().any(|o| matches!(o, TcpOpt::Wscale(_))) && !self.wscale_note {
            self.wscale_note = true;
            self.note("ignored", "wscale is not compared: the engine does not model window scaling".into());
        }
        Ok(merged.at)
    }

    fn arg_int(&self, c: &Syscall, i: usize) -> Option<i64> {
        let a = c.args.get(i)?.trim_matches(['[', ']', ' ']);
        a.parse().ok()
    }

    fn expect_ret(&self, c: &Syscall, got: i64, errno: Option<&str>) -> R<()> {
        // A result that is not an integer (`= ...`) is not compared, as packetdrill.
        let Some(want) = c.ret else { return Ok(()) };
        if want != got || (got == -1 && c.errno.as_deref() != errno) {
            let e =
                |r: i64, n: Option<&str>| format!("{} = {r}{}", c.name, n.map(|x| format!(" {x}")).unwrap_or_default());
            return self.fail(e(want, c.errno.as_deref()), format!("the engine's {}", e(got, errno)));
        }
        Ok(())
    }

    /// Runs a system call at `t`; a blocking one (`t...end`) must return at `end`.
    fn syscall(&mut self, c: &Syscall, t: SimTime, end: Option<SimTime>) -> R<()> {
        self.advance(t)?;
        let fd = self.arg_int(c, 0);
        if let Some(end) = end {
            if self.pending.is_some() {
                return self.unsupported("two blocking calls under way at once (one thread per script)");
            }
            let wait = match c.name.as_str() {
                "connect" => Some(Wait::Established),
                "read" | "recv" => Some(Wait::Data(self.arg_int(c, 2).unwrap_or(0).max(0) as u64)),
                "accept" => Some(Wait::Established),
                // The engine takes every byte written at once: a write never blocks.
                "write" | "send" if end > t + self.tol => {
                    return self.unsupported(format!(
                        "a {}() that blocks until {} s: the engine has no send-buffer limit",
                        c.name,
                        secs(end)
                    ))
                }
                _ => None,
            };
            if let Some(wait) = wait {
                if c.name == "connect" {
                    self.start_connect(c, t, fd)?;
                } else if c.name == "accept" {
                    self.conn_fd = c.ret;
                }
                self.pending = Some(Pending {
                    line: self.line,
                    event: self.event.clone(),
                    name: c.name.clone(),
                    wait,
                    end,
                    returned: None,
                });
                self.progress(t);
                return match (wait, c.ret) {
                    (Wait::Data(_), Some(want)) if want > 0 => Ok(()),
                    (Wait::Established, Some(want)) if want >= 0 => Ok(()),
                    (_, None) => Ok(()),
                    _ => self.unsupported(format!("a blocking {}() that fails: not modelled", c.name)),
                };
            }
        }
        match c.name.as_str() {
            "socket" => {
                if !c.args.iter().any(|a| a == "SOCK_STREAM") {
                    return self.unsupported(format!("socket({}): only TCP sockets (SOCK_STREAM)", c.args.join(", ")));
                }
                Ok(())
            }
            "bind" | "fcntl" => self.expect_ret(c, c.ret.unwrap_or(0).max(0), None),
            "listen" => {
                self.listening = true;
                self.expect_ret(c, 0, None)
            }
            "setsockopt" => self.setsockopt(c),
            "getsockopt" => {
                let opt = c.args.get(2).map(String::as_str).unwrap_or("");
                if opt == "SO_ERROR" {
                    let ok = self.ep.as_ref().is_some_and(Endpoint::is_established);
                    let want = self.arg_int(c, 3).unwrap_or(0);
                    if (want == 0) != ok {
                        return self.fail(format!("SO_ERROR {want}"), "the engine's connection is not established".to_string());
                    }
                } else {
                    self.note("ignored", format!("getsockopt {opt}: not modelled, result not checked"));
                }
                Ok(())
            }
            "connect" => {
                self.start_connect(c, t, fd)?;
                if c.ret == Some(-1) {
                    self.expect_ret(c, -1, c.errno.as_deref().filter(|e| *e == "EINPROGRESS"))
                } else {
                    self.note("ignored", "a blocking connect() without `t1...t2` returns at once: the interpreter does not wait for the handshake".into());
                    self.expect_ret(c, 0, None)
                }
            }
            "accept" => {
                let state = self.ep.as_ref().map(|e| e.state);
                if state != Some(State::Established) {
                    return self.fail("an established connection to accept", format!("the engine's connection state is {state:?}"));
                }
                self.conn_fd = c.ret;
                Ok(())
            }
            "write" | "send" => {
                let n = self.arg_int(c, 2).unwrap_or(-1);
                if n < 0 {
                    return self.fail(format!("{}(fd, ..., LENGTH)", c.name), format!("length {:?}", c.args.get(2)));
                }
                if let Some(flags) = c.args.get(3).filter(|f| c.name == "send" && f.trim() != "0") {
                    // MSG_EOR keeps the bytes in an skb of their own in Linux (tcp_skb_can_collapse_to);
                    // the engine has segments, not skbs.
                    self.note("ignored", format!("send() flags {}: not modelled by the engine", flags.trim()));
                }
                if self.wr_closed {
                    return self.expect_ret(c, -1, Some("EPIPE"));
                }
                let Some(ep) = self.ep.as_mut() else { return self.fail("a connection to write on", "none") };
                ep.write(t, n as u64, &mut self.iw, &mut self.out);
                self.collect(t);
                self.expect_ret(c, n, None)
            }
            "read" | "recv" => {
                let n = self.arg_int(c, 2).unwrap_or(0).max(0) as u64;
                let avail = self.ep.as_ref().map_or(0, |e| e.receiver.delivered()) - self.consumed;
                let got = avail.min(n);
                self.consumed += got;
                if got == 0 {
                    let eof = self.ep.as_ref().is_some_and(|e| e.receiver.fin_received());
                    return if eof { self.expect_ret(c, 0, None) } else { self.expect_ret(c, -1, Some("EAGAIN")) };
                }
                self.expect_ret(c, got as i64, None)
            }
            "close" | "shutdown" => {
                if c.name == "shutdown" && !c.args.iter().any(|a| a == "SHUT_WR" || a == "SHUT_RDWR") {
                    self.note("ignored", format!("shutdown({}): only SHUT_WR is modelled", c.args.join(", ")));
                    return self.expect_ret(c, 0, None);
                }
                if fd.is_some() && fd == self.conn_fd {
                    self.wr_closed = true;
                    if let Some(ep) = self.ep.as_mut() {
                        ep.close(t, &mut self.iw, &mut self.out);
                        self.collect(t);
                    }
                }
                self.expect_ret(c, 0, None)
            }
            other => self.unsupported(format!(
                "the system call {other}() (modelled: socket, bind, listen, accept, connect, write, send, read, recv, close, shutdown, setsockopt, getsockopt, fcntl)"
            )),
        }
    }

    fn start_connect(&mut self, c: &Syscall, t: SimTime, fd: Option<i64>) -> R<()> {
        if self.ep.is_some() {
            return self.unsupported(format!("a second connection ({}() on a socket already in use)", c.name));
        }
        self.client = true;
        self.connect_at = t;
        // Before the SYN-ACK the client offers what its sysctls allow.
        let mut ep = self.new_endpoint(None, self.settings.timestamps(), true)?;
        ep.connect(t, &mut self.out);
        self.ep = Some(ep);
        self.collect(t);
        self.conn_fd = fd;
        Ok(())
    }

    fn setsockopt(&mut self, c: &Syscall) -> R<()> {
        let opt = c.args.get(2).cloned().unwrap_or_default();
        let val = c.args.get(3).cloned().unwrap_or_default();
        let started = self.ep.is_some();
        match opt.as_str() {
            "TCP_CONGESTION" => {
                let name = val.trim_matches('"').to_string();
                if started {
                    self.note("ignored", format!("TCP_CONGESTION {name:?} after the connection started: not modelled"));
                } else {
                    match self.settings.congestion(&name) {
                        Applied::Set(m) => self.note("applied", m),
                        Applied::Ignored(m) | Applied::Unsupported(m) | Applied::Refused(m) => {
                            return self.unsupported(m)
                        }
                    }
                }
            }
            "TCP_MAXSEG" => {
                let v = self.arg_int(c, 3).filter(|&v| v >= 88);
                match v {
                    Some(v) if !started => {
                        self.settings.maxseg = Some(v as u32);
                        self.note("applied", format!("TCP_MAXSEG {v} → advertised MSS {}", self.settings.adv_mss()));
                    }
                    _ => self.note(
                        "ignored",
                        format!("TCP_MAXSEG {val}: only a value ≥ 88 before the connection starts is modelled"),
                    ),
                }
            }
            // The engine never delays a small segment (no Nagle): it always acts as TCP_NODELAY.
            "TCP_NODELAY" if self.arg_int(c, 3) != Some(0) => {}
            "SO_REUSEADDR" | "SO_REUSEPORT" => {}
            // IP-level options: the engine has no IP header or route to change. IP_TOS makes
            // Linux refresh the route (sk_dst_reset), which leaves TCP's state alone.
            "IP_TOS" | "IP_MTU_DISCOVER" | "IP_FREEBIND" | "IP_TTL" | "IPV6_TCLASS" | "IPV6_MTU_DISCOVER"
            | "IPV6_V6ONLY" | "SO_MARK" | "SO_PRIORITY" | "IP_RECVERR" | "IPV6_RECVERR" => {
                self.note("ignored", format!("setsockopt {opt} {val}: no effect on the engine (no IP layer)"));
            }
            // The cap on sk_pacing_rate; Linux then paces the socket itself (SK_PACING_NEEDED).
            "SO_MAX_PACING_RATE" if !started && self.arg_int(c, 3).is_some_and(|v| v >= 0) => {
                let v = self.arg_int(c, 3).unwrap_or_default() as u64;
                // ~0U (32-bit) and ~0UL mean "no cap" (sk_setsockopt()); Linux still paces.
                let cap = (v != u32::MAX as u64 && v != u64::MAX).then_some(v);
                self.settings.max_pacing_rate = Some(cap.unwrap_or(u64::MAX));
                self.note(
                    "applied",
                    format!("SO_MAX_PACING_RATE {v} → the flow is paced, sk_pacing_rate ≤ {v} bytes/s"),
                );
            }
            // Corking and a pacing cap set later change when Linux sends: a failure while one
            // is in force is not a verdict on the engine's TCP.
            "SO_MAX_PACING_RATE" | "TCP_CORK" => {
                self.note("unsupported", format!("setsockopt {opt} {val}: not modelled by the engine"));
            }
            "TCP_NODELAY" | "SO_SNDBUF" | "SO_RCVBUF" | "SO_LINGER" | "SO_KEEPALIVE" | "TCP_KEEPIDLE"
            | "TCP_KEEPINTVL" | "TCP_KEEPCNT" | "TCP_QUICKACK" | "TCP_NOTSENT_LOWAT" | "SO_ZEROCOPY" | "TCP_INQ"
            | "TCP_USER_TIMEOUT" | "TCP_SYNCNT" | "SO_RCVLOWAT" | "SO_SNDLOWAT" | "SO_TIMESTAMPING"
            | "SO_TIMESTAMP" | "TCP_TIMESTAMP" | "TCP_WINDOW_CLAMP" | "TCP_DEFER_ACCEPT" => {
                self.note("ignored", format!("setsockopt {opt} {val}: not modelled by the engine"));
            }
            _ => return self.unsupported(format!("the socket option {opt} (not modelled)")),
        }
        self.expect_ret(c, 0, None)
    }

    fn code(&mut self, text: &str, t: SimTime) -> R<()> {
        self.advance(t)?;
        let info = self.ep.as_ref().map(Endpoint::tcp_info);
        let mut printed = Vec::new();
        let r = self.code.run(text, info.as_ref(), self.settings.adv_mss(), &mut printed);
        let base = self.line;
        for (offset, p) in printed {
            self.notes.push(Note { line: base + offset, kind: "print", message: p });
        }
        match r {
            Ok(()) => Ok(()),
            Err(code::Stop::Unsupported(k, what)) => {
                self.line = base + k;
                self.unsupported(what)
            }
            Err(code::Stop::Python(k, what)) => {
                self.line = base + k;
                self.fail_as(Class::ScriptError, "a Python statement that runs", what)
            }
            Err(code::Stop::Assert { offset, expr, values, message }) => {
                self.line = base + offset;
                let vals: Vec<String> = values.iter().map(|(n, v)| format!("{n} = {v}")).collect();
                let mut actual = format!("the engine has {}", vals.join(", "));
                if let Some(m) = message {
                    actual += &format!(" (assert message: {m})");
                }
                self.fail(format!("assert {expr}"), actual)
            }
        }
    }

    fn shell(&mut self, cmd: &str) -> R<()> {
        let started = self.ep.is_some();
        for a in self.settings.shell(cmd, self.dir, 0) {
            match a {
                Applied::Refused(m) => return self.unsupported(m),
                Applied::Set(m) if started => {
                    self.note("ignored", format!("{m}: set after the connection started, not applied to it"))
                }
                Applied::Set(m) => self.note("applied", m),
                Applied::Ignored(m) => self.note("ignored", m),
                Applied::Unsupported(m) => self.note("unsupported", m),
            }
        }
        Ok(())
    }
}

/// Runs `script`; `dir` is where shell lines look for files; `tolerance` overrides the
/// script's `--tolerance_usecs`.
pub fn run(script: &Script, dir: &Path, tolerance_usecs: Option<u64>) -> Outcome {
    let mut tol = DEFAULT_TOLERANCE_USECS;
    let mut percent = DEFAULT_TOLERANCE_PERCENT;
    let mut notes = Vec::new();
    for (line, k, v) in &script.options {
        match (k.as_str(), v.as_deref().and_then(|v| v.parse::<u64>().ok())) {
            ("tolerance_usecs", Some(n)) => tol = n,
            ("tolerance_percent", _) if v.as_deref().and_then(|v| v.parse::<f64>().ok()).is_some_and(|p| p >= 0.0) => {
                percent = v.as_deref().and_then(|v| v.parse::<f64>().ok()).unwrap_or(percent)
            }
            _ => notes.push(Note { line: *line, kind: "ignored", message: format!("option --{k} is not modelled") }),
        }
    }
    let mut d = Driver {
        settings: Settings::default(),
        dir,
        tol: SimDuration::from_micros(tolerance_usecs.unwrap_or(tol)),
        base_tol: SimDuration::from_micros(tolerance_usecs.unwrap_or(tol)),
        tol_percent: percent,
        ep: None,
        iw: IwConfig::Fixed { segments: 10 }.build(),
        out: Outbox::default(),
        now: SimTime::ZERO,
        anchor: SimTime::ZERO,
        sent: VecDeque::new(),
        listening: false,
        client: false,
        connect_at: SimTime::ZERO,
        conn_fd: None,
        remote_isn: 0,
        peer_wscale: 0,
        ts_map: Vec::new(),
        consumed: 0,
        notes,
        line: 0,
        event: String::new(),
        win_note: false,
        wscale_note: false,
        code: code::Interp::default(),
        wr_closed: false,
        pending: None,
        sack: None,
        zero_window: false,
    };
    let mut outcome = Outcome::default();
    let mut last_script_time: Option<SimTime> = None;
    for ev in &script.events {
        d.line = ev.line;
        d.event = ev.text.clone();
        // packetdrill: relative times count from the previous event's script time, or from
        // the moment a `*` event happened.
        let window = match ev.when {
            When::Absolute(s) => Some((at(s), at(s))),
            When::Relative(s) => {
                Some((d.anchor + SimDuration::from_secs_f64(s), d.anchor + SimDuration::from_secs_f64(s)))
            }
            When::Range { start, end, relative: true } => {
                Some((d.anchor + SimDuration::from_secs_f64(start), d.anchor + SimDuration::from_secs_f64(end)))
            }
            When::Range { start, end, relative: false } => Some((at(start), at(end))),
            When::Any => None,
        };
        let t = window.map_or(d.now, |w| w.0);
        // packetdrill's verify_time(): the tolerance grows with the script time since the
        // previous event (12.5 % by default).
        let since = last_script_time.map_or(SimDuration::ZERO, |l| t.saturating_since(l));
        d.tol = d.base_tol.max(SimDuration::from_secs_f64(since.as_secs_f64() * d.tol_percent / 100.0));
        last_script_time = window.map(|w| w.0);
        // A blocking call must have returned once the script is past its return time.
        if let Err(Fail(f)) = d.settle(t) {
            outcome.failure = Some(f);
            break;
        }
        let r = match &ev.kind {
            EventKind::Packet(p) if p.inbound => d.inbound(p, t).map(|_| t),
            EventKind::Packet(p) => d.outbound(p, &ev.when, window),
            EventKind::Syscall(c) => {
                let end = c.blocks_for.map(|b| t + SimDuration::from_secs_f64(b));
                d.syscall(c, t, end).map(|_| t)
            }
            EventKind::Code(text) => d.code(text, t).map(|_| t),
            EventKind::Shell(cmd) => d.shell(cmd).map(|_| t),
        };
        match r {
            Ok(happened) => {
                d.anchor = if window.is_some() { t } else { happened };
                outcome.events_run += 1;
            }
            Err(Fail(f)) => {
                outcome.failure = Some(f);
                break;
            }
        }
    }
    if outcome.failure.is_none() {
        if let Err(Fail(f)) = d.settle(SimTime::MAX) {
            outcome.failure = Some(f);
        }
    }
    outcome.notes = d.notes;
    outcome.sack = d.sack;
    outcome.zero_window = d.zero_window;
    outcome
}
