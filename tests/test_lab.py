"""`iwlab lab up|down` (python/iwlab/lab.py; marker `netns`: root): the two namespaces the
documents' root examples use, made idempotently, refused over a namespace it did not make,
removed with what runs in them, the root namespace's routes untouched; web's server in a cgroup
of the lab's (removed by `down` when `up` made it). Labs named hl<pid>…."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from iwlab import lab
from iwlab.deploy.flow_iw import CGROUP_ROOT
from netns_common import delete_namespaces, kill_cgroup, run

pytestmark = pytest.mark.netns

PID = os.getpid()
IWLAB = Path(sys.executable).with_name("iwlab")
FETCH = ("import sys, urllib.request; sys.stdout.write(str(len(urllib.request.urlopen(sys.argv[1], timeout=5).read())))")


@pytest.fixture(autouse=True)
def root(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")
    monkeypatch.setattr(lab, "RUN_DIR", tmp_path / "run")
    monkeypatch.setenv("IWLAB_RUN_DIR", str(tmp_path / "run"))


@pytest.fixture
def name():
    n = f"hl{PID}t"
    yield n
    lab.down(n)
    delete_namespaces(f"{n}-web", f"{n}-client")
    cg = CGROUP_ROOT / f"{n}-web"
    if cg.is_dir():
        kill_cgroup(cg)
        cg.rmdir()


@pytest.fixture
def cgroup2():
    if not (CGROUP_ROOT / "cgroup.procs").is_file():
        pytest.skip(f"no cgroup2 hierarchy at {CGROUP_ROOT}")


def namespaces() -> set[str]:
    return {line.split()[0] for line in run("ip", "netns", "list").stdout.splitlines() if line.strip()}


def fetch(ns: str, url: str) -> int:
    return int(run("ip", "netns", "exec", ns, sys.executable, "-c", FETCH, url).stdout)


def _exited(pid: int) -> None:
    try:
        p = psutil.Process(pid)
        while p.status() != psutil.STATUS_ZOMBIE:
            time.sleep(0.01)
    except psutil.NoSuchProcess:
        pass


def iwlab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(IWLAB), "lab", *args], capture_output=True, text=True, timeout=60)


def test_the_client_fetches_big_bin_from_web_over_ipv4_and_ipv6(name):
    st, made = lab.up(name)
    assert made and set(st.namespaces) == {f"{name}-web", f"{name}-client"}
    assert fetch(f"{name}-client", "http://10.0.1.1/big.bin") == lab.BIG_BYTES
    assert fetch(f"{name}-client", "http://[2001:db8::1]/big.bin") == lab.BIG_BYTES
    routes = run("ip", "-n", f"{name}-web", "route", "show").stdout
    assert "default via 10.0.1.2 dev eth0" in routes  # what `apply` of 203.0.113.0/24 goes through


def test_up_twice_changes_nothing_the_second_time(name):
    first, made = lab.up(name)
    again, made_again = lab.up(name)
    assert made and not made_again
    assert again.namespaces == first.namespaces and again.server_pid == first.server_pid


def test_up_refuses_a_namespace_of_that_name_it_did_not_make(name):
    run("ip", "netns", "add", f"{name}-web")
    r = iwlab("up", "--name", name)
    assert r.returncode == 2, r
    assert r.stderr.count("\n") == 1 and f"namespace '{name}-web' exists and was not made by `iwlab lab up" in r.stderr
    assert f"{name}-client" not in namespaces()  # nothing made
    lab.down(name)
    assert f"{name}-web" in namespaces()  # and `down` leaves what is not the lab's
    run("ip", "netns", "del", f"{name}-web")


def test_down_removes_the_namespaces_and_the_server_and_a_second_down_nothing(name):
    st, _ = lab.up(name)
    assert lab.down(name) == [f"{name}-web", f"{name}-client"]
    assert not {f"{name}-web", f"{name}-client"} & namespaces()
    assert not psutil.pid_exists(st.server_pid) or psutil.Process(st.server_pid).status() == psutil.STATUS_ZOMBIE
    assert not lab.state_dir(name).exists()
    assert lab.down(name) == []
    r = iwlab("down", "--name", name)
    assert (r.returncode, r.stdout) == (0, "lab down: nothing of it was up\n")


def test_a_lab_whose_server_died_is_made_again(name):
    st, _ = lab.up(name)
    os.kill(st.server_pid, 9)  # at once: `up` must not take its socket, still closing, for a live server
    _exited(st.server_pid)  # (only the kill itself is waited for: a signal is delivered, not yet acted on)
    again, made = lab.up(name)
    assert made and again.server_pid != st.server_pid
    assert fetch(f"{name}-client", "http://10.0.1.1/big.bin") == lab.BIG_BYTES


def test_the_root_namespace_routes_stay_as_they_were(name):
    before = [run("ip", *fam, "route", "show", "table", "all").stdout for fam in ([], ["-6"])]
    lab.up(name)
    lab.down(name)
    assert [run("ip", *fam, "route", "show", "table", "all").stdout for fam in ([], ["-6"])] == before


@pytest.mark.parametrize("bad", ["a/b", "-x", "x" * 33, "é"])
def test_a_bad_name_is_refused_naming_it(bad):
    r = iwlab("up", "--name", bad)
    assert r.returncode == 2 and r.stderr.startswith(f"error: --name = {bad!r}") and r.stderr.count("\n") == 1, r


def test_status_says_whether_the_lab_is_up(name):
    assert iwlab("status", "--name", name).returncode == 1
    lab.up(name)
    r = iwlab("status", "--name", name)
    assert r.returncode == 0 and r.stdout.startswith("lab up\n") and "http://10.0.1.1/big.bin" in r.stdout


def test_the_web_server_runs_in_a_cgroup_of_the_lab_which_down_removes(name, cgroup2):
    st, _ = lab.up(name)
    cg = CGROUP_ROOT / f"{name}-web"
    assert (st.cgroup, st.cgroup_made) == (str(cg), True)
    assert str(st.server_pid) in (cg / "cgroup.procs").read_text().split()
    assert lab.up(name)[0].cgroup_made  # found up: still the lab's
    lab.down(name)
    assert not cg.exists()


def test_a_cgroup_of_that_name_it_did_not_make_is_used_and_kept(name, cgroup2):
    cg = CGROUP_ROOT / f"{name}-web"
    cg.mkdir()
    st, _ = lab.up(name)
    assert (st.cgroup, st.cgroup_made) == (str(cg), False)
    assert str(st.server_pid) in (cg / "cgroup.procs").read_text().split()
    lab.down(name)
    assert cg.is_dir() and not (cg / "cgroup.procs").read_text().split()  # kept, its server gone


def test_quic_adds_an_http3_server_whose_iw_the_probe_measures_over_ipv4_and_ipv6(name):
    from iwlab.probe.quic import probe_quic

    st, _ = lab.up(name)
    assert st.quic_pid == 0
    st, changed = lab.up(name, quic=True)  # added to the lab that is up
    assert changed and st.quic_pid and psutil.pid_exists(st.quic_pid)
    for target in ("10.0.1.1:443", "[2001:db8::1]:443"):
        r = probe_quic(target, path="/big.bin", netns=f"{name}-client")
        assert r.initial_window_bytes == 12_000, r  # aioquic's 10 × 1 200 B (RFC 9002 §7.2)
    assert lab.up(name, quic=True) == (st, False)
    lab.down(name)
    assert not psutil.pid_exists(st.quic_pid) or psutil.Process(st.quic_pid).status() == psutil.STATUS_ZOMBIE


def test_the_http3_server_serves_files_of_its_directory_only(tmp_path):
    from iwlab.lab_h3 import file_for

    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "big.bin").write_bytes(b"x")
    (tmp_path / "secret").write_bytes(b"y")
    assert file_for(tmp_path / "www", b"/big.bin?x=1") == (tmp_path / "www" / "big.bin").resolve()
    assert file_for(tmp_path / "www", b"/../secret") is None
    assert file_for(tmp_path / "www", b"/") is None and file_for(tmp_path / "www", b"/nothing") is None
