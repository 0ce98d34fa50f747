"""python/iwlab/quic/profiles.toml: every stack's initial-window defaults, with their sources, follow
the schema and compute to bytes (RFC 9002 §7.2 counts the window in bytes)."""

from __future__ import annotations

import pytest

from iwlab.quic.profiles import PROFILES, Iw, ProfileError, load, parse

STACKS = {"quiche", "msquic", "ngtcp2", "picoquic", "quic-go", "mvfst", "lsquic", "google-quiche", "quinn",
          "aioquic"}


def test_every_stack_has_a_profile():
    assert set(load()) == STACKS


@pytest.mark.parametrize("key", sorted(STACKS))
def test_each_window_computes_to_bytes_and_cites_its_source(key):
    p = load()[key]
    assert 2 * 1200 <= p.iw_bytes <= 100 * 1500
    assert p.iw_datagrams >= 2
    assert all(":" in s for s in p.iw_at) and p.repository.startswith("https://github.com/")
    assert p.setting.startswith("none") or p.setting_at


@pytest.mark.parametrize("key, iw_bytes", [
    ("quiche", 12000), ("ngtcp2", 12000), ("quinn", 12000), ("aioquic", 12000),  # 10 × 1200
    ("picoquic", 15360),  # 10 × 1536
    ("quic-go", 40960),  # 32 × 1280
    ("lsquic", 46720), ("google-quiche", 46720),  # 32 × 1460
])
def test_windows_as_read_in_the_sources(key, iw_bytes):
    assert load()[key].iw_bytes == iw_bytes


@pytest.mark.parametrize("iw, expected", [
    (Iw(rule="packets", packets=10, packet_bytes=1200), 12000),
    (Iw(rule="rfc9002", packet_bytes=1200), 12000),  # min(12 000, max(14 720, 2 400))
    (Iw(rule="rfc9002", packet_bytes=1500), 14720),  # min(15 000, 14 720)
    (Iw(rule="rfc9002", packet_bytes=9000), 18000),  # max(14 720, 18 000) under 90 000
    (Iw(rule="bytes", bytes=15360), 15360),
])
def test_the_rules(iw, expected):
    assert iw.to_bytes() == expected


def _one(**change) -> str:
    text = PROFILES.read_text()
    block = text[text.index("[quinn]"):text.index("[aioquic]")]
    for k, v in change.items():
        line = next(ln for ln in block.splitlines() if ln.startswith(f"{k} = "))
        block = block.replace(line, f"{k} = {v}")
    return block


def test_the_file_parses_alone_per_stack():
    assert parse(_one())["quinn"].iw_bytes == 12000


@pytest.mark.parametrize("change, needle", [
    ({"iw": '{ rule = "packets", packets = 10 }'}, "[quinn] iw: Value error, rule 'packets' takes exactly"),
    ({"iw": '{ rule = "segments", packets = 10 }'}, "[quinn] iw.rule = 'segments'"),
    ({"cc_at": '"transport.rs"'}, "[quinn] cc_at = 'transport.rs'"),
    ({"max_datagram_size": "900"}, "[quinn] max_datagram_size = 900"),
    ({"unverified": '["iw_size"]'}, "unverified = ['iw_size']"),
    ({"setting_at": '""'}, "without setting_at"),
    ({"repository": '"https://example.test/x"'}, "[quinn] repository"),
])
def test_bad_profiles_name_the_stack_field_and_value(change, needle):
    with pytest.raises(ProfileError) as e:
        parse(_one(**change))
    assert needle in str(e.value)


def test_an_unknown_field_is_refused():
    with pytest.raises(ProfileError, match=r"\[quinn\] iw_packets"):
        parse(_one() + "iw_packets = 10\n")
