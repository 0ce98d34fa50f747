"""The deploy check for per-flow IWs (docs/deploy.md, "probe"): `iwlab probe` against the
sized example server in a cgroup with iwlab's eBPF programs measures IW(size) for every size
the server declares, and the cgroup's default for an undeclared one. The namespaces, delay line,
cgroup and leak checks are those of tests/test_flow_iw_kernel.py (marker `deploy`)."""

from __future__ import annotations

import json

import pytest

from test_flow_iw_kernel import (EXPECTED, IWLAB, NS_C, NS_S, PIN_ROOT, PORT, SERVICE, _server, _server_log,
                                 cgroup, net, policy, run)

pytestmark = pytest.mark.deploy

__all__ = ["cgroup", "net", "policy"]  # fixtures used by name


def test_the_probe_sees_the_iw_of_each_declared_size(cgroup, policy):
    name, record = cgroup
    record(json.loads(run(str(IWLAB), "flow-iw", "attach", "--cgroup", name, "--policy", str(policy),
                          "--pin-root", str(PIN_ROOT), "--json").stdout))
    srv = _server([str(IWLAB), "flow-iw", "exec", "--cgroup", name, "--netns", NS_S, "--"], policy,
                  count=len(EXPECTED) + 1)
    try:
        for size, iw in [*EXPECTED.items(), ("40000 undeclared", 4)]:
            r = run(str(IWLAB), "probe", f"{SERVICE}:{PORT}", "--netns", NS_C, "--request", f"GET {size}\\n",
                    "--expect", str(iw), "--json", check=False)
            out = json.loads(r.stdout)[0]["runs"][0]
            assert (r.returncode, out["segments"], out["lower_bound"]) == (0, iw, False), (size, out, r.stderr)
    finally:
        log = _server_log(srv)
    assert {e["size"]: e["iw"] for e in log if e["iw"]} == EXPECTED
    run(str(IWLAB), "flow-iw", "detach", "--cgroup", name, "--pin-root", str(PIN_ROOT))
