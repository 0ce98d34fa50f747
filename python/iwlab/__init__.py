"""iwlab: a laboratory for TCP's initial congestion window.

>>> import iwlab
>>> "rfc2415" in iwlab.presets()
True
"""

from iwlab._core import core_version
from iwlab.api import Result, run
from iwlab.scenario import Scenario, ScenarioError, load, presets

__version__ = "0.1.0"
__all__ = ["__version__", "core_version", "Result", "Scenario", "ScenarioError", "load", "presets", "run"]
