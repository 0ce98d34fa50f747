"""Pieces shared by the run and the sweep report: metric names, flow CDFs, queue plots, versions."""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from iwlab import stats
from iwlab.report import figures, html

# metric -> (title, unit, scale: the shown value is value / scale); the order of the report's tables
METRICS: dict[str, tuple[str, str, float]] = {
    "median_page_delay": ("median page delay", "s", 1),
    "fct_median": ("median flow completion", "s", 1),
    "fct_p99": ("p99 flow completion", "s", 1),
    "ftp_median_delay": ("median FTP transfer delay", "s", 1),
    "web_power": ("web network power", "Mb/s per s", 1e6),
    "ftp_power": ("FTP network power", "Mb/s per s", 1e6),
    "power": ("network power (goodput / median FCT)", "Mb/s per s", 1e6),
    "power_norm": ("normalised network power", "×", 1),
    "goodput_bps": ("goodput", "Mb/s", 1e6),
    "web_goodput_bps": ("web goodput", "Mb/s", 1e6),
    "ftp_goodput_bps": ("FTP goodput", "Mb/s", 1e6),
    "util_forward": ("utilisation L→R", "%", 0.01),
    "util_reverse": ("utilisation R→L", "%", 0.01),
    "drop_rate_forward": ("drop rate L→R", "%", 0.01),
    "drop_rate_reverse": ("drop rate R→L", "%", 0.01),
    "retransmit_rate": ("retransmission rate", "%", 0.01),
    "timeouts": ("timeouts", "", 1),
    "flows_completed": ("flows completed", "", 1),
    "pages_completed": ("pages completed", "", 1),
}
HEADLINE = ("median_page_delay", "fct_median", "web_power", "power", "power_norm", "goodput_bps", "util_forward",
            "util_reverse", "drop_rate_forward", "drop_rate_reverse", "retransmit_rate")


def heading(metric: str) -> str:
    """`median page delay (s)` for a metric of METRICS, the name itself otherwise."""
    if metric not in METRICS:
        return metric
    title, unit, _ = METRICS[metric]
    return f"{title} ({unit})" if unit else title


def scaled(metric: str, values: Any) -> Any:
    """`values` in the unit METRICS shows `metric` in."""
    scale = METRICS[metric][2] if metric in METRICS else 1
    return values / scale if scale != 1 else values


NO_SAMPLES = ("Queue length over time: skipped — the scenario sets no sample_interval, so no queue "
              "samples were recorded (set e.g. sample_interval = \"100ms\", or --set sample_interval=100ms).")


def label(value: Any) -> str:
    """A grid value as text, as it would be written in TOML (bare for strings).

    >>> label("iw1"), label(8), label({"kind": "red", "limit": "25pkt"})
    ('iw1', '8', '{ kind = "red", limit = "25pkt" }')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)


def _toml(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else label(value)


def short(text: str, width: int = 40) -> str:
    """`text` cut to `width` characters with an ellipsis (for legends and titles)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def completed_flows(flows: pd.DataFrame) -> pd.DataFrame:
    """Completed flows outside the warm-up."""
    if flows.empty:
        return flows
    ok = flows["completed"].to_numpy(dtype=bool, na_value=False) & ~flows["in_warmup"].to_numpy(
        dtype=bool, na_value=False)
    return flows[ok]


def cdf_groups(df: pd.DataFrame, by: str, order: list[str] | None = None) -> dict[str, np.ndarray]:
    keys = order if order is not None else sorted(df[by].unique().tolist(), key=str)
    return {str(k): df.loc[df[by] == k, "completion"].to_numpy(dtype=float, na_value=np.nan) for k in keys
            if (df[by] == k).any()}


def bottleneck_ports(links: pd.DataFrame) -> dict[str, int]:
    """direction -> port id of the dumbbell's bottleneck in a links table."""
    ports = {}
    for direction, (a, b) in stats.BOTTLENECK.items():
        rows = links[(links["from"] == a) & (links["to"] == b)] if not links.empty else links
        if len(rows):
            ports[direction] = int(rows["port"].iloc[0])
    return ports


def queue_block(samples: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]], caption: str) -> str:
    """Bottleneck queue length (packets) over time: one panel per label, a line per direction;
    `samples` maps a label to (queues, links) of one run. A note if nothing was sampled."""
    names = {"reverse": "R→L", "forward": "L→R"}
    panels = []
    for name, (queues, links) in samples.items():
        lines = {}
        for direction, port in sorted(bottleneck_ports(links).items(), key=lambda kv: kv[0] != "reverse"):
            q = queues[queues["port"] == port] if not queues.empty else queues
            if len(q):
                lines[names[direction]] = (q["time"].to_numpy(dtype=float, na_value=np.nan),
                                           q["packets"].to_numpy(dtype=float, na_value=np.nan))
        if lines:
            panels.append((name, lines))
    if not panels:
        return html.note(NO_SAMPLES)
    png = figures.timeseries(panels, "packets")
    return html.figure(png, caption, "queue length over time")


def versions(produced_by: Mapping[str, Any]) -> str:
    """Versions that produced the data, and the ones that drew this report."""
    import matplotlib
    import pyarrow
    import scipy

    import iwlab

    env = {"python": platform.python_version(), "numpy": np.__version__, "pandas": pd.__version__,
           "pyarrow": pyarrow.__version__, "scipy": scipy.__version__, "matplotlib": matplotlib.__version__}
    return html.kv_table({**{f"data: {k}": v for k, v in produced_by.items()},
                          "report: iwlab": iwlab.__version__, "report: iwlab core": iwlab.core_version(),
                          "report: iwlab engine": iwlab.engine_id(),
                          **{f"report: {k}": v for k, v in env.items()}})
