"""iwlab advise --verify: the recommendation and the two runners-up on real Linux TCP (the
emulator, network namespaces) beside the simulator, on the kernel testbed's profile — short runs
(3 s, 2 seeds), with an adaptive candidate among the three (the emulator decides its IW with
`iwlab watch`, emulate/watchers.py).

Needs root, `ip netns`, /dev/net/tun and the iwlab-link relay (marker `netns`); skipped with the
reason elsewhere.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.netns


def _require_netns() -> None:
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
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "iwlab-link"], cwd=REPO, check=True, timeout=900)


def test_verify_runs_the_leaders_on_linux_tcp_beside_the_simulator(tmp_path):
    _require_netns()
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("13032\n30408\n")  # 9- and 21-segment responses (MSS 1448)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from iwlab.cli import main; main()", "advise", "--rate", "2Mbps", "--rtt", "100ms",
         "--buffer", "25pkt", "--background", "tcp:2", "--sizes", str(sizes), "--load", "30%", "--duration", "15s",
         "--candidates", "fixed:3,10", "--candidates", "adaptive:aimd", "--budget", "30runs", "--seeds", "2",
         "--max-seeds", "4", "--jobs", "1", "--no-sensitivity", "--verify", "--verify-seeds", "2",
         "--verify-duration", "3s", "--no-progress",
         "--out", str(tmp_path / "adv")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr
    doc = json.loads((tmp_path / "adv" / "advice.json").read_text())
    v = doc["verify"]
    rows = {r["candidate"]: r for r in v["candidates"]}
    # The recommendation first, then the two runners-up; each with both means and the kernel's runs.
    assert list(rows)[0] == doc["recommended"]["candidate"] and set(rows) == {"iw3", "iw10", "aimd-10"}
    for r in rows.values():
        assert r["status"] == "ok" and r["seeds"] == 2, r
        assert r["sim_ms"] > 0 and r["kernel_ms"] > 0 and "…" in r["kernel_ci_ms"], r
    assert v["detail"].startswith(("ranking holds", "recommendation holds", "ranking does NOT hold")), v["detail"]
    assert "verify on Linux TCP (iwlab emulate): " + v["detail"] in stdout
    assert "Verified on Linux TCP" in (tmp_path / "adv" / "report.html").read_text()
    # Nothing of its emulations is left behind (the emulator names everything iwl<pid>-…; other
    # emulations may run beside this one).
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"iwl{proc.pid}-" not in ns, ns
