"""The quic-iw study: its ledger reads the evidence it names (flip the data, the verdict flips), the
TCP + TLS 1.3 model has TLS's extra round trip, and a tiny run of the whole study (IWLAB_STUDY_TINY)
judges RFC 9000 §8.1's and RFC 9002 §7.2's sentences from real QUIC runs."""

from __future__ import annotations

import importlib
import json

import pandas as pd
import pytest

from iwlab.studies import claims as cl
from iwlab.studies import quic_iw
from iwlab.studies.model import Cell, Options, quantity
from iwlab.studies.quic_iw import scenarios as sc

# The module, not the function `quic_iw.ledger` the package re-exports under the same name.
lg = importlib.import_module("iwlab.studies.quic_iw.ledger")


def _judge(cells: dict[str, Cell]) -> dict[str, str]:
    return {j.claim.id: j.verdict for j in cl.judge(lg.ledger(cells), cl.Evidence({}, cells, seeds=5))}


def test_pacing_off_is_out_of_scope_with_the_reason():
    (c,) = [c for c in lg.ledger() if c.id == "Q-pacing-off"]
    assert isinstance(c.rule, cl.NotTestable) and "paces every connection" in c.rule.reason
    assert sc.PACING == (True,)


def test_the_amplification_claims_follow_the_share_of_blocked_flows():
    held = {"amp|100 ms · 10×1200 · chain 1500": Cell(0, 0, 0, 5), "amp|100 ms · 10×1200 · chain 16000": Cell(1, 1, 1, 5)}
    v = _judge(held)
    assert (v["Q-amp-small"], v["Q-amp-large"]) == ("reproduced", "reproduced")
    never = {k: Cell(0, 0, 0, 5) for k in held}
    v = _judge(never)
    assert (v["Q-amp-small"], v["Q-amp-large"]) == ("reproduced", "not reproduced")


def test_the_round_trip_claims_read_rtt_units():
    one = {f"hs|s · {lg.LARGE_IW}": Cell(1.0, 0.98, 1.02, 5), f"hs|s · {lg.SMALL_IW}": Cell(2.0, 1.95, 2.05, 5)}
    v = _judge(one)
    assert (v["Q-amp-rtt"], v["Q-amp-rtt-small-iw"]) == ("reproduced", "reproduced")
    none = {k: Cell(0.0, 0.0, 0.0, 5) for k in one}
    v = _judge(none)
    assert (v["Q-amp-rtt"], v["Q-amp-rtt-small-iw"]) == ("not reproduced", "not reproduced")


def test_without_evidence_every_claim_is_not_testable():
    assert set(_judge({}).values()) == {"not testable"}


def _flows(**over) -> pd.DataFrame:
    base = {"setting": "s", "rtt_ms": 100, "rate_mbps": 10.0, "buffer": "deep", "background": "none",
            "iw": lg.LARGE_IW, "iw_bytes": 46720, "chain": 1500, "transport": "quic", "size": 10_000.0, "seed": 1,
            "completed": True, "completion": 0.3, "ttfb": 0.2, "handshake": 0.1, "retransmits": 0.0, "pto": 0.0,
            "amp_blocked": 0.0, "first_flight_bytes": 46000.0, "bg_goodput_mbps": float("nan"),
            "bg_retransmits": float("nan"), "run_size": 0}
    return pd.DataFrame([{**base, **over}])


def test_tcp_rows_take_their_time_to_first_byte_from_the_one_byte_run():
    f = pd.concat([_flows(), _flows(transport="tcp", size=1.0, completion=0.31, ttfb=float("nan"), run_size=1),
                   _flows(transport="tcp", size=10_000.0, completion=0.4, ttfb=float("nan"), run_size=10_000)])
    ps = lg.per_seed(f)
    assert list(ps["transport"]) == ["quic", "tcp"]  # the 1-byte run is not a response size of its own
    assert ps.loc[ps["transport"] == "tcp", "ttfb"].item() == pytest.approx(0.31)
    ev = lg.evidence(ps)
    assert ev[f"ttfb|s · {lg.LARGE_IW}"].value == pytest.approx((0.31 - 0.2) / 0.1)


def test_the_tls_model_is_one_page_of_handshake_flight_then_response():
    s = sc.Setting(100, 10, "deep", "none")
    data = sc.tls_scenario(s, (32, 1460), 16000, 100_000, 2).data
    (app,) = data["apps"]
    assert (app["http"], app["embedded_count"], app["pages"]) == ("1.1", 1, 2)
    assert quantity(app["primary"]) == 16000 + sc.TLS_SERVER_OVERHEAD and quantity(app["embedded"]) == 100_000
    assert quantity(data["tcp"]["mss"]) == 1460 and data["iw"]["policies"]["iw"]["segments"] == 32
    q = sc.quic_scenario(s, (32, 1460), 16000, sc.SIZES, 2).data
    assert q["quic"]["initial_window"] == "32pkt" and q["quic"]["max_datagram_size"] == 1460
    assert [quantity(m["response"]) for m in q["apps"][0]["mix"]] == [10_000, 100_000, 1_000_000]


