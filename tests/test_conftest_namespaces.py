"""The temporary namespaces of tests/conftest.py and tests/netns_common.py (marker `netns`: root):
each is set up as asked and gone afterwards, also when the test body fails. Named hr<pid>…."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import _namespaces
from netns_common import VETH, delay_line_pair, run, stop_delay_line, veth_pair

pytestmark = pytest.mark.netns

PID = os.getpid()


@pytest.fixture(autouse=True)
def root():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")


def exists(ns: str) -> bool:
    return (Path("/run/netns") / ns).exists()


def test_a_namespace_is_set_up_as_asked_and_deleted_after():
    gen = _namespaces()
    make = next(gen)
    ns = make(f"hr{PID}v", *VETH)
    assert exists(ns)
    assert "10.77.1.1/24" in run("ip", "-n", ns, "addr", "show", "dev", "v0").stdout
    assert "default via 10.77.1.2 dev v0" in run("ip", "-n", ns, "route", "show").stdout
    gen.close()
    assert not exists(ns)


def test_namespaces_are_deleted_when_the_test_fails():
    gen = _namespaces()
    make = next(gen)
    names = [make(f"hr{PID}f{i}", ["link", "set", "lo", "up"]) for i in range(2)]
    assert all(map(exists, names))
    with pytest.raises(AssertionError, match="the test failed"):
        gen.throw(AssertionError("the test failed"))
    assert not any(map(exists, names))


def test_a_failing_set_up_command_still_leaves_nothing():
    gen = _namespaces()
    make = next(gen)
    with pytest.raises(AssertionError, match="exited"):
        make(f"hr{PID}x", ["link", "set", "no-such-device", "up"])
    gen.close()
    assert not exists(f"hr{PID}x")


def test_a_veth_pair_joins_two_namespaces(namespace):
    a, b = f"hr{PID}a", f"hr{PID}b"
    veth_pair(namespace, a, b, "h0", "h1", "10.98.0", "2001:db8:98::")
    assert "10.98.0.1/24" in run("ip", "-n", a, "addr", "show", "dev", "h0").stdout
    assert "2001:db8:98::2/64" in run("ip", "-n", b, "addr", "show", "dev", "h1").stdout
    r = run("ip", "netns", "exec", b, "python3", "-c",
            "import socket; s = socket.create_server(('10.98.0.2', 0)); print(s.getsockname()[1])", check=True)
    assert int(r.stdout) > 0  # the address is usable in its namespace


def test_a_delay_line_pair_routes_the_server_to_the_client(namespace):
    s, c = f"hr{PID}s", f"hr{PID}c"
    line = delay_line_pair(namespace, s, f"hr{PID}st", c, f"hr{PID}ct", 5, "198.18.230.1", "198.18.230.2",
                           server_route=("congctl", "cubic"))
    try:
        assert line.poll() is None
        route = run("ip", "-n", s, "route", "show", "198.18.230.2/32").stdout
        assert f"dev hr{PID}st" in route and "src 198.18.230.1" in route and "congctl cubic" in route, route
        assert f"default dev hr{PID}ct" in run("ip", "-n", c, "route", "show").stdout
    finally:
        stop_delay_line(line)
