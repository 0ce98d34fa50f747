//! Memory flat in flows: a finished connection gives back its endpoints and
//! keeps only what its flow record needs; an endpoint in TIME-WAIT stays as long as its peer
//! may still retransmit a FIN, and answers it (RFC 9293 §3.6.1 / §3.10.7.4). A counting global
//! allocator (this test binary only) measures the heap a run keeps per flow.

mod common;
use common::*;
use iwlab_core::engine::SimTime;
use iwlab_core::metrics::flow::{flow_records, flow_table, flow_table_in_chunks, for_each_flow_chunk};
use iwlab_core::metrics::Results;
use iwlab_core::net::loss::LossRule;
use iwlab_core::net::packet::{LinkId, Packet, Payload};
use iwlab_core::scenario::Scenario;
use iwlab_core::sim::core::Conn;
use iwlab_core::sim::{Observer, PacketEvent, Side};
use iwlab_core::tcp::config::TcpConfig;
use iwlab_core::tcp::endpoint::State;
use iwlab_core::tcp::iw::IwConfig;
use std::mem::size_of;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// The tests of this binary run one at a time: the counter is global.
static SERIAL: Mutex<()> = Mutex::new(());

#[allow(dead_code)]
#[path = "common/counting.rs"]
mod counting;
use counting::{Counting, LIVE_BYTES};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// `flows` Poisson flows of 14 600 bytes at 1 000/s over a 1 Gb/s dumbbell, run until
/// all are done. Returns the heap the finished simulation holds (bytes), the connections
/// still live, and the flow count.
fn poisson_run(flows: u32) -> (i64, usize, usize) {
    let run = poisson_run_at(flows, 1000);
    (run.held, run.live, run.flows)
}

/// What a finished run of [`poisson_run_at`] holds on the heap.
struct Held {
    /// Heap bytes the finished simulation holds.
    held: i64,
    /// The connection table (its whole capacity) and the retired endpoint records.
    records: i64,
    /// The event queue's buffers.
    scheduler: i64,
    live: usize,
    flows: usize,
}

/// `flows` Poisson flows of 14 600 bytes at `rate` per second over a 1 Gb/s dumbbell, run
/// until all are done.
fn poisson_run_at(flows: u32, rate: u32) -> Held {
    let text = poisson_text(flows, rate, flows as f64 / rate as f64 + 3.0);
    let before = LIVE_BYTES.load(Ordering::Relaxed);
    let built = Scenario::from_toml_str(&text).unwrap().build(None).unwrap();
    let sim = built.run();
    sim.check_accounting().unwrap();
    let held = LIVE_BYTES.load(Ordering::Relaxed) - before;
    let live = sim.core.live_connections();
    assert_eq!(live, sim.core.conns.iter().filter(|c| c.is_live()).count());
    let n = sim.core.conns.len();
    assert!(sim.core.conns.iter().all(|c| c.client().closed && c.server().closed), "every flow finished");
    // A retired connection's two endpoint records are inside its table entry.
    let records = sim.core.conns.capacity() * size_of::<Conn>();
    let scheduler = sim.core.scheduler_heap_bytes() as i64;
    Held { held, records: records as i64, scheduler, live, flows: n }
}

/// The scenario of [`poisson_run_at`], `secs` long.
fn poisson_text(flows: u32, rate: u32, secs: f64) -> String {
    format!(
        r#"
name = "memory"
duration = "{secs}s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "1Gbps", delay = "10ms", queue = {{ kind = "drop-tail", limit = "1000pkt" }} }}
[[topology.left]]
name = "clients"
count = 10
access = {{ rate = "10Gbps", delay = "1ms" }}
[[topology.right]]
name = "servers"
count = 10
access = {{ rate = "10Gbps", delay = "1ms" }}
[tcp]
sack = true
recovery = "sack"
[iw]
default = "iw10"
policies = {{ iw10 = {{ kind = "fixed", segments = 10 }} }}
[[apps]]
kind = "poisson-flows"
clients = "clients"
servers = "servers"
count = 10
rate = {rate}
size = 14600
flows = {flows}
"#
    )
}

