"""`iwlab run SCENARIO --policy FILE --map PREFIX=HOSTS`: a real policy file simulated as written,
its real prefix standing for a group of simulated hosts (python/iwlab/policy/simulate.py)."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from iwlab.cli import build

# as deployed on an edge: a real customer prefix, RFC 6928 fallback
REAL = """[iw.policies]
fb = { kind = "rfc6928-fallback", expiry = "600s" }

[[routes]]
prefix = "203.0.113.0/24"
policy = "fb"
"""
# eight clients (198.18.0.2 … 198.18.0.30) behind six-packet access queues: IW 10 loses
SMALL = ["--set", "duration=20s", "--set", "warmup=0s", "--set", "topology.left[0].count=8",
         "--set", "apps[0].count=8", "--set", 'topology.left[0].access.queue.limit="6pkt"']


@pytest.fixture
def policy(tmp_path):
    p = tmp_path / "edge.toml"
    p.write_text(REAL)
    return p


def test_a_mapped_real_prefix_is_simulated_and_iw_events_name_the_policy_that_decided(policy, tmp_path):
    out = tmp_path / "o"
    r = CliRunner().invoke(build(), ["run", "rfc6928", *SMALL, "--policy", str(policy),
                                     "--map", "203.0.113.0/24=clients", "--out", str(out)])
    assert r.exit_code == 0, r.output
    ev = pd.read_parquet(out / "iw_events.parquet")
    clients = {f"198.18.0.{4 * g + 2}" for g in range(8)}
    to_clients = ev[ev["dst_addr"].isin(clients) & (ev["kind"] == "iw")]
    assert len(to_clients) > 0
    # the servers (198.18.0.34 …) are not in the mapped prefix: the scenario's own policy
    assert set(ev[~ev["dst_addr"].isin(clients)]["policy"]) == {"iw10"}
    # the mapped route's policy decided every IW towards the clients, not the scenario's iw10 …
    assert set(to_clients["policy"]) == {"fb"}
    # … and it acted: IW 10 first, RFC 3390's 4380 bytes after the first loss in an initial window
    assert to_clients["iw_bytes"].iloc[0] == 14480
    assert 4380 in set(to_clients["iw_bytes"])
    assert (ev["kind"] == "loss_in_initial_window").any()


def test_without_the_map_the_real_prefix_is_refused_and_the_error_names_the_map(policy):
    r = CliRunner().invoke(build(), ["run", "rfc6928", *SMALL, "--policy", str(policy)])
    assert r.exit_code == 2 and "covers no simulated host" in r.stderr and "--map" in r.stderr


@pytest.mark.parametrize("maps, says", [
    (["clients"], "expected PREFIX=HOSTS"),
    (["10.0.0.0/8=clients"], "PREFIX = '10.0.0.0/8' is not a route of"),
    (["nonsense=clients"], "PREFIX = 'nonsense' is not a prefix; expected one of the file's routes: 203.0.113.0/24"),
    (["203.0.113.0/24=servants"], "HOSTS = 'servants' is neither a group of the scenario nor a CIDR"),
    (["203.0.113.0/24=10.0.0.0/8"], "HOSTS = '10.0.0.0/8' covers no simulated host"),
    (["203.0.113.0/24=clients", "203.0.113.0/24=clients"], "is mapped twice"),
])
def test_bad_maps_are_one_line_naming_the_map(policy, maps, says):
    args = [a for m in maps for a in ("--map", m)]
    r = CliRunner().invoke(build(), ["run", "rfc6928", *SMALL, "--policy", str(policy), *args])
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and says in lines[0], r.stderr
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_a_group_whose_prefix_would_cover_other_hosts_gets_a_cidr_suggested(policy):
    # forty clients fill 198.18.0.0–159: the smallest covering prefix, /24, holds the servers too
    r = CliRunner().invoke(build(), ["run", "rfc6928", "--policy", str(policy), "--map", "203.0.113.0/24=clients"])
    assert r.exit_code == 2 and "also covers servers host 198.18.0.162" in r.stderr, r.stderr
    assert "e.g. 203.0.113.0/24=198.18.0.0/25 (32 hosts)" in r.stderr


def test_a_map_without_a_policy_file_is_an_error():
    r = CliRunner().invoke(build(), ["run", "rfc6928", "--map", "203.0.113.0/24=clients"])
    assert r.exit_code == 2 and "expected --policy FILE with it" in r.stderr
