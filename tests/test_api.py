"""The Python API runs scenarios and returns Arrow-backed DataFrames; results save and load;
the type stubs match the extension."""

import ast
import doctest
import inspect
from pathlib import Path

import pandas as pd
import pytest

import iwlab
import iwlab.api
from iwlab import _core

SHORT = ["duration=20s", "warmup=2s"]


@pytest.fixture(scope="module")
def rfc2415():
    return iwlab.run(iwlab.load("rfc2415", SHORT), seed=3)


def test_a_preset_runs_and_its_records_balance(rfc2415):
    s = rfc2415.summary
    assert s["packets_created"] == s["packets_delivered"] + s["packets_dropped"] + s["packets_in_flight"]
    assert len(rfc2415.flows) == s["flows"] and len(rfc2415.pages) == s["pages"]
    assert str(rfc2415.pages["delay"].dtype).endswith("[pyarrow]")


@pytest.mark.parametrize("table, column, dtype", [
    ("flows", "flow", "int64[pyarrow]"),
    ("flows", "completion", "double[pyarrow]"),
    ("flows", "completed", "bool[pyarrow]"),
    ("flows", "iw_policy", "string[pyarrow]"),
    ("links", "from", "string[pyarrow]"),
    ("queues", "time", "double[pyarrow]"),  # empty (no sampling) yet typed
    ("queues", "packets", "int64[pyarrow]"),
])
def test_every_column_has_its_arrow_type_even_in_an_empty_table(rfc2415, table, column, dtype):
    assert str(getattr(rfc2415, table)[column].dtype) == dtype


def test_the_summary_has_the_headline_numbers(rfc2415):
    s = rfc2415.summary
    pages = rfc2415.pages
    done = pages[pages["completed"] & ~pages["in_warmup"]]
    assert s["median_page_delay"] == pytest.approx(float(done["delay"].median()))
    for key in ("bottleneck_forward_utilisation", "bottleneck_reverse_utilisation",
                "bottleneck_forward_drop_rate", "bottleneck_reverse_drop_rate"):
        assert 0 <= s[key] <= 1, key
    assert s["bottleneck_reverse_utilisation"] > s["bottleneck_forward_utilisation"]  # data flows R -> L
    assert s["events_per_second"] > 0 and s["scenario"] == "rfc2415"


def test_the_summary_times_the_engine_run_in_wall_and_cpu_seconds(rfc2415):
    s = rfc2415.summary
    # One thread runs the engine: its CPU time is positive and cannot exceed the wall time
    # (beyond clock resolution).
    assert 0 < s["cpu_seconds"] <= s["wall_seconds"] * 1.05 + 0.002


def test_the_same_seed_gives_identical_records_and_another_seed_other_records():
    sc = iwlab.load("rfc2415", SHORT)
    a, b, c = iwlab.run(sc, seed=5), iwlab.run(sc, seed=5), iwlab.run(sc, seed=6)
    for name in iwlab.api.TABLES:
        assert getattr(a, name).equals(getattr(b, name)), name
    assert not a.flows.equals(c.flows) and (a.seed, c.seed) == (5, 6)


def test_the_seed_defaults_to_the_scenarios():
    assert iwlab.run(iwlab.load("rfc2415", [*SHORT, "seed=9"])).seed == 9


def test_save_and_load_round_trip(rfc2415, tmp_path):
    out = rfc2415.save(tmp_path / "run")
    assert sorted(p.name for p in out.iterdir()) == [
        "flows.parquet", "links.parquet", "pages.parquet", "queues.parquet", "scenario.toml", "summary.json"]
    back = iwlab.Result.load(out)
    for name in iwlab.api.TABLES:
        pd.testing.assert_frame_equal(getattr(back, name), getattr(rfc2415, name))
    assert back.scenario.data == rfc2415.scenario.data and back.summary == rfc2415.summary


def test_a_result_shows_its_summary_in_jupyter(rfc2415):
    page = rfc2415._repr_html_()
    assert page.startswith("<table>") and "iwlab run: rfc2415, seed 3" in page
    assert "median page delay" in page and "bottleneck R→L drop rate" in page
    assert repr(rfc2415).startswith("Result(scenario='rfc2415', seed=3, flows=")


