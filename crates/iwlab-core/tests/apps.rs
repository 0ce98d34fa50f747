//! The traffic applications in the full simulator: FTP completion times against the closed
//! form, back-to-back repetitions, HTTP/1.0 and HTTP/1.1 pages and their records, think
//! times, the end-of-run hook, UDP rates, open-loop arrivals, bulk utilisation, determinism
//! and configuration errors. Every run ends with the accounting identity (`common::run`).

mod common;
use common::*;
use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::metrics::PageRecord;
use iwlab_core::net::loss::LossRule;
use iwlab_core::net::packet::NodeId;
use iwlab_core::sim::core::Conn;
use iwlab_core::sim::{AppId, Simulation};
use iwlab_core::tcp::config::TcpConfig;
use iwlab_core::tcp::iw::IwConfig;
use iwlab_core::traffic::dist::DistConfig;
use iwlab_core::traffic::{build_app, AppConfig, Arrivals, Ends, HttpVersion};
use std::sync::Arc;

const MSS: u64 = 1460;
const RATE: u64 = 10_000_000;

fn tx(bytes: u64) -> SimDuration {
    SimDuration::transmission(bytes, RATE)
}

fn constant(value: f64) -> DistConfig {
    DistConfig::Constant { value }
}

/// An ACK for every segment: the closed form below is exact.
fn ack_every_segment() -> TcpConfig {
    TcpConfig { delayed_ack: None, ..TcpConfig::default() }
}

/// Both ends with `cfg` and a fixed IW of `iw` segments (a new policy instance).
fn ends(sim: &mut Simulation, client: NodeId, server: NodeId, cfg: &TcpConfig, iw: u32) -> Ends {
    let i = sim.core.add_iw_policy(IwConfig::Fixed { segments: iw }.build());
    let tcp = Arc::new(cfg.clone());
    Ends { client, server, client_tcp: tcp.clone(), server_tcp: tcp, client_iw: i, server_iw: i, transport: Default::default() }
}

fn add(sim: &mut Simulation, cfg: &AppConfig, at_: SimTime) -> AppId {
    sim.add_app(build_app(cfg).expect("valid config"), at_)
}

fn conns_of<'a>(sim: &'a Simulation, kind: &'a str, role: &'a str) -> impl Iterator<Item = &'a Conn> + 'a {
    sim.core.conns.iter().filter(move |c| c.label.app_kind == kind && c.label.role == role)
}

/// Duration from opening a connection to the client having `n` full segments of response,
/// on the 10 Mb/s, 50 ms `pair`, ACK for every segment, IW `iw` (tests/closed_form.rs's
/// reasoning). The client's SYN waits behind `queued` bytes already on its link. With a
/// request (≤ 1 MSS), the client sends it with its handshake ACK; the server ACKs it at
/// once (a pure ACK, before the application writes) and the response follows that ACK.
fn closed_form(iw: u64, n: u64, request: u64, queued: u64) -> SimDuration {
    let d = ms(50);
    let (syn, data) = (tx(44), tx(1500));
    let third = if request == 0 { tx(40) } else { tx(40 + request) + tx(40) };
    // When the server's first response segment starts serialisation.
    let mut start = SimTime::ZERO + tx(queued) + syn + d + syn + d + third + d;
    let (mut cwnd, mut sent) = (iw, 0u64);
    loop {
        if sent + cwnd >= n {
            return (start + data.saturating_mul(n - sent) + d) - SimTime::ZERO;
        }
        sent += cwnd;
        // Each ACK adds one segment (slow start); the next round starts when the first
        // ACK of this round reaches the server.
        start = start + data + d + tx(40) + d;
        cwnd *= 2;
    }
}

fn ftp(e: Ends, size: u64, request: u64, count: Option<u32>, gap: Option<DistConfig>) -> AppConfig {
    AppConfig::Ftp { ends: e, size, request_bytes: request, gap, count }
}

