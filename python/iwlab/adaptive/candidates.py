"""Adaptive IW policies as `iwlab advise` candidates — only the kinds this engine build accepts.

The adaptive policies are `[iw.policies]` kinds like the others;
which exist is asked of the engine itself (a policy table the core rejects is not offered), so
this list never names a kind the simulator cannot run.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from iwlab.advise.types import Candidate

# kind → (candidate name, policy table, IW in segments a new connection starts with). The
# parameters are the examples of docs/scenario-format.md: start at IW 10, stay in 3…40.
ADAPTIVE: dict[str, tuple[str, dict[str, Any], int]] = {
    # halve on RFC 6928 §4 evidence of loss in the IW, +1 after 8 clean connections
    "aimd": ("aimd-10", {"kind": "aimd", "initial": 10, "min": 3, "max": 40, "step": 1, "raise_after": 8}, 10),
    # the median of the last 8 connections' min(cwnd at close, bytes acked)
    "learned": ("learned-10", {"kind": "learned", "initial": 10, "min": 3, "max": 40, "samples": 8,
                               "percentile": 50}, 10),
}


@cache
def engine_accepts(policy: tuple[tuple[str, Any], ...]) -> bool:
    """Does this engine build accept `policy` in `[iw.policies]`?"""
    from iwlab.scenario import Scenario, ScenarioError

    data = {"name": "probe", "duration": "1s",
            "topology": {"kind": "dumbbell", "bottleneck": {"rate": "1Mbps", "delay": "1ms",
                                                             "queue": {"kind": "drop-tail", "limit": "10pkt"}},
                         "left": [{"name": "c", "count": 1, "access": {"rate": "1Mbps", "delay": "1ms"}}],
                         "right": [{"name": "s", "count": 1, "access": {"rate": "1Mbps", "delay": "1ms"}}]},
            "iw": {"default": "p", "policies": {"p": dict(policy)}}}
    try:
        Scenario.from_data(data, "<probe>")
    except ScenarioError:
        return False
    return True


def adaptive_candidates(args: str, mss: int) -> Iterator[Candidate]:
    wanted = [a.strip() for a in args.split(",") if a.strip()] or list(ADAPTIVE)
    for k in wanted:
        if k not in ADAPTIVE:
            raise ValueError(f"adaptive: {k!r} is not an adaptive policy kind; known: {sorted(ADAPTIVE)}")
        name, policy, iw = ADAPTIVE[k]
        if engine_accepts(tuple(sorted(policy.items()))):
            yield Candidate(name, k, dict(policy), iw, deploy="watch", note="adaptive: learns per destination from finished connections")
