"""The typer-free base of the command line: the one-line error text, the scenario of a
command line, the boxed summary table, and the work of `iwlab run` itself.

`iwlab run` is the command people time: the entry point (`iwlab.entry`) runs a well-formed
`iwlab run SCENARIO [--seed N] [--out DIR] [--set PATH=VALUE]…` through this module without
importing typer and the command tree (bench/README.md, "Sixth pass"); the typer command
(`iwlab.cli.run`) calls the same `run_command`, so both print the same lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn


class BadInput(Exception):
    """Bad input: printed as one `error: …` line, exit status 2."""


def error_line(message: object) -> str:
    """`error: message` on one line: the one form of every command's errors."""
    return f"error: {' '.join(str(message).split())}"


def bad_input(e: BaseException) -> str | None:
    """The message of a scenario error or an unreadable file; None for anything else."""
    from iwlab.scenario_error import ScenarioError

    if isinstance(e, ScenarioError):
        return str(e)
    if isinstance(e, OSError):
        return str(e) if not e.filename else f"{e.filename}: {e.strerror}"
    return None


def load_scenario(scenario: str, sets: list[str] | None):
    """The scenario of a command line (a path or a preset, then the `--set`s). Without `--set`
    the loader alone does (no pydantic); `--set` values are read against the models, so then the
    whole scenario API loads (`iwlab.scenario`: the loader and the models)."""
    if sets:
        from iwlab.scenario import load
    else:
        from iwlab.scenario_io import load

    return load(scenario, sets or ())


def boxed(title: str, rows: list[tuple[str, str]]) -> str:
    """`title`, then (label, value) rows in a box: labels left-aligned, values right-aligned.

    >>> print(boxed("t", [("a", "1"), ("bb", "22")]))
    t
    ┌────┬────┐
    │ a  │  1 │
    │ bb │ 22 │
    └────┴────┘
    """
    w0 = max((len(a) for a, _ in rows), default=0)
    w1 = max((len(b) for _, b in rows), default=0)
    lines = [title, f"┌{'─' * (w0 + 2)}┬{'─' * (w1 + 2)}┐"]
    lines += [f"│ {a.ljust(w0)} │ {b.rjust(w1)} │" for a, b in rows]
    lines.append(f"└{'─' * (w0 + 2)}┴{'─' * (w1 + 2)}┘")
    return "\n".join(lines)


def summary_box(result) -> str:
    """A run's summary as a boxed two-column table in plain text (rich's table would add its
    import, 47 modules, to every `iwlab run`: bench/README.md "Fifth pass")."""
    from iwlab.api import summary_rows

    return boxed(f"{result.scenario.name} · seed {result.seed}", summary_rows(result.summary))


def run_command(scenario: str, seed: int | None, out: Path | None, sets: list[str] | None,
                policy: Path | None = None, maps: list[str] | None = None) -> str:
    """`iwlab run`: runs the scenario once, stores flows/pages/links/queues.parquet, summary.json
    and scenario.toml in `out` (default out/NAME-seedN), and returns the text to print: the
    summary box and the line naming the files. Bad input raises `BadInput`."""
    try:
        sc = load_scenario(scenario, sets)
        if policy is not None:
            sc = _with_policy(sc, policy, maps)
        elif maps:
            raise BadInput(f"--map {maps[0]!r}: maps a policy file's prefix; expected --policy FILE with it")
        if out is None:  # the default folder names the seed the run will use
            out = Path("out") / f"{sc.name}-seed{sc.data['seed'] if seed is None else seed}"
        from iwlab.api import run as run_scenario

        result = run_scenario(sc, seed=seed, iw_events=policy is not None, out=out)
        folder = result.save(out)
    except (OSError, ValueError) as e:
        message = bad_input(e)
        if message is None:
            raise
        raise BadInput(message) from e
    extra = ",iw_events" if result.iw_events is not None else ""
    return "\n".join([summary_box(result),
                      f"wrote {folder}/{{flows,pages,links,queues{extra}}}.parquet, summary.json, scenario.toml"])


def _with_policy(sc, policy: Path, maps: list[str] | None):
    """The scenario with the policy file's routes as its senders' IW (`--policy`, `--map`)."""
    from iwlab.policy import MapError, PolicyFileError, check_routes_cover_hosts, load_policy, map_prefixes, with_policy

    try:
        pf = load_policy(policy)
        if maps:
            pf = map_prefixes(sc, pf, maps)
        check_routes_cover_hosts(sc, pf)
        return with_policy(sc, pf)
    except (PolicyFileError, MapError) as e:
        raise BadInput(str(e)) from e


def end_without_teardown(code: int) -> NoReturn:
    """Flushes the output and ends the process with `code`, skipping the interpreter's teardown:
    freeing numpy, pyarrow and every module one by one took 0.05-0.10 s of each `iwlab run` and
    changes nothing (the tables are closed and the output written before)."""
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing left to write to
            pass
    os._exit(code)
