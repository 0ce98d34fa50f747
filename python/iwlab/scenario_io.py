"""Scenarios: `ScenarioError`, `Scenario`, `load`, the presets.

Every scenario is validated once, by the Rust core (`iwlab._core.normalize`): this module only
forwards its errors. The pydantic models generated from the core's schema
(`iwlab.scenario_model`) load only for `Scenario.model`. `iwlab.scenario` re-exports all of this
module.

>>> sc = load("rfc2415")
>>> sc.name, sc.data["topology"]["bottleneck"]["rate"]
('rfc2415', '1.5Mbps')
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iwlab import _core
from iwlab.scenario_error import ScenarioError

if TYPE_CHECKING:
    from iwlab.scenario_model import ScenarioModel

__all__ = ["Scenario", "ScenarioError", "load", "presets", "preset_path", "describe_presets"]


# --- presets ------------------------------------------------------------------------------

def presets() -> list[str]:
    """Names of the packaged preset scenarios."""
    from importlib import resources  # imports tempfile and shutil: only where presets are listed or read

    root = resources.files("iwlab") / "scenarios"
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".toml"))


def preset_path(name: str) -> Path:
    """The packaged TOML file of preset `name`."""
    from importlib import resources

    return Path(str(resources.files("iwlab") / "scenarios" / f"{name}.toml"))


def describe_presets() -> dict[str, str]:
    """Preset name → its description."""
    return {name: str(load(name).data.get("description", "")) for name in presets()}


# --- scenarios ----------------------------------------------------------------------------

@dataclass(frozen=True, eq=True)
class Scenario:
    """A validated scenario: its canonical data (a dict mirroring the TOML, defaults filled in)
    and where it came from."""

    data: dict[str, Any]
    source: str = "<memory>"

    __hash__ = None  # type: ignore[assignment]  # holds a dict

    def __repr__(self) -> str:
        return f"Scenario(name={self.name!r}, source={self.source!r}, hash={self.hash()!r})"

    @property
    def name(self) -> str:
        return str(self.data.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.data.get("description", ""))

    @property
    def model(self) -> ScenarioModel:
        """The scenario as pydantic models (typed attribute access)."""
        from iwlab.scenario_model import ScenarioModel

        return ScenarioModel.model_validate(self.data)

    def to_json(self) -> str:
        return json.dumps(self.data, sort_keys=True)

    def to_toml(self) -> str:
        """Canonical TOML (every quantity in its canonical unit)."""
        return _core.to_toml(self.to_json(), "json")

    def hash(self) -> str:
        """Stable hash of the canonical scenario (for sweep bookkeeping)."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    @classmethod
    def from_toml(cls, text: str, source: str = "<memory>") -> Scenario:
        """Parses and validates TOML text; errors carry `source` and the line."""
        try:
            return cls(json.loads(_core.normalize(text, "toml")), source)
        except _core.ScenarioError as e:
            raise ScenarioError.from_core(e, source) from None

    @classmethod
    def from_data(cls, data: Mapping[str, Any], source: str = "<memory>") -> Scenario:
        """Validates plain data (as `json.loads` of a scenario gives) with the core; errors name
        the field path, the value and what is allowed."""
        try:
            text = json.dumps(data, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"not plain data: {e}", "", None, None, source) from None
        try:
            return cls(json.loads(_core.normalize(text, "json")), source)
        except _core.ScenarioError as e:
            raise ScenarioError.from_core(e, source, located=False) from None

    @classmethod
    def from_model(cls, model: ScenarioModel, source: str = "<memory>") -> Scenario:
        return cls.from_data(model.to_data(), source)

    def with_overrides(self, overrides: Mapping[str, Any], source: str | None = None) -> Scenario:
        """A copy with fields replaced: `{"apps[0].count": 32, "topology.bottleneck.rate": "2Mbps"}`.
        Missing tables on the way are created; list entries must exist."""
        from iwlab import overrides as ov

        data = copy.deepcopy(self.data)
        for path, value in overrides.items():
            try:
                ov.set_path(data, path, value)
            except ov.PathError as e:
                raise ScenarioError(e.message, e.path, None, None, source or self.source) from None
        return Scenario.from_data(data, source or self.source)

    def with_sets(self, items: Iterable[str]) -> Scenario:
        """A copy with `PATH=VALUE` overrides applied, the values read as TOML literals (or as
        bare strings: `topology.bottleneck.rate=2Mbps`). A number the field does not take as
        a number is taken as its text (`apps[0].http=1.1` gives "1.1", `name=2024` gives
        "2024"). Errors name the `--set` at fault."""
        items = list(items)
        if not items:
            return self
        from iwlab import overrides as ov

        parsed: dict[str, Any] = {}
        texts: dict[str, str] = {}
        by_path: dict[str, str] = {}
        data = copy.deepcopy(self.data)
        for item in items:
            try:
                path, text = ov.split_set(item)
                parsed[path], texts[path], by_path[path] = ov.literal(text), text, item
                ov.set_path(data, path, parsed[path])
            except ov.PathError as e:
                raise ScenarioError(e.message, e.path, None, None, "--set" if e.path == item else f"--set {item}") from None
        while True:
            try:
                return self.with_overrides(parsed)
            except ScenarioError as e:
                value = parsed.get(e.path)
                if _is_number(value) and e.message.startswith(f"{e.path}: invalid type"):
                    parsed[e.path] = texts[e.path]  # the core wants text there: at most once per path
                    continue
                culprit = _culprit(e.path, by_path)
                if culprit is not None:
                    e.source = f"--set {culprit}"
                raise


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _culprit(path: str, by_path: dict[str, str]) -> str | None:
    """The `--set` item whose path `path` lies in (or that lies in `path`)."""
    best = None
    for p, item in by_path.items():
        if path and (path == p or path.startswith((p + ".", p + "[")) or p.startswith((path + ".", path + "["))):
            best = item
    return best


def _resolve_files(node: Any, base: Path) -> None:
    """Makes relative `file` paths of empirical distributions and replayed arrivals absolute (relative
    to `base`)."""
    if isinstance(node, dict):
        if node.get("kind") in ("empirical", "replay") and isinstance(node.get("file"), str) and not Path(node["file"]).is_absolute():
            node["file"] = str((base / node["file"]).resolve())
        for v in node.values():
            _resolve_files(v, base)
    elif isinstance(node, list):
        for v in node:
            _resolve_files(v, base)


def load(source: str | Path, sets: Iterable[str] = ()) -> Scenario:
    """Loads a scenario from a TOML (or `.json`) path or a packaged preset name (`load("rfc2415")`),
    then applies `PATH=VALUE` overrides (`sets`). Raises `FileNotFoundError` or `ScenarioError`."""
    path = Path(source)
    if not path.exists() and str(source) in presets():
        path = preset_path(str(source))
    if not path.is_file():
        what = "is a folder, not a scenario file" if path.is_dir() else "no such scenario file or preset"
        raise FileNotFoundError(f"{source}: {what} (presets: {', '.join(presets())})")
    try:
        data = json.loads(_core.normalize_path(str(path)))
    except _core.ScenarioError as e:
        raise ScenarioError.from_core(e, str(source)) from None
    _resolve_files(data, path.parent)
    return Scenario(data, str(path)).with_sets(sets)
