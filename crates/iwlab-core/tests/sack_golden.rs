//! Golden answers of SACK scenarios, pinned before the incremental scoreboard replaced the
//! per-ACK walks of `tcp/recovery/sack.rs`: the data structure may change,
//! the answers may not. Each case runs a bench scenario file (shortened, some options set)
//! and digests its flow rows, link rows and summary counters; `tests/golden/sack-digests.txt`
//! holds the digests of the code before the change.
//!
//! Regenerate only on purpose (an engine change whose new answers are explained) with
//! `IWLAB_BLESS=1 cargo test -p iwlab-core --test sack_golden`.

use iwlab_core::metrics::{Results, Table};
use iwlab_core::scenario::Scenario;
use std::fmt::Write;

/// Flow and link columns that the digests cover (named, so that columns added later by
/// other features do not change the digest).
const FLOW_COLUMNS: &[&str] = &[
    "flow",
    "sender",
    "delivered_bytes",
    "iw_bytes",
    "start",
    "syn_ack",
    "first_byte",
    "last_byte",
    "completion",
    "data_segments",
    "retransmits",
    "timeouts",
    "fast_retransmits",
    "syn_retransmits",
    "max_cwnd",
    "completed",
];
const LINK_COLUMNS: &[&str] = &["port", "packets", "bytes", "payload_bytes", "queue_drops", "loss_drops", "busy"];

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

fn sub_csv(t: &Table, names: &[&str]) -> String {
    let mut sub = Table::default();
    for &n in names {
        let (name, col) = t.columns.iter().find(|(c, _)| *c == n).unwrap_or_else(|| panic!("no column {n}"));
        sub.push(name, col.clone());
    }
    sub.to_csv()
}

/// Runs `file` of bench/scenarios with its duration replaced and `edits` (TOML lines
/// `old => new`) applied; returns one digest line.
fn digest(case: &str, file: &str, duration: &str, edits: &[(&str, &str)]) -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/scenarios/");
    let mut text = std::fs::read_to_string(format!("{dir}{file}")).expect("bench scenario file");
    let old = text.lines().find(|l| l.starts_with("duration = ")).expect("duration line").to_string();
    text = text.replace(&old, &format!("duration = \"{duration}\""));
    for (from, to) in edits {
        assert!(text.contains(from), "{case}: {from:?} not in {file}");
        text = text.replacen(from, to, 1);
    }
    let scenario = Scenario::from_toml_str(&text).unwrap_or_else(|e| panic!("{case}: {e}"));
    let built = scenario.build(None).expect("builds");
    let (end, warmup) = (built.end, built.warmup);
    let sim = built.run();
    sim.check_accounting().expect("accounting");
    let r = Results::collect(&sim, end, warmup);
    let s = &r.summary;
    let mut line = String::new();
    write!(
        line,
        "{case} events={} created={} delivered={} dropped={} in_flight={} flows={} completed={} flows_fnv={:016x} links_fnv={:016x}",
        s.events,
        s.packets_created,
        s.packets_delivered,
        s.packets_dropped,
        s.packets_in_flight,
        s.flows,
        s.flows_completed,
        fnv1a(&sub_csv(&r.flows, FLOW_COLUMNS)),
        fnv1a(&sub_csv(&r.links, LINK_COLUMNS)),
    )
    .unwrap();
    line
}

fn check(name: &str, lines: &[String]) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    let got = lines.join("\n") + "\n";
    if std::env::var("IWLAB_BLESS").is_ok() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("missing golden file {path:?}; bless it"));
    for (g, w) in got.lines().zip(want.lines()) {
        assert_eq!(g, w, "answers differ from {name}");
    }
    assert_eq!(got.lines().count(), want.lines().count(), "cases differ from {name}");
}

const CUBIC: (&str, &str) = ("cc = \"cubic\"", "cc = \"cubic\"");
const RENO: (&str, &str) = ("cc = \"cubic\"", "cc = \"reno\"");

#[test]
fn sack_scenarios_keep_their_answers() {
    let lines = vec![
        // CUBIC + SACK at 1 Gb/s: windows of hundreds of segments, drop-tail losses.
        digest("websearch-1g-cubic-sack-6s", "websearch-1g.toml", "6s", &[CUBIC]),
        digest("websearch-1g-reno-sack-2s", "websearch-1g.toml", "2s", &[RENO]),
        // A short queue, timestamps and Limited Transmit: more losses, RTOs with SACKed
        // segments skipped by go-back-N.
        digest(
            "websearch-1g-cubic-sack-q60-ts-lt-2s",
            "websearch-1g.toml",
            "2s",
            &[
                ("limit = \"1000pkt\" }\n\n[[topology.left]]", "limit = \"60pkt\" }\n\n[[topology.left]]"),
                ("sack = true\n", "sack = true\ntimestamps = true\nlimited_transmit = true\n"),
            ],
        ),
        // The NewReno, no-SACK variant (untouched by the scoreboard; pinned as a control).
        digest(
            "websearch-1g-newreno-nosack-2s",
            "websearch-1g.toml",
            "2s",
            &[RENO, ("sack = true", "sack = false"), ("recovery = \"sack\"", "recovery = \"newreno\"")],
        ),
        // Bench A (100 bulk Reno + SACK flows) and B (short flows), as `iwlab run` builds them.
        digest("bulk-reno-sack-5s", "bulk.toml", "5s", &[]),
        // Random loss both ways (data and ACKs) on top of the queue: several holes per window.
        digest(
            "websearch-1g-cubic-sack-loss1pc-3s",
            "websearch-1g.toml",
            "3s",
            &[(
                "limit = \"1000pkt\" }\n\n[[topology.left]]",
                "limit = \"1000pkt\" }\nloss = { kind = \"random\", p = 0.01 }\n\n[[topology.left]]",
            )],
        ),
        digest(
            "short-flows-reno-sack-q20-loss2pc-30s",
            "short-flows.toml",
            "30s",
            &[("limit = \"100pkt\" }", "limit = \"20pkt\" }\nloss = { kind = \"random\", p = 0.02 }")],
        ),
    ];
    check("sack-digests.txt", &lines);
}