#[test]
fn an_ftp_transfer_on_a_lossless_path_takes_the_closed_form_time() {
    for iw in [1u32, 3, 10] {
        for n in [1u64, 4, 20, 45] {
            for request in [0u64, 250] {
                let mut p = pair(link(RATE, ms(50), 1000), 1);
                let e = ends(&mut p.sim, p.client, p.server, &ack_every_segment(), iw);
                add(&mut p.sim, &ftp(e, n * MSS, request, Some(1), None), SimTime::ZERO);
                run(&mut p.sim, at(ms(60_000)));
                let c = &p.sim.core.conns[0];
                let done = c.last_byte[0].expect("response delivered");
                assert_eq!(
                    done - c.opened_at,
                    closed_form(iw as u64, n, request, 0),
                    "IW {iw}, {n} segments, request {request}"
                );
                assert_eq!(c.client().delivered, n * MSS);
                assert_eq!(c.server().delivered, request);
                assert!(c.client().closed && c.server().closed, "both sides closed");
                assert_eq!((c.label.app_kind, c.label.role), ("ftp", "transfer"));
            }
        }
    }
}

#[test]
fn ftp_repetitions_run_back_to_back() {
    let (iw, n, request) = (3, 20, 250);
    let mut p = pair(link(RATE, ms(50), 1000), 1);
    let e = ends(&mut p.sim, p.client, p.server, &ack_every_segment(), iw);
    add(&mut p.sim, &ftp(e, n * MSS, request, Some(4), None), at(ms(10)));
    run(&mut p.sim, at(ms(60_000)));
    let cs = &p.sim.core.conns;
    assert_eq!(cs.len(), 4, "exactly `count` transfers");
    assert_eq!(cs[0].opened_at, at(ms(10)));
    for k in 0..cs.len() {
        let done = cs[k].last_byte[0].expect("delivered");
        assert_eq!(cs[k].client().delivered, n * MSS);
        // Later SYNs queue behind the client's last ACK and its FIN (40 bytes each).
        let queued = if k == 0 { 0 } else { 80 };
        assert_eq!(done - cs[k].opened_at, closed_form(iw as u64, n, request, queued), "transfer {k}");
        if k + 1 < cs.len() {
            assert_eq!(cs[k + 1].opened_at, done, "transfer {} opens when {k} completes", k + 1);
        }
    }
}

#[test]
fn ftp_gaps_separate_transfers_and_without_count_it_runs_until_the_end() {
    let mut p = pair(link(RATE, ms(50), 1000), 1);
    let e = ends(&mut p.sim, p.client, p.server, &ack_every_segment(), 3);
    add(&mut p.sim, &ftp(e, 10 * MSS, 250, None, Some(constant(1.5))), SimTime::ZERO);
    run(&mut p.sim, at(ms(20_000)));
    let cs = &p.sim.core.conns;
    assert!(cs.len() >= 5, "{} transfers", cs.len());
    for w in cs.windows(2) {
        if let Some(done) = w[0].last_byte[0] {
            assert_eq!(w[1].opened_at, done + ms(1500));
        }
    }
}

fn web(
    e: Ends,
    version: HttpVersion,
    primary: f64,
    embedded: f64,
    k: f64,
    think: f64,
    pages: Option<u32>,
) -> AppConfig {
    AppConfig::Web {
        ends: e,
        version,
        request_bytes: 250,
        primary: constant(primary),
        embedded: constant(embedded),
        embedded_count: constant(k),
        think: constant(think),
        pages,
    }
}

/// Pages in order; every one complete.
fn complete_pages(sim: &Simulation) -> Vec<PageRecord> {
    let pages = sim.core.records.pages.clone();
    assert!(pages.iter().all(|p| p.end.is_some()), "{pages:?}");
    pages
}

