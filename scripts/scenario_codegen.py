"""Files produced from the core's scenario schema (`iwlab._core.schema()`, derived from the serde
structs of crates/iwlab-core/src/scenario): the pydantic models `python/iwlab/scenario_model.py`
(datamodel-code-generator), the field reference of docs/scenario-format.md (between the
`<!-- fields:begin -->` / `<!-- fields:end -->` markers) and the tables of its sections (between
`<!-- table:NAME:begin -->` / `<!-- table:NAME:end -->`, NAME in `SECTION_TABLES`); the prose
around them is written by hand.

    .venv/bin/python scripts/scenario_codegen.py           # rewrite both from the built extension
    .venv/bin/python scripts/scenario_codegen.py --check   # exit 1 if either is out of date

tests/test_scenario_schema.py runs the check.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "python" / "iwlab" / "scenario_model.py"
DOCS = ROOT / "docs" / "scenario-format.md"
BEGIN, END = "<!-- fields:begin -->", "<!-- fields:end -->"

HEADER = '''"""The pydantic models of the scenario format, GENERATED from the core's JSON Schema by
scripts/scenario_codegen.py (datamodel-code-generator): do not edit; change the serde structs
of crates/iwlab-core/src/scenario and rerun the script. `ScenarioModel` is a whole scenario file;
validation is the core's (`iwlab.scenario.Scenario.from_data`), these give typed access
(`Scenario.model`) and let Python build scenarios."""

'''


def schema() -> dict[str, Any]:
    from iwlab import _core

    return json.loads(_core.schema("scenario"))


# --- the pydantic models -----------------------------------------------------------------

# Class names of the `kind`s of a tagged table: the kind in CamelCase and this suffix
# (`kind = "web"` of an app: `WebApp`; `kind = "drop-tail"` of a queue: `DropTail`).
KIND_SUFFIX = {"App": "App", "IwSpec": "Iw", "ArrivalsSpec": "Arrivals", "LossSpec": "Loss", "DistSpec": "",
               "QueueSpec": "", "TopologySpec": ""}


def _titled(s: dict[str, Any]) -> dict[str, Any]:
    s = json.loads(json.dumps(s))
    s["title"] = "ScenarioModel"
    for name, suffix in KIND_SUFFIX.items():
        for v in s["$defs"][name]["oneOf"]:
            kind = v["properties"]["kind"]["const"]
            v["title"] = "".join(w[:1].upper() + w[1:] for w in kind.split("-")) + suffix
            # a model of one kind knows its kind: `DropTail(limit="20pkt")`
            v["properties"]["kind"]["default"] = kind
            v["required"] = [k for k in v.get("required", []) if k != "kind"]
        if len(s["$defs"][name]["oneOf"]) == 1:  # one kind so far: the table itself, not a union of one
            s["$defs"][name] = s["$defs"][name]["oneOf"][0]
    return s


def model_source(s: dict[str, Any]) -> str:
    """The generated module (deterministic for one datamodel-code-generator version)."""
    s = _titled(s)
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "scenario.schema.json", Path(tmp) / "scenario_model.py"
        src.write_text(json.dumps(s, indent=2))
        subprocess.run(
            [str(Path(sys.executable).with_name("datamodel-codegen")),
             "--input", str(src), "--input-file-type", "jsonschema", "--output", str(out),
             "--output-model-type", "pydantic_v2.BaseModel", "--target-python-version", "3.10",
             "--use-annotated", "--field-constraints", "--use-double-quotes", "--use-schema-description",
             "--use-field-description", "--enum-field-as-literal", "all", "--use-union-operator",
             "--use-standard-collections", "--collapse-root-models", "--disable-timestamp",
             "--extra-fields", "forbid", "--use-title-as-name", "--base-class", "iwlab.scenario_base.ScenarioBase",
             "--formatters", "black", "isort"],
            check=True, capture_output=True, text=True)
        body = out.read_text()
    return HEADER + body[body.index("from __future__"):]


# --- the field reference of the docs -----------------------------------------------------

def _name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _type(p: dict[str, Any]) -> str:
    if "$ref" in p:
        return f"[{_name(p['$ref'])}](#{_name(p['$ref']).lower()})"
    if "const" in p:
        return f"`{json.dumps(p['const'])}`"
    if "enum" in p:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in p["enum"] if v is not None)
    for key in ("anyOf", "oneOf"):
        if key in p:
            parts = [_type(q) for q in p[key] if q.get("type") != "null"]
            return " or ".join(dict.fromkeys(parts))
    t = p.get("type")
    if isinstance(t, list):
        t = [x for x in t if x != "null"][0]
    if t == "array":
        return f"list of {_type(p.get('items', {}))}"
    if t == "object" and "additionalProperties" in p and isinstance(p["additionalProperties"], dict):
        return f"table of {_type(p['additionalProperties'])}"
    if t == "string" and "pattern" in p:
        return "string (with a unit)"
    return t or "any"


def _text(s: str | None) -> str:
    # one line; rustdoc's links ([`TcpConfig::default`]) read as plain code here
    text = re.sub(r"\[`([^`]+)`\](\([^)]*\))?", r"`\1`", " ".join((s or "").split()))
    return text.replace("|", "\\|")


def _default(p: dict[str, Any], required: bool) -> str:
    if required:
        return "required"
    if "default" in p and p["default"] is not None:
        return f"`{json.dumps(p['default'], ensure_ascii=False)}`"
    return "—"


def _table(obj: dict[str, Any]) -> list[str]:
    req = set(obj.get("required", []))
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for key, p in obj.get("properties", {}).items():
        rows.append(f"| `{key}` | {_type(p)} | {_default(p, key in req)} | {_text(p.get('description'))} |")
    return rows


def _objects(name: str, d: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(heading, object schema) of a definition: itself, or each `kind` of a tagged union."""
    if "properties" in d:
        return [(name, d)]
    out = []
    for v in d.get("oneOf", []) + d.get("anyOf", []):
        kind = v.get("properties", {}).get("kind", {}).get("const")
        if kind is not None:
            out.append((f'{name}: kind = "{kind}"', v))
    return out


