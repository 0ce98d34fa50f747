"""Scenario files: presets, the pydantic mirror of the format, overrides, and error messages
that name the file, line, field, value and what is allowed."""

import doctest
import json
import re
from pathlib import Path

import pytest

import iwlab
from iwlab import overrides as ov
from iwlab import scenario as sc_mod
from iwlab.scenario import Scenario, ScenarioError, ScenarioModel, load, preset_path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "scenario-format.md"
PRESETS = iwlab.presets()


def doc_example() -> str:
    text = DOCS.read_text()
    block = text[text.index("## A complete example"):]
    return re.search(r"```toml\n(.*?)```", block, re.S).group(1)


def test_the_packaged_presets_are_the_five_studies():
    assert PRESETS == ["bench-bulk", "congested-links", "iw-function", "rfc2415", "rfc6928"]
    assert all(iwlab.scenario.describe_presets().values())


@pytest.mark.parametrize("name", PRESETS)
def test_the_models_accept_and_reproduce_every_presets_canonical_data(name):
    data = load(name).data
    model = ScenarioModel.model_validate(data)
    assert model.to_data() == data
    assert Scenario.from_model(model).data == data


def test_the_models_accept_the_complete_example_of_the_format_docs():
    s = Scenario.from_toml(doc_example(), "example.toml")
    model = s.model
    assert model.topology.bottleneck.queue.kind == "red"
    assert model.topology.bottleneck.loss.direction == "reverse"
    assert [a.kind for a in model.apps] == ["web", "web", "udp", "poisson-flows"]
    assert model.to_data() == s.data


def test_a_scenario_built_from_models_runs():
    m = ScenarioModel(
        name="tiny", duration="5s",
        topology=sc_mod.Dumbbell(
            bottleneck=sc_mod.BottleneckSpec(rate="2Mbps", delay="20ms", queue=sc_mod.DropTail(limit="20pkt")),
            left=[sc_mod.HostGroup(name="c", count=2, access=sc_mod.AccessSpec(rate="10Mbps", delay="1ms"))],
            right=[sc_mod.HostGroup(name="s", count=2, access=sc_mod.AccessSpec(rate="10Mbps", delay="1ms"))]),
        iw=sc_mod.IwSection(default="ten", policies={"ten": sc_mod.Rfc6928Iw()}),
        apps=[sc_mod.WebApp(clients="c", servers="s", count=2, think=sc_mod.Exponential(mean=1.0))],
    )
    r = iwlab.run(Scenario.from_model(m), seed=4)
    assert r.summary["pages"] > 0 and r.summary["scenario"] == "tiny"


@pytest.mark.parametrize("data_path, value, expected", [
    ("bogus", 1, "bogus: unknown field `bogus`, expected one of `name`, `description`, `seed`"),
    ("topology.bottleneck.rat", "1Mbps", "unknown field `rat`, expected one of `rate`, `delay`, `queue`"),
    ("apps[0].thinkk", 1, "apps[0].thinkk: unknown field `thinkk`, expected one of `name`"),
    ("tcp.cubic.betta", 0.5, "tcp.cubic.betta: unknown field `betta`, expected one of `beta`, `c`"),
    ("iw.policies.iw1.segmentz", 3, "iw.policies.iw1.segmentz: unknown field `segmentz`, expected `segments`"),
])
def test_data_with_an_unknown_key_is_rejected_naming_it_and_the_allowed_keys(data_path, value, expected):
    data = load("rfc2415").data
    data.setdefault("tcp", {}).setdefault("cubic", {})
    ov.set_path(data, data_path, value)
    with pytest.raises(ScenarioError) as e:
        Scenario.from_data(data, "mine")
    assert expected in str(e.value) and str(e.value).startswith("mine: ")


