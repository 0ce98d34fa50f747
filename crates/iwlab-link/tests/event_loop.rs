//! The real event loop on the real clock, over a datagram socket pair instead of a TUN (one
//! `read` = one packet, as on a TUN), so it runs without root: packets written into one end come
//! back out of it after serialisation and delay.

use iwlab_core::engine::SimDuration;
use iwlab_core::net::queue::{Limit, QueueConfig};
use iwlab_link::link::LinkParams;
use iwlab_link::relay::{DirectionSpec, Relay, RelayConfig};
use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

fn packet(bytes: usize, tag: u8) -> Vec<u8> {
    let mut p = vec![0u8; bytes];
    p[0] = 0x45;
    p[bytes - 1] = tag;
    p
}

fn relay(rate_bps: u64, delay_ms: u64, limit: u32, duration: SimDuration) -> (Relay, UnixDatagram) {
    let (ours, theirs) = UnixDatagram::pair().unwrap();
    let params = LinkParams {
        rate_bps,
        delay: SimDuration::from_millis(delay_ms),
        queue: QueueConfig::DropTail { limit: Limit::Packets(limit) },
        loss: 0.0,
    };
    let dir = DirectionSpec { name: "pair".into(), fd: theirs.into(), params };
    let stats = std::env::temp_dir().join(format!("iwlab-link-loop-{}-{delay_ms}.json", std::process::id()));
    let cfg = RelayConfig {
        seed: 1,
        pool_slots: 256,
        slot_bytes: 2048,
        spin: SimDuration::from_micros(50),
        stats_json: Some(stats),
        duration: Some(duration),
    };
    (Relay::new(vec![dir], cfg).unwrap(), ours)
}

#[test]
fn packets_come_back_after_serialisation_and_delay_and_the_report_adds_up() {
    // 1 Mb/s: 1250 B = 10 ms. Five packets at once + 20 ms delay: the k-th returns at
    // (k+1)·10 ms + 20 ms after it was sent. Queue limit 3: with one in the transmitter, the
    // fifth packet is dropped.
    let (mut relay, sock) = relay(1_000_000, 20, 3, SimDuration::from_secs(20));
    let control = relay.control();
    let handle = std::thread::spawn(move || relay.run().unwrap());
    let t0 = Instant::now();
    for tag in 0..5 {
        sock.send(&packet(1250, tag)).unwrap();
    }
    sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut got = vec![];
    let mut buf = [0u8; 2048];
    for _ in 0..4 {
        let n = sock.recv(&mut buf).unwrap();
        got.push((t0.elapsed(), n, buf[n - 1]));
    }
    sock.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    assert!(sock.recv(&mut buf).is_err(), "the fifth packet was dropped by the queue");
    control.stop();
    let report = handle.join().unwrap();

    for (k, (at, n, tag)) in got.iter().enumerate() {
        let due = Duration::from_millis(10 * (k as u64 + 1) + 20);
        assert_eq!((*n, *tag), (1250, k as u8));
        assert!(*at >= due, "packet {k} back at {at:?}, due {due:?}");
        // Generous: a loaded CI machine can be slow to schedule the test thread.
        assert!(*at < due + Duration::from_millis(15), "packet {k} back at {at:?}, due {due:?}");
    }
    let d = &report.directions[0];
    assert_eq!((d.counters.packets_in, d.counters.packets_out, d.counters.queue_drops), (5, 4, 1));
    assert_eq!((d.counters.bytes_in, d.counters.bytes_out), (6250, 5000));
    assert_eq!((d.lateness_us.samples, d.held, d.pool_drops, d.write_errors), (4, 0, 0, 0));
    assert!(d.lateness_us.max < 10_000.0, "lateness {:?}", d.lateness_us);

    let path = std::env::temp_dir().join(format!("iwlab-link-loop-{}-20.json", std::process::id()));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    let dir = &json["directions"][0];
    assert_eq!(dir["packets_out"], 4);
    assert_eq!(dir["queue"], "droptail:3pkt");
    for k in ["p50", "p90", "p99", "max"] {
        assert!(dir["lateness_us"][k].is_number(), "{k}");
    }
}

#[test]
fn the_relay_stops_by_itself_after_its_duration_and_drops_what_it_still_holds() {
    let (mut relay, sock) = relay(1_000_000, 1000, 10, SimDuration::from_millis(300));
    let t0 = Instant::now();
    let handle = std::thread::spawn(move || relay.run().unwrap());
    sock.send(&packet(100, 1)).unwrap();
    let report = handle.join().unwrap();
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(300) && took < Duration::from_secs(3), "{took:?}");
    let d = &report.directions[0];
    assert_eq!((d.counters.packets_in, d.counters.packets_out, d.held), (1, 0, 1));
    let path = std::env::temp_dir().join(format!("iwlab-link-loop-{}-1000.json", std::process::id()));
    std::fs::remove_file(path).unwrap();
}
