"""`iwlab run | trace | presets | show | validate | schema` and `iwlab --version`.

SCENARIO is a TOML (or `.json`) file or the name of a packaged preset (`iwlab presets`).
`--set PATH=VALUE` overrides a field on every command that takes a scenario.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from iwlab.cli.common import ScenarioArg, SeedOption, SetOption, fail, load_scenario, user_errors
from iwlab.cli_base import BadInput, run_command, summary_box


def _version(value: bool) -> None:
    if value:
        from iwlab import __version__, core_version, engine_id

        typer.echo(f"iwlab {__version__} (core {core_version()}, engine {engine_id()})")
        raise typer.Exit()


def _root(
    version: Annotated[Optional[bool], typer.Option("--version", callback=_version, is_eager=True,
                                                    help="Print the version and exit.")] = None,
) -> None:
    del version


def run(
    scenario: ScenarioArg,
    seed: SeedOption = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Output folder "
                                                "[default: out/NAME-seedN].")] = None,
    sets: SetOption = None,
    policy: Annotated[Optional[Path], typer.Option(
        "--policy", metavar="FILE", help="Simulate a policy file: its routes choose each sender's IW by the "
        "destination's address (docs/scenario-format.md, \"Policy files\"); also writes iw_events.parquet, "
        "every IW decision and policy event.")] = None,
    maps: Annotated[Optional[list[str]], typer.Option(
        "--map", metavar="PREFIX=HOSTS", help="With --policy, repeatable: simulate the file's route PREFIX on the "
        "simulated hosts HOSTS — a topology group name or a CIDR of their addresses (198.18.x) — so a real "
        "policy file runs as written.")] = None,
) -> None:
    """Run a scenario once: write flows/pages/links/queues.parquet, summary.json, scenario.toml; print a summary."""
    try:
        text = run_command(scenario, seed, out, sets, policy, maps)
    except BadInput as e:
        fail(str(e))
    typer.echo(text)


def _flow_ids(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        ids = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        fail(f"--flows {text!r}: expected flow ids separated by commas, such as 1,2,3")
    if not ids or any(i < 0 for i in ids):
        fail(f"--flows {text!r}: expected flow ids >= 0 separated by commas, such as 1,2,3")
    return ids


def trace(
    scenario: ScenarioArg,
    pcap: Annotated[Path, typer.Option("--pcap", help="The pcap file to write (Wireshark/tshark-readable).")],
    flows: Annotated[Optional[str], typer.Option("--flows", metavar="ID,ID,...", help="Only these flows (ids of "
                                                 "the `flow` column) [default: all].")] = None,
    seed: SeedOption = None,
    sets: SetOption = None,
    keylog: Annotated[Optional[Path], typer.Option("--keylog", help="Also write the QUIC connections' TLS secrets "
                                                   "here (SSLKEYLOGFILE format) and the QUIC datagrams' bytes into "
                                                   "the pcap, for Wireshark to decrypt (tls.keylog_file).")] = None,
) -> None:
    """Run a scenario and capture the bottleneck (both directions) into a pcap file."""
    from iwlab.api import run as run_scenario

    ids = _flow_ids(flows)
    with user_errors():
        sc = load_scenario(scenario, sets)
        if pcap.parent != Path("") and not pcap.parent.is_dir():
            fail(f"--pcap {pcap}: folder {pcap.parent} does not exist")
        if keylog is not None and keylog.parent != Path("") and not keylog.parent.is_dir():
            fail(f"--keylog {keylog}: folder {keylog.parent} does not exist")
        result = run_scenario(sc, seed=seed, pcap=pcap, flows=ids, keylog=keylog)
    typer.echo(summary_box(result))
    typer.echo(f"wrote {pcap} ({pcap.stat().st_size} bytes)")
    if keylog is not None:
        typer.echo(f"wrote {keylog} ({len(keylog.read_text().splitlines())} secrets)")


def presets() -> None:
    """List the packaged preset scenarios."""
    from rich.console import Console
    from rich.table import Table

    from iwlab.scenario_io import describe_presets

    table = Table("preset", "description", title="Presets (iwlab show NAME prints one)", title_justify="left")
    for name, description in describe_presets().items():
        table.add_row(name, description)
    Console().print(table)


def show(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A preset name (or a scenario file).")],
    canonical: Annotated[bool, typer.Option("--canonical", help="Print the canonical form (defaults filled "
                                            "in) instead of the file.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print canonical JSON.")] = False,
    sets: SetOption = None,
) -> None:
    """Print a preset's TOML (the file with its comments, or canonical with --canonical or --set)."""
    from iwlab.scenario_io import preset_path, presets as preset_names

    with user_errors():
        sc = load_scenario(name, sets)
        if as_json:
            typer.echo(json.dumps(sc.data, indent=2))
        elif canonical or sets:
            typer.echo(sc.to_toml(), nl=False)
        else:
            path = preset_path(name) if name in preset_names() and not Path(name).exists() else Path(name)
            typer.echo(path.read_text(), nl=False)


def validate(scenario: ScenarioArg, sets: SetOption = None) -> None:
    """Check a scenario; print OK or the error (exit status 2)."""
    with user_errors():
        sc = load_scenario(scenario, sets)
    typer.echo(f"OK: {sc.name} ({sc.source}, hash {sc.hash()})")


def schema() -> None:
    """Print the JSON Schema of scenario files (for editors: taplo / Even Better TOML), derived
    from the core's scenario structs."""
    from iwlab import _core

    typer.echo(_core.schema("scenario"))


def register(app: typer.Typer) -> None:
    """Adds the commands of this module and `--version` to `app`."""
    app.callback()(_root)
    for command in (run, trace, presets, show, validate, schema):
        app.command(command.__name__)(command)


#: The commands `register` adds: `iwlab.cli.main` builds only this module for them.
COMMANDS = ("run", "trace", "presets", "show", "validate", "schema")
