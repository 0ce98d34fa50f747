"""iwlab: a laboratory for TCP's initial congestion window.

Load a scenario (a TOML file or a packaged preset), override fields, run it, get DataFrames:

>>> import iwlab
>>> "rfc2415" in iwlab.presets()
True
>>> sc = iwlab.load("rfc2415", sets=["duration=20s", "apps[0].count=8"])
>>> r = iwlab.run(sc, seed=3)
>>> r.summary["seed"], len(r.pages) == r.summary["pages"], r.pages["delay"].dtype
(3, True, double[pyarrow])
"""

import sys
import types
from importlib import import_module
from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "core_version", "engine_id", "Result", "Scenario", "ScenarioError", "ScenarioModel", "load", "presets",
           "run", "sweep", "sweep_records", "advise"]

# Exports load on first use (`import iwlab` stays cheap: no pandas, pyarrow or pydantic until a
# name that needs them is used): name → module that defines it.
_LAZY = {
    "core_version": "iwlab._core", "engine_id": "iwlab._core",
    "Result": "iwlab.api", "run": "iwlab.api",
    "Scenario": "iwlab.scenario_io", "ScenarioError": "iwlab.scenario_io", "load": "iwlab.scenario_io",
    "presets": "iwlab.scenario_io", "ScenarioModel": "iwlab.scenario_model",
    "sweep": "iwlab.sweep", "sweep_records": "iwlab.sweep",
}
# Callable packages: `iwlab.advise(...)` recommends an IW (the package imports its parts lazily).
_SUBPACKAGES = {"advise"}


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return import_module(f"iwlab.{name}")
    if name not in _LAZY:
        raise AttributeError(f"module 'iwlab' has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBPACKAGES)


class _Package(types.ModuleType):
    """The function `sweep` shares its name with the module `iwlab.sweep`: importing the module
    (from anywhere) binds the package attribute `sweep` to it; this keeps `iwlab.sweep(...)` the
    function, as `from iwlab import sweep` gives."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "sweep" and isinstance(value, types.ModuleType):
            value = value.sweep
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
