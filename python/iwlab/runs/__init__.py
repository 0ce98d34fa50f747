"""Runs: make one (`run_one`), make many (`run_many`, `Pool`: local processes or Dask), store
and load them (`store`: the on-disk layout, documented there). `iwlab.sweep`, the advisor, the
studies (`iwlab reproduce`) and the kernel-grid comparison all run through here.

>>> import iwlab
>>> from iwlab import runs
>>> sc = iwlab.load("rfc2415", sets=["duration=5s"])
>>> tasks = [runs.Task.of(sc, seed) for seed in (1, 2)]
>>> recs = sorted(runs.run_many(tasks, jobs=1), key=lambda r: r.meta["seed"])
>>> [r.meta["seed"] for r in recs], recs[0].tables["pages"].num_rows == recs[0].summary["pages"]
([1, 2], True)
"""

from iwlab.runs import store
from iwlab.runs.execute import FORMAT, TABLES, Records, run_one
from iwlab.runs.pool import Pool, orphan_guard, run_many
from iwlab.runs.task import Task

__all__ = ["Task", "Records", "run_one", "run_many", "Pool", "orphan_guard", "store", "TABLES", "FORMAT"]