#[test]
fn the_flow_table_built_in_chunks_is_the_table_of_all_rows() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Cut at 0.25 s: 250 flows opened, the last ones still in progress (live, incomplete).
    let built = Scenario::from_toml_str(&poisson_text(1000, 1000, 0.25)).unwrap().build(None).unwrap();
    let (end, warmup) = (built.end, built.warmup);
    let sim = built.run();
    let core = &sim.core;
    let rows = flow_records(core, warmup);
    let completed = rows.iter().filter(|f| f.completed).count() as u64;
    assert!(core.live_connections() > 0 && completed > 100 && completed < rows.len() as u64);
    let whole = flow_table(&rows);
    for chunk in [1, 7, rows.len(), 1 << 16] {
        assert_eq!(flow_table_in_chunks(core, warmup, chunk), (whole.clone(), completed), "chunks of {chunk}");
    }
    // Handed over chunk by chunk: full chunks, then the rest, every row once, in order.
    let mut sizes = Vec::new();
    let counted = for_each_flow_chunk(core, warmup, 7, |t| {
        sizes.push(t.rows());
        Ok::<(), ()>(())
    });
    assert_eq!(counted, Ok(completed));
    let (last, full) = sizes.split_last().unwrap();
    assert!(full.iter().all(|&n| n == 7) && (1..=7).contains(last) && sizes.iter().sum::<usize>() == rows.len());
    let r = Results::collect(&sim, end, warmup);
    assert_eq!((r.flows, r.summary.flows, r.summary.flows_completed), (whole, rows.len() as u64, completed));
}

#[test]
fn finished_connections_keep_only_their_records() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 8 000 and 16 000 flows at 1 000/s: both runs turn the scheduler's timing wheel (4 096
    // slots of 1.05 ms) more than once, so its buckets hold the same buffers; the connection
    // table's capacity (a power of two) is 8 192 and 16 384, so the difference per flow is
    // the table entry, which holds the retired endpoint records.
    let (small, live_small, n_small) = poisson_run(8000);
    let (large, live_large, n_large) = poisson_run(16000);
    assert_eq!((n_small, n_large), (8000, 16000));
    // Every connection finished and nothing of it is in the network or on a timer: none
    // keeps its endpoints.
    assert_eq!((live_small, live_large), (0, 0));
    let per_flow = (large - small) as f64 / 8000.0;
    eprintln!("heap held: {small} B for 8 000 flows, {large} B for 16 000 flows: {per_flow:.0} B per flow");
    // Two endpoints (≈ 1.8 kB inline, more on the heap) must not stay: the record of a
    // finished connection is a few hundred bytes (434 B measured: the 424-byte table entry
    // with its two endpoint records inside, times the table's 8 192 / 8 000 spare capacity).
    assert!(per_flow < 700.0, "{per_flow:.0} bytes per finished flow");
}

#[test]
fn engine_heap_outside_the_records_does_not_grow_with_flows_finished() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 25 000 and 100 000 flows at 2 500/s (10 and 40 s: the 4.3 s timing wheel has gone
    // round twice before the first count; a hundred or more events per 1 ms slot): everything
    // the finished run holds besides the connection table and the retired records — event
    // queue, packet slab, link queues, the application's state — must be the same after four
    // times the flows. Before the event queue gave back its buffers, every slot kept the
    // largest bucket it had ever held, and that maximum grew with the run (by 8.2 MB here,
    // ~65 MB over the 1 M-flow bench); now 768 B.
    let small = poisson_run_at(25_000, 2500);
    let large = poisson_run_at(100_000, 2500);
    assert_eq!((small.flows, large.flows, small.live, large.live), (25_000, 100_000, 0, 0));
    let engine = |h: &Held| h.held - h.records;
    eprintln!(
        "heap outside the records: {} B after 25 000 flows, {} B after 100 000 (event queue {} and {} B)",
        engine(&small),
        engine(&large),
        small.scheduler,
        large.scheduler
    );
    let growth = engine(&large) - engine(&small);
    assert!(growth.abs() < 64 << 10, "the engine's heap grew {growth} B over 75 000 finished flows");
    // The event queue keeps at most 32 entries (768 B) of spare buffer per slot of its wheel.
    assert!(large.scheduler < 5 << 20, "event queue holds {} B", large.scheduler);
}

