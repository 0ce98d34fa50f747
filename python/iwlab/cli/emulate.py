"""`iwlab emulate | compare`: run a scenario on real kernel TCP stacks in network namespaces,
and compare it with the simulator (python/iwlab/emulate/)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from iwlab.cli.common import fail

H_OUT = "write flows/pages/links/queues.parquet and summary.json here"
H_DURATION = "run only this long (e.g. 60s); the summary and the output say so"
H_CAPTURE = "host whose interface tcpdump captures (e.g. right-0); repeatable"
H_CLEANUP = "remove the namespaces, links and run directories that killed runs left, then exit"
H_OWN = "draw the workload (arrivals, sizes, think times) anew instead of replaying the simulator's draws"


def _seconds(value: Optional[str]) -> Optional[float]:
    if value is None:
        return None
    from iwlab.emulate.units import seconds

    try:
        return seconds(value, "--duration")
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None


def _say(msg: str) -> None:
    typer.echo(f"iwlab: {msg}", err=True)


def _report(r) -> None:
    """A few lines about an emulated run."""
    from iwlab.emulate.compare import size_key, size_labels
    from iwlab.emulate.units import size_bytes

    s = r.summary
    cc = ", ".join(s["congestion_control"]) or "-"
    typer.echo(f"{r.scenario.name}: emulated {s['duration']:g} s (seed {s['seed']}): "
               f"{s['flows_completed']}/{s['flows']} flows and {s['pages_completed']}/{s['pages']} pages completed, "
               f"{s['packets_dropped']} packets dropped, congestion control {cc}")
    if s["shortened"]:
        typer.echo(f"SHORTENED: {s['duration']:g} s of the scenario's {s['scenario_duration']:g} s "
                   f"(time scale {s['time_scale']:.3g})")
    f = r.flows[r.flows["completed"] & ~r.flows["in_warmup"]]
    if len(f):
        mss = size_bytes((r.scenario.data.get("tcp") or {}).get("mss", "1460B"))
        f = f.assign(size=size_labels(f["response_bytes"].astype("int64"), mss).to_numpy())
        g = f.groupby(["size", "iw_segments"])["completion"].agg(["median", "count"]).reset_index()
        g = g.sort_values(["size", "iw_segments"], key=lambda c: c.map(size_key) if c.name == "size" else c)
        for row in g.itertuples():
            typer.echo(f"  {row.size:>14}, IW {row.iw_segments:g}: median completion {row.median:.4f} s "
                       f"({row.count} flows)")
    for n in s["notes"]:
        typer.echo(f"  note: {n}")


class QuicStack(str, Enum):
    aioquic = "aioquic"
    quinn = "quinn"


H_QUIC_STACK = ("the real QUIC stack of the apps with transport = \"quic\": aioquic (Python) or quinn "
                "(crates/iwlab-quic-peer)")


def register(app: typer.Typer) -> None:
    @app.command("emulate")
    def emulate_cmd(
        scenario: Optional[str] = typer.Argument(None, help="scenario file or preset name"),
        seed: Optional[int] = typer.Option(None, "--seed", help="seed (default: the scenario's)"),
        out: Optional[Path] = typer.Option(None, "--out", help=H_OUT),
        duration: Optional[str] = typer.Option(None, "--duration", help=H_DURATION),
        capture: List[str] = typer.Option([], "--capture", help=H_CAPTURE),
        own_draws: bool = typer.Option(False, "--own-draws", help=H_OWN),
        cleanup: bool = typer.Option(False, "--cleanup", help=H_CLEANUP),
        force: bool = typer.Option(False, "--force", help="with --cleanup: also remove those of runs still alive"),
        keep: bool = typer.Option(False, "--keep", help="keep the run directory (agent logs, relay config)"),
        quic_stack: QuicStack = typer.Option(QuicStack.aioquic, "--quic-stack", help=H_QUIC_STACK),
    ) -> None:
        """Run SCENARIO on the kernel's TCP in network namespaces (needs root)."""
        from iwlab import emulate as em

        if cleanup:
            removed = em.cleanup(force=force)
            for item in removed:
                typer.echo(f"removed {item}")
            if not removed:
                typer.echo("nothing to clean up")
            left = em.leftovers()
            if left["namespaces"] or left["links"]:
                typer.echo(f"still there (their run is alive; --force removes them): {left}")
            return
        if scenario is None:
            raise typer.BadParameter("give a SCENARIO (or --cleanup)")
        try:
            r = em.emulate(scenario, seed=seed, out=out, duration=_seconds(duration), capture=capture,
                           keep_rundir=keep, replay=not own_draws, say=_say, quic_stack=quic_stack.value)
        except (em.EmulationError, em.PlanError, FileNotFoundError) as e:
            fail(f"emulate: {e}", 1)
        _report(r)
        if out is not None:
            typer.echo(f"records in {out}")

    @app.command("compare")
    def compare_cmd(
        scenario: Optional[str] = typer.Argument(None, help="scenario file or preset name (not with --grid)"),
        seeds: int = typer.Option(1, "--seeds", min=1, help="number of seeds (the scenario's, +1, …); with --grid, "
                                  "simulator seeds per cell"),
        duration: Optional[str] = typer.Option(None, "--duration", help="run both only this long (e.g. 60s)"),
        out: Optional[Path] = typer.Option(None, "--out", help="write the tables, the CDF figure and the runs here"),
        grid: Optional[Path] = typer.Option(None, "--grid", help="GRID.toml: the simulator over the grid against its "
                                            "stored kernel units (no root)"),
        no_replay: bool = typer.Option(False, "--no-replay", help="--grid: skip the replay of the kernel's arrivals"),
        no_first_flight: bool = typer.Option(False, "--no-first-flight",
                                             help="--grid: skip the simulator's first-flight traces"),
        cells: Optional[str] = typer.Option(None, "--cells", help="--grid: comma-separated cell names"),
        workers: int = typer.Option(2, "--workers", min=1, help="--grid: simulator processes"),
        max_unit_load: Optional[float] = typer.Option(
            None, "--max-unit-load", help="--grid: the quiet reference's kernel units are those run at a mean load "
            "average ≤ this (default 5, the threshold fixed before the comparison: where the stored units' loads part)"),
        quic_stack: QuicStack = typer.Option(QuicStack.aioquic, "--quic-stack", help=H_QUIC_STACK),
    ) -> None:
        """Simulate and emulate SCENARIO and print them side by side (needs root); or, with
        --grid, the simulator against a grid's stored kernel runs."""
        from iwlab import emulate as em

        if grid is not None:
            from iwlab.emulate.grid import GridError
            from iwlab.emulate.grid_compare import compare_grid

            if scenario is not None:
                typer.echo("iwlab compare: give a SCENARIO or --grid, not both", err=True)
                raise typer.Exit(2)
            try:
                c = compare_grid(grid, sim_seeds=seeds, replay=not no_replay, first_flight=not no_first_flight,
                                 workers=workers, cells=cells.split(",") if cells else None, out=out,
                                 **({} if max_unit_load is None else {"max_unit_load": max_unit_load}))
            except GridError as e:
                typer.echo(f"iwlab compare: {e}", err=True)
                raise typer.Exit(2) from None
            typer.echo(c.text())
            if out is not None:
                typer.echo(f"\nreport: {Path(out) / 'grid-report.html'}")
            return
        if scenario is None:
            typer.echo("iwlab compare: a SCENARIO (or --grid GRID.toml) is required", err=True)
            raise typer.Exit(2)
        from iwlab.emulate.compare import compare

        try:
            c = compare(scenario, seeds=seeds, duration=_seconds(duration), out=out, say=_say,
                        quic_stack=quic_stack.value)
        except (em.EmulationError, em.PlanError, FileNotFoundError) as e:
            fail(f"compare: {e}", 1)
        typer.echo(c.text())
        if out is not None:
            typer.echo(f"\nfigure: {Path(out) / 'compare-cdf.png'}")
