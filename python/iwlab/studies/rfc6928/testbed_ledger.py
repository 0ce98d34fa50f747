"""The testbed's claims (§6, §9, Appendix A). Conditions and bands fixed from the RFC's sentences
before the first run."""

from __future__ import annotations

from typing import Any

from iwlab.studies.rfc6928.testbed import BULK_LOADS, FIVE, LOAD_RATES, SPURIOUS
from iwlab.studies.rfc6928.testbed_tables import row

#: "very high packet loss rates" (Appendix A, p. 21) read as above every overall retransmission
#: rate §10.2 reports (1.98–4.21 %): above 5 %.
VERY_HIGH_DROPS = 5.0
#: "only a modest increase of packet drops" read as less than 1 point (§10.2 calls +0.3 and +0.7
#: points of retransmissions "modest").
MODEST_PP = 1.0
#: "suffered only slightly": less than 10 % slower.
SLIGHTLY_PCT = 10.0


def ledger() -> list[Any]:
    from iwlab.studies.claims import Check, Claim, Direction, Ref

    lr, fv, sp = list(LOAD_RATES), list(FIVE), list(SPURIOUS)
    return [
        Claim("6-five/latency", "RFC 6928 §6 ([CW10])", "§6, p. 9",
              "With five connections opened at once over a slow link with a small buffer, IW10 still lowers the "
              "total latency of the transaction.",
              "total latency of a burst of 5 responses, improvement 1 − IW10/IW3, %, paired by seed",
              Direction(">", 0.0), tuple(Check(c, Ref("five_connections", c, "latency improvement %")) for c in fv),
              ("five_connections",), "%", "> 0 (no number)"),
        Claim("6-five/drops", "RFC 6928 §6 ([CW10])", "§6, p. 9",
              "... at the cost of a higher packet drop rate than IW3.",
              "bottleneck drop rate IW10 − IW3, percentage points, paired by seed", Direction(">", 0.0),
              tuple(Check(c, Ref("five_connections", c, "drops IW10 − IW3 (pp)")) for c in fv),
              ("five_connections",), "pp", "> 0 (no number)"),
        Claim("9-spurious", "RFC 6928 §9", "§9, p. 11",
              "A large IW raises the chance of a spurious RTO on a low-bandwidth path.",
              "share of responses with at least one RTO on a path that drops nothing (so every RTO is spurious), "
              "IW10 − IW3, percentage points, paired by seed", Direction(">", 0.0),
              tuple(Check(c, Ref("spurious_rtos", c, "RTO share IW10 − IW3 (pp)")) for c in sp),
              ("spurious_rtos",), "pp", "> 0 (no number)"),
        Claim("A-drops/modest", "RFC 6928 Appendix A ([CW10] etc.)", "Appendix A, pp. 21–22",
              "Larger initial windows raise packet drops only modestly, short of extreme load.",
              f"bottleneck drop rate IW10 − IW3, percentage points, paired by seed; 'modest' read as below "
              f"{MODEST_PP:g} point (§10.2 calls +0.3 and +0.7 points modest)", Direction("<", MODEST_PP),
              tuple(Check(row(r, ld), Ref("testbed_load", row(r, ld), "drops IW10 − IW3 (pp)"))
                    for r in lr for ld in ("light", "medium", "high")), ("testbed_load",), "pp", f"< {MODEST_PP:g}"),
        Claim("A-drops/extreme", "RFC 6928 Appendix A ([CW10])", "Appendix A, p. 21",
              "Under extremely high load both IW3 and IW10 suffer very high packet loss rates.",
              f"bottleneck drop rate at 120 % offered load, %; 'very high' read as above {VERY_HIGH_DROPS:g} % (every "
              "overall retransmission rate §10.2 reports is below it)", Direction(">", VERY_HIGH_DROPS),
              tuple(Check(f"{row(r, 'extreme')}, {iw}", Ref("testbed_load", row(r, "extreme"), f"{iw} drops %"))
                    for r in lr for iw in ("IW3", "IW10")), ("testbed_load",), "%", f"> {VERY_HIGH_DROPS:g} %"),
        Claim("A-mixed/light-medium", "RFC 6928 Appendix A ([CW10])", "Appendix A, p. 23",
              "Flows with IW3 suffer only slightly when competing against IW10 flows at light to medium load.",
              f"mean completion time of the IW3 flows in a half-and-half population against an all-IW3 one, change "
              f"%, paired by seed; 'only slightly' read as less than {SLIGHTLY_PCT:g} % slower",
              Direction("<", SLIGHTLY_PCT),
              tuple(Check(row(r, ld), Ref("testbed_load", row(r, ld), "IW3 flows mixed vs alone %"))
                    for r in lr for ld in ("light", "medium")), ("testbed_load",), "%", f"< {SLIGHTLY_PCT:g} %"),
        Claim("A-mixed/high", "RFC 6928 Appendix A ([CW10])", "Appendix A, p. 23",
              "Under high load both the IW3 and the IW10 flows are faster when mixed together.",
              "mean completion time of the IW3 (IW10) flows in a half-and-half population against an all-IW3 "
              "(all-IW10) one at 90 % load, change %, paired by seed", Direction("<", 0.0),
              tuple(Check(f"{row(r, 'high')}, {iw} flows", Ref("testbed_load", row(r, "high"),
                                                                 f"{iw} flows mixed vs alone %"))
                    for r in lr for iw in ("IW3", "IW10")), ("testbed_load",), "%", "< 0 (no number)"),
        Claim("A-bulk", "RFC 6928 Appendix A ([CW10])", "Appendix A, p. 23",
              "Long-lived bulk flows get more throughput beside many IW10 short flows than beside IW3 short flows.",
              "goodput of one long-lived bulk connection beside IW10 against beside IW3 short flows, change %, paired "
              "by seed", Direction(">", 0.0),
              tuple(Check(row(r, ld), Ref("testbed_bulk", row(r, ld), "bulk goodput change %"))
                    for r in lr for ld in BULK_LOADS), ("testbed_bulk",), "%", "> 0 (no number)"),
    ]
