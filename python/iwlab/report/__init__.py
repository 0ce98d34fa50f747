"""Self-contained HTML reports of a sweep directory or of a run directory.

>>> iwlab.report.build_report("out/sweep")           # doctest: +SKIP
PosixPath('out/sweep/report.html')

The page embeds its figures as base64 PNG (matplotlib, Agg) and its tables, the scenario TOML
and the versions that produced the data; it loads nothing from elsewhere.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["build_report", "render"]


def __getattr__(name: str) -> Any:
    """`build_report` and `render` load on first use (PEP 562): the package itself imports none
    of its modules, so that they can import one another through it (`from iwlab.report import
    figures`) without a circle, and `import iwlab.report` costs nothing until a report is made."""
    if name not in __all__:
        raise AttributeError(f"module 'iwlab.report' has no attribute {name!r}")
    value = getattr(import_module("iwlab.report.build"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
