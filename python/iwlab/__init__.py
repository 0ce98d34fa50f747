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

from typing import TYPE_CHECKING, Any

from iwlab._core import core_version
from iwlab.scenario import Scenario, ScenarioError, ScenarioModel, load, presets

if TYPE_CHECKING:
    from iwlab.api import Result, run

__version__ = "0.1.0"
__all__ = ["__version__", "core_version", "Result", "Scenario", "ScenarioError", "ScenarioModel", "load", "presets",
           "run"]


def __getattr__(name: str) -> Any:
    # `run` and `Result` need pandas and pyarrow: imported on first use, so that commands that
    # only read scenarios (`iwlab validate`, `show`, `--version`) start fast.
    if name in ("Result", "run"):
        from iwlab import api

        return getattr(api, name)
    raise AttributeError(f"module 'iwlab' has no attribute {name!r}")