@pytest.mark.parametrize("data_path, value, expected", [
    ("apps[0].count", "16", 'apps[0].count: invalid type: string "16", expected u32'),
    ("apps[0].count", 100_001, "apps[0].count = 100001 is not allowed; expected 0..=100000 instances"),
    ("apps[0].kind", "webb", "apps[0].kind: unknown variant `webb`, expected one of `ftp`, `bulk`, `web`"),
    ("apps[0].think", {"lo": 1}, "apps[0].think: missing field `kind`"),
    ("topology.bottleneck.queue", {"kind": "fifo"},
     "topology.bottleneck.queue.kind: unknown variant `fifo`, expected one of `drop-tail`, `red`, `codel`"),
    ("tcp.sack", "yes", 'tcp.sack: invalid type: string "yes", expected a boolean'),
    ("duration", -1, 'duration: -1 is negative; expected a duration such as "50ms"'),
    ("topology.bottleneck.loss", {"kind": "random", "p": 1.5}, "topology.bottleneck.loss.p = 1.5 is not allowed"),
])
def test_structural_errors_name_the_path_the_value_and_what_is_allowed(data_path, value, expected):
    data = load("rfc2415").data
    ov.set_path(data, data_path, value)
    with pytest.raises(ScenarioError) as e:
        Scenario.from_data(data)
    assert expected in str(e.value) and e.value.path == expected.split(" ")[0].rstrip(":")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("data_path, value, expected", [
    ("iw.default", "iw9", 'iw.default = "iw9" is not allowed; expected a defined policy'),
    ("topology.bottleneck.rate", "0Mbps", "topology.bottleneck.rate = 0bps is not allowed; expected > 0"),
    ("warmup", "400s", "warmup"),
    ("apps[0].think.hi", 0.5, "apps[0].think.hi = 0.5 is not allowed; expected >= uniform.lo = 1"),
    ("topology.jitter", "2s", "topology.jitter = 2s is not allowed; expected 0..=1s"),
])
def test_the_core_rejects_what_the_models_cannot_know(data_path, value, expected):
    data = load("rfc2415").data
    ov.set_path(data, data_path, value)
    with pytest.raises(ScenarioError) as e:
        Scenario.from_data(data)
    assert expected in str(e.value) and e.value.line is None


@pytest.mark.parametrize("overrides, check", [
    ({"apps[0].count": 32}, lambda d: d["apps"][0]["count"] == 32),
    ({"topology.bottleneck.rate": "2000kbps"}, lambda d: d["topology"]["bottleneck"]["rate"] == "2Mbps"),
    ({"tcp.cc": "cubic", "tcp.cubic.beta": 0.8}, lambda d: d["tcp"]["cubic"] == {"beta": 0.8}),
    ({"topology.bottleneck.loss": {"kind": "random", "p": 0.01}},
     lambda d: d["topology"]["bottleneck"]["loss"] == {"kind": "random", "p": 0.01, "direction": "both"}),
    ({"duration": 20}, lambda d: d["duration"] == "20s"),
    ({"topology.jitter": "0.2ms"}, lambda d: d["topology"]["jitter"] == "200us"),
    ({"apps[1].tcp.mss": 1000}, lambda d: d["apps"][1]["tcp"]["mss"] == "1kB"),
])
def test_overrides_replace_fields_and_the_result_is_canonical(overrides, check):
    base = load("rfc2415")
    s = base.with_overrides(overrides)
    assert check(s.data) and s.hash() != base.hash()
    assert base.data == load("rfc2415").data  # the original is untouched


@pytest.mark.parametrize("item, path, value", [
    ("apps[0].count=32", "apps[0].count", 32),
    ('topology.bottleneck.rate="2Mbps"', "topology.bottleneck.rate", "2Mbps"),
    ("topology.bottleneck.rate=2Mbps", "topology.bottleneck.rate", "2Mbps"),
    ("apps[0].http=1.1", "apps[0].http", "1.1"),
    ("name=2024", "name", "2024"),
    ("duration=20", "duration", "20s"),
    ("tcp.sack=true", "tcp.sack", True),
    ("topology.bottleneck.queue={ kind = 'red' }", "topology.bottleneck.queue", {"kind": "red"}),
    ("apps[0].start = 2024-01-01", "apps[0].start", None),
])
def test_set_values_are_toml_literals_or_bare_strings(item, path, value):
    if value is None:  # a TOML date is taken as text, which no duration is
        with pytest.raises(ScenarioError, match=r'apps\[0\]\.start.*"2024-01-01"'):
            load("rfc2415", [item])
        return
    node = load("rfc2415", [item]).data
    for seg in ov.parse_path(path):
        node = node[seg]
    assert node == value


