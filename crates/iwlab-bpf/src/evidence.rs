//! `iwlab-bpf evidence`: attaches bpf/evidence.bpf.c's sock_ops program to a cgroup and streams
//! its ring buffer to stdout as JSON lines, one per record, until killed or stdout closes.
//!
//! Nothing is pinned: the cgroup link, the ring buffer and the per-socket storage belong to this
//! process alone, so the program is detached and its maps freed whenever it ends — exit, SIGTERM,
//! SIGKILL, or its parent (the watcher) dying (PR_SET_PDEATHSIG). A watcher that crashes leaves
//! nothing attached.
//!
//! Lines: first `{"kind":"attached",…}`; then `{"kind":"iw_retrans",…}` (an initial-window
//! segment retransmitted, as it happens), `{"kind":"rs_retrans",…}` (the same for a restart
//! window) and `{"kind":"close",…}` (a connection's counters at TCP_CLOSE); with `--prefix`
//! (summary.rs), the clean closes of `sum` routes become `{"kind":"summary",…}` lines, one per
//! prefix every `--summary-ms`; every `--stats-every` seconds `{"kind":"stats",…}` with the
//! program's counters (`ringbuf_full`: records lost because this reader fell behind) and the
//! reader's (`summarized`, `dropped`).
use std::{
    fs::File,
    io::{self, Write},
    net::{IpAddr, Ipv4Addr, Ipv6Addr},
    os::fd::{AsFd, AsRawFd},
    path::Path,
    time::{Duration, Instant},
};

use aya::{
    maps::{MapData, PerCpuArray, RingBuf},
    programs::SockOps,
    Ebpf,
};
use serde_json::json;

use crate::{
    flow_iw,
    summary::{self, Table},
    sys, Error,
};

static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/evidence.bpf.o"));
pub const PROGRAM: &str = "iwlab_evidence_sockops";
const RECORDS_MAP: &str = "iwlab_ev_records";
const STATS_MAP: &str = "iwlab_ev_stats";
const KIND_IW_RETRANS: u32 = 1;
const KIND_CLOSE: u32 = 2;
const KIND_RS_RETRANS: u32 = 3;
const AF_INET6: u32 = 10;
const NO_RETRANS: u32 = u32::MAX;
/// `enum iwlab_evidence_stat`, in order.
pub const STATS: [&str; 8] =
    ["established", "no_storage", "iw_retrans", "closed", "closed_no_data", "ringbuf_full", "restarts", "rs_retrans"];

/// `struct iwlab_evidence` (bpf/evidence.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Record {
    pub cookie: u64,
    pub time_ns: u64,
    pub kind: u32,
    pub family: u32,
    pub local_ip: [u32; 4],
    pub remote_ip: [u32; 4],
    pub local_port: u32,
    pub remote_port: u32,
    pub mss: u32,
    pub iw_segments: u32,
    pub bytes_sent: u32,
    pub bytes_acked: u32,
    pub iw_retrans: u32,
    pub total_retrans: u32,
    pub first_retrans: u32,
    pub data_segs_out: u32,
    pub srtt_us: u32,
    pub min_rtt_us: u32,
    pub snd_cwnd: u32,
    pub old_state: u32,
    pub restarts: u32,
    pub rs_start: u32,
    pub rs_window: u32,
    pub rs_retrans: u32,
    pub rs_bytes: u32,
    pub rs_segments: u32,
}

impl Record {
    fn close(&self) -> summary::Close {
        summary::Close {
            bytes_sent: self.bytes_sent,
            bytes_acked: self.bytes_acked,
            mss: self.mss,
            iw_segments: self.iw_segments,
            iw_retrans: self.iw_retrans,
            total_retrans: self.total_retrans,
            data_segs_out: self.data_segs_out,
            min_rtt_us: self.min_rtt_us,
            restarts: self.restarts,
            rs_retrans: self.rs_retrans,
            rs_segments: self.rs_segments,
        }
    }
}

fn kernel(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Kernel(format!("{what}: {e}"))
}

fn addr(family: u32, words: &[u32; 4]) -> IpAddr {
    // The words hold the address bytes in network order, as the kernel copied them.
    if family == AF_INET6 {
        let mut b = [0u8; 16];
        for (i, w) in words.iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&w.to_ne_bytes());
        }
        IpAddr::V6(Ipv6Addr::from(b))
    } else {
        IpAddr::V4(Ipv4Addr::from(words[0].to_ne_bytes()))
    }
}

