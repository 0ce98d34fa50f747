"""Adaptive IW policies (per-destination AIMD, the learned IW, the RFC 6928 fallback cache) outside
the engine: their comparison against fixed IWs from a sweep (`compare`, docs/adaptive-policies.md)
and the candidates `iwlab advise` races (`candidates`).

>>> sorted(POLICIES)
['ai', 'fb', 'le']
"""

from __future__ import annotations

from iwlab.adaptive.compare import POLICIES, compare, markdown, policy_sets

__all__ = ["POLICIES", "policy_sets", "compare", "markdown"]