#[test]
fn an_http10_page_opens_its_embedded_connections_when_the_primary_completes() {
    let mut p = pair(link(RATE, ms(50), 1000), 2);
    let e = ends(&mut p.sim, p.client, p.server, &TcpConfig::default(), 3);
    let app = add(&mut p.sim, &web(e, HttpVersion::Http10, 5000.0, 3000.0, 3.0, 2.0, Some(3)), at(ms(5)));
    run(&mut p.sim, at(ms(60_000)));
    let pages = complete_pages(&p.sim);
    assert_eq!(pages.len(), 3);
    assert_eq!(p.sim.core.conns.len(), 3 * 4, "one primary and K = 3 embedded connections per page");
    assert_eq!(pages[0].start, at(ms(5)));
    for rec in &pages {
        assert_eq!((rec.app, rec.client, rec.server, rec.objects, rec.bytes), (app, p.client, p.server, 4, 14_000));
        let of_page =
            |role| -> Vec<&Conn> { conns_of(&p.sim, "web", role).filter(|c| c.label.page == Some(rec.page)).collect() };
        let (primary, embedded) = (of_page("primary"), of_page("embedded"));
        assert_eq!((primary.len(), embedded.len()), (1, 3));
        let primary_done = primary[0].last_byte[0].unwrap();
        assert_eq!(primary[0].client().delivered, 5000);
        assert_eq!(rec.start, primary[0].opened_at);
        for c in &embedded {
            assert_eq!(c.opened_at, primary_done, "embedded objects are requested the instant the primary is in");
            assert_eq!((c.client().delivered, c.server().delivered), (3000, 250));
        }
        let last = embedded.iter().map(|c| c.last_byte[0].unwrap()).max().unwrap();
        assert_eq!(rec.end, Some(last), "page delay = last embedded completion - primary open");
        assert!(p.sim.core.conns.iter().all(|c| c.client().closed && c.server().closed));
    }
    for w in pages.windows(2) {
        assert_eq!(w[1].start, w[0].end.unwrap() + ms(2000), "think time between pages");
    }
}

#[test]
fn an_http10_page_without_embedded_objects_ends_with_its_primary() {
    let mut p = pair(link(RATE, ms(50), 1000), 2);
    let e = ends(&mut p.sim, p.client, p.server, &TcpConfig::default(), 3);
    add(&mut p.sim, &web(e, HttpVersion::Http10, 5000.0, 3000.0, 0.0, 1.0, Some(2)), SimTime::ZERO);
    run(&mut p.sim, at(ms(30_000)));
    let pages = complete_pages(&p.sim);
    assert_eq!(pages.len(), 2);
    assert_eq!(p.sim.core.conns.len(), 2);
    assert_eq!(pages[0].end, p.sim.core.conns[0].last_byte[0]);
    assert_eq!((pages[0].objects, pages[0].bytes), (1, 5000));
}

#[test]
fn an_http11_page_uses_one_connection_and_delivers_every_byte() {
    for k in [0.0, 3.0, 7.0] {
        let mut p = pair(link(RATE, ms(50), 1000), 2);
        let e = ends(&mut p.sim, p.client, p.server, &TcpConfig::default(), 3);
        add(&mut p.sim, &web(e, HttpVersion::Http11, 5000.0, 3000.0, k, 2.0, Some(3)), SimTime::ZERO);
        run(&mut p.sim, at(ms(60_000)));
        let pages = complete_pages(&p.sim);
        let objects = 1 + k as u64;
        let bytes = 5000 + 3000 * (objects - 1);
        assert_eq!(pages.len(), 3);
        assert_eq!(p.sim.core.conns.len(), 3, "one connection per page (K = {k})");
        for (rec, c) in pages.iter().zip(&p.sim.core.conns) {
            assert_eq!((c.label.app_kind, c.label.role, c.label.page), ("web", "page", Some(rec.page)));
            assert_eq!((rec.objects as u64, rec.bytes), (objects, bytes));
            assert_eq!(c.client().delivered, bytes);
            assert_eq!(c.server().delivered, 250 * objects, "one request per object");
            assert_eq!((rec.start, rec.end), (c.opened_at, c.last_byte[0]));
            assert!(c.client().closed && c.server().closed, "closed at page end");
        }
        for w in pages.windows(2) {
            assert_eq!(w[1].start, w[0].end.unwrap() + ms(2000), "think time between pages");
        }
    }
}