/// Collects the send and drop events of pure ACKs acknowledging `ack`.
struct AckCounter {
    ack: u64,
    seen: Arc<Mutex<Vec<(LinkId, PacketEvent)>>>,
}

impl Observer for AckCounter {
    fn on_packet(&mut self, _now: SimTime, ev: PacketEvent, port: LinkId, pkt: &Packet) {
        if let Payload::Tcp { seg, .. } = &pkt.payload {
            let pure = seg.len == 0 && !seg.is_syn() && !seg.is_fin();
            if pure && seg.ack == self.ack && !matches!(ev, PacketEvent::Deliver) {
                self.seen.lock().unwrap().push((port, ev));
            }
        }
    }
}

#[test]
fn time_wait_answers_a_retransmitted_fin_then_the_connection_retires() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The server sends 2 segments and its FIN, the client closes when it has them. The
    // client sends no data: its FIN is sequence number 1, so the ACK of it carries ack = 2.
    let mut p = pair(link(10_000_000, ms(10), 100), 1);
    drop_on(&mut p.sim, p.down, LossRule::Ack { flow: 0, to_server: false, ack: 2, nth: 1 });
    let seen = Arc::new(Mutex::new(Vec::new()));
    p.sim.core.add_observer(Box::new(AckCounter { ack: 2, seen: seen.clone() }));
    let cfg = TcpConfig { delayed_ack: None, ..TcpConfig::default() };
    let log = transfer(&mut p, &cfg, IwConfig::Fixed { segments: 10 }, 0, 2 * 1460);

    // The client's FIN arrives ~100 ms in (3 one-way trips of 10 ms and serialisation);
    // the server's ACK of it is lost. The client's RTO (≥ 1 s) has not fired at 500 ms.
    run(&mut p.sim, at(ms(500)));
    let c = &p.sim.core.conns[0];
    let live = c.live().expect("the client's FIN is not acknowledged: the connection is live");
    // RFC 9293 §3.10.7.4: the server has both FINs acknowledged/received: TIME-WAIT.
    assert_eq!(live.server.state, State::TimeWait);
    assert!(!live.client.is_closed(), "the client waits for the ACK of its FIN (LAST-ACK)");
    assert!(live.client.sender.rto_deadline().is_some());
    assert_eq!(p.sim.core.live_connections(), 1);

    // The client retransmits its FIN; the server, in TIME-WAIT, acknowledges it again.
    run(&mut p.sim, at(ms(10_000)));
    let c = &p.sim.core.conns[0];
    assert!(!c.is_live(), "both ends closed, nothing in flight: retired");
    assert_eq!(p.sim.core.live_connections(), 0);
    let (client, server) = (c.client(), c.server());
    assert!(client.closed && server.closed);
    assert_eq!((client.sender.timeouts, client.sender.retransmits), (1, 1), "one FIN retransmission");
    assert_eq!(client.delivered, 2 * 1460);
    let seen = seen.lock().unwrap();
    let dropped = seen.iter().filter(|(_, e)| matches!(e, PacketEvent::Drop(_))).count();
    let sent = seen.iter().filter(|(_, e)| matches!(e, PacketEvent::TxStart)).count();
    assert_eq!((dropped, sent), (1, 1), "the lost ACK and the TIME-WAIT re-ACK: {seen:?}");
    assert!(log.lock().unwrap().closed[Side::Client as usize].is_some());
    // The retired record still answers what the flow record needs.
    assert_eq!(server.bytes_written, 2 * 1460);
}

#[test]
fn a_failed_handshake_retires_its_connection() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Every SYN lost: the client gives up after syn_retries (RFC 6298 backoff), the server
    // never heard of it. Nothing can reach either end any more.
    let mut p = pair(link(10_000_000, ms(10), 100), 1);
    for nth in 1..=3 {
        drop_on(&mut p.sim, p.up, LossRule::Syn { flow: 0, nth });
    }
    let cfg = TcpConfig { syn_retries: 2, ..TcpConfig::default() };
    transfer(&mut p, &cfg, IwConfig::Fixed { segments: 10 }, 0, 1460);
    run(&mut p.sim, at(ms(60_000)));
    let c = &p.sim.core.conns[0];
    assert!(!c.is_live());
    assert_eq!((c.client().stats.syn_retransmits, c.client().closed, c.server().closed), (2, true, false));
}
