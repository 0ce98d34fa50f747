"""`iwlab advise`: recommend an initial window (or IW policy) for a network profile, with evidence.

A profile (flags or a TOML file: bottleneck rate, RTT, buffer, background, loss, flow sizes, TCP
flavour, population) becomes one scenario per candidate (fixed IWs, RFC 3390/6928, size-based
with θ and V searched, paced IW, adaptive policies); a racing search runs them over common seeds,
adding seeds only to candidates still within the confidence interval of the best, and the answer
comes with every candidate's figures, a Pareto figure, a sensitivity check, a policy file for
`iwlab apply`, the equivalent `ip route … initcwnd N` line and an HTML report. docs/advise.md
explains the method and its limits.

This package is itself callable — `iwlab.advise(...)` is `iwlab.advise.advisor.advise(...)` —
and imports its heavy parts only when used.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["advise", "Advice", "Profile", "ProfileError", "Candidate", "Budget", "expand"]

_LAZY = {"advise": "advisor", "Advice": "advisor", "Profile": "profile", "ProfileError": "profile",
         "Candidate": "candidates", "expand": "candidates", "Budget": "search"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"iwlab.advise.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'iwlab.advise' has no attribute {name!r}")


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from iwlab.advise.advisor import advise

        return advise(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
