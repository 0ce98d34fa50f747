//! Property tests over random small dumbbells and loss patterns: no panic, the accounting
//! identity holds, and every byte of every transfer is eventually delivered in order.

mod common;
use common::*;
use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::net::dumbbell::{Access, DumbbellSpec};
use iwlab_core::net::loss::LossRule;
use iwlab_core::net::topology::Topology;
use iwlab_core::sim::Simulation;
use iwlab_core::tcp::cc::CcConfig;
use iwlab_core::tcp::config::{DelayedAck, RecoveryKind, TcpConfig};
use iwlab_core::tcp::iw::IwConfig;
use proptest::prelude::*;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone)]
struct Case {
    hosts: usize,
    access_mbps: Vec<u64>,
    access_ms: Vec<u64>,
    bottleneck_kbps: u64,
    bottleneck_ms: u64,
    queue: u32,
    loss: f64,
    iw: u32,
    recovery: RecoveryKind,
    cubic: bool,
    delack: bool,
    timestamps: bool,
    sizes: Vec<(u64, u64)>,
    starts_ms: Vec<u64>,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..=3)
        .prop_flat_map(|hosts| {
            (
                Just(hosts),
                prop::collection::vec(1u64..=100, hosts),
                prop::collection::vec(0u64..=20, hosts),
                (200u64..=20_000, 1u64..=60, 2u32..=60, prop_oneof![Just(0.0), 0.0f64..0.08]),
                (
                    1u32..=12,
                    prop_oneof![
                        Just(RecoveryKind::Reno),
                        Just(RecoveryKind::NewReno),
                        Just(RecoveryKind::Sack),
                        Just(RecoveryKind::Rack)
                    ],
                ),
                (any::<bool>(), any::<bool>(), any::<bool>()),
                prop::collection::vec((1u64..=3_000, 0u64..=200_000), hosts),
                prop::collection::vec(0u64..=2_000, hosts),
                any::<u64>(),
            )
        })
        .prop_map(
            |(
                hosts,
                access_mbps,
                access_ms,
                (bk, bms, queue, loss),
                (iw, recovery),
                (cubic, delack, ts),
                sizes,
                starts_ms,
                seed,
            )| Case {
                hosts,
                access_mbps,
                access_ms,
                bottleneck_kbps: bk,
                bottleneck_ms: bms,
                queue,
                loss,
                iw,
                recovery,
                cubic,
                delack,
                timestamps: ts,
                sizes,
                starts_ms,
                seed,
            },
        )
}

fn run_case(c: &Case) -> (Simulation, Vec<Arc<Mutex<Log>>>) {
    let access = |i: usize| Access::symmetric(link(c.access_mbps[i] * 1_000_000, ms(c.access_ms[i]), 200));
    let bott = link(c.bottleneck_kbps * 1000, ms(c.bottleneck_ms), c.queue);
    let spec = DumbbellSpec {
        left: (0..c.hosts).map(access).collect(),
        right: (0..c.hosts).map(access).collect(),
        forward: bott.clone(),
        reverse: bott,
    };
    let mut topo = Topology::new();
    let d = spec.build(&mut topo, &iwlab_core::engine::RngStreams::new(c.seed));
    let mut sim = Simulation::new(topo, c.seed);
    if c.loss > 0.0 {
        for port in [d.forward, d.reverse] {
            sim.core.topo.ports[port as usize].loss.add(LossRule::Random { p: c.loss });
        }
    }
    let cfg = TcpConfig {
        recovery: c.recovery,
        sack: matches!(c.recovery, RecoveryKind::Sack | RecoveryKind::Rack),
        tlp: c.recovery == RecoveryKind::Rack,
        cc: if c.cubic { CcConfig::by_name("cubic").unwrap() } else { CcConfig::Reno },
        delayed_ack: c.delack.then_some(DelayedAck { segments: 2, timeout: ms(200) }),
        timestamps: c.timestamps,
        syn_retries: 30,
        ..TcpConfig::default()
    };
    let policy = sim.core.add_iw_policy(IwConfig::Fixed { segments: c.iw }.build());
    let mut logs = vec![];
    for i in 0..c.hosts {
        let log = Arc::new(Mutex::new(Log::default()));
        let app = Transfer {
            client: d.right[i],
            server: d.left[i],
            request: c.sizes[i].0,
            response: c.sizes[i].1,
            client_cfg: cfg.clone(),
            server_cfg: cfg.clone(),
            client_iw: policy,
            server_iw: policy,
            log: log.clone(),
        };
        sim.add_app(Box::new(app), at(ms(c.starts_ms[i])));
        logs.push(log);
    }
    run(&mut sim, SimTime::ZERO + SimDuration::from_secs(4 * 3600));
    (sim, logs)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_byte_arrives_in_order_and_accounting_holds(c in case()) {
        let (sim, logs) = run_case(&c);
        for (i, log) in logs.iter().enumerate() {
            let log = log.lock().unwrap();
            prop_assert!(log.request_done.is_some(), "request {} incomplete: {:?}", i, c);
            if c.sizes[i].1 > 0 {
                prop_assert!(log.response_done.is_some(), "response {} incomplete", i);
            }
            // Delivered totals only ever grow (in-order delivery) and end at the size.
            for p in [&log.request_progress, &log.response_progress] {
                prop_assert!(p.windows(2).all(|w| w[0].1 < w[1].1 && w[0].0 <= w[1].0));
            }
            let conn = &sim.core.conns[log.conn.unwrap() as usize];
            prop_assert_eq!(conn.server().delivered, c.sizes[i].0);
            prop_assert_eq!(conn.client().delivered, c.sizes[i].1);
            prop_assert!(conn.client().closed && conn.server().closed, "both closed");
        }
        // Everything finished: nothing is left in flight.
        prop_assert_eq!(sim.core.in_flight(), 0);
        if c.loss == 0.0 {
            let drops: u64 = sim.core.topo.ports.iter().map(|p| p.drops().0).sum();
            // Without a drop, only a timer that fires before its ACK can arrive makes a sender
            // resend: an RTO when queueing outgrows the RTO estimate (a 60-packet queue at
            // 200 kb/s is 3.6 s of delay), a tail loss probe (RFC 8985 §7) whenever no ACK
            // comes within 2·SRTT, or a delayed-ACK timer holding the ACK back.
            let senders: Vec<_> = sim.core.conns.iter().flat_map(|k| [k.server().sender, k.client().sender]).collect();
            let rtx: u64 = senders.iter().map(|s| s.retransmits).sum();
            let timers: u64 = senders.iter().map(|s| s.timeouts + s.tlp_probes).sum();
            prop_assert!(
                drops > 0 || rtx == 0 || timers > 0 || c.delack,
                "no loss and no early timer ⇒ no retransmissions"
            );
        }
    }
}
