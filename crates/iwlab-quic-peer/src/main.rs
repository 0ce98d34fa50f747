//! `iwlab-quic-peer`: the engine's QUIC stack (quinn-proto, configured by
//! `iwlab_core::quic::QuicStack` exactly as in a simulation) on the kernel's UDP, driven by
//! quinn and tokio, for the emulator (python/iwlab/emulate/quic_apps.py).
//!
//! ```text
//! iwlab-quic-peer server --listen IP:PORT --iw BYTES --mds N --chain BYTES --cc reno|cubic|bbr --log FILE
//! iwlab-quic-peer client --iw BYTES --mds N --cc reno|cubic|bbr
//! ```
//!
//! It speaks the wire protocol of `python/iwlab/emulate/quic_peer.py` (aioquic) and takes the
//! same options: one connection per flow, ALPN `h3`, the request up and the response down one
//! client-initiated bidirectional stream; the request's first 16 bytes carry the response size
//! and the flow's number (big-endian u64 each). The client reads jobs as JSON lines on stdin
//! and writes one JSON line per flow on stdout; the server appends one JSON line per connection
//! to `--log`. Times are `CLOCK_MONOTONIC` seconds, the clock the emulator's agents share.

mod counting;
mod pto;

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use counting::{Counting, Flights};
use iwlab_core::quic::{QuicCc, QuicConfig, QuicProfile, QuicStack};
use pto::Ptos;
use quinn::{Endpoint, Runtime, TokioRuntime};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tracing::Instrument;

/// The request's header: response bytes, flow number.
const HEADER: usize = 16;
static ZEROS: [u8; 1 << 16] = [0; 1 << 16];