#[test]
fn http11_is_faster_than_http10_for_a_page_of_small_objects() {
    // No handshake per embedded object: one round trip less (the HTTP/1.0 objects are
    // parallel, so the difference is the embedded handshakes' round trip).
    let delay = |v| {
        let mut p = pair(link(RATE, ms(50), 1000), 2);
        let e = ends(&mut p.sim, p.client, p.server, &TcpConfig::default(), 10);
        add(&mut p.sim, &web(e, v, 2000.0, 2000.0, 3.0, 1.0, Some(1)), SimTime::ZERO);
        run(&mut p.sim, at(ms(10_000)));
        let r = complete_pages(&p.sim)[0].clone();
        r.end.unwrap() - r.start
    };
    let (h10, h11) = (delay(HttpVersion::Http10), delay(HttpVersion::Http11));
    assert!(h11 + ms(90) < h10, "HTTP/1.1 {h11} vs HTTP/1.0 {h10}");
}

#[test]
fn finish_records_the_page_in_progress_once() {
    let mut p = pair(link(1_000_000, ms(50), 1000), 2);
    let e = ends(&mut p.sim, p.client, p.server, &TcpConfig::default(), 3);
    add(&mut p.sim, &web(e, HttpVersion::Http10, 1e6, 1000.0, 1.0, 1.0, None), at(ms(100)));
    run(&mut p.sim, at(ms(2_000)));
    assert!(p.sim.core.records.pages.is_empty(), "nothing recorded before the page ends");
    p.sim.finish();
    p.sim.finish();
    let pages = &p.sim.core.records.pages;
    assert_eq!(pages.len(), 1);
    assert_eq!((pages[0].start, pages[0].end, pages[0].objects, pages[0].bytes), (at(ms(100)), None, 2, 1_001_000));
}

/// One host on each side of a bottleneck of `rate` b/s, 20 ms, 25 packets; 10 Mb/s, 1 ms access.
fn bottleneck(rate: u64, seed: u64) -> (Simulation, iwlab_core::net::dumbbell::Dumbbell) {
    dumbbell(2, link(10_000_000, ms(1), 1000), link(rate, ms(20), 25), seed)
}

fn udp(src: NodeId, dst: NodeId, rate_bps: u64, poisson: bool, stop: Option<SimTime>) -> AppConfig {
    AppConfig::Udp { src, dst, rate_bps, payload_bytes: 972, poisson, stop }
}

#[test]
fn udp_cbr_at_60_percent_of_the_bottleneck_uses_60_percent_of_it() {
    let (mut sim, d) = bottleneck(1_000_000, 4);
    add(&mut sim, &udp(d.left[0], d.right[0], 600_000, false, None), SimTime::ZERO);
    run(&mut sim, at(ms(100_000)));
    let u = sim.core.topo.ports[d.forward as usize].utilisation(sim.core.now());
    assert!((u - 0.6).abs() <= 0.01, "utilisation {u}");
    // 1000 wire bytes every 13.333 ms: 7500 packets in [0, 100 s].
    let f = &sim.core.udp[0];
    assert_eq!(f.sent_packets, 7501);
    assert_eq!(f.sent_bytes, 7501 * 972);
    assert!(f.sent_packets - f.received_packets <= 3, "nothing lost below capacity");
}

