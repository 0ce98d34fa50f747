//! Links as the engine runs them: serialisation back to back, one event per packet and hop on
//! an idle path, and counters that are exact at any instant.

mod common;
use common::*;
use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::net::packet::{LinkId, NodeId, Packet};
use iwlab_core::sim::{AppId, Application, ConnId, Core, Observer, PacketEvent, Side};
use iwlab_core::tcp::endpoint::AppEvent;
use std::sync::{Arc, Mutex};

/// Sends `count` UDP datagrams of `payload` bytes at once when it starts.
struct Burst {
    src: NodeId,
    dst: NodeId,
    count: u32,
    payload: u32,
}

impl Application for Burst {
    fn start(&mut self, core: &mut Core, _me: AppId) {
        let flow = core.add_udp_flow(self.src, self.dst);
        for _ in 0..self.count {
            core.send_udp(flow, self.payload);
        }
    }
    fn on_event(&mut self, _: &mut Core, _: AppId, _: ConnId, _: Side, _: AppEvent) {}
}

/// Delivery times.
#[derive(Clone, Default)]
struct Deliveries(Arc<Mutex<Vec<SimTime>>>);

impl Observer for Deliveries {
    fn on_packet(&mut self, now: SimTime, ev: PacketEvent, _port: LinkId, _pkt: &Packet) {
        if ev == PacketEvent::Deliver {
            self.0.lock().unwrap().push(now);
        }
    }
}

const MBPS: u64 = 1_000_000;

#[test]
fn a_datagram_on_an_idle_path_costs_one_event_per_hop() {
    // Host → router → router → host: three hops, no queueing anywhere.
    let (mut sim, d) = dumbbell(1, link(100 * MBPS, ms(1), 100), link(10 * MBPS, ms(10), 100), 1);
    sim.add_app(Box::new(Burst { src: d.left[0], dst: d.right[0], count: 1, payload: 972 }), SimTime::ZERO);
    run(&mut sim, at(ms(1_000)));
    assert_eq!(sim.core.acct.delivered, 1);
    // The application's start, then one arrival per hop; no "transmission done" events.
    assert_eq!(sim.core.events_processed(), 1 + 3);
}

#[test]
fn packets_queued_behind_each_other_leave_one_transmission_time_apart() {
    // 1000-byte packets at 1 Mb/s: 8 ms each; 5 ms propagation.
    let mut p = pair(link(MBPS, ms(5), 100), 1);
    let seen = Deliveries::default();
    p.sim.core.add_observer(Box::new(seen.clone()));
    p.sim.add_app(Box::new(Burst { src: p.client, dst: p.server, count: 3, payload: 972 }), SimTime::ZERO);
    run(&mut p.sim, at(ms(1_000)));
    let times = seen.0.lock().unwrap().clone();
    assert_eq!(times, vec![at(ms(8 + 5)), at(ms(16 + 5)), at(ms(24 + 5))]);
    // Two packets waited: the port woke up twice to send them.
    assert_eq!(p.sim.core.events_processed(), 1 + 3 + 2);
}

#[test]
fn link_counters_are_exact_in_the_middle_of_a_transmission() {
    let mut p = pair(link(MBPS, ms(5), 100), 1);
    p.sim.add_app(Box::new(Burst { src: p.client, dst: p.server, count: 2, payload: 972 }), SimTime::ZERO);
    run(&mut p.sim, at(ms(1_000)));
    let port = &p.sim.core.topo.ports[p.up as usize];
    // Halfway through the second packet: one packet finished, 12 ms of the 16 busy.
    let c = port.counters_at(at(ms(12)));
    assert_eq!((c.packets, c.bytes, c.payload_bytes), (1, 1000, 972));
    assert_eq!(c.busy_ns, ms(12).as_nanos());
    // At the end of it, both; afterwards the link is idle.
    let c = port.counters_at(at(ms(16)));
    assert_eq!((c.packets, c.bytes, c.busy_ns), (2, 2000, ms(16).as_nanos()));
    assert_eq!(port.counters_at(at(ms(500))).busy_ns, SimDuration::from_millis(16).as_nanos());
    assert!((port.utilisation(at(ms(32))) - 0.5).abs() < 1e-12);
}

/// Delivery times of a 40-datagram burst over one 1 Mb/s link with 5 ms propagation.
fn burst_deliveries(jitter: SimDuration, seed: u64) -> (Vec<SimTime>, u64) {
    let mut p = pair(link(MBPS, ms(5), 100), seed);
    p.sim.core.topo.ports[p.up as usize].jitter = jitter;
    let seen = Deliveries::default();
    p.sim.core.add_observer(Box::new(seen.clone()));
    p.sim.add_app(Box::new(Burst { src: p.client, dst: p.server, count: 40, payload: 972 }), SimTime::ZERO);
    run(&mut p.sim, at(ms(2_000)));
    let times = seen.0.lock().unwrap().clone();
    (times, p.sim.core.acct.delivered)
}

#[test]
fn jitter_adds_at_most_its_bound_to_each_packet_and_never_reorders() {
    // 1000-byte packets at 1 Mb/s leave 8 ms apart; the i-th finishes at 8·(i+1) ms.
    let (times, delivered) = burst_deliveries(ms(3), 1);
    assert_eq!(delivered, 40);
    for (i, &t) in times.iter().enumerate() {
        let base = at(ms(8 * (i as u64 + 1) + 5));
        assert!(t >= base && t < base + ms(3), "packet {i}: {t:?} outside [{base:?}, +3 ms)");
    }
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "a link does not reorder");
    let late = times.iter().enumerate().filter(|&(i, &t)| t > at(ms(8 * (i as u64 + 1) + 5))).count();
    assert!(late >= 35, "almost every packet drew some jitter: {late} of 40");
}

#[test]
fn a_packet_never_overtakes_the_one_before_it_however_large_the_jitter() {
    // Jitter far above the 8 ms spacing: a packet that drew little waits for its predecessor.
    let (times, delivered) = burst_deliveries(ms(50), 2);
    assert_eq!(delivered, 40);
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert!(times.windows(2).any(|w| w[0] == w[1]), "some packet was held back to keep the order");
}

#[test]
fn jitter_is_drawn_from_the_seed_and_zero_jitter_is_the_plain_link() {
    assert_eq!(burst_deliveries(ms(3), 7), burst_deliveries(ms(3), 7));
    assert_ne!(burst_deliveries(ms(3), 7).0, burst_deliveries(ms(3), 8).0);
    let plain: Vec<SimTime> = (0..40).map(|i| at(ms(8 * (i + 1) + 5))).collect();
    assert_eq!(burst_deliveries(SimDuration::ZERO, 7).0, plain);
}
