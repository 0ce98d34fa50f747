"""Scenario files: load TOML (a path or a packaged preset name), validate, override fields.

The Rust core is the one authority on what a valid scenario is: every load goes through
`iwlab._core.normalize`, which returns the canonical JSON with defaults filled in or raises
`ScenarioError` naming the field, the value, what is allowed and the line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from iwlab import _core

ScenarioError = _core.ScenarioError

__all__ = ["Scenario", "ScenarioError", "load", "presets", "preset_path"]


def presets() -> list[str]:
    """Names of the packaged preset scenarios."""
    root = resources.files("iwlab") / "scenarios"
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".toml"))


def preset_path(name: str) -> Path:
    return Path(str(resources.files("iwlab") / "scenarios" / f"{name}.toml"))


@dataclass(frozen=True)
class Scenario:
    """A validated scenario: its canonical data (a dict mirroring the TOML) and its origin."""

    data: dict[str, Any]
    source: str = "<memory>"

    @property
    def name(self) -> str:
        return str(self.data.get("name", ""))

    def to_json(self) -> str:
        return json.dumps(self.data, sort_keys=True)

    def to_toml(self) -> str:
        return _core.to_toml(self.to_json(), "json")

    def hash(self) -> str:
        """Stable hash of the canonical scenario (for sweep bookkeeping)."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    @classmethod
    def from_toml(cls, text: str, source: str = "<memory>") -> "Scenario":
        return cls(json.loads(_core.normalize(text, "toml")), source)

    @classmethod
    def from_data(cls, data: dict[str, Any], source: str = "<memory>") -> "Scenario":
        return cls(json.loads(_core.normalize(json.dumps(data), "json")), source)


def load(source: str | Path) -> Scenario:
    """Loads a scenario from a TOML path or a packaged preset name (`load("rfc2415")`)."""
    path = Path(source)
    if not path.exists() and str(source) in presets():
        path = preset_path(str(source))
    if not path.exists():
        raise FileNotFoundError(f"{source}: no such scenario file or preset (presets: {', '.join(presets())})")
    return Scenario.from_toml(path.read_text(), str(path))
