//! Queue disciplines in the full simulator: RED and CoDel with and without ECN on a
//! bottleneck carrying bulk flows.

mod common;
use common::*;
use iwlab_core::net::link::LinkSpec;
use iwlab_core::net::queue::{CodelConfig, Limit, QueueConfig, RedConfig};
use iwlab_core::tcp::config::{RecoveryKind, TcpConfig};
use iwlab_core::tcp::iw::IwConfig;
use std::sync::{Arc, Mutex};

struct Outcome {
    queue_drops: u64,
    marks: u64,
    ecn_reductions: u64,
    retransmits: u64,
    completed: usize,
}

fn bulk_over(queue: QueueConfig, ecn: bool) -> Outcome {
    let bott = LinkSpec { rate_bps: 5_000_000, delay: ms(20), queue };
    let (mut sim, d) = dumbbell(4, link(100_000_000, ms(1), 1000), bott, 11);
    let cfg = TcpConfig { ecn, recovery: RecoveryKind::Sack, sack: true, ..TcpConfig::default() };
    let policy = sim.core.add_iw_policy(IwConfig::Fixed { segments: 10 }.build());
    let mut logs = vec![];
    for i in 0..4 {
        let log = Arc::new(Mutex::new(Log::default()));
        let app = Transfer {
            client: d.right[i],
            server: d.left[i],
            request: 200,
            response: 2_000_000,
            client_cfg: cfg.clone(),
            server_cfg: cfg.clone(),
            client_iw: policy,
            server_iw: policy,
            log: log.clone(),
        };
        sim.add_app(Box::new(app), at(ms(i as u64 * 100)));
        logs.push(log);
    }
    run(&mut sim, at(ms(120_000)));
    let port = &sim.core.topo.ports[d.forward as usize].counters_at(sim.core.now());
    Outcome {
        queue_drops: port.queue_drops,
        marks: port.marks,
        ecn_reductions: sim.core.conns.iter().map(|c| c.server().sender.ecn_reductions).sum(),
        retransmits: sim.core.conns.iter().map(|c| c.server().sender.retransmits).sum(),
        completed: logs.iter().filter(|l| l.lock().unwrap().response_done.is_some()).count(),
    }
}

fn red(ecn: bool) -> QueueConfig {
    QueueConfig::Red(RedConfig { limit: Limit::Packets(100), ecn, ..RedConfig::default() })
}

#[test]
fn red_drops_early_without_ecn() {
    let o = bulk_over(red(false), false);
    assert_eq!(o.completed, 4);
    assert!(o.queue_drops > 0 && o.marks == 0);
}

#[test]
fn red_with_ecn_marks_instead_of_dropping_and_senders_reduce_without_retransmitting() {
    let o = bulk_over(red(true), true);
    assert_eq!(o.completed, 4);
    assert!(o.marks > 0, "RED marked ECT packets");
    assert!(o.ecn_reductions > 0, "senders halved on ECE");
    assert_eq!(o.retransmits, o.queue_drops, "a retransmission only for each real drop");
}

#[test]
fn codel_keeps_the_standing_queue_short_by_dropping() {
    let big = QueueConfig::Codel(CodelConfig { limit: Limit::Packets(1000), ..CodelConfig::default() });
    let o = bulk_over(big, false);
    assert_eq!(o.completed, 4);
    assert!(o.queue_drops > 0, "CoDel dropped at dequeue although the buffer never filled");
    let tail = bulk_over(QueueConfig::DropTail { limit: Limit::Packets(1000) }, false);
    assert_eq!(tail.queue_drops, 0, "the 1000-packet drop-tail buffer never overflows here");
}

#[test]
fn codel_with_ecn_marks() {
    let q = QueueConfig::Codel(CodelConfig { limit: Limit::Packets(1000), ecn: true, ..CodelConfig::default() });
    let o = bulk_over(q, true);
    assert_eq!(o.completed, 4);
    assert!(o.marks > 0 && o.ecn_reductions > 0);
}