@pytest.mark.parametrize("sets, source, expected", [
    (["apps[5].count=3"], "--set apps[5].count=3", "apps[5]: no such entry; apps has 2 entries (apps[0] to apps[1])"),
    (["apps[0"], "--set", "'apps[0': expected PATH=VALUE"),
    (["a..b=1"], "--set a..b=1", "'a..b' is not a field path"),
    (["topology.bottleneck.rate.x=1"], "--set topology.bottleneck.rate.x=1",
     "topology.bottleneck.rate is a value ('1.5Mbps'), not a table"),
    (["duration=20s", "apps[0].count=x"], "--set apps[0].count=x", 'apps[0].count: invalid type: string "x"'),
    (["iw.default=iw9"], "--set iw.default=iw9", 'iw.default = "iw9" is not allowed; expected a defined policy'),
    (["topology.bottleneck.rate=-1Mbps"], "--set topology.bottleneck.rate=-1Mbps", '"-1Mbps" is negative'),
])
def test_a_bad_set_names_itself_and_the_path(sets, source, expected):
    with pytest.raises(ScenarioError) as e:
        load("rfc2415", sets)
    assert e.value.source == source and expected in str(e.value)


def test_sets_apply_in_order_so_a_new_table_can_be_filled_in():
    s = load("rfc2415", ["topology.bottleneck.queue={kind='red'}", "topology.bottleneck.queue.limit=50"])
    assert s.data["topology"]["bottleneck"]["queue"] == {"kind": "red", "limit": "50pkt"}


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


BASE = preset_path("rfc2415").read_text()
BAD_FILES = [
    ("unknown-key", BASE.replace('delay = "50ms"', 'delay = "50ms"\nrat = "1Mbps"'), 25, "topology.bottleneck.rat",
     "unknown field `rat`, expected one of `rate`"),
    ("wrong-type", BASE.replace("count = 16", 'count = "sixteen"'), 69, "apps[0].count",
     'invalid type: string "sixteen", expected u32'),
    ("negative-rate", BASE.replace('rate = "1.5Mbps"', 'rate = "-1.5Mbps"'), 23, "topology.bottleneck.rate",
     '"-1.5Mbps" is negative; expected a rate'),
    ("syntax", BASE.replace("count = 16", "count = = 16"), 69, "", "syntax error: invalid string"),
    ("bad-reference", BASE.replace('default = "iw1"', 'default = "iw9"'), 55, "iw.default",
     'iw.default = "iw9" is not allowed; expected a defined policy, one of ["iw1", "iw2", "iw3", "iw4"]'),
]