/// One record as a JSON line (without the newline). Written by hand: at 10 000 connections/s
/// this is the reader's inner loop.
pub fn line(r: &Record, out: &mut impl Write) -> io::Result<()> {
    let kind = match r.kind {
        KIND_IW_RETRANS => "iw_retrans",
        KIND_CLOSE => "close",
        KIND_RS_RETRANS => "rs_retrans",
        _ => "unknown",
    };
    write!(
        out,
        "{{\"kind\":\"{kind}\",\"cookie\":{},\"time_ns\":{},\"src\":\"{}\",\"sport\":{},\"dst\":\"{}\",\"dport\":{},\
         \"mss\":{},\"iw_segments\":{},\"bytes_sent\":{},\"bytes_acked\":{},\"iw_retrans\":{},\"total_retrans\":{},\
         \"first_retrans\":",
        r.cookie,
        r.time_ns,
        addr(r.family, &r.local_ip),
        r.local_port,
        addr(r.family, &r.remote_ip),
        r.remote_port,
        r.mss,
        r.iw_segments,
        r.bytes_sent,
        r.bytes_acked,
        r.iw_retrans,
        r.total_retrans,
    )?;
    if r.first_retrans == NO_RETRANS {
        out.write_all(b"null")?;
    } else {
        write!(out, "{}", r.first_retrans)?;
    }
    writeln!(
        out,
        ",\"data_segs_out\":{},\"srtt_us\":{},\"min_rtt_us\":{},\"snd_cwnd\":{},\"old_state\":{},\"restarts\":{},\
         \"rs_start\":{},\"rs_window\":{},\"rs_retrans\":{},\"rs_bytes\":{},\"rs_segments\":{}}}",
        r.data_segs_out,
        r.srtt_us,
        r.min_rtt_us,
        r.snd_cwnd,
        r.old_state,
        r.restarts,
        r.rs_start,
        r.rs_window,
        r.rs_retrans,
        r.rs_bytes,
        r.rs_segments
    )
}

fn stats(map: &PerCpuArray<MapData, u64>, summarized: u64, dropped: u64) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    m.insert("kind".into(), json!("stats"));
    for (i, name) in STATS.iter().enumerate() {
        let total: u64 = map.get(&(i as u32), 0).map(|v| v.iter().sum()).unwrap_or(0);
        m.insert(name.to_string(), json!(total));
    }
    m.insert("summarized".into(), json!(summarized));
    m.insert("dropped".into(), json!(dropped));
    serde_json::Value::Object(m)
}

fn load() -> Result<Ebpf, Error> {
    let mut ebpf = Ebpf::load(OBJECT).map_err(|e| kernel("loading the BPF object", e))?;
    let prog: &mut SockOps = ebpf.program_mut(PROGRAM).unwrap().try_into().unwrap();
    prog.load().map_err(|e| kernel(&format!("loading {PROGRAM}"), e))?;
    Ok(ebpf)
}

