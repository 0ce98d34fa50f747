"""docs/architecture.md is the code's: its rooms and import graph are measured from it
(scripts/architecture.py), and each file of "Where each thing lives" exists and defines the
items named beside it."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"


def architecture():
    spec = importlib.util.spec_from_file_location("architecture", ROOT / "scripts" / "architecture.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def where_each_thing_lives() -> list[tuple[str, str, list[str]]]:
    """(thing, file, items) of each row of the document's table."""
    text = DOC.read_text()
    table = text[text.index("## Where each thing lives"):text.index("## A run, end to end")]
    rows = [ln for ln in table.splitlines() if ln.startswith("| ") and not ln.startswith("| thing")]
    out = []
    for row in rows:
        thing, file, items = [c.strip() for c in row.strip("|").split("|")]
        out.append((thing, file.strip("`"), re.findall(r"`([^`]+)`", items)))
    return out


DEFINES = r"\b(fn|struct|enum|trait|type|const|static|mod|def|class)\s+{}\b"


def missing(file: str, items: list[str]) -> list[str]:
    """The items `file` does not define (every item when there is no such file)."""
    path = ROOT / file
    if not path.is_file():
        return [f"{file} (no such file)"]
    text = path.read_text()
    return [i for i in items if not re.search(DEFINES.format(re.escape(i)), text)]


def test_the_rooms_and_the_import_graph_are_measured_from_the_code():
    assert architecture().doc_text() == DOC.read_text(), "run scripts/architecture.py"


@pytest.mark.parametrize("thing,file,items", where_each_thing_lives(), ids=lambda v: v if isinstance(v, str) else None)
def test_each_thing_lives_in_the_file_named_and_the_file_defines_its_items(thing, file, items):
    assert missing(file, items) == []


def test_the_table_names_the_places_the_brief_asks_for():
    things = " ".join(t for t, _, _ in where_each_thing_lives())
    for what in ("CA state machine", "PRR", "RACK", "IW decision", "scenario field", "run's storage",
                 "QUIC's connection driver"):
        assert what in things, what


def test_a_moved_file_or_a_renamed_item_is_caught():
    assert missing("crates/iwlab-core/src/tcp/recovery/prr.rs", ["Prr", "NoSuchItem"]) == ["NoSuchItem"]
    assert missing("crates/iwlab-core/src/tcp/prr.rs", ["Prr"]) == ["crates/iwlab-core/src/tcp/prr.rs (no such file)"]
    # A name only mentioned (in a comment or a call) is not a definition.
    assert missing("crates/iwlab-core/src/tcp/endpoint.rs", ["initial_window"]) == ["initial_window"]


def test_the_prose_introduces_every_crate():
    text = DOC.read_text()
    prose = text[:text.index("<!-- rooms:begin -->")]
    for name, _, _ in architecture().crates():
        assert re.search(rf"`(crates/)?{re.escape(name)}`", prose), name