@pytest.mark.parametrize("name, text, line, field, expected", BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_a_bad_file_is_reported_with_its_name_line_and_field(tmp_path, name, text, line, field, expected):
    path = write(tmp_path, f"{name}.toml", text)
    with pytest.raises(ScenarioError) as e:
        load(path)
    err = e.value
    assert (err.source, err.line, err.path) == (str(path), line, field)
    assert str(err).startswith(f"{path}:{line}:") and expected in str(err) and "\n" not in str(err)


def test_a_missing_file_names_the_presets():
    with pytest.raises(FileNotFoundError, match=r"nope\.toml: no such scenario file or preset \(presets: bench-bulk"):
        load("nope.toml")


def test_a_json_file_is_read_as_json(tmp_path):
    path = write(tmp_path, "s.json", json.dumps(load("rfc2415").data))
    assert load(path).data == load("rfc2415").data


def test_relative_cdf_files_are_found_next_to_the_scenario(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "sizes.csv", "1000,0\n10000,0.5\n100000,1\n")
    text = load("iw-function", ["duration=10s", "warmup=1s"]).to_toml().replace(
        'builtin = "websearch"', 'file = "sizes.csv"')
    path = write(tmp_path / "sub", "flows.toml", text)
    monkeypatch.chdir(tmp_path)
    s = load(Path("sub") / "flows.toml")
    assert s.data["apps"][0]["size"]["file"] == str(tmp_path / "sub" / "sizes.csv")
    assert iwlab.run(s).summary["flows"] > 0


def test_the_json_schema_documents_the_format():
    schema = json.loads(iwlab._core.schema())
    assert {"name", "duration", "topology", "apps"} <= set(schema["properties"])
    assert "App" in schema["$defs"] and "description" in schema["$defs"]["TcpSpec"]["properties"]["cc"]


@pytest.mark.parametrize("module", [iwlab.scenario, iwlab.overrides])
def test_the_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_the_linux_profile_mirror_matches_the_core():
    """`PROFILES["linux"]` (read by the emulator) is the table of scenario/profile.rs."""
    import re
    import tomllib

    from iwlab.scenario import PROFILES

    rs = (Path(__file__).parents[1] / "crates/iwlab-core/src/scenario/profile.rs").read_text()
    table = re.search(r'pub const LINUX: &str = r#"(.*?)"#;', rs, re.S).group(1)
    assert tomllib.loads(table) == PROFILES["linux"]


def test_the_profile_and_its_fields_pass_the_models_and_the_core():
    sc = load("congested-links", sets=["tcp.prr=ssrb", "tcp.hystart=true", "tcp.quickack=4"])
    ScenarioModel.model_validate(sc.data)
    assert sc.data["tcp"]["profile"] == "linux" and sc.data["tcp"]["hystart"] is True
    with pytest.raises(ScenarioError, match=r"tcp\.prr.*crb"):
        load("congested-links", sets=["tcp.prr=fast"])


# --- arrivals and mixes: the core decides; the generated models take what it accepts ---------

TESTBED = {"mix": [{"response": "9seg", "server_iw": "iw3"}, {"response": "9seg", "server_iw": "iw10"},
                   {"response": "21seg", "server_iw": "iw3"}, {"response": "21seg", "server_iw": "iw10"}],
           "mix_order": "permuted-blocks",
           "arrivals": {"kind": "closed-loop", "think": {"kind": "uniform", "lo": 0.5, "hi": 1.0}}}
CLOSED = {"kind": "closed-loop", "think": "1s"}


def short_flows(tmp_path: Path, **fields) -> dict:
    """congested-links with apps[0] (short flows) changed: `None` removes a field."""
    data = load("congested-links").data
    app = data["apps"][0]
    for k, v in fields.items():
        if v is None:
            app.pop(k, None)
        else:
            app[k] = v
    (tmp_path / "flows.csv").write_text("start,response,server_iw\n0.5,14480,iw3\n1.25,1448,\n")
    if app["arrivals"].get("kind") == "replay":
        app["arrivals"]["file"] = str(tmp_path / app["arrivals"]["file"])
    return data


ARRIVAL_CASES = [
    ("testbed client", dict(response=None, **TESTBED), True),
    ("mix, default order", dict(response=None, mix=TESTBED["mix"], arrivals=CLOSED), True),
    ("poisson load", dict(arrivals={"kind": "poisson", "load": "4%"}), True),
    ("bursts", dict(arrivals={"kind": "bursts", "flows": 4, "gap": {"kind": "exponential", "mean": 2}}), True),
    ("replay", dict(response=None, start="0s", arrivals={"kind": "replay", "file": "flows.csv"}), True),
    ("response and mix", dict(**TESTBED), False),
    ("neither response nor mix", dict(response=None, arrivals=CLOSED), False),
    ("mix_order alone", dict(mix_order="cyclic"), False),
    ("empty mix", dict(response=None, mix=[], arrivals=CLOSED), False),
    ("mix entry without response", dict(response=None, mix=[{"server_iw": "iw3"}], arrivals=CLOSED), False),
    ("mix entry unknown key", dict(response=None, mix=[{"response": "1seg", "iw": "iw3"}], arrivals=CLOSED), False),
    ("unknown mix_order", dict(response=None, mix=TESTBED["mix"], mix_order="shuffled", arrivals=CLOSED), False),
    ("rate and load", dict(arrivals={"kind": "poisson", "rate": 1.0, "load": "4%"}), False),
    ("neither rate nor load", dict(arrivals={"kind": "poisson"}), False),
    ("load as a number", dict(arrivals={"kind": "poisson", "load": 0.04}), False),
    ("no flows per burst", dict(arrivals={"kind": "bursts", "flows": 0, "gap": "1s"}), False),
    ("bursts without gap", dict(arrivals={"kind": "bursts", "flows": 2}), False),
    ("closed loop without think", dict(arrivals={"kind": "closed-loop"}), False),
    ("unknown kind", dict(arrivals={"kind": "closed", "think": "1s"}), False),
    ("replay with response", dict(start="0s", arrivals={"kind": "replay", "file": "flows.csv"}), False),
]


@pytest.mark.parametrize("fields, ok", [c[1:] for c in ARRIVAL_CASES], ids=[c[0] for c in ARRIVAL_CASES])
def test_the_core_decides_arrivals_and_mixes_and_the_models_follow(tmp_path, fields, ok):
    from iwlab import _core

    data = short_flows(tmp_path, **fields)
    try:
        _core.normalize(json.dumps(data), "json")
        core_ok = True
    except _core.ScenarioError:
        core_ok = False
    assert core_ok == ok
    if ok:  # what the core accepts, the generated models take too
        ScenarioModel.model_validate(data)


def test_a_mixed_closed_loop_app_runs_and_its_flows_split_per_size_and_iw(tmp_path):
    data = short_flows(tmp_path, response=None, **TESTBED)
    data["apps"] = data["apps"][:1]
    s = Scenario.from_data(data).with_overrides({"duration": "40s", "warmup": "0s"})
    flows = iwlab.run(s, seed=3).flows
    assert list(flows.columns)[-2:] == ["app_name", "server_iw"]
    assert set(flows["app_name"]) == {"short-iw3"}
    per = flows.groupby(["response_bytes", "server_iw"]).size()
    assert len(per) == 4 and per.max() - per.min() <= 1, per
    starts, ends = flows["start"].to_numpy(), flows["last_byte"].to_numpy()
    assert (starts[1:] - ends[:-1] >= 0.5 - 1e-9).all(), "one flow at a time, a think time between"


def test_a_replay_file_is_found_next_to_the_scenario_and_replayed_exactly(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "flows.csv", "start,response,server_iw\n0.5,1448,iw3\n1.000000001,2896,iw10\n")
    data = load("congested-links", ["duration=5s", "warmup=0s"]).data
    app = data["apps"][0]
    del app["response"]
    app.update(start="0s", arrivals={"kind": "replay", "file": "flows.csv"})
    data["apps"] = [app]
    path = write(tmp_path / "sub", "replay.json", json.dumps(data))
    monkeypatch.chdir(tmp_path)
    s = load(Path("sub") / "replay.json")
    assert s.data["apps"][0]["arrivals"]["file"] == str(tmp_path / "sub" / "flows.csv")
    flows = iwlab.run(s).flows
    assert flows["start"].tolist() == [0.5, 1.000000001]
    assert flows["response_bytes"].tolist() == [1448, 2896] and flows["server_iw"].tolist() == ["iw3", "iw10"]
    assert flows["iw_segments"].tolist() == [3.0, 10.0]
