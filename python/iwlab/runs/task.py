"""One run to make: a scenario (after its overrides), a seed, and the grid point it stands for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from iwlab.scenario_io import Scenario

__all__ = ["Task"]


@dataclass(frozen=True)
class Task:
    """A run is named by its scenario's hash and its seed (`<hash>-s<seed>`): the same scenario
    with the same seed gives the same records, so a stored run stands for every task of that name."""

    run_id: str
    point: dict[str, Any]
    seed: int
    scenario: Scenario
    scenario_hash: str = field(default="")

    @classmethod
    def of(cls, scenario: Scenario, seed: int, point: dict[str, Any] | None = None) -> Task:
        h = scenario.hash()
        return cls(f"{h}-s{seed}", dict(point or {}), seed, scenario, h)
