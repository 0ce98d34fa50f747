"""`iwlab plan | apply | rollback` on a real kernel (marker `deploy`: root, a network namespace
of our own). The namespace iwd<pid>r holds a veth pair (both ends inside, IPv6 off so that no
link-local route appears while a test runs) and a small main table; every test compares the
whole route table — `ip -d route show table all`, and the netlink dump — before and after.
The namespace is removed in `finally`, and a test checks that a missing namespace is never
created.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iwlab.deploy import ops
from iwlab.deploy.netlink import NetlinkError
from netns_common import VETH, children, leftovers, run

pytestmark = pytest.mark.deploy

IWLAB = Path(sys.executable).with_name("iwlab")
PID = os.getpid()
NS = f"iwd{PID}r"
POLICY = """
[iw.policies]
ten = { kind = "fixed", segments = 10 }
thirty = { kind = "fixed", segments = 30 }

[[routes]]
prefix = "10.77.2.0/24"
policy = "ten"
congctl = "cubic"

[[routes]]
prefix = "default"
policy = "thirty"
initrwnd = 20
"""




def routes() -> str:
    return run("ip", "-n", NS, "-d", "route", "show", "table", "all").stdout


@pytest.fixture
def ns(namespace):
    return namespace(NS, *VETH, ["addr", "add", "2001:db8:1::1/64", "dev", "v0", "nodad"],
                     ["-6", "route", "add", "default", "via", "2001:db8:1::2"],
                     # a route with metrics of its own, which iwlab must leave exactly as it is
                     ["route", "add", "10.77.9.0/24", "via", "10.77.1.3", "mtu", "lock", "1400", "rtt", "30ms"])


@pytest.fixture
def files(tmp_path):
    p = tmp_path / "policy.toml"
    p.write_text(POLICY)
    return p, tmp_path / "state.sqlite"


def iwlab(*args: str, state: Path, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    return run(str(IWLAB), *args, "--netns", NS, "--state", str(state), check=check, env=env)


def test_plan_changes_nothing_apply_is_idempotent_rollback_restores_the_table_exactly(ns, files):
    policy, state = files
    before = routes()
    out = iwlab("plan", str(policy), "--json", state=state)
    edits = json.loads(out.stdout)["edits"]
    assert [(e["action"], e["new"]["dst"]) for e in edits] == [("create", "10.77.2.0/24"), ("change", "0.0.0.0/0"),
                                                              ("change", "::/0")]
    assert routes() == before and not state.exists(), "plan changed something"
    iwlab("apply", str(policy), state=state)
    after = routes()
    assert "unicast 10.77.2.0/24 via 10.77.1.2 dev v0 table main proto 73 scope global initcwnd 10 congctl cubic" in after
    assert "unicast default via 10.77.1.2 dev v0 table main proto 73 scope global initcwnd 30 initrwnd 20" in after
    # IPv6: the MSS is MTU − 60, the IW the same 30 segments
    assert re.search(r"unicast default via 2001:db8:1::2 dev v0 table main proto 73 .*initcwnd 30 initrwnd 20", after)
    assert "10.77.9.0/24 via 10.77.1.3 dev v0 table main proto boot scope global mtu lock 1400 rtt 30ms" in after
    again = iwlab("apply", str(policy), state=state)
    assert "nothing to change" in again.stdout and routes() == after
    out = iwlab("rollback", state=state)
    assert "rolled back generation(s) 1 (apply): 3 route edit(s) undone" in out.stdout
    assert routes() == before
    assert "nothing to roll back" in iwlab("rollback", state=state).stdout


def test_rollback_returns_to_the_state_before_the_last_apply(ns, files, tmp_path):
    """Through the Python API (iwlab.deploy.ops), which the commands call."""
    policy, state = files
    before = routes()
    assert ops.apply(policy, NS, state).generation == 1
    first = routes()
    second = tmp_path / "second.toml"
    second.write_text(POLICY.replace("segments = 30", "segments = 4").replace('prefix = "10.77.2.0/24"', 'prefix = "10.77.5.0/24"'))
    done = ops.apply(second, NS, state)
    # the route the first file created and the second does not name is deleted
    assert {(e.action, e.prefix) for e in done.plan.edits} == {("create", "10.77.5.0/24"), ("delete", "-"),
                                                               ("change", "default")}
    assert "initcwnd 4 initrwnd 20" in routes() and "10.77.2.0/24" not in routes() and "10.77.5.0/24" in routes()
    assert ops.rollback(NS, state).message.startswith("rolled back generation(s) 2 (apply)")
    assert routes() == first
    ops.rollback(NS, state)
    assert routes() == before


def test_try_reverts_unless_confirmed(ns, files):
    policy, state = files
    before = routes()
    r = iwlab("apply", str(policy), "--try", "1.5s", state=state, check=False)
    assert r.returncode == 1 and "not confirmed: generation 1 reverted" in r.stdout
    assert routes() == before
    p = subprocess.Popen([str(IWLAB), "apply", str(policy), "--try", "20s", "--netns", NS, "--state", str(state)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "trying for 20 s" in p.stderr.readline()
        tried = routes()
        assert "initcwnd 30" in tried
        assert "confirmed generation" in iwlab("apply", "--confirm", state=state).stdout
        out, _ = p.communicate(timeout=10)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 0 and "confirmed: the change stays" in out
    assert routes() == tried
    iwlab("rollback", state=state)
    assert routes() == before


def test_a_try_whose_process_died_is_reverted_by_the_next_command(ns, files):
    policy, state = files
    before = routes()
    p = subprocess.Popen([str(IWLAB), "apply", str(policy), "--try", "1s", "--netns", NS, "--state", str(state)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "trying for 1 s" in p.stderr.readline()
    p.kill()
    p.communicate()
    assert "initcwnd 30" in routes()
    time.sleep(1.2)
    out = iwlab("rollback", state=state)
    assert "the --try of generation 1 was not confirmed" in out.stdout
    assert routes() == before


@pytest.mark.parametrize("edits_before_kill", [1])
def test_kill_9_between_two_route_edits_leaves_all_old_after_the_next_command(ns, files, edits_before_kill):
    policy, state = files
    before = routes()
    env = dict(os.environ, IWLAB_TEST_PAUSE_AFTER_EDITS=str(edits_before_kill))
    p = subprocess.Popen([str(IWLAB), "apply", str(policy), "--netns", NS, "--state", str(state)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = p.stderr.readline()
        assert "paused after 1 edit" in line, line + p.stderr.read()
        half = routes()
        assert half != before and "initcwnd 30" not in half, "expected exactly the first edit made"
    finally:
        p.send_signal(signal.SIGKILL)
        p.communicate()
    plan = iwlab("plan", str(policy), state=state)
    assert "generation 1 was interrupted" in plan.stdout and routes() == half
    out = iwlab("apply", str(policy), state=state)
    assert "recovered: generation 1 (apply) was interrupted" in out.stderr
    assert "initcwnd 30" in routes() and "initcwnd 10" in routes()  # all new now
    iwlab("rollback", state=state)
    assert routes() == before
    # and recovery alone (a rollback right after the kill) gives all old
    p = subprocess.Popen([str(IWLAB), "apply", str(policy), "--netns", NS, "--state", str(state)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert "paused" in p.stderr.readline()
    finally:
        p.send_signal(signal.SIGKILL)
        p.communicate()
    out = iwlab("rollback", state=state)
    assert "was interrupted" in out.stdout and routes() == before


def test_a_failing_edit_undoes_the_edits_made_before_it(ns, files, tmp_path, monkeypatch):
    from iwlab.deploy import plan

    policy, state = files
    before = routes()
    bad = tmp_path / "bad.toml"
    # the kernel refuses a congestion control it does not have: the second edit fails (the
    # check against tcp_available_congestion_control is told the name exists, so the edit runs)
    bad.write_text(POLICY.replace('initrwnd = 20', 'congctl = "nosuchcc"'))
    monkeypatch.setattr(plan, "available_congestion_control", lambda: ["cubic", "reno", "nosuchcc"])
    with pytest.raises(NetlinkError, match="undone"):
        ops.apply(bad, NS, state)
    assert routes() == before
    assert "nothing to roll back" in iwlab("rollback", state=state).stdout


def test_a_missing_namespace_is_an_error_and_is_not_created(files):
    if os.geteuid() != 0:
        pytest.skip("needs root")
    policy, state = files
    missing = f"iwd{PID}missing"
    says = f"--netns = '{missing}': no such network namespace"
    for args in (["plan", str(policy)], ["watch", "--duration", "1"]):
        r = run(str(IWLAB), *args, "--netns", missing, "--state", str(state), check=False)
        assert r.returncode == 2 and says in r.stderr, (args, r.stderr)
    for call in (lambda: ops.apply(policy, missing, state), lambda: ops.rollback(missing, state)):
        with pytest.raises(NetlinkError, match=says) as e:
            call()
        assert e.value.usage  # exit 2 at the command line
    assert not Path(f"/run/netns/{missing}").exists()


def test_bad_policy_files_and_state_files_are_clear_errors(ns, files, tmp_path):
    policy, state = files
    bad = tmp_path / "bad.toml"
    bad.write_text(POLICY.replace('prefix = "10.77.2.0/24"', 'prefix = "10.77.2.0/33"'))
    r = iwlab("apply", str(bad), state=state, check=False)
    assert r.returncode == 2 and f"{bad}:" in r.stderr and "10.77.2.0/33" in r.stderr, r.stderr
    r = iwlab("plan", str(tmp_path / "nope.toml"), state=state, check=False)
    assert r.returncode == 2 and "no such policy file" in r.stderr
    # (a foreign or newer state file: tests/test_deploy.py; the command maps them to exit 2 too)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    r = iwlab("apply", str(policy), state=junk, check=False)
    assert r.returncode == 2 and "not a usable iwlab database" in r.stderr
    assert junk.read_bytes() == b"not a database at all" * 100, "the file was changed"
    assert routes() and "proto 73" not in routes()


@pytest.fixture(scope="module", autouse=True)
def nothing_left_behind():
    """After the module, also when a test failed: no namespace of ours, no child process."""
    before = children()
    yield
    left = leftovers(f"iwd{PID}", before)
    assert left == ([], []), left


def test_apply_with_a_flow_iw_cgroup_attaches_the_programs_and_rollback_detaches_them(ns, tmp_path):
    """A size-based route: apply sets the route's initcwnd to MinIW (the IW of an undeclared
    size) and attaches the per-flow IW programs to the cgroup (max IW = V); rollback undoes both."""
    from iwlab.deploy import flow_iw

    try:
        flow_iw.binary()
    except flow_iw.FlowIwError:
        pytest.skip("iwlab-bpf is not built (make bpf)")
    if not (flow_iw.CGROUP_ROOT / "cgroup.procs").exists():
        pytest.skip(f"no cgroup2 hierarchy at {flow_iw.CGROUP_ROOT}")
    cgroup, state = f"iwd{PID}cg", tmp_path / "state.sqlite"
    policy = tmp_path / "sized.toml"
    policy.write_text('[iw.policies]\nsized = { kind = "size-based", theta = "20kB", v = 10, min_iw = 4 }\n'
                      '[[routes]]\nprefix = "10.77.2.0/24"\npolicy = "sized"\n')
    before = routes()
    try:
        out = iwlab("apply", str(policy), "--flow-iw-cgroup", cgroup, "--json", state=state)
        assert json.loads(out.stdout)["flow_iw"]["config"] == {"default_iw": 0, "max_iw": 10, "created_cgroup": True,
                                                            "pacing": False, "paced_iw": False}
        assert re.search(r"10\.77\.2\.0/24 via 10\.77\.1\.2 dev v0 .*proto 73 .*initcwnd 4", routes())
        assert flow_iw.status(cgroup)["attached"]
        out = iwlab("rollback", "--flow-iw-cgroup", cgroup, state=state)
        assert "programs detached from cgroup" in out.stdout
        assert routes() == before and not flow_iw.status(cgroup)["attached"]
        assert not (flow_iw.CGROUP_ROOT / cgroup).exists()
    finally:
        if (flow_iw.CGROUP_ROOT / cgroup).exists():
            flow_iw.detach(cgroup)


def _one_line_usage_error(r: subprocess.CompletedProcess, *needles: str) -> None:
    """Exit 2 and a single stderr line that names the field and value: never a traceback."""
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, (r.returncode, r.stderr)
    for n in needles:
        assert n in lines[0], (n, lines[0])


def test_an_iw_above_100_segments_needs_force(ns, files, tmp_path):
    _, state = files
    typo = tmp_path / "typo.toml"
    typo.write_text(POLICY.replace("segments = 10 }", "segments = 1000 }"))
    before = routes()
    for cmd in ("plan", "apply"):
        r = iwlab(cmd, str(typo), state=state, check=False)
        _one_line_usage_error(r, f"{typo}:", "'10.77.2.0/24'", "initcwnd = 1000", "allowed 1…100", "--force")
    assert routes() == before
    iwlab("apply", str(typo), "--force", state=state)
    assert "initcwnd 1000" in routes()
    iwlab("rollback", state=state)
    assert routes() == before


@pytest.mark.parametrize("duration", ["1e300s", "0s", "nan", "inf"])
def test_try_durations_are_bounded(ns, files, duration):
    policy, state = files
    before = routes()
    r = iwlab("apply", str(policy), "--try", duration, state=state, check=False)
    _one_line_usage_error(r, "--try")
    assert routes() == before


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "x" * 256])
def test_namespace_names_are_checked_before_anything_else(files, name):
    if os.geteuid() != 0:
        pytest.skip("needs root")
    policy, state = files
    for args in (["plan", str(policy)], ["apply", str(policy)], ["rollback"], ["watch", "--duration", "1"]):
        r = run(str(IWLAB), *args, "--netns", name, "--state", str(state), check=False)
        _one_line_usage_error(r, "--netns", "allowed 1-255 characters")
    assert not state.exists()


def test_an_empty_state_file_is_refused_and_left_empty(ns, files, tmp_path):
    policy, _ = files
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    for args in (["plan", str(policy)], ["apply", str(policy)], ["rollback"]):
        r = iwlab(*args, state=empty, check=False)
        _one_line_usage_error(r, str(empty), "an empty file")
        assert empty.stat().st_size == 0, f"{args[0]} wrote into the empty file"
    assert "proto 73" not in routes()


@pytest.mark.parametrize("addr, says", [("127.0.0.1:70000", "port 1-65535"), ("127.0.0.1:0", "port 1-65535"),
                                        ("IN_USE", "cannot listen there")])
def test_watch_metrics_on_a_bad_or_busy_port_is_one_line(ns, files, addr, says):
    import socket

    policy, state = files
    iwlab("apply", str(policy), state=state)
    busy = socket.socket()
    try:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        if addr == "IN_USE":
            addr = f"127.0.0.1:{busy.getsockname()[1]}"
        r = iwlab("watch", "--metrics", addr, "--duration", "1", state=state, check=False)
        _one_line_usage_error(r, "--metrics", addr.rsplit(":", 1)[1], says)
    finally:
        busy.close()
        iwlab("rollback", state=state)


def test_a_congctl_the_kernel_does_not_offer_is_refused_by_plan_and_apply(ns, files, tmp_path):
    _, state = files
    have = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    bad = tmp_path / "cc.toml"
    bad.write_text(POLICY.replace('congctl = "cubic"', 'congctl = "nosuchcc"'))
    before = routes()
    for cmd in ("plan", "apply"):
        r = iwlab(cmd, str(bad), state=state, check=False)
        _one_line_usage_error(r, f"{bad}:", "congctl = 'nosuchcc'", f"allowed one of {', '.join(have)}")
    assert routes() == before


def test_a_rollback_killed_between_two_edits_is_finished_by_the_next_rollback(ns, files):
    policy, state = files
    before = routes()
    iwlab("apply", str(policy), state=state)
    applied = routes()
    env = dict(os.environ, IWLAB_TEST_PAUSE_AFTER_EDITS="1")
    p = subprocess.Popen([str(IWLAB), "rollback", "--netns", NS, "--state", str(state)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = p.stderr.readline()
        assert "paused after 1 edit" in line, line + p.stderr.read()
        assert routes() not in (before, applied), "expected exactly one edit of the rollback made"
    finally:
        p.send_signal(signal.SIGKILL)
        p.communicate()
    out = iwlab("rollback", state=state)
    assert "was interrupted" in out.stdout and "rolled back generation(s) 1 (apply)" in out.stdout, out.stdout
    assert routes() == before
    assert "nothing to roll back" in iwlab("rollback", state=state).stdout


def test_the_watcher_recovers_an_interrupted_first_apply(ns, files):
    """A first apply killed half-way leaves no applied policy: the watcher finishes the
    recovery (all old), then says in one line why it cannot start (exit 2, which the units
    do not restart)."""
    policy, state = files
    before = routes()
    env = dict(os.environ, IWLAB_TEST_PAUSE_AFTER_EDITS="1")
    p = subprocess.Popen([str(IWLAB), "apply", str(policy), "--netns", NS, "--state", str(state)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert "paused after 1 edit" in p.stderr.readline()
    finally:
        p.send_signal(signal.SIGKILL)
        p.communicate()
    assert routes() != before
    r = iwlab("watch", "--duration", "1", state=state, check=False)
    assert r.returncode == 2, r.stderr
    assert "recovered: generation 1 (apply) was interrupted" in r.stderr and "no policy applied" in r.stderr
    assert "Traceback" not in r.stderr and routes() == before


def test_watch_status_reads_the_iw_from_the_routes(ns, files, tmp_path):
    """After stop → rollback → apply of another IW, the state file still remembers the old IW;
    status shows what new connections get: the route's initcwnd, and counts iwlab's routes."""
    policy, state = files
    from iwlab.deploy.state import State

    iwlab("apply", str(policy), state=state)
    iwlab("watch", "--duration", "1", state=state)
    # what a watcher that fell back to IW 3 leaves in the state file
    State(state).add_decision(NS, "10.77.2.0/24", 10, 3, "loss_in_initial_window (at close)", None)
    assert {p["prefix"]: p["iw"] for p in json.loads(iwlab("watch", "status", "--json", state=state).stdout)
            ["prefixes"]} == {"10.77.2.0/24": 10}, "the route says 10, whatever the state remembers"
    iwlab("rollback", state=state)
    seven = tmp_path / "seven.toml"
    seven.write_text(POLICY.replace("segments = 10 }", "segments = 7 }"))
    iwlab("apply", str(seven), state=state)
    out = json.loads(iwlab("watch", "status", "--json", state=state).stdout)
    iw = {p["prefix"]: p["iw"] for p in out["prefixes"]}
    assert iw == {"10.77.2.0/24": 7}, out
    assert out["routes_managed"] == routes().count(" proto 73 ") == 3, out
    iwlab("rollback", state=state)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("metrics", [False, True])
def test_the_watcher_stops_soon_after_sigterm(ns, files, metrics):
    """SIGTERM wakes the watcher's select (a wake-up pipe: Python resumes an interrupted select
    for the rest of its timeout) and the metrics server polls for shutdown every 50 ms: the
    process is gone well within a second, also on a loaded machine (in-process ≈ 35 ms)."""
    policy, state = files
    iwlab("apply", str(policy), state=state)
    extra = ["--metrics", f"127.0.0.1:{_free_port()}"] if metrics else []
    p = subprocess.Popen([str(IWLAB), "watch", "--netns", NS, "--state", str(state), "--interval", "5", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "watching namespace" in p.stdout.readline()
        time.sleep(0.3)  # inside the select's timeout (a 5 s poll, a 1 s flush)
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
        p.communicate()
    print(f"stopped {took:.3f} s after SIGTERM")
    assert p.returncode == 0 and took < 1.0, (p.returncode, took)
    iwlab("rollback", state=state)
