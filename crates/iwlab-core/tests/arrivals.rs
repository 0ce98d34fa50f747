//! The arrival model of flow apps (`traffic::arrivals`) through scenario files: a closed loop
//! runs one flow at a time and thinks exactly the think time; a mix in permuted blocks holds
//! every (size, IW) combination once per block; replayed flows start at their file's instants
//! to the nanosecond with their file's sizes and IWs; a Poisson load becomes the documented
//! rate; records name the app and the server's IW; and a seed fixes every record.

use iwlab_core::engine::{SimDuration, SimTime};
use iwlab_core::metrics::flow::{flow_records, FlowRecord};
use iwlab_core::metrics::Results;
use iwlab_core::scenario::Scenario;
use iwlab_core::traffic::{AppConfig, Arrivals, MixOrder};
use std::path::PathBuf;

/// A dumbbell of `pairs` client/server pairs (10 Mb/s, 20 ms bottleneck) and `apps` (TOML).
fn scenario(duration: &str, pairs: u32, apps: &str) -> String {
    format!(
        r#"
name = "arrivals"
duration = "{duration}"
seed = 7
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ kind = "drop-tail", limit = "100pkt" }} }}
left = [{{ name = "clients", count = {pairs}, access = {{ rate = "100Mbps", delay = "1ms" }} }}]
right = [{{ name = "servers", count = {pairs}, access = {{ rate = "100Mbps", delay = "1ms" }} }}]
[tcp]
profile = "linux"
[iw]
default = "iw10"
policies.iw3 = {{ kind = "fixed", segments = 3 }}
policies.iw10 = {{ kind = "fixed", segments = 10 }}
{apps}
"#
    )
}

/// The testbed client: one flow at a time, U[0.5, 1] s after each, four (size, IW)
/// combinations in permuted blocks.
const TESTBED: &str = r#"
[[apps]]
kind = "short-flows"
name = "client"
clients = "clients"
servers = "servers"
count = 1
mix = [ { response = "9seg", server_iw = "iw3" }, { response = "9seg", server_iw = "iw10" },
        { response = "21seg", server_iw = "iw3" }, { response = "21seg", server_iw = "iw10" } ]
mix_order = "permuted-blocks"
arrivals = { kind = "closed-loop", think = { kind = "uniform", lo = 0.5, hi = 1.0 } }
"#;

fn run(text: &str, seed: Option<u64>) -> (Vec<FlowRecord>, String) {
    let s = Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"));
    let b = s.build(seed).unwrap();
    let (end, warmup) = (b.end, b.warmup);
    let sim = b.run();
    sim.check_accounting().unwrap();
    let csv = Results::collect(&sim, end, warmup).flows.to_csv();
    (flow_records(&sim.core, warmup), csv)
}

fn error(text: &str) -> String {
    Scenario::from_toml_str(text).unwrap_err().to_string()
}

fn ns(secs: f64) -> i128 {
    (secs * 1e9).round() as i128
}

#[test]
fn a_closed_loop_runs_one_flow_at_a_time_and_thinks_exactly_the_think_time() {
    let apps =
        TESTBED.replace("{ kind = \"uniform\", lo = 0.5, hi = 1.0 }", "\"750ms\"").replace("count = 1", "count = 2");
    let (flows, _) = run(&scenario("30s", 2, &apps), None);
    for app in [0, 1] {
        let mine: Vec<&FlowRecord> = flows.iter().filter(|f| f.app == app).collect();
        assert!(mine.len() > 20, "{} flows", mine.len());
        for w in mine.windows(2) {
            let last = w[0].last_byte.expect("completed before the next started");
            // The next starts 750 ms after the previous one's last byte, to the nanosecond
            // (records hold seconds as f64: compare in whole nanoseconds).
            assert_eq!(ns(w[1].start) - ns(last), 750_000_000, "{:?} -> {:?}", w[0], w[1]);
        }
    }
}

