"""The IW bound on every route iwlab writes (netlink.check_iw, in netlink.replace): `apply`,
`watch`, `rollback`'s restore and `flow-iw marks install` refuse an initcwnd outside 1…100
segments with exit 2 and leave the routes as they were, unless `--force`; the watcher says
which evidence source is live and why (status field, metric); each namespace keeps its own
state file. Kernel tests run in a namespace hf-<pid> of their own (marker `deploy`, root)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from iwlab.deploy import evidence_bpf, netlink, state, watch
from iwlab.deploy.netlink import PROTO, IwBoundError, KRoute
from netns_common import VETH, run
from scenario_common import FIXED_10, policy_toml

IWLAB = Path(sys.executable).with_name("iwlab")
NS = f"hf-{os.getpid()}"
POLICY = policy_toml({"ten": FIXED_10}, [("10.77.2.0/24", "ten")])
TYPO = POLICY.replace("segments = 10 }", "segments = 1000 }")


# -- the writer itself, without a kernel ----------------------------------------------------------

class FakeIpr:
    """Records route replaces; reads back what was written."""

    def __init__(self):
        self.replaced: list[dict] = []

    def route(self, op, **kw):
        assert op == "replace"
        self.replaced.append(kw)


def _route(iw: int, proto: int = PROTO) -> KRoute:
    return KRoute(family=2, dst="10.77.2.0/24", proto=proto, gateway="10.77.1.2", oif=2,
                  metrics={"RTAX_INITCWND": iw})


@pytest.mark.parametrize("iw", [0, 101, 1000])
def test_the_route_writer_refuses_an_iw_out_of_bounds_before_it_writes(iw):
    ipr = FakeIpr()
    with pytest.raises(IwBoundError, match=rf"route 10.77.2.0/24: initcwnd = {iw} segments; allowed 1…100 "
                                           r"\(--force"):
        netlink.write(ipr, _route(iw))
    assert ipr.replaced == []
    with pytest.raises(IwBoundError):
        netlink.replace(ipr, dst="10.77.2.0/24", table=0x49570000 + iw, proto=PROTO, metrics={"initcwnd": iw})
    assert ipr.replaced == []


def test_force_and_the_bounds_themselves_pass_the_writer():
    for iw, force in ((1, False), (100, False), (1000, True)):
        netlink.check_iw("10.77.2.0/24", PROTO, {"RTAX_INITCWND": iw}, force)
    ipr = FakeIpr()
    netlink.replace(ipr, True, dst="10.77.2.0", dst_len=24, proto=PROTO, metrics={"RTAX_INITCWND": 1000})
    assert len(ipr.replaced) == 1


def test_an_original_route_is_restored_whatever_its_iw():
    """A route restored as iwlab found it keeps its own protocol: the administrator's IW, not iwlab's."""
    netlink.check_iw("10.77.2.0/24", 3, {"RTAX_INITCWND": 1000}, force=False)  # RTPROT_BOOT


# -- the evidence source, the state path ------------------------------------------------------------

def test_auto_without_bpf_is_described_as_degraded_and_poll_as_chosen():
    ev, fallback = evidence_bpf.start("auto", None)
    d = evidence_bpf.describe(ev, "auto", fallback)
    assert d["source"] == "poll" and d["degraded"] and d["why"].startswith("bpf unavailable: no --cgroup")
    d = evidence_bpf.describe(None, "poll", None)
    assert d["source"] == "poll" and not d["degraded"] and "--source poll" in d["why"]


def test_a_missing_cgroup_is_a_configuration_error():
    with pytest.raises(evidence_bpf.BpfUnavailable) as e:
        evidence_bpf.BpfEvidence("hf-no-such-cgroup-" + str(os.getpid()))
    assert e.value.usage and "does not exist" in str(e.value)


def test_the_evidence_source_metric_is_one_series_with_the_reason():
    from prometheus_client import generate_latest

    from iwlab.deploy.metrics import Metrics

    m = Metrics(("127.0.0.1", _free_port()), "h1")
    try:
        m.evidence_source({"source": "poll", "requested": "auto", "degraded": True, "why": "bpf unavailable: not root"})
        text = generate_latest(m.registry).decode()
    finally:
        m.close()
    lines = [line for line in text.splitlines() if line.startswith("iwlab_evidence_source{")]
    assert lines == ['iwlab_evidence_source{degraded="true",host="h1",requested="auto",source="poll",'
                     'why="bpf unavailable: not root"} 1.0'], lines


def test_status_reads_the_running_watchers_evidence_source_from_its_lock(tmp_path):
    path = tmp_path / "s.sqlite"
    assert watch.running_evidence(path, "x") is None
    fd = os.open(watch.watch_lock_path(path, "x"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.pwrite(fd, json.dumps({"source": "bpf", "degraded": False}).encode(), 0)
        assert watch.running_evidence(path, "x") == {"source": "bpf", "degraded": False}
        assert watch.watcher_running(path, "x")
    finally:
        os.close(fd)
    assert watch.running_evidence(path, "x") is None


def test_each_namespace_has_a_state_file_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(state, "STATE_DIR", tmp_path)
    monkeypatch.setattr(state, "DEFAULT_STATE", tmp_path / "deploy.sqlite")
    assert state.default_state(None) == tmp_path / "deploy.sqlite"
    assert state.default_state("web") == tmp_path / "netns" / "web" / "deploy.sqlite"
    # a namespace an older iwlab kept in the shared file stays there (its rollback needs it)
    shared = state.State(tmp_path / "deploy.sqlite")
    shared.begin_generation("old", "apply", [], None, None, None, None)
    shared.close()
    assert state.default_state("old") == tmp_path / "deploy.sqlite"
    assert state.default_state("web") == tmp_path / "netns" / "web" / "deploy.sqlite"


# -- on a kernel, in a namespace of our own -----------------------------------------------------------

def routes() -> str:
    return run("ip", "-n", NS, "-d", "route", "show", "table", "all").stdout


def rules() -> str:
    return run("ip", "-n", NS, "rule", "show").stdout


@pytest.fixture
def ns(namespace):
    return namespace(NS, *VETH)


@pytest.fixture
def files(tmp_path):
    good, typo = tmp_path / "policy.toml", tmp_path / "typo.toml"
    good.write_text(POLICY)
    typo.write_text(TYPO)
    return good, typo, tmp_path / "state.sqlite"


def iwlab(*args: str, check: bool = True, env: dict | None = None, timeout: float = 120):
    return run(str(IWLAB), *args, check=check, env=env, timeout=timeout)


def _refused(r: subprocess.CompletedProcess, *needles: str) -> None:
    """Exit 2 and one line naming the route and the bound: never a traceback."""
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, (r.returncode, r.stderr)
    for n in ("initcwnd = 1000", "allowed 1…100", "--force", *needles):
        assert n in lines[0], (n, lines[0])


@pytest.mark.deploy
def test_watch_refuses_an_iw_of_1000_with_exit_2_and_leaves_the_route(ns, files):
    _, typo, st = files
    before = routes()
    r = iwlab("watch", "--policy", str(typo), "--netns", NS, "--state", str(st), "--source", "poll",
              "--duration", "2", check=False)
    _refused(r, str(typo), "'10.77.2.0/24'")
    assert routes() == before
    r = iwlab("watch", "--policy", str(typo), "--netns", NS, "--state", str(st), "--source", "poll",
              "--duration", "0.5", "--force")
    assert "initcwnd 1000" in routes()
    iwlab("rollback", "--netns", NS, "--state", str(st))
    assert routes() == before


@pytest.mark.deploy
def test_apply_refuses_an_iw_of_1000_and_rollback_will_not_restore_one_unforced(ns, files):
    good, typo, st = files
    before = routes()
    where = ("--netns", NS, "--state", str(st))
    _refused(iwlab("apply", str(typo), *where, check=False), str(typo), "'10.77.2.0/24'")
    assert routes() == before
    iwlab("apply", str(typo), "--force", *where)  # generation 1: 1000, forced
    iwlab("apply", str(good), *where)  # generation 2: 10
    ten = routes()
    assert "initcwnd 10 " in ten + " "
    # rollback undoes generation 2: back to the 1000 an earlier --force wrote, which needs --force again
    _refused(iwlab("rollback", *where, check=False), "rollback", "'10.77.2.0/24'")
    assert routes() == ten
    iwlab("rollback", "--force", *where)
    assert "initcwnd 1000" in routes()
    iwlab("rollback", *where)  # generation 1 by itself: the route iwlab created goes
    assert routes() == before


@pytest.mark.deploy
def test_flow_iw_marks_refuses_an_iw_of_1000_before_writing_any_rule(ns, tmp_path):
    policy = tmp_path / "sized.toml"
    policy.write_text('[iw.policies]\nsized = { kind = "size-based", theta = "20kB", v = 1000, min_iw = 1000 }\n'
                      '[[routes]]\nprefix = "default"\npolicy = "sized"\n')
    before_routes, before_rules = routes(), rules()
    r = iwlab("flow-iw", "marks", "install", "--policy", str(policy), "--netns", NS, check=False)
    _refused(r, "0.0.0.0/0")
    assert (routes(), rules()) == (before_routes, before_rules)
    iwlab("flow-iw", "marks", "install", "--policy", str(policy), "--netns", NS, "--force")
    assert "initcwnd 1000" in routes()
    iwlab("flow-iw", "marks", "remove", "--netns", NS)
    assert (routes(), rules()) == (before_routes, before_rules)


@pytest.mark.deploy
def test_watch_source_bpf_with_a_missing_cgroup_exits_2(ns, files):
    good, _, st = files
    r = iwlab("watch", "--policy", str(good), "--netns", NS, "--state", str(st), "--source", "bpf",
              "--cgroup", f"hf-missing-{os.getpid()}", "--duration", "1", check=False)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "does not exist" in lines[0], (r.returncode, r.stderr)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.deploy
def test_a_degraded_evidence_source_shows_in_status_and_metrics(ns, files):
    good, _, st = files
    port = _free_port()
    p = subprocess.Popen([str(IWLAB), "watch", "--policy", str(good), "--netns", NS, "--state", str(st),
                          "--metrics", f"127.0.0.1:{port}", "--duration", "30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "watching namespace" in p.stdout.readline()
        out = json.loads(iwlab("watch", "status", "--netns", NS, "--state", str(st), "--json").stdout)
        ev = out["evidence_source"]
        assert ev["running"] and ev["source"] == "poll" and ev["requested"] == "auto" and ev["degraded"], ev
        assert "no --cgroup" in ev["why"]
        text = iwlab("watch", "status", "--netns", NS, "--state", str(st)).stdout
        assert "evidence: poll — DEGRADED (bpf unavailable: no --cgroup" in text, text
        for _ in range(50):
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
                break
            except OSError:
                time.sleep(0.1)
        assert 'iwlab_evidence_source{degraded="true"' in body and 'source="poll"' in body
    finally:
        p.terminate()
        p.communicate(timeout=20)
    out = json.loads(iwlab("watch", "status", "--netns", NS, "--state", str(st), "--json").stdout)
    assert not out["evidence_source"]["running"]
    iwlab("rollback", "--netns", NS, "--state", str(st))


@pytest.mark.deploy
def test_a_namespace_keeps_its_state_under_its_own_path(ns, files, tmp_path):
    good, _, _ = files
    env = {**os.environ, "IWLAB_STATE_DIR": str(tmp_path / "lib")}
    before = routes()
    iwlab("apply", str(good), "--netns", NS, env=env)
    assert (tmp_path / "lib" / "netns" / NS / "deploy.sqlite").is_file()
    assert not (tmp_path / "lib" / "deploy.sqlite").exists()
    iwlab("rollback", "--netns", NS, env=env)
    assert routes() == before


def test_after_a_rollback_a_new_apply_of_the_same_file_resumes_the_learned_fallback(tmp_path):
    """Rollback restores routes, not the watcher's learning: `apply` of the same policy text
    starts from the watcher's snapshot (docs/deploy.md); any other text starts afresh."""
    import time as _time

    from iwlab.deploy import apply, plan
    from iwlab.policy import Decider, parse_policy

    text = ('[iw.policies]\nfb = { kind = "rfc6928-fallback", expiry = "3600s" }\n'
            '[[routes]]\nprefix = "10.77.2.0/24"\npolicy = "fb"\n')
    pf = parse_policy(text, "fb.toml")
    now = _time.time_ns()
    learned = Decider(pf)
    before = learned.iw_segments("10.77.2.0/24", 1448, now)
    learned.learn("10.77.2.0/24", now, {"kind": "loss_in_initial_window", "bytes_sent": 14480})
    fallen = learned.iw_segments("10.77.2.0/24", 1448, now)
    assert fallen < before
    st = state.State(tmp_path / "s.sqlite")
    st.add_counts(None, {}, learned.snapshot(), "fb.toml", plan.sha(pf.text))  # what a watcher stores
    # (a rollback changes generations and routes only; the snapshot stays)
    resumed = apply.iw_function(st, None, pf)("10.77.2.0/24", 1448)
    assert resumed == fallen
    changed = parse_policy(text + "\n# edited\n", "fb.toml")
    assert apply.iw_function(st, None, changed)("10.77.2.0/24", 1448) == before