/// Runs until stdout is closed or a signal ends the process. `batch`: how long to let records
/// gather after a wake-up (fewer, larger reads at high connection rates; the latency it adds
/// to an IW-loss record is at most `batch`). `table`: the watcher's routes (summary.rs); None:
/// every record is a line. `summary_every`: how often the sums are written.
pub fn stream(
    cgroup: &Path,
    stats_every: Duration,
    batch: Duration,
    mut table: Option<Table>,
    summary_every: Duration,
) -> Result<(), Error> {
    flow_iw::check_cgroup(cgroup)?;
    // SAFETY: prctl with integer arguments. The watcher's death ends this process, and with it
    // the attachment; a parent already gone (re-parented to init) means we stop at once.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
    }
    let parent = std::env::var("IWLAB_EVIDENCE_PARENT").ok().and_then(|p| p.parse::<i32>().ok());
    let mut ebpf = load()?;
    let cg = File::open(cgroup).map_err(|e| Error::Usage(format!("cgroup {}: {e}", cgroup.display())))?;
    let fd = ebpf.program(PROGRAM).unwrap().fd().map_err(|e| kernel(PROGRAM, e))?;
    // Held, never pinned: closed (and the program detached) when this process ends.
    let _link = sys::link_create(fd.as_fd(), cg.as_fd(), sys::BPF_CGROUP_SOCK_OPS)
        .map_err(|e| kernel(&format!("attaching {PROGRAM}"), e))?;
    let stats_map: PerCpuArray<MapData, u64> =
        PerCpuArray::try_from(ebpf.take_map(STATS_MAP).unwrap()).map_err(|e| kernel(STATS_MAP, e))?;
    let mut ring = RingBuf::try_from(ebpf.take_map(RECORDS_MAP).unwrap()).map_err(|e| kernel(RECORDS_MAP, e))?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let id = flow_iw::cgroup_id(cgroup)?;
    let gone = |e: io::Error| Error::Kernel(format!("stdout: {e}"));
    writeln!(out, "{}", json!({"kind": "attached", "cgroup": cgroup, "cgroup_id": id, "program": PROGRAM}))
        .and_then(|_| out.flush())
        .map_err(gone)?;
    let mut next_stats = Instant::now() + stats_every;
    let mut next_summary = Instant::now() + summary_every;
    let (mut summarized, mut dropped) = (0u64, 0u64);
    loop {
        if parent.is_some_and(|p| std::os::unix::process::parent_id() as i32 != p) {
            return Ok(()); // the parent died before PR_SET_PDEATHSIG was set
        }
        let wake = if table.is_some() { next_stats.min(next_summary) } else { next_stats };
        let timeout = wake.saturating_duration_since(Instant::now()).as_millis().min(1000) as i32;
        let mut pfd = libc::pollfd { fd: ring.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd, valid for the call.
        let n = unsafe { libc::poll(&mut pfd, 1, timeout) };
        if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return Err(kernel("poll", io::Error::last_os_error()));
        }
        if n > 0 && !batch.is_zero() {
            std::thread::sleep(batch);
        }
        let mut wrote = false;
        while let Some(item) = ring.next() {
            if item.len() < std::mem::size_of::<Record>() {
                continue;
            }
            // SAFETY: the program writes a whole struct iwlab_evidence; read unaligned.
            let r: Record = unsafe { std::ptr::read_unaligned(item.as_ptr() as *const Record) };
            drop(item);
            let what = match table.as_mut() {
                None => summary::Route::Line,
                Some(t) => t.route(addr(r.family, &r.remote_ip), r.kind == KIND_CLOSE, &r.close()),
            };
            match what {
                summary::Route::Line => {
                    line(&r, &mut out).map_err(gone)?;
                    wrote = true;
                }
                summary::Route::Summed => summarized += 1,
                summary::Route::Drop => dropped += 1,
            }
        }
        let now = Instant::now();
        if let Some(t) = table.as_mut() {
            if now >= next_summary {
                wrote |= t.write(&mut out).map_err(gone)? > 0;
                next_summary = now + summary_every;
            }
        }
        if now >= next_stats {
            writeln!(out, "{}", stats(&stats_map, summarized, dropped)).map_err(gone)?;
            next_stats = now + stats_every;
            wrote = true;
        }
        if wrote {
            out.flush().map_err(gone)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = include_str!("../bpf/evidence.h");

    #[test]
    fn the_record_is_the_headers_struct() {
        let body = HEADER.split("struct iwlab_evidence {").nth(1).unwrap().split("};").next().unwrap();
        let fields: Vec<(String, usize)> = body
            .lines()
            .filter_map(|l| {
                let l = l.trim().split(';').next()?;
                let (ty, name) = l.split_once(' ')?;
                let size = match ty {
                    "__u64" => 8,
                    "__u32" => 4,
                    _ => return None,
                };
                let (name, n) = match name.split_once('[') {
                    Some((n, k)) => (n.to_string(), k.trim_end_matches(']').parse::<usize>().unwrap()),
                    None => (name.to_string(), 1),
                };
                Some((name, size * n))
            })
            .collect();
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        let rendered = format!("{:?}", Record::default());
        let mut at = 0;
        for n in &names {
            let pos = rendered[at..].find(&format!("{n}:")).unwrap_or_else(|| panic!("{n} not in Record"));
            at += pos;
        }
        assert_eq!(fields.len(), 26);
        assert_eq!(std::mem::size_of::<Record>(), fields.iter().map(|(_, s)| s).sum::<usize>());
    }

    #[test]
    fn counters_are_the_headers_enum_in_order() {
        let body = HEADER.split("enum iwlab_evidence_stat {").nth(1).unwrap();
        let names: Vec<String> = body
            .lines()
            .map(|l| l.trim().split(',').next().unwrap().split(" = ").next().unwrap().to_string())
            .take_while(|l| l != "};")
            .filter(|l| !l.is_empty() && l != "IWLAB_EVS_COUNT")
            .collect();
        let ours: Vec<String> = STATS.iter().map(|s| format!("IWLAB_EVS_{}", s.to_uppercase())).collect();
        assert_eq!(names, ours);
    }

    #[test]
    fn a_record_is_one_json_line() {
        let r = Record {
            cookie: 7,
            kind: KIND_CLOSE,
            family: 2,
            local_ip: [u32::from_ne_bytes([10, 0, 0, 1]), 0, 0, 0],
            remote_ip: [u32::from_ne_bytes([10, 0, 0, 2]), 0, 0, 0],
            local_port: 80,
            remote_port: 5555,
            first_retrans: NO_RETRANS,
            ..Default::default()
        };
        let mut v = vec![];
        line(&r, &mut v).unwrap();
        let j: serde_json::Value = serde_json::from_slice(&v).unwrap();
        assert_eq!(j["dst"], "10.0.0.2");
        assert_eq!(j["src"], "10.0.0.1");
        assert_eq!(j["dport"], 5555);
        assert_eq!(j["first_retrans"], serde_json::Value::Null);
        assert_eq!(j["kind"], "close");
        let six =
            Record { family: AF_INET6, remote_ip: [0, 0, u32::from_be(0xffff), u32::from_ne_bytes([1, 2, 3, 4])], ..r };
        let mut v = vec![];
        line(&six, &mut v).unwrap();
        let j: serde_json::Value = serde_json::from_slice(&v).unwrap();
        assert_eq!(j["dst"], "::ffff:1.2.3.4");
    }
}