#[test]
fn a_closed_loop_with_drawn_think_times_never_overlaps_its_flows() {
    let (flows, _) = run(&scenario("60s", 1, TESTBED), None);
    let mut thinks = Vec::new();
    for w in flows.windows(2) {
        let gap = w[1].start - w[0].last_byte.unwrap();
        assert!((0.5 - 1e-9..=1.0 + 1e-9).contains(&gap), "think {gap}");
        thinks.push(gap);
    }
    let mean = thinks.iter().sum::<f64>() / thinks.len() as f64;
    assert!((mean - 0.75).abs() < 0.05, "mean think {mean} over {}", thinks.len());
}

#[test]
fn permuted_blocks_give_every_combination_once_per_block_and_differ_by_seed() {
    let text = scenario("120s", 1, TESTBED);
    let combos = |flows: &[FlowRecord]| -> Vec<(u64, String)> {
        flows.iter().map(|f| (f.response_bytes, f.server_iw.clone().unwrap())).collect()
    };
    let (flows, _) = run(&text, None);
    let seq = combos(&flows);
    let all = {
        let mut v = seq[..4].to_vec();
        v.sort();
        v
    };
    assert_eq!(
        all,
        vec![
            (9 * 1448, "iw10".into()),
            (9 * 1448, "iw3".into()),
            (21 * 1448, "iw10".into()),
            (21 * 1448, "iw3".into())
        ]
    );
    let blocks = seq.len() / 4;
    assert!(blocks >= 20, "{blocks} blocks");
    for b in seq.chunks_exact(4) {
        let mut b = b.to_vec();
        b.sort();
        assert_eq!(b, all, "every combination once per block");
    }
    // Equally often over the run (the last block may be partial).
    for c in &all {
        let n = seq.iter().filter(|x| *x == c).count();
        assert!(n == blocks || n == blocks + 1, "{c:?}: {n}");
    }
    // The IW each flow's server used is the one its combination names.
    for f in &flows {
        let want = if f.server_iw.as_deref() == Some("iw3") { 3.0 } else { 10.0 };
        assert_eq!(f.iw_segments, want);
        assert_eq!(f.app_name.as_deref(), Some("client"));
    }
    assert!(seq.chunks_exact(4).any(|b| b != &seq[..4]), "blocks in different orders");
    let (other, _) = run(&text, Some(8));
    assert_ne!(combos(&other)[..16], seq[..16], "another seed, another order");
}

