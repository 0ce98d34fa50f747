"""Per-flow IW (python/iwlab/deploy/flow_iw*.py, crates/iwlab-bpf): the parts that need no root.
The kernel side is tests/test_flow_iw_kernel.py (marker `deploy`)."""

from __future__ import annotations

import dataclasses
import errno
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from iwlab.deploy import flow_iw, flow_iw_marks
from iwlab.deploy.flow_iw_app import TCP_FLOW_IW, FlowSizePolicy, set_flow_iw
from scenario_common import AIMD_3_20, FIXED_10, policy_toml

REPO = Path(__file__).resolve().parents[1]
IWLAB = Path(sys.executable).with_name("iwlab")  # the real entry point
HEADER = REPO / "crates" / "iwlab-bpf" / "bpf" / "flow_iw.h"

POLICY = policy_toml({"sized": '{ kind = "size-based", theta = "20kB", v = 10, min_iw = 4 }', "ten": FIXED_10,
                      "ai": AIMD_3_20}, [("10.77.2.0/24", "ten"), ("10.66.0.0/16", "ai"), ("default", "sized")])


@pytest.fixture
def policy_file(tmp_path):
    p = tmp_path / "policy.toml"
    p.write_text(POLICY)
    return p


def test_the_private_option_is_the_one_the_bpf_program_matches():
    m = re.search(r"#define IWLAB_TCP_FLOW_IW (0x[0-9a-fA-F]+)", HEADER.read_text())
    assert m and int(m.group(1), 16) == TCP_FLOW_IW


# draft-you: IW(s) = V if s <= θ, else ⌊(θ/s)·V + (1 − θ/s)·MinIW⌋; θ = 20 kB, V = 10, MinIW = 4.
@pytest.mark.parametrize("size, iw", [(18_000, 10), (20_000, 10), (40_000, 7), (100_000, 5), (200_000, 4),
                                      (10**9, 4), (None, 4)])
def test_a_flow_gets_the_size_based_iw_of_its_route(policy_file, size, iw):
    assert FlowSizePolicy(policy_file).segments(size, 1448, "198.18.0.9") == iw


def test_the_longest_prefix_decides_the_policy(policy_file):
    p = FlowSizePolicy(policy_file)
    assert p.route("10.77.2.9").key == "10.77.2.0/24" and p.segments(200_000, 1448, "10.77.2.9") == 10
    assert p.route("10.77.3.9").key == "default" and p.route("2001:db8::1").prefix is None


def test_a_hint_without_the_programs_fails_with_enoprotoopt_and_says_why():
    with socket.socket() as s, pytest.raises(OSError) as e:
        set_flow_iw(s, 10)
    assert e.value.errno == errno.ENOPROTOOPT and "iwlab flow-iw attach" in str(e.value)


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_a_hint_must_be_a_positive_integer(bad):
    with socket.socket() as s, pytest.raises(ValueError, match="segments"):
        set_flow_iw(s, bad)


@pytest.mark.parametrize("name", ["", "/sys/fs/cgroup/unified", "../x", "a/../b", "."])
def test_cgroup_names_stay_below_the_cgroup2_root(name):
    with pytest.raises(flow_iw.FlowIwError) as e:
        flow_iw.cgroup_dir(name)
    assert e.value.usage and "--cgroup" in str(e.value)


def test_apply_hook_attaches_only_for_size_based_routes(policy_file):
    pf = FlowSizePolicy(policy_file).file
    assert flow_iw.size_based_limits(pf) == {"min_iw": 4, "max_iw": 10}
    pf = dataclasses.replace(pf, routes=tuple(r for r in pf.routes if r.policy == "ten"))
    assert flow_iw.size_based_limits(pf) is None
    assert flow_iw.apply_hook(pf, "iwlab-web") is None


def test_marks_select_one_table_per_iw():
    assert flow_iw_marks.mark_for(7) == flow_iw_marks.MARK_BASE + 7
    with pytest.raises(ValueError, match="segments"):
        flow_iw_marks.mark_for(0)


def _iwlab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(IWLAB), *args], capture_output=True, text=True, cwd=REPO, timeout=60)


def test_cli_iw_prints_the_policys_iw(policy_file):
    r = _iwlab("flow-iw", "iw", "--policy", str(policy_file), "--size", "40000", "--peer", "198.18.0.9")
    assert r.returncode == 0 and r.stdout.strip() == "7", r.stderr


@pytest.mark.parametrize("args, message", [
    (["attach", "--cgroup", "../x", "--max-iw", "10"], "--cgroup"),
    (["attach", "--cgroup", "x"], "--max-iw"),
    (["attach", "--cgroup", "x", "--max-iw", "0"], "max_iw = 0"),
    (["attach", "--cgroup", "x", "--max-iw", "10", "--default-iw", "11"], "default_iw = 11"),
    # An adaptive policy is the watcher's to deploy, not a per-flow program's (a fixed one, which
    # the paced IW needs, is attached).
    (["attach", "--cgroup", "x", "--policy", "{policy}", "--route", "10.66.0.0/16"], "size-based or fixed"),
    (["attach", "--cgroup", "x", "--policy", "{policy}", "--route", "10.9.0.0/16"], "--route"),
    (["exec", "--netns", "iwb-no-such-ns", "--", "true"], "no such network namespace"),
])
def test_cli_bad_input_exits_2_naming_the_field(policy_file, args, message):
    r = _iwlab("flow-iw", *[a.format(policy=policy_file) for a in args])
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
