"""Scenario files: pydantic models of the format, loading (a TOML/JSON path or a packaged preset
name), `--set` overrides, and errors that name the file, line, field, value and what is allowed.

The Rust core is the one authority on what a valid scenario is: every scenario goes through
`iwlab._core.normalize`, which returns the canonical JSON (defaults filled in, quantities in
canonical units) or raises an error naming the field, the value, what is allowed and the
line. The pydantic models (`iwlab.scenario_model`) mirror the same format (docs/scenario-format.md) for editors
and IDEs (`ScenarioModel.model_json_schema()`, `iwlab schema`), for building scenarios in
Python, and for early structural checks of data built in Python (unknown keys, wrong types,
unknown kinds) before the core checks units, ranges and references.

>>> sc = load("rfc2415")
>>> sc.name, sc.data["topology"]["bottleneck"]["rate"]
('rfc2415', '1.5Mbps')
>>> sc.with_overrides({"apps[0].count": 32, "topology.bottleneck.rate": "2000kbps"}).data["topology"]["bottleneck"]
{'rate': '2Mbps', 'delay': '50ms', 'queue': {'kind': 'drop-tail', 'limit': '25pkt'}}
>>> load("rfc2415", sets=["apps[0].count=8", "tcp.cc=cubic"]).data["tcp"]["cc"]
'cubic'
"""

from __future__ import annotations

# The loader sits above the models and the models above the error type: this module only
# gathers them, so that `from iwlab.scenario import Scenario, ScenarioModel, load` keeps working
# while neither floor imports the other back.
from iwlab.scenario_error import ScenarioError
from iwlab.scenario_io import Scenario, describe_presets, load, preset_path, presets
from iwlab.scenario_model import (  # noqa: F401  (re-exported)
    U32, Quantity, Rate, Duration, Bytes, Size, QueueLimit, RateOrShare, Count, Constant, Uniform,
    Exponential, Pareto, Lomax, Lognormal, Weibull, Empirical, Dist, FixedOrDist, DropTail, Red, Codel, Queue,
    RandomLoss, LinkOverride, Bottleneck, AccessOverride, Access, HostGroup, Dumbbell, Cubic, DelayedAck, Tcp,
    FixedIw, Rfc3390Iw, Rfc6928Iw, Rfc6928FallbackIw, SizeBasedIw, AimdIw, LearnedIw, IwPolicy, IwRoute,
    IwSection, FtpApp, BulkApp, WebApp, Periodic, PoissonArrivals, BurstArrivals, ClosedLoopArrivals,
    ReplayArrivals, Arrivals, MixEntry, Share, ShortFlowsApp, PoissonFlowsApp, UdpApp,
    App, ScenarioModel, PROFILES, _from_validation,
)

__all__ = ["Scenario", "ScenarioError", "ScenarioModel", "load", "presets", "preset_path", "describe_presets"]
