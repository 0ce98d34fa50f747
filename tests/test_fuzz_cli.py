"""Generated input through the command line, end to end up to the simulator: `iwlab run` with
generated `--set` values, policy files and `--map`s, and `iwlab advise` with generated profile
files and flags. Every case must be accepted or end in the command's one-line error with exit
status 2; any other exception is a traceback. The simulations themselves are not run (the
runs would take minutes per case): `iwlab.api.run` and the advisor's search are replaced by a
stand-in that takes the validated input — for advise, after building and validating every
candidate's scenario — and stops there.

The default run is derandomized, FUZZ_EXAMPLES cases per command; the longer run is
`IWLAB_FUZZ_EXAMPLES=10000 IWLAB_FUZZ_SEED=1 pytest tests/test_fuzz_cli.py` (docs/deploy.md,
"Fuzzing")."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from iwlab.cli import build
from test_fuzz_inputs import SCALARS, SET_KEYS, policy_files

EXAMPLES = int(os.environ.get("IWLAB_FUZZ_EXAMPLES", "400"))
SEED = int(os.environ.get("IWLAB_FUZZ_SEED", "20261127"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize="IWLAB_FUZZ_SEED" not in os.environ,
                    suppress_health_check=list(HealthCheck))


@pytest.fixture(autouse=True)
def one_command(monkeypatch):
    """typer builds the click command again at every invoke (~0.1 s here); build it once."""
    import typer.main
    import typer.testing

    cmd = typer.main.get_command(build())
    monkeypatch.setattr(typer.testing, "_get_command", lambda app: cmd)


class Accepted(Exception):
    """The stand-in for the simulator: the command accepted its input."""


TALLY = {"accepted": 0, "refused": 0}


def _verdict(r, what: str) -> str | None:
    """None if the run is accepted or a one-line usage error (exit 2), else what went wrong."""
    if isinstance(r.exception, Accepted):
        TALLY["accepted"] += 1
        return None
    TALLY["refused"] += 1
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return f"{what} → {type(r.exception).__name__}: {r.exception}"
    lines = r.stderr.strip().splitlines()
    if r.exit_code != 2 or len(lines) != 1:
        return f"{what} → exit {r.exit_code}, stderr {r.stderr[-300:]!r}"
    return None


def _invoke(runner, args: list[str], what: str, bad: list[str]) -> None:
    """Runs one generated command line (none can hold a NUL) and keeps what went wrong in `bad`."""
    if "\x00" in "".join(args):
        return
    v = _verdict(runner.invoke(build(), args), f"{args[1:]!r} {what}")
    if v is not None:
        bad.append(v)


def _all_cases(case, bad: list[str]) -> None:
    """Every generated case: none went wrong, and some were accepted and some refused."""
    TALLY.update(accepted=0, refused=0)
    case()
    print(f"{TALLY}")
    assert bad == [], f"{len(bad)} of {EXAMPLES} cases: " + "\n".join(bad[:5])
    assert TALLY["accepted"] > 0 and TALLY["refused"] > 0, TALLY


MAP_TARGETS = st.one_of(st.sampled_from(["clients", "servers", "hosts", "198.18.0.0/25", "198.18.0.0/27", "198.18.0.0/33", "10.0.0.0/8",
                                         "::/0", "", "=", "clients=clients"]), st.text(max_size=10))
MAP_PREFIXES = st.one_of(st.sampled_from(["10.0.0.0/8", "10.78.2.0/24", "default", "::/0", "", "1.2.3.4"]),
                         st.text(max_size=10))
REAL_POLICY = '[iw.policies]\nfb = { kind = "rfc6928-fallback" }\n[[routes]]\nprefix = "10.78.2.0/24"\npolicy = "fb"\n'


def test_generated_run_command_lines_are_accepted_or_one_line_errors(tmp_path, monkeypatch):
    import iwlab.api

    def stand_in(sc, **kw):
        raise Accepted(sc.name)

    monkeypatch.setattr(iwlab.api, "run", stand_in)
    runner = CliRunner()
    policy = tmp_path / "p.toml"
    bad: list[str] = []

    @seed(SEED)
    @SETTINGS
    @given(st.lists(st.tuples(st.one_of(st.sampled_from(SET_KEYS), st.text(max_size=12)),
                              st.one_of(SCALARS, st.text(max_size=12))), max_size=3),
           st.sampled_from(["rfc6928", "congested-links"]),
           st.one_of(st.none(), st.just(REAL_POLICY), policy_files()),
           st.lists(st.tuples(MAP_PREFIXES, MAP_TARGETS), max_size=2))
    def case(sets, preset, text, maps) -> None:
        args = ["run", preset, "--out", str(tmp_path / "o")]
        for k, v in sets:
            args += ["--set", f"{k}={v}"]
        if text is not None:
            try:
                policy.write_text(text)
            except UnicodeEncodeError:
                return
            args += ["--policy", str(policy)]
        for p, h in maps:
            args += ["--map", f"{p}={h}"]
        _invoke(runner, args, repr(text), bad)

    _all_cases(case, bad)


PROFILE_KEYS = ["rate", "rtt", "buffer", "background", "loss", "sizes", "load", "tcp", "clients", "duration",
                "objective", "nope"]
FLAG_VALUES = st.one_of(st.sampled_from(["2Mbps", "0Mbps", "1e400Mbps", "100ms", "50ms-300ms", "300ms-50ms", "25pkt",
                                         "50ms", "0.01", "1%", "101%", "-1", "nan", "inf", "10%", "mean", "p99",
                                         "cubic", "vegas", "20kB", "0B", "", "x"]), st.text(max_size=8))
FLAGS = ["--rate", "--rtt", "--buffer", "--loss", "--sizes", "--load", "--tcp", "--objective", "--duration",
         "--min-size", "--max-size", "--clients", "--max-retransmit-pp", "--candidates", "--budget", "--seeds",
         "--prefix", "--verify-duration"]


def test_generated_advise_command_lines_are_accepted_or_one_line_errors(tmp_path, monkeypatch):
    import iwlab.advise.advisor as advisor

    class NoRunner:
        def __init__(self, *a, **kw):
            pass

        def close(self) -> None:
            pass

    def stand_in(cands, make_task, *a, **kw):
        for c in cands:  # every candidate's scenario is built and validated, as the search would
            make_task(c, 1)
        raise Accepted(len(cands))

    monkeypatch.setattr(advisor, "Runner", NoRunner)
    monkeypatch.setattr(advisor, "race", stand_in)
    runner = CliRunner()
    profile = tmp_path / "profile.toml"
    bad: list[str] = []

    @seed(SEED)
    @SETTINGS
    @given(st.one_of(st.none(), st.lists(st.tuples(st.sampled_from(PROFILE_KEYS), SCALARS), max_size=5,
                                         unique_by=lambda kv: kv[0])),
           st.lists(st.tuples(st.sampled_from(FLAGS), FLAG_VALUES), max_size=4))
    def case(fields, flags) -> None:
        args = ["advise", "--no-progress", "--no-sensitivity"]
        if fields is not None:
            try:
                profile.write_text("\n".join(f"{k} = {v}" for k, v in fields) + "\n")
            except UnicodeEncodeError:
                return
            args.append(str(profile))
        for f, v in flags:
            args += [f, v]
        _invoke(runner, args, repr(fields), bad)

    _all_cases(case, bad)


@pytest.mark.parametrize("args", [
    ["run", "rfc6928", "--policy", "{policy}", "--map", "10.78.2.0/24=198.18.0.0/25"],
    ["advise", "--rate", "2Mbps", "--rtt", "100ms", "--no-progress", "--no-sensitivity"],
])
def test_the_stand_ins_are_reached_by_good_input(tmp_path, monkeypatch, args):
    """The fuzz tests would pass vacuously if every case failed early: good input reaches them."""
    import iwlab.advise.advisor as advisor
    import iwlab.api

    monkeypatch.setattr(iwlab.api, "run", lambda sc, **kw: (_ for _ in ()).throw(Accepted(sc.name)))
    monkeypatch.setattr(advisor, "Runner", lambda *a, **kw: type("R", (), {"close": lambda self: None})())
    monkeypatch.setattr(advisor, "race", lambda *a, **kw: (_ for _ in ()).throw(Accepted("advise")))
    policy = tmp_path / "p.toml"
    policy.write_text(REAL_POLICY)
    r = CliRunner().invoke(build(), [a.replace("{policy}", str(policy)) for a in args])
    assert isinstance(r.exception, Accepted), (r.exit_code, r.stderr)


@pytest.mark.parametrize("args, says", [
    # found by the advise fuzzing: click's usage errors were four lines (usage, hint, blank, error)
    (["advise", "--clients", "cubic"], "error: Invalid value for '--clients': 'cubic' is not a valid int. "
                                       "(see iwlab advise --help)"),
    (["advise", "--seeds", "nan"], "error: Invalid value for '--seeds': 'nan'"),
    (["run"], "error: Missing argument 'SCENARIO'. (see iwlab run --help)"),
    (["nope"], "error: No such command 'nope'. (see iwlab --help)"),
    (["run", "rfc6928", "--seed", "-1"], "error: Invalid value for '--seed': -1"),
])
def test_usage_errors_of_the_option_parser_are_one_line(args, says):
    r = CliRunner().invoke(build(), args)
    assert r.exit_code == 2 and r.stderr.strip().splitlines() == [r.stderr.strip()], r.stderr
    assert r.stderr.strip().startswith(says), r.stderr


@pytest.mark.parametrize("args, says", [
    # found by the 10 000-case advise run: a rate that overflows a float was an OverflowError
    (["advise", "--rate", "1e400Mbps", "--rtt", "100ms"], "error: rate = '1e400Mbps' is not allowed"),
    (["advise", "--rate", "2Mbps", "--rtt", "100ms", "--min-size", "1e400kB"], "error: min_size = '1e400kB' is not "
                                                                                "allowed"),
])
def test_tracebacks_the_fuzzing_found_are_one_line_errors(args, says):
    r = CliRunner().invoke(build(), args)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 2 and r.stderr.strip().splitlines() == [r.stderr.strip()], r.stderr
    assert r.stderr.startswith(says), r.stderr


def test_non_finite_quantities_are_value_errors():
    from iwlab.emulate.units import rate_bps, seconds, size_bytes

    for parse, value in ((rate_bps, "1e400Mbps"), (size_bytes, "1e999kB"), (seconds, "1e400s"),
                         (rate_bps, float("inf")), (seconds, float("nan"))):
        with pytest.raises(ValueError, match="is not allowed; expected a finite number"):
            parse(value)


@pytest.mark.parametrize("args", [["run", "rfc6928", "--seed", "-1"], ["advise", "--clients", "x"]])
def test_the_installed_command_prints_usage_errors_on_one_line(args):
    """`iwlab run` builds only its own command module (start-up time): the same one-line errors."""
    import subprocess
    import sys
    from pathlib import Path

    r = subprocess.run([str(Path(sys.executable).with_name("iwlab")), *args], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("error: "), r.stderr