#[test]
fn udp_poisson_has_the_same_mean_rate_and_stops_at_stop() {
    let (mut sim, d) = bottleneck(1_000_000, 4);
    add(&mut sim, &udp(d.left[0], d.right[0], 600_000, true, Some(at(ms(100_000)))), SimTime::ZERO);
    add(&mut sim, &udp(d.left[1], d.right[1], 600_000, false, Some(at(ms(1_000)))), SimTime::ZERO);
    run(&mut sim, at(ms(200_000)));
    // 75 packets/s for 100 s: 7500 expected, standard deviation √7500.
    let n = sim.core.udp[0].sent_packets as f64;
    assert!((n - 7500.0).abs() <= 4.0 * 7500f64.sqrt(), "{n} packets");
    // CBR packets at k × 13.333 ms strictly before 1 s: k = 0..=74.
    assert_eq!(sim.core.udp[1].sent_packets, 75);
}

#[test]
fn periodic_short_flows_open_one_connection_per_period() {
    let mut p = pair(link(RATE, ms(10), 1000), 3);
    let e = ends(&mut p.sim, p.client, p.server, &TcpConfig::default(), 10);
    let period = ms(100);
    let cfg = AppConfig::ShortFlows {
        ends: e,
        request_bytes: 100,
        response_bytes: 9 * 1448,
        arrivals: Arrivals::Periodic(period),
        count: None,
        mix: None,
    };
    add(&mut p.sim, &cfg, SimTime::ZERO);
    let t = ms(1_000);
    run(&mut p.sim, at(t));
    let cs = &p.sim.core.conns;
    assert_eq!(cs.len() as u64, t.as_nanos() / period.as_nanos() + 1, "floor(T / period) + 1 flows in [0, T]");
    for (k, c) in cs.iter().enumerate() {
        assert_eq!(c.opened_at, at(period.saturating_mul(k as u64)));
        assert_eq!((c.label.app_kind, c.label.role), ("short", "transfer"));
    }
    run(&mut p.sim, at(ms(1_500)));
    assert!(cs_done(&p.sim, ms(1_000)), "every flow opened by 1 s completed");

    // With a count, exactly that many.
    let mut p = pair(link(RATE, ms(10), 1000), 3);
    let e = ends(&mut p.sim, p.client, p.server, &TcpConfig::default(), 10);
    let cfg = AppConfig::ShortFlows {
        ends: e,
        request_bytes: 0,
        response_bytes: 1000,
        arrivals: Arrivals::Periodic(period),
        count: Some(5),
        mix: None,
    };
    add(&mut p.sim, &cfg, SimTime::ZERO);
    run(&mut p.sim, at(ms(10_000)));
    assert_eq!(p.sim.core.conns.len(), 5);
    assert!(cs_done(&p.sim, ms(10_000)));
}

/// Every connection opened before `by` has its whole response and is closed.
fn cs_done(sim: &Simulation, by: SimDuration) -> bool {
    sim.core
        .conns
        .iter()
        .filter(|c| c.opened_at < at(by))
        .all(|c| c.client().delivered == c.server().bytes_written && c.client().closed && c.server().closed)
}

#[test]
fn poisson_short_flows_arrive_at_the_given_rate() {
    let mut p = pair(link(RATE, ms(10), 1000), 3);
    let e = ends(&mut p.sim, p.client, p.server, &TcpConfig::default(), 10);
    let cfg = AppConfig::ShortFlows {
        ends: e,
        request_bytes: 100,
        response_bytes: 2000,
        arrivals: Arrivals::Poisson { rate_per_s: 10.0 },
        count: None,
        mix: None,
    };
    add(&mut p.sim, &cfg, SimTime::ZERO);
    run(&mut p.sim, at(ms(100_000)));
    let n = p.sim.core.conns.len() as f64;
    assert!((n - 1000.0).abs() <= 4.0 * 1000f64.sqrt(), "{n} flows");
    assert!(cs_done(&p.sim, ms(99_000)));
}

