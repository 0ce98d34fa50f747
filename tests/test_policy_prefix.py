"""Route prefixes are matched in one place, the core's (crates/iwlab-prefix, through
`_core.route_for`/`peer_route`/`prefix_index`), for `PolicyFile.route_for`, the watcher and
the eBPF reader alike. Generated prefixes and addresses of both families check it against
`ipaddress`: the longest covering network of the address's family, the first of equal length,
else the first default route."""

from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iwlab import _core
from iwlab.deploy import evidence_bpf
from iwlab.policy import parse_policy

SETTINGS = settings(max_examples=300, deadline=None, database=None, derandomize=True)


def network(version: int):
    bits = 32 if version == 4 else 128
    return st.builds(lambda a, n: ipaddress.ip_network((a, n), strict=False), st.ip_addresses(v=version),
                     st.integers(0, bits))


PREFIX = st.one_of(st.none(), network(4), network(6))


@st.composite
def table_and_address(draw):
    """Routes (None: the default route) and an address: often inside one of them, sometimes
    v4-mapped or loopback, sometimes anywhere."""
    prefixes = draw(st.lists(PREFIX, max_size=8))
    nets = [p for p in prefixes if p is not None]
    how = draw(st.sampled_from(["inside", "anywhere", "mapped", "loopback"]))
    if how == "inside" and nets:
        net = draw(st.sampled_from(nets))
        addr = net.network_address + draw(st.integers(0, net.num_addresses - 1))
    elif how == "mapped":
        addr = ipaddress.ip_address(f"::ffff:{draw(st.ip_addresses(v=4))}")
    elif how == "loopback":
        addr = draw(st.sampled_from([ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("127.9.8.7"),
                                     ipaddress.ip_address("::1"), ipaddress.ip_address("::ffff:127.0.0.1")]))
    else:
        addr = draw(st.ip_addresses())
    return prefixes, addr


def keys(prefixes) -> list[str]:
    return ["default" if p is None else str(p) for p in prefixes]


def reference(prefixes, ip) -> int | None:
    """The longest covering network of ip's family, the first of equal length, else the first default."""
    best = None
    for i, p in enumerate(prefixes):
        if p is not None and p.version == ip.version and ip in p:
            if best is None or p.prefixlen > prefixes[best].prefixlen:
                best = i
    return best if best is not None else next((i for i, p in enumerate(prefixes) if p is None), None)


@SETTINGS
@given(table_and_address())
def test_the_core_covers_an_address_with_its_longest_prefix_then_the_default_route(case):
    prefixes, addr = case
    assert _core.route_for(keys(prefixes), str(addr)) == reference(prefixes, addr)


@SETTINGS
@given(table_and_address())
def test_a_peer_is_matched_as_ipv4_when_v4_mapped_and_never_when_loopback(case):
    prefixes, addr = case
    ip = addr.ipv4_mapped if addr.version == 6 and addr.ipv4_mapped is not None else addr
    want = None if ip.is_loopback else reference(prefixes, ip)
    assert _core.peer_route(keys(prefixes), str(addr)) == want


@SETTINGS
@given(st.lists(PREFIX, max_size=8), PREFIX)
def test_a_route_is_found_by_its_prefix_written_any_way(prefixes, want):
    k = keys(prefixes)
    expected = next((i for i, p in enumerate(prefixes) if p == want), None)
    assert _core.prefix_index(k, "default" if want is None else str(want)) == expected
    if want is not None:  # the exploded form is the same network
        assert _core.prefix_index(k, want.exploded) == expected


@SETTINGS
@given(st.lists(st.one_of(network(4), network(6)), min_size=1, max_size=5, unique=True), st.data())
def test_a_policy_files_route_for_is_the_cores(nets, data):
    text = '[iw.policies]\np = { kind = "rfc3390" }\n' + "".join(
        f'[[routes]]\nprefix = "{n}"\npolicy = "p"\n' for n in nets)
    pf = parse_policy(text)
    net = data.draw(st.sampled_from(nets))
    addr = net.network_address + data.draw(st.integers(0, net.num_addresses - 1))
    r = pf.route_for(addr)
    assert r is pf.routes[reference(nets, addr)]
    assert pf.route(str(r.prefix)) is r


@pytest.mark.parametrize("bad,field", [(["10.0.0.1/8"], "prefixes[0]"), (["default", "x"], "prefixes[1]")])
def test_a_bad_prefix_is_a_value_error_naming_it(bad, field):
    with pytest.raises(ValueError, match=re.escape(field) + " = .* is not allowed"):
        _core.route_for(bad, "10.0.0.1")


def test_a_bad_address_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match='addr = "nope" is not allowed; expected an IPv4 or IPv6 address'):
        _core.route_for(["default"], "nope")
    with pytest.raises(ValueError, match="addr"):
        parse_policy('[iw.policies]\np = { kind = "rfc3390" }\n').route_for("10.0.0.256")


def test_the_summary_kinds_are_the_cores():
    assert evidence_bpf.SUMMARY_KINDS == frozenset(_core.summary_kinds())
    assert evidence_bpf.SUMMARY_KINDS == {"fixed", "rfc3390", "rfc6928", "rfc6928-fallback", "size-based"}
