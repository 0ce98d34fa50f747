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

from iwlab._core import core_version, engine_id
from iwlab.api import Result, run
from iwlab.scenario import Scenario, ScenarioError, ScenarioModel, load, presets

# Imported eagerly on purpose: the function `sweep` shares its name with the module
# `iwlab.sweep`; binding it here after the module import keeps `iwlab.sweep(...)` the function
# whatever else imports the module first.
from iwlab.sweep import sweep, sweep_records  # noqa: E402
from iwlab import advise  # noqa: E402  (a callable package: iwlab.advise(...) recommends an IW)

__version__ = "0.1.0"
__all__ = ["__version__", "core_version", "engine_id", "Result", "Scenario", "ScenarioError", "ScenarioModel", "load", "presets",
           "run", "sweep", "sweep_records", "advise"]
