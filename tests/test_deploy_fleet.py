"""Evidence shared between hosts (python/iwlab/deploy/evidence.py), simulated first: the
watcher's decision path (`watch.Decisions`, the simulator's `IwPolicy` code through
`Decider`) on two hosts, one of which sees loss in initial windows and one that does not;
the second imports the first's export and falls back too. Also the record format's errors,
the state file's provenance, and the status schema. No root needed.
"""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from iwlab.deploy import evidence, watch
from iwlab.deploy.state import SCHEMA_VERSION, State
from iwlab.policy import Decider, parse_policy

POLICY = """[iw.policies]
fb = { kind = "rfc6928-fallback", expiry = "600s" }

[[routes]]
prefix = "10.78.2.0/24"
policy = "fb"

[[routes]]
prefix = "default"
policy = "fb"
"""
MSS = 1448


def _edge(tmp_path, name: str):
    pf = parse_policy(POLICY)
    d = watch.Decisions(pf, Decider(pf))
    d.iw["10.78.2.0/24"] = d.iw["default"] = 10
    return pf, d, State(tmp_path / f"{name}.sqlite")


def test_two_simulated_edges_share_evidence_and_both_fall_back(tmp_path):
    import iwlab
    from iwlab.policy import map_prefixes, sim_replay_records, with_policy

    pf, a, st_a = _edge(tmp_path, "a")
    _, b, st_b = _edge(tmp_path, "b")
    # edge A's connections: a simulated server's, the policy's prefix standing for the clients
    sc = iwlab.load("rfc6928", sets=["duration=20s", "warmup=0s", "topology.left[0].count=8", "apps[0].count=8",
                                     'topology.left[0].access.queue.limit="6pkt"'])
    mapped = map_prefixes(sc, pf, ["10.78.2.0/24=clients"])
    run = iwlab.run(with_policy(sc, mapped), iw_events=True)
    per_host = sim_replay_records(mapped, run.iw_events)
    # one simulated server whose connections lost in an initial window is edge A
    records = next(r for _, r in sorted(per_host.items())
                   if any(x["kind"] == "loss_in_initial_window" for x in r))
    changes, losses, moved_at = [], 0, None
    for rec in records:
        if rec["kind"] == "iw":
            continue
        ev = {k: v for k, v in rec.items() if k not in ("time_ns", "dst")}
        _, change = a.feed("10.78.2.0/24", rec["time_ns"], ev)
        if ev["kind"] == "loss_in_initial_window":  # what the watcher stores as evidence
            st_a.add_evidence(None, [(time.time(), "10.78.2.0/24", "loss_in_initial_window", "198.18.0.2",
                                      ev["bytes_sent"], 2, a.iw["10.78.2.0/24"], 20_000, "at close")])
            losses += 1
        if change is not None:
            moved_at = losses - 1 if moved_at is None else moved_at
            a.iw["10.78.2.0/24"] = change[1]
            changes.append(change)
    assert changes[0] == (10, 3), "edge A's own loss makes it fall back"
    # edge B saw nothing: IW 10 until it imports A's export
    assert b.decider.iw_segments("10.78.2.0/24", MSS, time.time_ns()) == 10
    lines = [json.dumps(r) for r in evidence.export(st_a, None, "edge-a")]
    assert lines and all(json.loads(x)["host"] == "edge-a" for x in lines)
    assert st_b.import_evidence(None, evidence.parse(lines, "a.jsonl")) == len(lines)
    assert st_b.import_evidence(None, evidence.parse(lines, "a.jsonl")) == 0, "importing twice adds nothing"
    fed = list(b.feed_imported(st_b.pending_imports(None)))
    # a loss after no more than 4 KB sent is no evidence (RFC 6928 §4): B moves on the same record
    # that moved A
    moves = [(i, change) for i, (_, change) in enumerate(fed) if change is not None]
    assert moves[0] == (moved_at, (10, 3)), "the record that moved edge A moves edge B to IW 3"
    assert b.decider.iw_segments("10.78.2.0/24", MSS, time.time_ns()) == 3
    assert b.decider.iw_segments("default", MSS, time.time_ns()) == 10, "other prefixes keep their IW"
    # what B imported is not exported again (no echo between edges that import each other)
    assert evidence.export(st_b, None, "edge-b") == []


