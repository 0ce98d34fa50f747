"""Scenario files: loading (a TOML/JSON path or a packaged preset name), `--set` overrides, the
pydantic models of the format, and errors that name the file, line, field, value and what is
allowed.

The format is declared once, by the Rust core's serde structs (crates/iwlab-core/src/scenario):
every scenario goes through `iwlab._core.normalize`, which returns the canonical JSON (defaults
filled in, quantities in canonical units) or raises an error naming the field, the value, what is
allowed and the line. The JSON Schema derived from those structs (`iwlab._core.schema()`,
`iwlab schema`) is what the pydantic models (`ScenarioModel` and its parts, generated into
`iwlab.scenario_model`) and the field reference of docs/scenario-format.md are made from.

>>> sc = load("rfc2415")
>>> sc.name, sc.data["topology"]["bottleneck"]["rate"]
('rfc2415', '1.5Mbps')
>>> sc.with_overrides({"apps[0].count": 32, "topology.bottleneck.rate": "2000kbps"}).data["topology"]["bottleneck"]
{'rate': '2Mbps', 'delay': '50ms', 'queue': {'kind': 'drop-tail', 'limit': '25pkt'}}
>>> load("rfc2415", sets=["apps[0].count=8", "tcp.cc=cubic"]).data["tcp"]["cc"]
'cubic'
>>> PROFILES["linux"]["cc"]
'cubic'
"""

from __future__ import annotations

import sys
from typing import Any

from iwlab import _core

# The loader sits above the error type and beside the generated models: this module gathers
# them, so that `from iwlab.scenario import Scenario, ScenarioModel, load` keeps working.
from iwlab.scenario_error import ScenarioError
from iwlab.scenario_io import Scenario, describe_presets, load, preset_path, presets

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["PROFILES", "Scenario", "ScenarioError", "ScenarioModel", "load", "presets", "preset_path",
           "describe_presets"]

#: `tcp.profile` values as the core defines them (scenario/profile.rs); the emulator reads the
#: kernel settings from these.
PROFILES: dict[str, dict[str, Any]] = {
    name: tomllib.loads(_core.tcp_profile_toml(name)) for name in _core.tcp_profile_names()}


def __getattr__(name: str) -> Any:
    # `ScenarioModel` and the other generated models load (pydantic) only when asked for.
    from iwlab import scenario_model

    try:
        return getattr(scenario_model, name)
    except AttributeError:
        raise AttributeError(f"module 'iwlab.scenario' has no attribute {name!r}") from None