# The tables of the document's sections (marker name -> the heading's anchor): the top level,
# `[tcp]` and `[quic]` tables, and the fields every `[[apps]]` kind shares. The reference points
# to them rather than repeating them.
SECTION_TABLES = {"Scenario": "top-level", "TcpSpec": "tcp", "QuicSpec": "quic", "App.common": "apps--applications"}


def _app_kinds(s: dict[str, Any]) -> list[dict[str, Any]]:
    return s["$defs"]["App"]["oneOf"]


def _app_common(s: dict[str, Any]) -> dict[str, Any]:
    """The fields every application kind has (the schema repeats them per kind), `kind` first."""
    kinds = _app_kinds(s)
    first = kinds[0]
    keys = [k for k in first["properties"] if k != "kind" and all(k in v["properties"] for v in kinds)]
    consts = [v["properties"]["kind"]["const"] for v in kinds]
    props = {"kind": {"enum": consts, "description": "The application kind; its own fields are in the "
                      "[App](#app) tables of the field reference."}}
    props.update({k: first["properties"][k] for k in keys})
    return {"properties": props, "required": ["kind", *[k for k in keys if k in first.get("required", [])]]}


def section_table(s: dict[str, Any], name: str) -> list[str]:
    if name == "Scenario":
        return _table(s)
    if name == "App.common":
        return _table(_app_common(s))
    return _table(s["$defs"][name])


def _pointer(name: str) -> str:
    return f"Its fields: the table of [its section](#{SECTION_TABLES[name]})."


def docs_section(s: dict[str, Any]) -> str:
    lines = [BEGIN, "", "### Scenario", "", _text(s.get("description")), "", _pointer("Scenario")]
    common = set(_app_common(s)["properties"]) - {"kind"}
    for name, d in sorted(s.get("$defs", {}).items()):
        lines += ["", f"### {name}", ""]
        if d.get("description"):
            lines += [_text(d["description"]), ""]
        if name in SECTION_TABLES:
            lines += [_pointer(name), ""]
            continue
        objs = _objects(name, d)
        if not objs:
            lines += [f"Type: {_type(d)}."]
        for heading, obj in objs:
            if name == "App":  # the common fields are in the [[apps]] section
                obj = {**obj, "properties": {k: v for k, v in obj["properties"].items() if k not in common}}
                heading += f" (and the [common fields](#{SECTION_TABLES['App.common']}))"
            if heading != name:
                lines += [f"**{heading}**" + (f" — {_text(obj.get('description'))}" if obj.get("description") else ""), ""]
            lines += [*_table(obj), ""]
    return "\n".join(line for line in lines).rstrip() + "\n\n" + END


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- table:{name}:begin -->", f"<!-- table:{name}:end -->"


def docs_text(s: dict[str, Any]) -> str:
    text = DOCS.read_text()
    a, b = text.index(BEGIN), text.index(END) + len(END)
    text = text[:a] + docs_section(s) + text[b:]
    for name in SECTION_TABLES:
        begin, end = _markers(name)
        a, b = text.index(begin), text.index(end) + len(end)
        text = text[:a] + "\n".join([begin, *section_table(s, name), end]) + text[b:]
    return text


def main(argv: list[str]) -> int:
    s = schema()
    want = {MODEL: model_source(s), DOCS: docs_text(s)}
    stale = [p for p, t in want.items() if not p.exists() or p.read_text() != t]
    if "--check" in argv:
        for p in stale:
            print(f"{p.relative_to(ROOT)} is out of date: run scripts/scenario_codegen.py", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.write_text(want[p])
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