#[test]
fn poisson_flows_count_matches_rate_times_duration_and_use_every_pair() {
    let (mut sim, d) = bottleneck(10_000_000, 5);
    let e0 = ends(&mut sim, d.left[0], d.right[0], &TcpConfig::default(), 10);
    let e1 = ends(&mut sim, d.left[1], d.right[1], &TcpConfig::default(), 10);
    let cfg = AppConfig::PoissonFlows {
        pairs: vec![e0, e1],
        rate_per_s: 20.0,
        size: DistConfig::Exponential { mean: 3000.0 },
        request_bytes: 100,
        count: None,
    };
    add(&mut sim, &cfg, SimTime::ZERO);
    let t = 100.0;
    run(&mut sim, at(ms(100_000)));
    let n = sim.core.conns.len() as f64;
    let mean = 20.0 * t;
    assert!((n - mean).abs() <= 4.0 * f64::sqrt(mean), "{n} flows, expected {mean} ± 4 sd");
    let on_pair0 = sim.core.conns.iter().filter(|c| c.client_node == d.left[0]).count() as f64;
    assert!((on_pair0 - n / 2.0).abs() <= 4.0 * (n / 4.0).sqrt(), "{on_pair0} of {n} on pair 0");
    assert!(sim.core.conns.iter().all(|c| c.label.app_kind == "poisson" && c.server().bytes_written >= 1));
    assert!(cs_done(&sim, ms(90_000)));
    // Distinct sizes: drawn per flow.
    let mut sizes: Vec<u64> = sim.core.conns.iter().map(|c| c.server().bytes_written).collect();
    sizes.sort_unstable();
    sizes.dedup();
    assert!(sizes.len() as f64 > n / 2.0);

    let (mut sim2, d2) = bottleneck(10_000_000, 5);
    let e = ends(&mut sim2, d2.left[0], d2.right[0], &TcpConfig::default(), 10);
    let cfg = AppConfig::PoissonFlows {
        pairs: vec![e],
        rate_per_s: 20.0,
        size: constant(0.2),
        request_bytes: 0,
        count: Some(7),
    };
    add(&mut sim2, &cfg, SimTime::ZERO);
    run(&mut sim2, at(ms(100_000)));
    assert_eq!(sim2.core.conns.len(), 7, "count");
    assert!(sim2.core.conns.iter().all(|c| c.client().delivered == 1), "sizes round up to 1 byte");
}

#[test]
fn bulk_keeps_the_bottleneck_busy_in_either_direction() {
    for upload in [false, true] {
        let (mut sim, d) = bottleneck(2_000_000, 6);
        let e = ends(&mut sim, d.left[0], d.right[0], &TcpConfig::default(), 3);
        add(&mut sim, &AppConfig::Bulk { ends: e, upload }, SimTime::ZERO);
        run(&mut sim, at(ms(60_000)));
        let port = if upload { d.forward } else { d.reverse };
        let u = sim.core.topo.ports[port as usize].utilisation(sim.core.now());
        assert!(u >= 0.95, "upload {upload}: utilisation {u}");
        let c = &sim.core.conns[0];
        assert_eq!((c.label.app_kind, c.label.role), ("bulk", if upload { "upload" } else { "download" }));
        let received = if upload { c.server().delivered } else { c.client().delivered };
        assert!(received > 60 * 2_000_000 / 8 * 9 / 10, "{received} bytes");
    }
}

