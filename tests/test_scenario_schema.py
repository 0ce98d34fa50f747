"""The scenario format is declared once, by the core's serde structs: the JSON Schema derived
from them (`iwlab._core.schema`, `iwlab schema`), the generated pydantic models
(`iwlab.scenario_model`) and the field reference of docs/scenario-format.md agree with it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from iwlab import _core
from iwlab.scenario import PROFILES, Scenario, ScenarioModel, load, presets

ROOT = Path(__file__).resolve().parents[1]


def codegen():
    spec = importlib.util.spec_from_file_location("scenario_codegen", ROOT / "scripts" / "scenario_codegen.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SCHEMA = json.loads(_core.schema("scenario"))


def test_the_generated_model_and_docs_are_up_to_date():
    gen = codegen()
    assert gen.model_source(SCHEMA) == gen.MODEL.read_text(), "run scripts/scenario_codegen.py"
    assert gen.docs_text(SCHEMA) == gen.DOCS.read_text(), "run scripts/scenario_codegen.py"


def _generated(docs: str, begin: str, end: str) -> str:
    return docs[docs.index(begin):docs.index(end)]


def test_the_docs_generated_tables_name_every_field_of_every_table():
    docs = (ROOT / "docs" / "scenario-format.md").read_text()
    gen = codegen()
    table = {name: _generated(docs, *gen._markers(name)) for name in gen.SECTION_TABLES}
    reference = _generated(docs, gen.BEGIN, gen.END)
    for key in SCHEMA["properties"]:
        assert f"| `{key}` |" in table["Scenario"], key
    for name in ("TcpSpec", "QuicSpec"):
        for key in SCHEMA["$defs"][name]["properties"]:
            assert f"| `{key}` |" in table[name], (name, key)
    # every field of every application kind: the common table, or the kind's in the reference
    for kind in SCHEMA["$defs"]["App"]["oneOf"]:
        for key in kind["properties"]:
            assert f"| `{key}` |" in table["App.common"] or f"| `{key}` |" in reference, key
    assert "| `count` |" in table["App.common"] and "| `size` |" not in table["App.common"]


def test_each_definition_has_a_heading_in_the_reference_and_a_placed_table_a_pointer():
    docs = (ROOT / "docs" / "scenario-format.md").read_text()
    gen = codegen()
    reference = _generated(docs, gen.BEGIN, gen.END)
    for name in SCHEMA["$defs"]:
        assert f"\n### {name}\n" in reference, name
    for name, anchor in gen.SECTION_TABLES.items():
        if name in SCHEMA["$defs"]:
            assert f"(#{anchor})" in reference, name


def test_the_schema_documents_each_field_from_its_doc_comment():
    assert {"name", "duration", "topology", "apps"} <= set(SCHEMA["properties"])
    assert SCHEMA["properties"]["seed"]["default"] == 1
    assert "reno" in SCHEMA["$defs"]["TcpSpec"]["properties"]["cc"]["description"]
    kinds = [v["properties"]["kind"]["const"] for v in SCHEMA["$defs"]["App"]["oneOf"]]
    assert kinds == ["ftp", "bulk", "web", "short-flows", "poisson-flows", "udp"]


def test_the_policy_file_schema_is_the_cores_too():
    s = json.loads(_core.schema("policy-file"))
    assert set(s["properties"]) == {"iw", "quic", "routes", "tcp"}
    with pytest.raises(ValueError, match="which"):
        _core.schema("nope")


@pytest.mark.parametrize("name", presets())
def test_every_presets_canonical_data_is_a_model_and_comes_back_unchanged(name):
    data = load(name).data
    model = ScenarioModel.model_validate(data)
    assert Scenario.from_model(model).data == data


def test_the_linux_profile_is_the_cores_table():
    assert PROFILES["linux"]["cc"] == "cubic" and PROFILES["linux"]["delayed_ack"] == {"segments": 2, "timeout": "40ms"}
    a = load("rfc2415", ["tcp.profile=linux"]).data["tcp"]
    assert a["profile"] == "linux"
    with pytest.raises(ValueError, match="tcp.profile = \"bsd\""):
        _core.tcp_profile_toml("bsd")
