"""The profile-guided build of the extension (bench/pgo/ext.sh, `make ext`): its training set
stays runnable as scenarios and presets change, and the extension tests import is the optimised
build, not the instrumented one the training run briefly puts in its place."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from iwlab import _core
from iwlab.scenario_io import load

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench" / "pgo"))
import train  # noqa: E402  (bench/pgo/train.py)


@pytest.mark.parametrize("source, sets", train.TRAINING, ids=[s for s, _ in train.TRAINING])
def test_every_training_scenario_loads_with_its_short_duration(source: str, sets: list[str]) -> None:
    path = str(ROOT / source) if source.endswith(".toml") else source
    scenario = load(path, sets)
    wanted = dict(s.split("=", 1) for s in sets)["duration"]
    assert scenario.data["duration"] == wanted


def test_training_covers_the_benchmarks_and_the_studies_presets() -> None:
    sources = {s for s, _ in train.TRAINING}
    assert {"bench/scenarios/bulk.toml", "bench/scenarios/short-flows.toml"} <= sources
    assert {"rfc2415", "congested-links", "iw-function", "rfc6928"} <= sources


def test_the_installed_extension_carries_no_profile_counters() -> None:
    # An instrumented build links LLVM's profile runtime (__llvm_profile_*), writes .profraw
    # files on exit and runs ~2x slower: ext.sh must always end with the optimised build.
    assert b"__llvm_profile_runtime" not in Path(_core.__file__).read_bytes()