#[test]
fn cyclic_and_random_orders() {
    let cyclic = TESTBED.replace("permuted-blocks", "cyclic");
    let (flows, _) = run(&scenario("20s", 1, &cyclic), None);
    let sizes: Vec<u64> = flows.iter().map(|f| f.response_bytes / 1448).collect();
    for (k, s) in sizes.iter().enumerate() {
        assert_eq!(*s, [9, 9, 21, 21][k % 4]);
    }
    let random = TESTBED.replace("permuted-blocks", "random");
    let b = Scenario::from_toml_str(&scenario("20s", 1, &random)).unwrap().build(None).unwrap();
    match &b.apps[0].configs[0] {
        AppConfig::ShortFlows { mix: Some(m), .. } => assert_eq!(m.order, MixOrder::Random),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_same_seed_gives_byte_identical_records_and_another_seed_others() {
    let text = scenario("20s", 1, TESTBED);
    let (_, a) = run(&text, None);
    let (_, b) = run(&text, None);
    let (_, c) = run(&text, Some(99));
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert!(a.lines().next().unwrap().ends_with(",app_name,server_iw"), "named columns last");
}

#[test]
fn replayed_flows_start_at_the_files_instants_with_its_sizes_and_iws() {
    let dir = std::env::temp_dir().join(format!("iwlab-arrivals-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = "start,response,server_iw,request\n\
               # out of order on purpose\n\
               2.000000001,20000,iw3,\n\
               0.25,1448,,300\n\
               1.123456789,13032,iw10,100\n\
               1.123456789,5000,iw3,100\n";
    std::fs::write(dir.join("flows.csv"), csv).unwrap();
    let apps = r#"
[[apps]]
kind = "short-flows"
clients = "clients"
servers = "servers"
server_iw = "iw10"
request = "50B"
arrivals = { kind = "replay", file = "flows.csv" }
"#;
    let path = dir.join("replay.toml");
    std::fs::write(&path, scenario("5s", 1, apps)).unwrap();
    let s = Scenario::from_path(&path).unwrap_or_else(|e| panic!("{e}"));
    let b = s.build(None).unwrap();
    let sim = b.run();
    let flows: Vec<FlowRecord> = flow_records(&sim.core, SimTime::ZERO);
    let opened: Vec<SimTime> = sim.core.conns.iter().map(|c| c.opened_at).collect();
    let at = |s: u64, n: u64| SimTime::ZERO + SimDuration::from_secs(s) + SimDuration::from_nanos(n);
    assert_eq!(opened, vec![at(0, 250_000_000), at(1, 123_456_789), at(1, 123_456_789), at(2, 1)]);
    let got: Vec<(u64, u64, &str)> =
        flows.iter().map(|f| (f.request_bytes, f.response_bytes, f.server_iw.as_deref().unwrap())).collect();
    assert_eq!(got, vec![(300, 1448, "iw10"), (100, 13032, "iw10"), (100, 5000, "iw3"), (50, 20000, "iw3")]);
    assert!(flows.iter().all(|f| f.completed));

    // Bad rows name the file, the line and the column.
    std::fs::write(dir.join("flows.csv"), "start,response\n1.0,abc\n").unwrap();
    let e = Scenario::from_path(&path).unwrap_err().to_string();
    assert!(e.contains("apps[0].arrivals.file") && e.contains("line 2: response: invalid digit"), "{e}");
    std::fs::write(dir.join("flows.csv"), "start,response,server_iw\n1.0,10,iw7\n").unwrap();
    let e = Scenario::from_path(&path).unwrap_err().to_string();
    assert!(e.contains("server_iw = \"iw7\" is not allowed; expected a policy, one of [\"iw10\", \"iw3\"]"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_poisson_load_is_a_share_of_the_bottleneck_over_the_mean_response_of_the_mix() {
    let apps = TESTBED.replace(
        "{ kind = \"closed-loop\", think = { kind = \"uniform\", lo = 0.5, hi = 1.0 } }",
        "{ kind = \"poisson\", load = \"4%\" }",
    );
    let b = Scenario::from_toml_str(&scenario("10s", 1, &apps)).unwrap().build(None).unwrap();
    // 4 % of 10 Mb/s over 8 × (9 + 9 + 21 + 21) / 4 segments of 1448 B.
    let want = 0.04 * 10e6 / (8.0 * 15.0 * 1448.0);
    match &b.apps[0].configs[0] {
        AppConfig::ShortFlows { arrivals: Arrivals::Poisson { rate_per_s }, .. } => {
            assert!((rate_per_s - want).abs() < 1e-12, "{rate_per_s} vs {want}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bursts_start_their_flows_together() {
    let apps = TESTBED
        .replace(
            "{ kind = \"closed-loop\", think = { kind = \"uniform\", lo = 0.5, hi = 1.0 } }",
            "{ kind = \"bursts\", flows = 4, gap = \"2s\" }",
        )
        .replace("permuted-blocks", "cyclic");
    let (flows, _) = run(&scenario("7s", 1, &apps), None);
    let starts: Vec<f64> = flows.iter().map(|f| f.start).collect();
    assert_eq!(starts, [0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 4.0, 4.0, 4.0, 4.0, 6.0, 6.0, 6.0, 6.0]);
}

#[test]
fn bad_arrivals_and_mixes_name_the_field_the_value_and_what_is_allowed() {
    let cases = [
        (
            "arrivals = { kind = \"closed-loop\", think",
            "arrivals = { kind = \"closed-loop\", thinks",
            "apps[0].arrivals.thinks",
            "unknown field `thinks`",
        ),
        ("kind = \"closed-loop\"", "kind = \"closed\"", "apps[0].arrivals.kind", "unknown variant `closed`"),
        (
            "server_iw = \"iw3\" }, { response = \"9seg\"",
            "server_iw = \"iw9\" }, { response = \"9seg\"",
            "apps[0].mix[0].server_iw",
            "\"iw9\" is not allowed; expected a policy, one of [\"iw10\", \"iw3\"]",
        ),
        (
            "mix_order = \"permuted-blocks\"",
            "mix_order = \"shuffled\"",
            "apps[0].mix_order",
            "unknown variant `shuffled`",
        ),
        ("mix_order = \"permuted-blocks\"", "response = \"9seg\"", "apps[0].mix", "give exactly one of `response`"),
        ("lo = 0.5, hi = 1.0", "lo = 1.5, hi = 1.0", "apps[0].arrivals.think.hi", "expected >= uniform.lo"),
    ];
    for (from, to, path, msg) in cases {
        let text = scenario("5s", 1, &TESTBED.replace(from, to));
        let e = Scenario::from_toml_str(&text).unwrap_err();
        assert_eq!(e.path(), path, "{e}");
        assert!(e.to_string().contains(msg), "{e}");
        assert!(e.line().is_some(), "located in the file: {e}");
    }
    let poisson = |fields: &str| {
        error(&scenario(
            "5s",
            1,
            &TESTBED.replace(
                "{ kind = \"closed-loop\", think = { kind = \"uniform\", lo = 0.5, hi = 1.0 } }",
                &format!("{{ kind = \"poisson\"{fields} }}"),
            ),
        ))
    };
    assert!(poisson(", rate = 1, load = \"4%\"").contains("give exactly one of `rate`"));
    assert!(poisson("").contains("give exactly one of `rate`"));
    assert!(poisson(", load = 0.04").contains("not a percentage"));
    assert!(poisson(", load = \"140%\"").contains("load = 140% is not allowed; expected a share 0% < load <= 100%"));
    let bursts = error(&scenario(
        "5s",
        1,
        &TESTBED.replace(
            "{ kind = \"closed-loop\", think = { kind = \"uniform\", lo = 0.5, hi = 1.0 } }",
            "{ kind = \"bursts\", flows = 0, gap = \"1s\" }",
        ),
    ));
    assert!(bursts.contains("apps[0].arrivals.flows = 0 is not allowed; expected >= 1 flow per burst"), "{bursts}");
    let order_alone = error(&scenario("5s", 1, &TESTBED.replace("mix = [", "response = \"1seg\"\nxmix = [")));
    assert!(order_alone.contains("unknown field `xmix`"), "{order_alone}");
    let replay_start = error(&scenario("5s", 1, "[[apps]]\nkind = \"short-flows\"\nclients = \"clients\"\nservers = \"servers\"\nstart = \"1s\"\narrivals = { kind = \"replay\", file = \"x.csv\" }\n"));
    assert!(
        replay_start.contains("apps[0].start") && replay_start.contains("must be 0 with replayed arrivals"),
        "{replay_start}"
    );
}

#[test]
fn existing_open_loop_apps_keep_their_one_combination_and_no_mix() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/congested-links.toml");
    let b = Scenario::from_path(path).unwrap().build(None).unwrap();
    match &b.apps[0].configs[0] {
        AppConfig::ShortFlows { mix, arrivals, .. } => {
            assert!(mix.is_none());
            assert_eq!(arrivals, &Arrivals::Periodic(SimDuration::from_millis(2000)));
        }
        other => panic!("{other:?}"),
    }
}