def test_imported_evidence_for_a_prefix_not_routed_here_is_left_out(tmp_path):
    pf, b, st = _edge(tmp_path, "b")
    recs = evidence.parse([json.dumps({"format": evidence.FORMAT, "host": "edge-a", "ts": 1.5e9,
                                       "prefix": "192.0.2.0/24", "kind": "loss_in_initial_window",
                                       "bytes_sent": 14000})])
    mine, other = evidence.routed(recs, pf)
    assert mine == [] and [r["prefix"] for r in other] == ["192.0.2.0/24"]
    assert list(b.feed_imported(recs)) == []


GOOD = {"format": evidence.FORMAT, "host": "edge-a", "ts": 1.7e9, "prefix": "10.78.2.0/24",
        "kind": "loss_in_initial_window", "bytes_sent": 14000}


@pytest.mark.parametrize("change, says", [
    ({"format": "iwlab-evidence/9"}, 'format = "iwlab-evidence/9" is not allowed; expected "iwlab-evidence/1"'),
    ({"host": ""}, 'host = "" is not allowed; expected a host name'),
    ({"ts": float("nan")}, "ts = NaN is not allowed; expected seconds since the epoch > 0"),
    ({"ts": True}, "ts = true is not allowed"),
    ({"kind": "closed"}, "kind = \"closed\" is not allowed; expected one of ['loss_in_initial_window', "
                         "'loss_in_restart_window']"),
    ({"bytes_sent": 0}, "bytes_sent = 0 is not allowed; expected an integer > 0"),
    ({"bytes_sent": 1 << 62}, "bytes_sent = 4611686018427387904 is not allowed"),
    ({"retrans": -1}, "retrans = -1 is not allowed; expected an integer >= 0"),
    ({"prefix": None}, "prefix = null is not allowed"),
])
def test_bad_records_name_the_line_field_value_and_what_is_allowed(change, says):
    lines = ["", json.dumps(GOOD), json.dumps({**GOOD, **change})]
    with pytest.raises(evidence.EvidenceError) as e:
        evidence.parse(lines, "f.jsonl")
    assert str(e.value).startswith("f.jsonl:3: ") and says in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("line, says", [("{", "f.jsonl:1: not JSON"), ("[1]", "f.jsonl:1: a JSON list"),
                                        ('{"host": "x"}', "f.jsonl:1: format is missing")])
def test_lines_that_are_not_records_are_one_line_errors(line, says):
    with pytest.raises(evidence.EvidenceError, match=says):
        evidence.parse([line], "f.jsonl")


def test_a_version_1_state_file_gets_the_provenance_columns(tmp_path):
    path = tmp_path / "old.sqlite"
    State(path).close()
    db = sqlite3.connect(path)  # as iwlab of schema version 1 left it
    db.executescript("ALTER TABLE evidence DROP COLUMN host; ALTER TABLE evidence DROP COLUMN consumed; "
                     "PRAGMA user_version = 1;")
    db.close()
    st = State(path)
    assert st.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    st.add_evidence(None, [(1.0, "default", "loss_in_initial_window", "10.0.0.1", 1000, 1, 10, 1, "at close")])
    assert [r["host"] for r in st.local_evidence(None)] == [None]


def test_status_has_a_schema_a_host_per_prefix_evidence_and_the_last_decision(tmp_path):
    st = State(tmp_path / "s.sqlite")
    st.add_evidence(None, [(1.0, "10.78.2.0/24", "loss_in_initial_window", "10.78.2.1", 14000, 2, 10, 1, "at close")])
    st.import_evidence(None, [{**GOOD, "ts": 2.0}])
    st.add_decision(None, "10.78.2.0/24", 10, 3, "loss_in_initial_window (at close)", None)
    st.add_decision(None, "10.78.2.0/24", 3, 10, "re-evaluated (time passed)", None)
    out = watch.status(st, None, host="edge-b")
    assert (out["schema"], out["host"]) == ("iwlab-watch-status/1", "edge-b")
    [p] = out["prefixes"]
    assert p["evidence"] == {"local": 1, "imported": 1}
    assert (p["last_decision"]["old_iw"], p["last_decision"]["new_iw"]) == (3, 10)
    assert p["last_decision"]["reason"] == "re-evaluated (time passed)"
    assert watch.status(st, None)["host"] == evidence.host_label(None) != ""
    text = watch.status_text(out)
    assert text.startswith("edge-b, the root namespace:") and "0 IW-loss events (+1 imported)" in text, text