def test_buffers_are_a_share_of_the_bdp_with_floors():
    assert sc.Setting(100, 10, "deep", "none").buffer_pkts() == 167  # 2 × 83.3 packets
    assert sc.Setting(100, 10, "shallow", "none").buffer_pkts() == 21
    assert sc.Setting(20, 1, "shallow", "none").buffer_pkts() == 8
    assert sc.Setting(20, 1, "deep", "none").buffer_pkts() == 32


@pytest.mark.timeout(900)
def test_a_tiny_run_judges_the_amplification_and_handshake_claims(tmp_path, monkeypatch):
    from iwlab.studies import reproduce

    monkeypatch.setenv("IWLAB_STUDY_TINY", "1")
    res, report = reproduce("quic-iw", Options(tmp_path, seeds=5, jobs=2, progress=False))  # no CI below 5 seeds (docs/claims.md)
    v = {j.claim.id: j for j in res.claims}
    assert v["Q-amp-small"].verdict == "reproduced" and v["Q-amp-large"].verdict == "reproduced"
    assert v["Q-amp-rtt"].verdict == "reproduced", v["Q-amp-rtt"].detail
    assert v["Q-ttfb"].verdict == "reproduced", v["Q-ttfb"].detail
    assert v["Q-pacing-off"].verdict == "not testable"
    assert res.setup["incomplete"] == 0
    meta = json.loads((tmp_path / "result.json").read_text())
    assert meta["study"] == "quic-iw" and meta["claims"]["n"] == len(lg.ledger())
    claims = pd.read_csv(tmp_path / "claims.csv")
    assert set(claims["claim_id"]) == {c.id for c in lg.ledger()}
    assert {"ttfb", "handshake", "completion", "harm"} <= {t.name for t in res.tables}
    assert "Q-amp-rtt" in report.read_text()


def test_the_docs_figures_are_the_stored_results():
    from pathlib import Path

    from iwlab.studies.quic_iw.docs import example, render

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "quic.md").read_text()
    assert example(root / "docs" / "data" / "quic-iw") in page
    block = render(root / "docs" / "data" / "quic-iw")
    assert block in page, \
        "docs/quic.md and docs/data/quic-iw differ: python -m iwlab.studies.quic_iw.docs docs/data/quic-iw docs/quic.md"
    stored = pd.read_csv(root / "docs" / "data" / "quic-iw" / "claims.csv")
    assert set(stored["claim_id"]) == {c.id for c in lg.ledger()}
    assert set(stored["mode"]) == {"quick"} and set(stored["seeds"]) == {5}


def test_quick_mode_is_the_full_grid_at_half_the_seeds():
    """Every condition full mode judges is judged in quick mode: the same runs (scenario and seed),
    seeds 1–5 of full mode's 1–10."""
    from pathlib import Path

    full = sc.tasks(sc.plan(Options(Path("."))))
    quick = sc.tasks(sc.plan(Options(Path("."), quick=True)))
    assert {t.key for t in quick} == {t.key for t in full if t.seed <= 5}
    assert len(full) == 28_800 and len(quick) == 14_400


def test_docs_account_of_where_the_claims_fail_is_the_stored_full_ledger():
    """docs/quic.md, "Where the claims fail on the whole grid": its figures, from data/claims/full/quic-iw.csv."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "quic.md").read_text()
    text = page[page.index("### Where the claims fail on the whole grid"):page.index("## Advising a QUIC IW")]
    full = pd.read_csv(root / "data" / "claims" / "full" / "quic-iw.csv")

    def row(claim: str, condition: str) -> pd.Series:
        (r,) = full[(full["claim_id"] == claim) & (full["condition"] == condition)].itertuples()
        return r

    verdicts = full.groupby("claim_id")["claim_verdict"].first().value_counts()
    assert (f"{verdicts['reproduced']} reproduced, {verdicts['partly']} partly, {verdicts['not reproduced']} not "
            f"reproduced, {verdicts['not testable']} not testable") in text
    t = [row("Q-ttfb", f"20 ms, 1 Mb/s deep, bg none · {iw}").ours for iw in ("10×1200", "10×1460")]
    assert f"−{-t[0]:.2f} RTT (10 × 1 200 B) and −{-t[1]:.2f} RTT (10 × 1 460 B)" in text
    h = row("Q-harm", "300 ms, 10 Mb/s deep, bg tcp · chain 1500")
    assert f"{h.ours:.2f} [{h.ci_lo:.2f}, {h.ci_hi:.2f}]" in text
    assert f"{row('Q-amp-rtt', '20 ms, 1 Mb/s deep, bg none · 32×1460').ours:.2f} RTT at 20 ms" in text
    tcp = full[(full["claim_id"] == "Q-tcp-chain") & (full["verdict"] == "not reproduced")]["ours"]
    assert f"{tcp.min():.1f}–{tcp.max():.0f} RTT" in text


def test_a_time_to_first_byte_that_quic_loses_is_said_as_later_not_as_a_negative_sooner():
    def ev(*v: float) -> dict[str, Cell]:
        return {f"ttfb|s{i}": Cell(x, x, x, 5) for i, x in enumerate(v)}

    (line,) = quic_iw.conclusions(ev(-0.456, 0.999), pd.DataFrame())
    assert "between 0.46 RTT later and 1.00 RTT sooner than TCP + TLS 1.3" in line
    (line,) = quic_iw.conclusions(ev(0.71, 0.999), pd.DataFrame())
    assert "0.71–1.00 RTT sooner than TCP + TLS 1.3" in line
