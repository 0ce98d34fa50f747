"""iwlab: a laboratory for TCP's initial congestion window.

>>> import iwlab
>>> "rfc2415" in iwlab.presets()
True
"""

from iwlab._core import core_version
from iwlab.api import Result, run
from iwlab.scenario import Scenario, ScenarioError, load, presets
from iwlab.sweep import sweep, sweep_records  # noqa: E402  (the function shadows the module name)

__version__ = "0.1.0"
__all__ = ["__version__", "core_version", "Result", "Scenario", "ScenarioError", "load", "presets", "run", "sweep",
           "sweep_records"]
