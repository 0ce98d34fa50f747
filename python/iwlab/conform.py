"""Linux conformance: packetdrill scripts run against one engine endpoint with the linux profile.

The interpreter is Rust (crates/iwlab-conform); this module is its Python face. `run(paths)`
returns a `ConformReport`: the exit code (0 all passed, 1 some failed, 2 some could not be
parsed), the text report and the JSON one as a dict. docs/conformance.md describes the language
subset, the tcp_info fields and the sysctls modelled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from os import PathLike

__all__ = ["ConformReport", "run"]


@dataclass(frozen=True)
class ConformReport:
    exit_code: int
    text: str
    data: dict


def run(paths: list[str | PathLike[str]], tolerance_usecs: int | None = None) -> ConformReport:
    """Runs each script; `tolerance_usecs` overrides the scripts' own (default 4000 µs)."""
    from iwlab import _core

    code, text, js = _core.conform([str(p) for p in paths], tolerance_usecs)
    return ConformReport(code, text, json.loads(js))