/// Four HTTP/1.0 web clients with Pareto objects and uniform think times, and an FTP.
fn web_mix(seed: u64) -> Vec<PageRecord> {
    let (mut sim, d) = dumbbell(4, link(10_000_000, ms(1), 1000), link(1_500_000, ms(50), 25), seed);
    for i in 0..4 {
        let e = ends(&mut sim, d.left[i], d.right[i], &TcpConfig::default(), 3);
        let object = DistConfig::Clamped {
            inner: Box::new(DistConfig::Pareto { shape: 1.2, scale: 1122.46 }),
            min: None,
            cap: Some(1e6),
        };
        let cfg = AppConfig::Web {
            ends: e,
            version: if i % 2 == 0 { HttpVersion::Http10 } else { HttpVersion::Http11 },
            request_bytes: 250,
            primary: object.clone(),
            embedded: object,
            embedded_count: constant(3.0),
            think: DistConfig::Uniform { lo: 1.0, hi: 5.0 },
            pages: None,
        };
        add(&mut sim, &cfg, at(ms(100 * i as u64)));
    }
    let e = ends(&mut sim, d.left[0], d.right[0], &TcpConfig::default(), 3);
    add(&mut sim, &ftp(e, 1_000_000, 250, None, None), SimTime::ZERO);
    run(&mut sim, at(ms(60_000)));
    sim.finish();
    sim.core.records.pages.clone()
}

#[test]
fn same_seed_gives_identical_page_records() {
    let a = web_mix(11);
    assert!(a.len() > 20, "{} pages", a.len());
    assert!(a.iter().filter(|p| p.end.is_none()).count() <= 4, "at most one open page per client");
    assert_eq!(a, web_mix(11));
    assert_ne!(a, web_mix(12));
}

fn err(cfg: AppConfig) -> String {
    match build_app(&cfg) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

#[test]
fn bad_configs_are_errors_naming_the_field_and_value() {
    let mut p = pair(link(RATE, ms(10), 1000), 1);
    let e = ends(&mut p.sim, p.client, p.server, &TcpConfig::default(), 3);
    assert_eq!(err(udp(0, 1, 0, false, None)), "udp.rate_bps = 0 is not allowed; expected > 0");
    let big = AppConfig::Udp { src: 0, dst: 1, rate_bps: 1, payload_bytes: 70_000, poisson: false, stop: None };
    assert!(err(big).starts_with("udp.payload_bytes = 70000"));
    let mut w = web(e.clone(), HttpVersion::Http11, 1.0, 1.0, 1.0, 1.0, None);
    if let AppConfig::Web { request_bytes, .. } = &mut w {
        *request_bytes = 0;
    }
    assert!(err(w).starts_with("web.request_bytes = 0"));
    let mut w = web(e.clone(), HttpVersion::Http10, 1.0, 1.0, 1.0, 1.0, None);
    if let AppConfig::Web { think, .. } = &mut w {
        *think = DistConfig::Uniform { lo: 5.0, hi: 1.0 };
    }
    let m = err(w);
    assert!(m.starts_with("web.think: uniform"), "{m}");
    let m = err(ftp(e.clone(), 1, 0, None, Some(DistConfig::Exponential { mean: -1.0 })));
    assert!(m.starts_with("ftp.gap: exponential.mean = -1"), "{m}");
    let m = err(AppConfig::ShortFlows {
        ends: e.clone(),
        request_bytes: 1,
        response_bytes: 1,
        arrivals: Arrivals::Periodic(SimDuration::ZERO),
        count: None,
        mix: None,
    });
    assert!(m.starts_with("short_flows.arrivals.period = 0"), "{m}");
    let m = err(AppConfig::ShortFlows {
        ends: e.clone(),
        request_bytes: 1,
        response_bytes: 1,
        arrivals: Arrivals::Poisson { rate_per_s: f64::NAN },
        count: None,
        mix: None,
    });
    assert!(m.starts_with("short_flows.arrivals.rate_per_s = NaN"), "{m}");
    let pf = |pairs: Vec<Ends>, rate_per_s| AppConfig::PoissonFlows {
        pairs,
        rate_per_s,
        size: constant(1.0),
        request_bytes: 1,
        count: None,
    };
    assert!(err(pf(vec![], 1.0)).starts_with("poisson_flows.pairs is empty"));
    assert!(err(pf(vec![e.clone()], -2.0)).starts_with("poisson_flows.rate_per_s = -2"));
    let mut bad = e.clone();
    bad.server_tcp = Arc::new(TcpConfig { mss: 0, ..TcpConfig::default() });
    let m = err(AppConfig::Bulk { ends: bad, upload: false });
    assert!(m.starts_with("bulk.ends.server_tcp: tcp.mss = 0"), "{m}");
}

#[test]
fn a_failed_handshake_moves_ftp_on_and_leaves_the_page_without_an_end() {
    // No SYN retransmission: losing a SYN fails the connection at the initial RTO (1 s).
    let once = TcpConfig { syn_retries: 0, ..TcpConfig::default() };

    let mut p = pair(link(RATE, ms(10), 1000), 1);
    drop_on(&mut p.sim, p.up, LossRule::Syn { flow: 0, nth: 1 });
    let e = ends(&mut p.sim, p.client, p.server, &once, 3);
    add(&mut p.sim, &ftp(e, 10 * MSS, 250, Some(2), None), SimTime::ZERO);
    run(&mut p.sim, at(ms(10_000)));
    let cs = &p.sim.core.conns;
    assert_eq!(cs.len(), 2);
    assert_eq!(cs[0].client().delivered, 0);
    assert_eq!(cs[1].opened_at, at(ms(1_000)), "the next transfer starts when the handshake gives up");
    assert_eq!(cs[1].client().delivered, 10 * MSS);

    // HTTP/1.0: connection 2 is the page's second embedded object.
    let mut p = pair(link(RATE, ms(10), 1000), 1);
    drop_on(&mut p.sim, p.up, LossRule::Syn { flow: 2, nth: 1 });
    let e = ends(&mut p.sim, p.client, p.server, &once, 3);
    add(&mut p.sim, &web(e, HttpVersion::Http10, 2000.0, 2000.0, 3.0, 0.5, Some(2)), SimTime::ZERO);
    run(&mut p.sim, at(ms(10_000)));
    let pages = &p.sim.core.records.pages;
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[0].end, None, "a page with a failed object has no end");
    let failed_at = p.sim.core.conns[2].opened_at + ms(1_000);
    assert_eq!(pages[1].start, failed_at + ms(500), "the client gives up, thinks and goes on");
    assert!(pages[1].end.is_some());
}

