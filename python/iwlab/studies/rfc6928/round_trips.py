"""RFC 6928 §5.1: round trips to deliver N segments with IW 3 and IW 10, by simulation, beside the
RFC's table."""

from __future__ import annotations

from typing import Any

import pandas as pd

from iwlab.studies.base import Cell, Table

SEGMENTS = (3, 6, 10, 12, 21, 25, 33, 46, 51, 78, 79, 120, 127)
RFC_ROUNDS = {3: (1, 2, 3, 3, 4, 5, 5, 6, 6, 7, 8, 8, 9), 10: (1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 5, 5)}
TABLE_RTT = 0.1  # seconds


def table_scenario(iw: int, segments: int) -> Any:
    """One N-segment response over a 1 Tb/s, 100 ms RTT lossless path; delayed ACKs (2, 10 s)."""
    from iwlab.scenario import Scenario

    link = {"rate": "1000Gbps", "delay": "1ms", "queue": {"kind": "drop-tail", "limit": "100000pkt"}}
    return Scenario.from_data({
        "name": "rfc6928-section-5.1", "duration": "120s",
        "description": f"RFC 6928 §5.1: {segments} segments with IW {iw}, infinite bandwidth, delayed ACKs",
        "topology": {"kind": "dumbbell",
                     "bottleneck": dict(link, delay=f"{round(TABLE_RTT * 500) - 2}ms"),
                     "left": [{"name": "client", "count": 1, "access": link}],
                     "right": [{"name": "server", "count": 1, "access": link}]},
        "tcp": {"mss": 1460, "timestamps": False, "delayed_ack": {"segments": 2, "timeout": "10s"}},
        "iw": {"default": "iw", "policies": {"iw": {"kind": "fixed", "segments": iw}}},
        "apps": [{"kind": "short-flows", "clients": "client", "servers": "server", "request": "100B",
                  "response": f"{segments}seg", "flows": 1, "arrivals": {"kind": "periodic", "period": "1s"}}],
    }, "rfc6928 §5.1 (study)")


def section_5_1() -> pd.DataFrame:
    """Rounds per (IW, segments) by simulation: columns iw, segments, seconds, rounds, rfc."""
    from iwlab.api import run

    rows = []
    for iw, rfc in RFC_ROUNDS.items():
        for n, expected in zip(SEGMENTS, rfc):
            f = run(table_scenario(iw, n), seed=1).flows.iloc[0]
            seconds = float(f["last_byte"]) - float(f["syn_ack"])
            rows.append({"iw": iw, "segments": n, "seconds": seconds, "rounds": int(round(seconds / TABLE_RTT)),
                         "rfc": expected})
    return pd.DataFrame(rows)


def table_5_1(df: pd.DataFrame) -> Table:
    cells: dict[str, dict[Any, Cell]] = {}
    for iw in RFC_ROUNDS:
        g = df[df["iw"] == iw]
        cells[f"IW={iw} RFC 6928"] = {int(n): Cell(float(v), float(v), float(v), 1) for n, v in zip(g["segments"], g["rfc"])}
        cells[f"IW={iw} iwlab"] = {int(n): Cell(float(v), float(v), float(v), 1) for n, v in zip(g["segments"], g["rounds"])}
    same = bool((df["rounds"] == df["rfc"]).all())
    return Table.from_cells("section_5_1", "Round trips to deliver N segments (RFC 6928 §5.1)", cells, fmt="{:.0f}",
                            index_name="segments →",
                            note=("Simulated: 1 Tb/s links, 100 ms RTT, no loss, MSS 1460, an ACK every 2nd segment "
                                  "with a 10 s delayed-ACK timer; deterministic (one run per cell). "
                                  + ("Identical to the RFC's table." if same else "DIFFERS from the RFC's table.")))
