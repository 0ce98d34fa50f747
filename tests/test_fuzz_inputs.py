"""Generated bad (and good) input never ends in a traceback: policy files through `iwlab plan`,
`--set` values through scenario loading (what `iwlab run` does first), advisor profiles
through `Profile.from_toml`. Each input must end in the command's one-line error (exit 2) or
be accepted; anything else — an exception of another type — is counted as a traceback.

The default run has a fixed seed (derandomized hypothesis) and FUZZ_EXAMPLES cases per
input kind; `IWLAB_FUZZ_EXAMPLES=10000 IWLAB_FUZZ_SEED=… pytest tests/test_fuzz_inputs.py`
is the longer run (docs/deploy.md, "Fuzzing")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from iwlab.cli import build

EXAMPLES = int(os.environ.get("IWLAB_FUZZ_EXAMPLES", "250"))
SEED = int(os.environ.get("IWLAB_FUZZ_SEED", "20261126"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize="IWLAB_FUZZ_SEED" not in os.environ,
                    suppress_health_check=list(HealthCheck))

# values a careless or hostile file may hold, as TOML literals
SCALARS = st.one_of(
    st.integers(-2**70, 2**70).map(str), st.floats(allow_nan=True, allow_infinity=True).map(
        lambda f: {"inf": "inf", "-inf": "-inf"}.get(repr(f), "nan" if f != f else repr(f))),
    st.sampled_from(['"10s"', '"1e300s"', '"-1s"', '"nan s"', '"0s"', '""', '"20kB"', '"1e400kB"', "true", "[]", "{}",
                     '"cubic"', '"vegas"', '"reno"', '"10.0.0.0/8"', '"::/0"', '"default"', '"10.0.0.0/33"',
                     '"1.2.3.4"', '"fe80::1%eth0"', '"\\u0000"', '[1, 2]', '"x"']),
    st.text(max_size=8).map(lambda t: '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'))
KINDS = ["fixed", "rfc3390", "rfc6928", "rfc6928-fallback", "aimd", "learned", "size-based", "nope", ""]
KEYS = ["segments", "expiry", "initial", "min", "max", "step", "raise_after", "samples", "percentile", "theta",
        "max_entries", "bytes", "zzz"]


@st.composite
def policy_files(draw) -> str:
    if draw(st.integers(0, 9)) == 0:  # now and then plain noise
        return draw(st.text(max_size=200))
    lines = []
    if draw(st.booleans()):
        lines += ["[iw]", "default = " + draw(st.sampled_from(['"p0"', '"nope"', "3"]))]
    lines.append("[iw.policies]")
    for i in range(draw(st.integers(0, 3))):
        fields = [f'kind = "{draw(st.sampled_from(KINDS))}"']
        for k in draw(st.lists(st.sampled_from(KEYS), max_size=4, unique=True)):
            fields.append(f"{k} = {draw(SCALARS)}")
        lines.append(f"p{i} = {{ {', '.join(fields)} }}")
    for _ in range(draw(st.integers(0, 3))):
        lines.append("[[routes]]")
        for k in draw(st.lists(st.sampled_from(["prefix", "policy", "initrwnd", "congctl", "extra"]), max_size=5,
                               unique=True)):
            v = draw(st.one_of(SCALARS, st.sampled_from(['"p0"', '"p1"', '"p2"'])))
            lines.append(f"{k} = {v}")
    text = "\n".join(lines) + "\n"
    if draw(st.integers(0, 7)) == 0:  # a syntax error somewhere
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["=", "[", '"', "{", "\x00", "]]"])) + text[at:]
    return text


def _tracebacks(result) -> str | None:
    """The exception of a CLI run that is not the command's own exit, as text (None if none)."""
    if result.exception is None or isinstance(result.exception, SystemExit):
        return None
    return f"{type(result.exception).__name__}: {result.exception}"


def test_generated_policy_files_give_one_line_errors_through_plan(tmp_path):
    runner = CliRunner()
    policy, state = tmp_path / "p.toml", tmp_path / "state.sqlite"
    bad: list[str] = []

    @seed(SEED)
    @SETTINGS
    @given(policy_files())
    def case(text: str) -> None:
        try:
            policy.write_text(text)
        except UnicodeEncodeError:  # a surrogate: not a file anyone can write
            return
        # a namespace that does not exist: the file is parsed and checked, no route is touched
        r = runner.invoke(build(), ["plan", str(policy), "--netns", f"iwd-fuzz{os.getpid()}", "--state", str(state)])
        tb = _tracebacks(r)
        if tb is not None:
            bad.append(f"{text!r} → {tb}")
        elif r.exit_code != 2 or len(r.stderr.strip().splitlines()) != 1:
            bad.append(f"{text!r} → exit {r.exit_code}, stderr {r.stderr!r}")

    case()
    assert not state.exists()
    assert bad == [], f"{len(bad)} of {EXAMPLES} cases: " + "\n".join(bad[:5])


SET_KEYS = ["duration", "warmup", "seed", "iw.default", "tcp.mss", "tcp.cc", "links.bottleneck.rate",
            "links.bottleneck.delay", "links.bottleneck.queue", "workload.sizes", "topology.left.0.count",
            "iw.policies.x.kind", "nope", "", "a..b", "tcp", "iw"]


def test_generated_set_values_are_scenario_errors_or_accepted():
    from iwlab.scenario_io import ScenarioError, load

    bad: list[str] = []

    @seed(SEED)
    @SETTINGS
    @given(st.lists(st.tuples(st.one_of(st.sampled_from(SET_KEYS), st.text(max_size=12)),
                              st.one_of(SCALARS, st.text(max_size=12))), min_size=1, max_size=3),
           st.sampled_from(["rfc6928", "congested-links"]))
    def case(sets, preset) -> None:
        args = [f"{k}={v}" for k, v in sets] + (["noequals"] if len(sets) == 3 else [])
        try:
            load(preset, args)
        except ScenarioError as e:
            if "\n" in str(e).strip():
                bad.append(f"{args!r} → two lines: {e}")
        except Exception as e:  # noqa: BLE001 — what we count
            bad.append(f"{args!r} → {type(e).__name__}: {e}")

    case()
    assert bad == [], f"{len(bad)} of {EXAMPLES} cases: " + "\n".join(bad[:5])


PROFILE_KEYS = ["rate", "rtt", "buffer", "background", "loss", "sizes", "load", "tcp", "clients", "duration",
                "objective", "nope"]


def test_generated_advisor_profiles_are_profile_errors_or_accepted(tmp_path):
    from iwlab.advise.profile import Profile, ProfileError

    path = tmp_path / "profile.toml"
    bad: list[str] = []

    @seed(SEED)
    @SETTINGS
    @given(st.lists(st.tuples(st.sampled_from(PROFILE_KEYS), SCALARS), max_size=5, unique_by=lambda kv: kv[0]),
           st.booleans())
    def case(fields, noise) -> None:
        text = "\n".join(f"{k} = {v}" for k, v in fields) + ("\n[[[" if noise else "\n")
        try:
            path.write_text(text)
        except UnicodeEncodeError:
            return
        try:
            Profile.from_toml(path)
        except ProfileError as e:
            if "\n" in str(e).strip():
                bad.append(f"{text!r} → two lines: {e}")
        except Exception as e:  # noqa: BLE001 — what we count
            bad.append(f"{text!r} → {type(e).__name__}: {e}")

    case()
    assert bad == [], f"{len(bad)} of {EXAMPLES} cases: " + "\n".join(bad[:5])