#[derive(Copy, Clone, Debug, ValueEnum)]
enum Role {
    Server,
    Client,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
enum Cc {
    Reno,
    Cubic,
    Bbr,
}

#[derive(Parser, Debug)]
#[command(about = "The engine's quinn-proto stack on the kernel's UDP, for iwlab's emulator")]
struct Args {
    role: Role,
    /// Server: the address to listen on.
    #[arg(long, default_value = "0.0.0.0:4433")]
    listen: SocketAddr,
    /// Initial congestion window, bytes (RFC 9002 §7.2).
    #[arg(long, default_value_t = 12_000)]
    iw: u64,
    /// UDP payload bytes of every datagram (quinn's initial and minimum MTU; no PMTU discovery).
    #[arg(long, default_value_t = 1200)]
    mds: u16,
    /// DER bytes of the server's certificate chain.
    #[arg(long, default_value_t = 4000)]
    chain: u32,
    #[arg(long, value_enum, default_value_t = Cc::Reno)]
    cc: Cc,
    /// Server: the file its per-connection records are appended to.
    #[arg(long, default_value = "/dev/null")]
    log: String,
}

fn monotonic() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn stack(a: &Args) -> Result<QuicStack, String> {
    let mut c = QuicConfig::profile(QuicProfile::Rfc9002);
    c.max_datagram_size = a.mds;
    c.initial_window = a.iw;
    c.certificate_chain = a.chain;
    c.cc = match a.cc {
        Cc::Reno => QuicCc::NewReno,
        Cc::Cubic => QuicCc::Cubic,
        Cc::Bbr => QuicCc::Bbr,
    };
    QuicStack::new(c)
}

/// An endpoint on a socket bound to `addr`, its datagrams counted per peer.
fn endpoint(stack: &QuicStack, addr: SocketAddr, server: bool) -> std::io::Result<(Endpoint, Flights)> {
    let (client, server_cfg, ep_cfg) = stack.quinn_configs();
    let rt = Arc::new(TokioRuntime);
    let flights = Flights::default();
    let sock = Counting::new(rt.wrap_udp_socket(UdpSocket::bind(addr)?)?, flights.clone());
    let server_cfg = server.then(|| (*server_cfg).clone());
    let mut ep = Endpoint::new_with_abstract_socket(ep_cfg, server_cfg, Arc::new(sock), rt)?;
    ep.set_default_client_config(client);
    Ok((ep, flights))
}

fn emit(out: &mut impl Write, v: &Value) {
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

// ---- server ---------------------------------------------------------------------------------

async fn serve(a: Args) -> Result<(), String> {
    let st = stack(&a)?;
    let (ep, flights) = endpoint(&st, a.listen, true).map_err(|e| format!("listen {}: {e}", a.listen))?;
    let log = Arc::new(std::sync::Mutex::new(
        std::fs::OpenOptions::new().create(true).append(true).open(&a.log).map_err(|e| format!("{}: {e}", a.log))?,
    ));
    println!("ready");
    while let Some(incoming) = ep.accept().await {
        let (flights, log) = (flights.clone(), log.clone());
        tokio::spawn(async move {
            let ptos = Ptos::new();
            let mut rec = serve_one(incoming, flights).instrument(ptos.span()).await;
            rec["pto"] = json!(ptos.count());
            emit(&mut *log.lock().unwrap(), &rec);
        });
    }
    Ok(())
}

async fn serve_one(incoming: quinn::Incoming, flights: Flights) -> Value {
    let remote = incoming.remote_address();
    let mut rec = json!({"type": "quic-server"});
    let conn = match incoming.await {
        Ok(c) => c,
        Err(e) => {
            rec["error"] = json!(e.to_string());
            return rec;
        }
    };
    rec["handshake"] = json!(monotonic());
    let answered = async {
        let (mut send, mut recv) = conn.accept_bi().await.map_err(|e| e.to_string())?;
        let req = recv.read_to_end(1 << 30).await.map_err(|e| e.to_string())?;
        let mut h = [0u8; HEADER];
        let n = req.len().min(HEADER);
        h[..n].copy_from_slice(&req[..n]);
        let response = u64::from_be_bytes(h[..8].try_into().unwrap());
        let flow = u64::from_be_bytes(h[8..].try_into().unwrap());
        // The first flight: the server's datagrams from its first response byte until it
        // next hears from the client (the engine's first_flight_bytes).
        flights.open(remote, response > 0);
        let mut left = response;
        while left > 0 {
            let k = left.min(ZEROS.len() as u64) as usize;
            send.write_all(&ZEROS[..k]).await.map_err(|e| e.to_string())?;
            left -= k as u64;
        }
        send.finish().map_err(|e| e.to_string())?;
        Ok::<u64, String>(flow)
    }
    .await;
    match answered {
        Ok(flow) => rec["flow"] = json!(flow),
        Err(e) => rec["error"] = json!(e),
    }
    conn.closed().await; // the client closes once it has the response
    let s = conn.stats();
    let f = flights.take(remote);
    let limit = 3 * f.first_dgram;
    // RFC 9000 §8.1: stopped within one datagram of 3x the client's first datagram before its second.
    let mds = conn.stats().path.current_mtu as u64;
    rec["first_flight_bytes"] = json!(f.ff_bytes);
    rec["first_flight_packets"] = json!(f.ff_packets);
    rec["bytes_before_2nd"] = json!(f.before_2nd);
    rec["client_first_dgram"] = json!(f.first_dgram);
    rec["amp_blocked"] = json!(limit > 0 && f.before_2nd + mds > limit);
    rec["datagrams"] = json!(s.udp_tx.datagrams);
    rec["bytes"] = json!(s.udp_tx.bytes);
    rec["lost"] = json!(s.path.lost_packets);
    rec
}

// ---- client ---------------------------------------------------------------------------------

#[derive(Deserialize)]
struct Job {
    uid: String,
    flow: u64,
    bind: std::net::IpAddr,
    dst: std::net::IpAddr,
    port: u16,
    request: u64,
    response: u64,
}

async fn exchange(st: &QuicStack, job: &Job, rec: &mut Value) -> Result<(), String> {
    let (ep, _) = endpoint(st, SocketAddr::new(job.bind, 0), false).map_err(|e| format!("bind {}: {e}", job.bind))?;
    rec["start"] = json!(monotonic());
    let conn = ep
        .connect(SocketAddr::new(job.dst, job.port), "iwlab.quic.test")
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| e.to_string())?;
    rec["handshake"] = json!(monotonic());
    let result = async {
        let (mut send, mut recv) = conn.open_bi().await.map_err(|e| e.to_string())?;
        let mut req = Vec::with_capacity(job.request.max(HEADER as u64) as usize);
        req.extend_from_slice(&job.response.to_be_bytes());
        req.extend_from_slice(&job.flow.to_be_bytes());
        req.resize(job.request.max(HEADER as u64) as usize, 0);
        send.write_all(&req).await.map_err(|e| e.to_string())?;
        send.finish().map_err(|e| e.to_string())?;
        let mut got = 0u64;
        while let Some(c) = recv.read_chunk(usize::MAX, true).await.map_err(|e| e.to_string())? {
            if got == 0 && !c.bytes.is_empty() {
                rec["first_byte"] = json!(monotonic());
            }
            got += c.bytes.len() as u64;
            rec["delivered"] = json!(got);
        }
        if got >= job.response {
            rec["last_byte"] = json!(monotonic());
            rec["completed"] = json!(true);
        }
        Ok::<(), String>(())
    }
    .await;
    conn.close(0u32.into(), b""); // CONNECTION_CLOSE, as the engine's client
    let s = conn.stats();
    rec["datagrams"] = json!(s.udp_tx.datagrams);
    rec["bytes"] = json!(s.udp_tx.bytes);
    rec["lost"] = json!(s.path.lost_packets);
    ep.wait_idle().await; // the close reaches the server before the socket goes
    result
}

async fn client(a: Args) -> Result<(), String> {
    let st = Arc::new(stack(&a)?);
    println!("ready");
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut tasks = tokio::task::JoinSet::new();
    while let Some(line) = lines.next_line().await.map_err(|e| format!("stdin: {e}"))? {
        let job: Job = serde_json::from_str(&line).map_err(|e| format!("job {line:?}: {e}"))?;
        let st = st.clone();
        tasks.spawn_local(async move {
            let mut rec = json!({"uid": job.uid, "delivered": 0, "completed": false});
            let ptos = Ptos::new();
            if let Err(e) = exchange(&st, &job, &mut rec).instrument(ptos.span()).await {
                rec["error"] = json!(e);
            }
            rec["pto"] = json!(ptos.count());
            emit(&mut std::io::stdout().lock(), &rec);
        });
    }
    while tasks.join_next().await.is_some() {}
    Ok(())
}

fn main() {
    let a = Args::parse();
    pto::install();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let local = tokio::task::LocalSet::new();
    let r = local.block_on(&rt, async move {
        match a.role {
            Role::Server => serve(a).await,
            Role::Client => client(a).await,
        }
    });
    if let Err(e) = r {
        eprintln!("iwlab-quic-peer: {e}");
        std::process::exit(2);
    }
}
