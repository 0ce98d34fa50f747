"""Fixtures shared by the test modules: scenarios, temporary network namespaces (named with the
test's own prefix, deleted at teardown also when the test fails), the checks that the kernel
parts can run here (emulation, BPF), and stored results made once per session."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from netns_common import delete_namespaces, run

REPO = Path(__file__).resolve().parents[1]
SETUP = REPO / "python" / "iwlab" / "emulate" / "setup.sh"


# ---- scenarios (their text: scenario_common.py) ---------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def scenario_of():
    """TOML text → Scenario (validated as a file named `<test>`)."""
    from iwlab.scenario import Scenario

    return lambda text: Scenario.from_toml(text, "<test>")


# ---- what the kernel tests need ----------------------------------------------------------------

def _setup_sh() -> None:
    r = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"setup.sh (tcpdump, ethtool) failed: {r.stderr.strip()}")


@pytest.fixture(scope="session")
def emulation_ready() -> None:
    """Skips unless the emulator can run here: root, namespaces, /dev/net/tun, the iwlab-link
    relay (built with cargo when missing), tcpdump and ethtool (setup.sh)."""
    from iwlab.emulate import preflight, relay_binary
    from iwlab.emulate.run import EmulationError

    why = preflight()
    if why:
        pytest.skip("; ".join(why))
    try:
        relay_binary()
    except EmulationError:
        if shutil.which("cargo") is None:
            pytest.skip("iwlab-link is not built and cargo is missing")
        subprocess.run(["cargo", "build", "--profile", "tools", "-q", "-p", "iwlab-link"], cwd=REPO, check=True, timeout=900)
    _setup_sh()


@pytest.fixture(scope="session")
def bpf_ready() -> None:
    """Skips unless per-flow IW can be attached here: root, a cgroup2 hierarchy, `ip`, `tc`, the
    iwlab-bpf loader (built with cargo when missing), tcpdump and ethtool (setup.sh)."""
    from iwlab.deploy import flow_iw

    if os.geteuid() != 0:
        pytest.skip("needs root (namespaces, cgroups, BPF)")
    if not (flow_iw.CGROUP_ROOT / "cgroup.procs").exists():
        pytest.skip(f"no cgroup2 hierarchy at {flow_iw.CGROUP_ROOT}")
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            pytest.skip(f"`{tool}` not found")
    try:
        flow_iw.binary()
    except flow_iw.FlowIwError:
        if shutil.which("cargo") is None or shutil.which("clang") is None:
            pytest.skip("iwlab-bpf is not built and cargo or clang is missing (make bpf)")
        run("cargo", "build", "--profile", "tools", "-q", "-p", "iwlab-bpf")
    _setup_sh()


# ---- temporary namespaces ----------------------------------------------------------------------

def _namespaces():
    made: list[str] = []

    def make(name: str, *setup: list[str]) -> str:
        made.append(name)
        run("ip", "netns", "add", name)
        for cmd in setup:
            run("ip", "-n", name, *cmd)
        return name

    try:
        yield make
    finally:
        delete_namespaces(*made)


@pytest.fixture
def namespace():
    """`namespace(NAME, *commands)`: a network namespace NAME (each name carries its test module's
    prefix and this process's pid), set up by `ip -n NAME COMMAND…` for each command; what runs in
    it is killed and it is deleted at the end of the test, also when the test fails. Needs root."""
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, netlink)")
    yield from _namespaces()


@pytest.fixture(scope="module")
def module_namespace():
    """`namespace` for a module's fixtures: deleted at the end of the module."""
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")
    yield from _namespaces()


# ---- stored results ----------------------------------------------------------------------------

@pytest.fixture(scope="session")
def stored_sweep(tmp_path_factory):
    """A sweep of rfc2415 (20 s) over IW 1 and 3, two seeds, stored once for the session:
    (its folder, the rows `iwlab.sweep` returned)."""
    import iwlab

    out = tmp_path_factory.mktemp("stored-sweep")
    rows = iwlab.sweep(iwlab.load("rfc2415", sets=["duration=20s"]), grid={"iw.default": ["iw1", "iw3"]}, seeds=2,
                       jobs=1, out=out, progress=False)
    return out, rows