/// Counts the server's segments that carry a FIN, with and without data.
struct FinCount(Arc<std::sync::Mutex<(u32, u32)>>);
impl iwlab_core::sim::Observer for FinCount {
    fn on_packet(
        &mut self,
        _: SimTime,
        ev: iwlab_core::sim::PacketEvent,
        _: u32,
        pkt: &iwlab_core::net::packet::Packet,
    ) {
        if ev != iwlab_core::sim::PacketEvent::Deliver {
            return;
        }
        if let iwlab_core::net::packet::Payload::Tcp { seg, to_server: false } = &pkt.payload {
            if seg.is_fin() {
                let mut c = self.0.lock().unwrap();
                if seg.len > 0 {
                    c.0 += 1;
                } else {
                    c.1 += 1;
                }
            }
        }
    }
}

#[test]
fn a_server_that_answers_and_closes_sends_its_fin_on_the_last_data_segment() {
    let mut p = pair(link(10_000_000, ms(50), 1000), 1);
    let counts = Arc::new(std::sync::Mutex::new((0, 0)));
    p.sim.core.add_observer(Box::new(FinCount(counts.clone())));
    let cfg = TcpConfig { delayed_ack: None, ..TcpConfig::default() };
    let e = ends(&mut p.sim, p.client, p.server, &cfg, 10);
    // 2-segment responses: the whole response fits the IW, so write and close happen before
    // the first segment leaves.
    add(&mut p.sim, &ftp(e, 2 * 1460, 250, Some(3), None), SimTime::ZERO);
    run(&mut p.sim, at(ms(10_000)));
    assert_eq!(*counts.lock().unwrap(), (3, 0), "(FIN with data, FIN alone)");
}