def test_a_pcap_is_written_through_the_api(tmp_path):
    path = tmp_path / "t.pcap"
    r = iwlab.run(iwlab.load("congested-links", ["duration=5s", "warmup=1s"]), seed=1, pcap=path, flows=[0])
    assert r.summary["flows"] > 0 and path.read_bytes()[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")


def test_a_core_error_at_build_time_is_a_scenario_error(tmp_path):
    csv = tmp_path / "sizes.csv"
    csv.write_text("1000,0\n10000,1\n")
    text = iwlab.load("iw-function", SHORT).to_toml().replace('builtin = "websearch"', f'file = "{csv}"')
    sc = iwlab.Scenario.from_toml(text, "x.toml")
    csv.unlink()
    with pytest.raises(iwlab.ScenarioError) as e:
        iwlab.run(sc)
    assert e.value.source == "x.toml" and "sizes.csv" in str(e.value)


def stub_functions() -> dict[str, ast.FunctionDef]:
    stub = Path(iwlab.__file__).with_name("_core.pyi")
    return {n.name: n for n in ast.parse(stub.read_text()).body if isinstance(n, ast.FunctionDef)}


def stub_classes() -> dict[str, ast.ClassDef]:
    stub = Path(iwlab.__file__).with_name("_core.pyi")
    return {n.name: n for n in ast.parse(stub.read_text()).body if isinstance(n, ast.ClassDef)}


def test_the_type_stubs_match_the_extension():
    stubs = stub_functions()
    classes = {n for n in dir(_core) if isinstance(getattr(_core, n), type)} - {"ScenarioError"}
    public = {n for n in dir(_core) if not n.startswith("_") and callable(getattr(_core, n))} - {"ScenarioError"}
    assert set(stubs) == public - classes
    assert classes <= set(stub_classes())
    for cls in classes:  # methods of the extension's classes (self dropped)
        for node in stub_classes()[cls].body:
            if isinstance(node, ast.FunctionDef):
                node.args.args = node.args.args[1:]
                stubs[f"{cls}.{node.name}"] = node
    for name, node in stubs.items():
        obj = getattr(_core, name.split(".")[0])
        real = inspect.signature(getattr(obj, name.split(".")[1]) if "." in name and not name.endswith("__init__")
                                 else obj)
        if "." in name and not name.endswith("__init__"):
            real = real.replace(parameters=[p for p in real.parameters.values() if p.name != "self"])
        args = node.args.args
        defaults = [None] * (len(args) - len(node.args.defaults)) + node.args.defaults
        assert [a.arg for a in args] == list(real.parameters), name
        for a, d in zip(args, defaults):
            want = real.parameters[a.arg].default
            assert (d is None and want is inspect.Parameter.empty) or ast.literal_eval(d) == want, (name, a.arg)
    assert Path(iwlab.__file__).with_name("py.typed").exists()


@pytest.mark.parametrize("module", [iwlab, iwlab.api])
def test_the_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# --- records streamed out of the engine ----------------------------------------------------

def _listed(columns):
    """The core's columns of a sink chunk as Python lists, through Arrow."""
    return {name: iwlab.api._arrow_from_buffers(c).to_pylist() for name, c in columns.items()}


def test_a_sink_gets_every_table_in_chunks_equal_to_the_returned_columns():
    text = iwlab.load("rfc2415", SHORT).to_json()
    whole = _core.run(text, "json", 3, None, None, True)
    chunks = []
    out = _core.run(text, "json", 3, None, None, True, lambda name, columns: chunks.append((name, _listed(columns))))
    assert set(out) == {"summary"}
    assert [n for n, _ in chunks] == ["flows", "pages", "links", "queues", "iw_events"]  # one chunk each: small
    for name, columns in chunks:
        assert columns == whole[name], name  # strings, missing values and booleans survive the buffers
    assert any(v is None for v in whole["flows"]["completion"]) and any(whole["flows"]["completed"])
    assert {k: v for k, v in out["summary"].items() if "seconds" not in k} == \
        {k: v for k, v in whole["summary"].items() if "seconds" not in k}


def test_a_long_run_hands_its_flows_over_in_chunks_of_at_most_4096_rows():
    # A chunk in flight costs ~1.2 kB per row at its peak: bounded chunks keep the memory of
    # records flat in the number of flows (bench/README.md, "Memory per flow").
    root = Path(__file__).resolve().parent.parent
    text = iwlab.load(str(root / "bench" / "scenarios" / "million-flows.toml"), ["duration=1.2s"]).to_json()
    rows = []
    out = _core.run(text, "json", 1, None, None, False,
                    lambda name, columns: rows.append(columns["flow"][1]) if name == "flows" else None)
    assert out["summary"]["flows"] > 4096 and len(rows) > 1
    assert max(rows) == 4096 and sum(rows) == out["summary"]["flows"]


def test_a_run_with_out_writes_the_tables_as_it_goes_and_reads_them_lazily(rfc2415, tmp_path):
    r = iwlab.run(iwlab.load("rfc2415", SHORT), seed=3, out=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flows.parquet", "links.parquet", "pages.parquet",
                                                           "queues.parquet"]
    assert r._frames == {} and set(r._files) == {"flows", "pages", "links", "queues"}
    for name in iwlab.api.TABLES:
        pd.testing.assert_frame_equal(getattr(r, name), getattr(rfc2415, name))
    assert r.iw_events is None


def test_the_headline_of_streamed_records_is_the_headline_of_the_columns():
    sc = iwlab.load("rfc2415", SHORT)
    raw = _core.run(sc.to_json(), "json", 3)
    r = iwlab.run(sc, seed=3)
    expected = iwlab.api.headline(raw["flows"], raw["pages"], raw["links"], r.summary)
    assert expected["median_flow_completion"] is not None and expected["median_page_delay"] is not None
    assert {k: r.summary[k] for k in expected} == expected


def test_save_after_a_run_with_out_keeps_the_files_and_copies_them_elsewhere(tmp_path):
    r = iwlab.run(iwlab.load("rfc2415", SHORT), seed=3, out=tmp_path / "a")
    before = (tmp_path / "a" / "flows.parquet").read_bytes()
    r.save(tmp_path / "a")
    r.save(tmp_path / "b")
    assert (tmp_path / "a" / "flows.parquet").read_bytes() == before == (tmp_path / "b" / "flows.parquet").read_bytes()
    pd.testing.assert_frame_equal(iwlab.api.Result.load(tmp_path / "b").flows, r.flows)
