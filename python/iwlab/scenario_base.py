"""The base class of the generated scenario models (`iwlab.scenario_model`): unknown keys are
errors, as in the core, and a model turns back into the plain data the core reads."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["ScenarioBase"]


class ScenarioBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def to_data(self) -> dict[str, Any]:
        """The model as plain data (what the core reads): absent fields left out."""
        return self.model_dump(mode="json", exclude_none=True, by_alias=True)
