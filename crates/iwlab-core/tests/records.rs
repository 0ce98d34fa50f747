//! Records read off a finished simulation: flow rows, link rows over the post-warm-up
//! interval, queue samples, pcap traces, and golden records of two small scenarios.

mod common;
use common::*;
use iwlab_core::engine::SimDuration;
use iwlab_core::metrics::{Column, Results};
use iwlab_core::net::loss::LossRule;
use iwlab_core::tcp::config::{RecoveryKind, TcpConfig};
use iwlab_core::tcp::iw::IwConfig;
use iwlab_core::trace::observer::PcapTrace;
use iwlab_core::trace::pcap::{PcapWriter, TraceFilter};
use std::sync::{Arc, Mutex};

fn f64s(t: &iwlab_core::metrics::Table, name: &str) -> Vec<Option<f64>> {
    match t.column(name).unwrap() {
        Column::F64(v) => v.iter().map(|x| Some(*x)).collect(),
        Column::OptF64(v) => v.clone(),
        c => panic!("{name} is {c:?}"),
    }
}
fn u64s(t: &iwlab_core::metrics::Table, name: &str) -> Vec<u64> {
    match t.column(name).unwrap() {
        Column::U64(v) => v.clone(),
        c => panic!("{name} is {c:?}"),
    }
}

#[test]
fn a_flow_row_says_what_happened_to_the_connection() {
    let mut p = pair(link(10_000_000, ms(50), 1000), 1);
    drop_on(&mut p.sim, p.down, LossRule::Segment { flow: 0, to_server: false, seq: 1 + 5 * 1460, nth: 1 });
    let log = transfer(&mut p, &TcpConfig::default(), IwConfig::Fixed { segments: 4 }, 300, 30 * 1460);
    let end = at(ms(20_000));
    run(&mut p.sim, end);
    let r = Results::collect(&p.sim, end, at(SimDuration::ZERO));
    assert_eq!(r.flows.rows(), 1);
    let log = log.lock().unwrap();
    let done = log.response_done.unwrap().as_secs_f64();
    assert_eq!(f64s(&r.flows, "completion")[0], Some(done), "completion = last byte − open");
    assert_eq!(f64s(&r.flows, "last_byte")[0], Some(done));
    assert_eq!(u64s(&r.flows, "iw_bytes")[0], 4 * 1460);
    assert_eq!(u64s(&r.flows, "delivered_bytes")[0], 30 * 1460);
    assert_eq!(u64s(&r.flows, "retransmits")[0], 1);
    assert_eq!(u64s(&r.flows, "fast_retransmits")[0], 1);
    assert_eq!(r.summary.flows_completed, 1);
    assert_eq!(
        r.summary.packets_created,
        r.summary.packets_delivered + r.summary.packets_dropped + r.summary.packets_in_flight
    );
}

/// A 10 MB transfer over 10 Mb/s until `end_ms`, recorded without and with a 1 s warm-up;
/// also the port of the data direction.
fn whole_and_warm(end_ms: u64) -> (Results, Results, usize) {
    let mut whole = pair(link(10_000_000, ms(10), 1000), 1);
    transfer(&mut whole, &TcpConfig::default(), IwConfig::Fixed { segments: 10 }, 100, 10_000_000);
    let mut warm = pair(link(10_000_000, ms(10), 1000), 1);
    warm.sim.core.set_warmup(at(ms(1_000)));
    transfer(&mut warm, &TcpConfig::default(), IwConfig::Fixed { segments: 10 }, 100, 10_000_000);
    let end = at(ms(end_ms));
    run(&mut whole.sim, end);
    run(&mut warm.sim, end);
    let a = Results::collect(&whole.sim, end, at(SimDuration::ZERO));
    let b = Results::collect(&warm.sim, end, at(ms(1_000)));
    (a, b, warm.down as usize)
}

#[test]
fn link_rows_count_from_the_end_of_the_warm_up() {
    let (a, b, down) = whole_and_warm(5_000);
    assert!(u64s(&b.links, "packets")[down] < u64s(&a.links, "packets")[down]);
    // The 10 MB transfer keeps the link busy from slow start's end (< 1 s) to past 5 s.
    let u = f64s(&b.links, "utilisation")[down].unwrap();
    assert!(u > 0.95 && u <= 1.0, "utilisation {u}");
}

/// `summary.link_transmissions` counts packets put on any link, once per
/// hop, over the whole run — the links table's `packets` summed when there is no warm-up,
/// more than that sum (the warm-up's transmissions too) when there is one.
#[test]
fn link_transmissions_are_the_links_packets_summed_over_the_whole_run() {
    let (a, b, _) = whole_and_warm(3_000);
    let sum_a: u64 = u64s(&a.links, "packets").iter().sum();
    let sum_b: u64 = u64s(&b.links, "packets").iter().sum();
    assert!(sum_a > 1000, "{sum_a}");
    assert_eq!(a.summary.link_transmissions, sum_a);
    assert_eq!(b.summary.link_transmissions, a.summary.link_transmissions, "the warm-up changes no packet");
    assert!(sum_b < b.summary.link_transmissions);
}

