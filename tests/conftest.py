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


# ---- beside a second pytest-xdist worker (`make test`: pytest -n 2 --dist loadgroup) ----------

#: What makes a test use the kernel: its markers, or the fixtures that give it namespaces, the
#: emulator, BPF or the documents' lab (tests/test_doc_commands.py marks its documents that need them).
KERNEL_MARKERS = {"netns", "deploy"}
KERNEL_FIXTURES = {"namespace", "module_namespace", "emulation_ready", "bpf_ready", "doc_lab"}
#: Session fixtures whose work is worth doing once (each worker has its own session).
SHARED_SESSION = {"stored_sweep"}


def xdist_group(item: pytest.Item) -> str | None:
    """Where a test runs beside a second worker. The kernel tests form one group, run one after
    the other on one worker as a single pytest would run them: their leak checks read the whole
    machine (`ip netns list`, bpftool) and setup.sh may take dpkg's lock. A test using a
    module-scoped fixture runs with the rest of its module, one using a SHARED_SESSION fixture with
    the others using it, so that fixture's work is done once; any other test runs on either worker."""
    if {m.name for m in item.iter_markers()} & KERNEL_MARKERS or set(item.fixturenames) & KERNEL_FIXTURES:
        return "kernel"
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs if info is not None else {}
    if any(d[-1].scope in ("module", "class", "package") for d in defs.values() if d):
        return item.module.__name__
    shared = sorted(set(item.fixturenames) & SHARED_SESSION)
    return shared[0] if shared else None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks into the test ids
def pytest_collection_modifyitems(config, items):
    for item in items:
        group = xdist_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """Under `--dist loadgroup`, xdist carries a test's group in its id (`…@kernel`); where it
    could not (a pytest whose ids it cannot change), the kernel tests would run side by side."""
    if getattr(session.config.option, "loadgroup", False):
        lost = [i.nodeid for i in session.items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
        if lost:
            raise pytest.UsageError(f"--dist loadgroup did not group {len(lost)} tests (e.g. {lost[0]}): "
                                    "this pytest-xdist does not work with this pytest (pyproject.toml's pins)")


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
