"""`iwlab run | trace | presets | show | validate | schema | --version`, through the installed
console script."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import iwlab
from iwlab.scenario import preset_path

IWLAB = Path(sys.executable).with_name("iwlab")
SHORT = ["--set", "duration=20s", "--set", "warmup=2s"]
TABLES = ("flows", "pages", "links", "queues")


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(IWLAB), *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd)


def assert_user_error(p: subprocess.CompletedProcess, *fragments: str) -> None:
    """Exit status 2, one line on stderr that holds every fragment, no traceback."""
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])


def frames(folder: Path) -> dict[str, pd.DataFrame]:
    return {n: pd.read_parquet(folder / f"{n}.parquet", dtype_backend="pyarrow") for n in TABLES}


@pytest.mark.parametrize("name", iwlab.presets())
def test_every_preset_validates_and_runs(name, tmp_path):
    p = cli("validate", name)
    assert p.returncode == 0 and p.stdout.startswith(f"OK: {name} ("), p.stderr
    p = cli("run", name, *SHORT, "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["scenario"] == name and summary["duration"] == 20.0


def test_run_writes_the_records_and_prints_a_summary(tmp_path):
    p = cli("run", "rfc2415", *SHORT, "--seed", 4, "--out", tmp_path / "r")
    assert p.returncode == 0, p.stderr
    out = tmp_path / "r"
    assert sorted(x.name for x in out.iterdir()) == sorted([f"{n}.parquet" for n in TABLES] + [
        "summary.json", "scenario.toml"])
    summary = json.loads((out / "summary.json").read_text())
    f = frames(out)
    assert (len(f["flows"]), len(f["pages"])) == (summary["flows"], summary["pages"])
    assert summary["flows_completed"] == int(f["flows"]["completed"].sum())
    assert len(f["links"]) > 0 and list(f["queues"].columns) == ["time", "port", "packets", "bytes"]
    assert iwlab.Scenario.from_toml((out / "scenario.toml").read_text()).data["duration"] == "20s"
    for label in ("median page delay", "median flow completion", "bottleneck L→R utilisation",
                  "bottleneck R→L drop rate", "flows completed", "pages completed", "events/s"):
        assert label in p.stdout, label
    # the summary is one box: a row per summary line, labels left, values right, edges aligned
    from iwlab.api import summary_rows

    box = [ln for ln in p.stdout.splitlines() if ln[:1] in "┌│└"]
    rows = summary_rows(summary)
    assert len(box) == len(rows) + 2 and len({len(ln) for ln in box}) == 1, p.stdout
    for (label, value), ln in zip(rows, box[1:-1]):
        left, right = ln.strip("│").split("│")
        assert left.strip() == label and right.rstrip(" ").endswith(value) and right.endswith(f"{value} "), ln


def test_the_summary_box_fits_its_widest_label_and_value():
    from iwlab.cli.common import boxed

    assert boxed("t", [("a", "1"), ("bbb", "22")]).splitlines() == [
        "t", "┌─────┬────┐", "│ a   │  1 │", "│ bbb │ 22 │", "└─────┴────┘"]


def test_run_writes_under_out_by_default(tmp_path):
    p = cli("run", "congested-links", *SHORT, "--seed", 2, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out" / "congested-links-seed2" / "flows.parquet").exists()


def test_the_same_seed_reproduces_a_run_and_another_seed_changes_it(tmp_path):
    for d, seed in (("a", 7), ("b", 7), ("c", 8)):
        assert cli("run", "rfc2415", *SHORT, "--seed", seed, "--out", tmp_path / d).returncode == 0
    a, b, c = (frames(tmp_path / d) for d in "abc")
    for n in TABLES:
        pd.testing.assert_frame_equal(a[n], b[n])
        assert (tmp_path / "a" / f"{n}.parquet").read_bytes() == (tmp_path / "b" / f"{n}.parquet").read_bytes()
    assert not a["flows"].equals(c["flows"])


def test_set_overrides_take_effect(tmp_path):
    p = cli("run", "rfc2415", *SHORT, "--set", "apps[0].count=2", "--set", "apps[1].count=1",
            "--set", 'topology.bottleneck.rate="3Mbps"', "--out", tmp_path)
    assert p.returncode == 0, p.stderr
    sc = iwlab.Scenario.from_toml((tmp_path / "scenario.toml").read_text())
    assert sc.data["apps"][0]["count"] == 2 and sc.data["topology"]["bottleneck"]["rate"] == "3Mbps"
    web = frames(tmp_path)["pages"]
    assert web["client"].nunique() <= 2 and len(web) > 0
    assert (frames(tmp_path)["links"]["rate_bps"] == 3_000_000).sum() == 2


@pytest.mark.parametrize("sets, fragments", [
    (["apps[9].count=3"], ["--set apps[9].count=3", "apps[9]: no such entry"]),
    (["topology.bottleneck.rat=2Mbps"], ["topology.bottleneck.rat", "unknown field `rat`", "`rate`"]),
    (["apps[0].count=many"], ["apps[0].count", '"many"', "expected u32"]),
    (["apps[0].count=100001"], ["apps[0].count = 100001", "0..=100000 instances"]),
    (["topology.bottleneck.rate=fast"], ["topology.bottleneck.rate", '"fast"', "Mbps"]),
    (["apps[0"], ["--set", "expected PATH=VALUE"]),
])
@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_bad_set_exits_2_with_one_line_naming_the_path(command, sets, fragments):
    args = [a for s in sets for a in ("--set", s)]
    assert_user_error(cli(command, "rfc2415", *args), *fragments)


BASE = preset_path("rfc2415").read_text()
BAD_FILES = [
    ("unknown-key", BASE.replace('delay = "50ms"', 'delay = "50ms"\nrat = "1Mbps"'), 25, "topology.bottleneck.rat"),
    ("wrong-type", BASE.replace("count = 16", 'count = "sixteen"'), 69, "apps[0].count"),
    ("negative-rate", BASE.replace('rate = "1.5Mbps"', 'rate = "-1.5Mbps"'), 23, "topology.bottleneck.rate"),
    ("syntax-error", BASE.replace("count = 16", "count = = 16"), 69, "syntax error"),
]


@pytest.mark.parametrize("name, text, line, field", BAD_FILES, ids=[c[0] for c in BAD_FILES])
@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_bad_file_exits_2_naming_the_file_line_and_field(tmp_path, command, name, text, line, field):
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    assert_user_error(cli(command, path), f"{path}:{line}:", field)


CONGESTED = preset_path("congested-links").read_text()
BAD_ARRIVALS = [
    ("unknown-arrival-field", 'period = "2s"', "think_time = \"1s\"", "apps[0].arrivals.think_time",
     "unknown field `think_time`"),
    ("load-as-number", 'kind = "periodic", period = "2s"', 'kind = "poisson", load = 0.04', "apps[0].arrivals.load",
     "not a percentage"),
    ("mix-iw", 'response = "10seg"', 'mix = [{ response = "9seg", server_iw = "iw9" }]', "apps[0].mix[0].server_iw",
     '"iw9" is not allowed; expected a policy'),
]


@pytest.mark.parametrize("name, old, new, field, fragment", BAD_ARRIVALS, ids=[c[0] for c in BAD_ARRIVALS])
def test_a_bad_arrival_field_exits_2_naming_it(tmp_path, name, old, new, field, fragment):
    assert old in CONGESTED
    path = tmp_path / f"{name}.toml"
    path.write_text(CONGESTED.replace(old, new, 1))
    assert_user_error(cli("validate", path), str(path), field, fragment)


@pytest.mark.parametrize("command", ["run", "validate", "show", "trace"])
def test_a_missing_file_exits_2(command, tmp_path):
    extra = ["--pcap", tmp_path / "x.pcap"] if command == "trace" else []
    assert_user_error(cli(command, tmp_path / "nope.toml", *extra), "nope.toml: no such scenario file or preset")


@pytest.mark.parametrize("content, fragment", [
    (b"\xff\xfe\x00", "cannot read scenario file"),  # not UTF-8
    (b"", ":1:1: missing field `name`"),
])
def test_an_unreadable_or_empty_file_exits_2(tmp_path, content, fragment):
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    assert_user_error(cli("validate", path), str(path), fragment)


def test_a_folder_is_not_a_scenario(tmp_path):
    assert_user_error(cli("run", tmp_path), f"{tmp_path}: is a folder, not a scenario file")


def test_trace_writes_a_pcap(tmp_path):
    pcap = tmp_path / "all.pcap"
    p = cli("trace", "congested-links", "--pcap", pcap, "--set", "duration=5s", "--set", "warmup=1s")
    assert p.returncode == 0, p.stderr
    assert pcap.read_bytes()[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")  # µs or ns pcap magic
    some = tmp_path / "some.pcap"
    p = cli("trace", "congested-links", "--pcap", some, "--flows", "1,2", "--set", "duration=5s", "--set", "warmup=1s")
    assert p.returncode == 0, p.stderr
    assert 24 < some.stat().st_size < pcap.stat().st_size
    if shutil.which("tshark"):
        r = subprocess.run(["tshark", "-r", str(pcap)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "TCP" in r.stdout, r.stderr


@pytest.mark.parametrize("flows", ["a,b", "-1", ","])
def test_trace_rejects_bad_flow_ids(flows, tmp_path):
    assert_user_error(cli("trace", "rfc2415", "--pcap", tmp_path / "x.pcap", "--flows", flows), "--flows")


def test_presets_lists_every_preset_with_its_description():
    p = cli("presets")
    assert p.returncode == 0
    for name, description in iwlab.scenario.describe_presets().items():
        assert name in p.stdout and description.split()[0] in p.stdout


@pytest.mark.parametrize("args, check", [
    ([], lambda out, name: out == preset_path(name).read_text()),
    (["--canonical"], lambda out, name: iwlab.Scenario.from_toml(out).data == iwlab.load(name).data),
    (["--json"], lambda out, name: json.loads(out) == iwlab.load(name).data),
    (["--set", "apps[0].count=3"], lambda out, name: iwlab.Scenario.from_toml(out).data["apps"][0]["count"] == 3),
])
def test_show_prints_a_preset(args, check):
    p = cli("show", "rfc2415", *args)
    assert p.returncode == 0 and check(p.stdout, "rfc2415"), p.stderr


def test_show_of_an_unknown_preset_exits_2():
    assert_user_error(cli("show", "rfc9999"), "rfc9999", "presets: bench-bulk")


def test_schema_prints_the_cores_json_schema():
    p = cli("schema")
    schema = json.loads(p.stdout)
    assert p.returncode == 0 and schema["title"] == "Scenario" and "TcpSpec" in schema["$defs"]


@pytest.mark.parametrize("command", ["", "run", "trace", "presets", "show", "validate", "schema"])
def test_every_command_has_help(command):
    p = cli(*([command] if command else []), "--help")
    assert p.returncode == 0 and "Usage: iwlab" in p.stdout


def test_version():
    p = cli("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"iwlab {iwlab.__version__} (core {iwlab.core_version()}, engine {iwlab.engine_id()})"