#[test]
fn queues_are_sampled_at_the_configured_interval() {
    let (mut sim, d) = dumbbell(2, link(100_000_000, ms(1), 1000), link(1_000_000, ms(10), 50), 3);
    sim.core.sample_queues(ms(100), vec![d.forward, d.reverse]);
    let end = at(ms(2_000));
    run(&mut sim, end);
    let r = Results::collect(&sim, end, at(SimDuration::ZERO));
    assert_eq!(r.queues.rows(), 2 * 21, "t = 0, 0.1, …, 2.0 s for two ports");
}

#[test]
fn a_pcap_trace_of_the_bottleneck_decodes_in_tshark() {
    let path = std::env::temp_dir().join(format!("iwlab-records-{}.pcap", std::process::id()));
    let mut p = pair(link(10_000_000, ms(20), 1000), 1);
    drop_on(&mut p.sim, p.down, LossRule::Segment { flow: 0, to_server: false, seq: 1 + 2 * 1460, nth: 1 });
    let writer =
        Arc::new(Mutex::new(PcapWriter::new(std::io::BufWriter::new(std::fs::File::create(&path).unwrap())).unwrap()));
    let trace = PcapTrace::new(writer.clone(), None, TraceFilter::all());
    let err = trace.error_slot();
    p.sim.core.add_observer(Box::new(trace));
    let cfg = TcpConfig { recovery: RecoveryKind::Sack, sack: true, timestamps: true, ..TcpConfig::default() };
    transfer(&mut p, &cfg, IwConfig::Fixed { segments: 10 }, 200, 20 * 1448);
    run(&mut p.sim, at(ms(10_000)));
    writer.lock().unwrap().flush().unwrap();
    assert!(err.lock().unwrap().is_none());
    assert!(writer.lock().unwrap().records() > 40);
    let Ok(out) = std::process::Command::new("tshark")
        .args([
            "-r",
            path.to_str().unwrap(),
            "-Y",
            "tcp.analysis.retransmission or tcp.flags.syn==1",
            "-T",
            "fields",
            "-e",
            "tcp.flags.str",
        ])
        .output()
    else {
        eprintln!("tshark not found on PATH: decode check skipped");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.iter().filter(|l| l.contains('S')).count() == 2, "SYN and SYN-ACK: {lines:?}");
    assert!(lines.len() >= 3, "and at least one retransmission: {lines:?}");
    let _ = std::fs::remove_file(path);
}

/// A small scenario whose records are compared with a checked-in golden CSV.
/// Regenerate on purpose with `IWLAB_BLESS=1 cargo test --test records golden`.
fn golden(name: &str, csv: String) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var("IWLAB_BLESS").is_ok() {
        std::fs::write(&path, &csv).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("missing golden file {path:?}; bless it"));
    assert_eq!(csv, want, "records differ from {name}");
}

#[test]
fn golden_records_of_two_transfers_sharing_a_lossy_bottleneck() {
    let (mut sim, d) = dumbbell(2, link(100_000_000, ms(1), 1000), link(2_000_000, ms(30), 12), 5);
    sim.core.topo.ports[d.forward as usize].loss.add(LossRule::Random { p: 0.02 });
    let policy = sim.core.add_iw_policy(IwConfig::Rfc6928.build());
    let cfg = TcpConfig { recovery: RecoveryKind::Sack, sack: true, ..TcpConfig::default() };
    for i in 0..2 {
        let app = Transfer {
            client: d.right[i],
            server: d.left[i],
            request: 250,
            response: 300_000,
            client_cfg: cfg.clone(),
            server_cfg: cfg.clone(),
            client_iw: policy,
            server_iw: policy,
            log: Arc::new(Mutex::new(Log::default())),
        };
        sim.add_app(Box::new(app), at(ms(i as u64 * 300)));
    }
    let end = at(ms(20_000));
    run(&mut sim, end);
    let r = Results::collect(&sim, end, at(SimDuration::ZERO));
    golden("two-transfers-flows.csv", r.flows.to_csv());
    golden("two-transfers-links.csv", r.links.to_csv());
}

#[test]
fn golden_records_of_a_reno_transfer_with_a_syn_loss() {
    let mut p = pair(link(1_500_000, ms(50), 25), 1);
    drop_on(&mut p.sim, p.up, LossRule::Syn { flow: 0, nth: 1 });
    drop_on(&mut p.sim, p.down, LossRule::Segment { flow: 0, to_server: false, seq: 1 + 3 * 1460, nth: 1 });
    let cfg =
        TcpConfig { recovery: RecoveryKind::Reno, delayed_ack: None, initial_rto: ms(3_000), ..TcpConfig::default() };
    transfer(&mut p, &cfg, IwConfig::Fixed { segments: 4 }, 250, 50_000);
    let end = at(ms(30_000));
    run(&mut p.sim, end);
    let r = Results::collect(&p.sim, end, at(SimDuration::ZERO));
    golden("reno-syn-loss-flows.csv", r.flows.to_csv());
    golden("reno-syn-loss-links.csv", r.links.to_csv());
}
