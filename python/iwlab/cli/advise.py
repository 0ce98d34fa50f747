"""`iwlab advise`: recommend an initial window (or IW policy) for a network profile."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

EXAMPLE = """\
Recommend an initial window (or IW policy) for a network and a workload, with evidence: every
candidate's completion time with its 95 % CI, a Pareto figure, a sensitivity check, a policy file
for `iwlab apply` and the equivalent `ip route … initcwnd N` line.

\b
Example (a few seconds; well under a minute on 2 cores):
  iwlab advise --rate 2Mbps --rtt 100ms --buffer 25pkt --background udp:60% \\
      --sizes 9seg --candidates fixed:3,10,16 --candidates size-based \\
      --duration 20s --budget 80runs --out out/advice

\b
PROFILE is an optional TOML file with the same keys (docs/advise.md); flags override it.
Candidates: fixed[:N,…] rfc3390 rfc6928 size-based[:THETA/V,…] paced[:N,…] adaptive[:KIND,…]
(default: all of them, each deployable by iwlab apply, flow-iw or watch). Budget: runs
(200runs) or wall time (120s). Too few flows per run: no answer, exit 3.
"""


def advise(
    profile: Annotated[Optional[Path], typer.Argument(help="Profile TOML file (optional).")] = None,
    rate: Annotated[Optional[str], typer.Option(help="Bottleneck rate, e.g. 2Mbps.")] = None,
    rtt: Annotated[Optional[str], typer.Option(help="Base RTT (100ms) or a range LO-HI (50ms-300ms).")] = None,
    buffer: Annotated[Optional[str], typer.Option(help="Bottleneck buffer: packets (25pkt) or time (50ms).")] = None,
    background: Annotated[Optional[str], typer.Option(
        help="none | udp:60% | tcp:N (long-lived bulk flows) | tcp:N@500kbps (rate-limited) | tcp-share:40% (one "
             "long-lived flow at a measured share) | poisson-tcp:60%.")] = None,
    loss: Annotated[Optional[str], typer.Option(help="Random loss probability (0.01 or 1%).")] = None,
    sizes: Annotated[Optional[str], typer.Option(
        help="Flow sizes: Nseg | websearch | datamining | FILE.csv (sizes, or value,cdf lines).")] = None,
    load: Annotated[Optional[str], typer.Option(
        help="The flows' load: a share of the bottleneck (10%) or flows per second (2/s) [10%].")] = None,
    arrivals: Annotated[Optional[str], typer.Option(
        help="How the flows arrive: poisson | periodic | closed-loop (one at a time per client, exponential think "
             "time) | bursts (4 at once) [poisson]; sizes from a distribution too (as 100 equally likely sizes "
             "under all but poisson).")] = None,
    tcp: Annotated[Optional[str], typer.Option(
        help="TCP flavour: linux (tcp.profile = linux: CUBIC, HyStart, SACK, RACK-TLP, PRR, quick-ACK, min RTO 200 ms, "
             "MSS 1448, timestamps) or reno (RFC defaults: NewReno, no SACK, min RTO 1 s, MSS 1460).")] = None,
    clients: Annotated[Optional[int], typer.Option(help="Client hosts (RTT draws with a range).")] = None,
    duration: Annotated[Optional[str], typer.Option(help="Simulated time per run (30s).")] = None,
    objective: Annotated[Optional[str], typer.Option(help="mean | median | p95 | p99 completion time.")] = None,
    min_size: Annotated[Optional[str], typer.Option(help="Objective over flows of at least this size.")] = None,
    max_size: Annotated[Optional[str], typer.Option(help="Objective over flows of at most this size.")] = None,
    max_retransmit_pp: Annotated[Optional[float], typer.Option(
        help="Constraint: retransmission rate at most this many percentage points over IW 3.")] = None,
    max_harm_pct: Annotated[Optional[float], typer.Option(
        help="Constraint: IW-3 flows sharing the link slow down by at most this %.")] = None,
    max_voip_ms: Annotated[Optional[float], typer.Option(
        help="Constraint: a real-time flow's p99 one-way delay grows by at most this many ms.")] = None,
    candidates: Annotated[Optional[list[str]], typer.Option(
        "--candidates", "-c", help="KIND[:ARGS], repeatable (default: all kinds).")] = None,
    budget: Annotated[str, typer.Option(help="Runs (200runs) or wall time (120s).")] = "120s",
    margin: Annotated[Optional[str], typer.Option(
        help="Practical-equivalence margin: a share of the objective (2%, at least 1 ms) or a time (5ms); "
             "smaller differences are no differences, and among equals the simplest deployment nearest IW 10 "
             "wins.")] = None,
    seeds: Annotated[int, typer.Option(help="Seeds per candidate in the first round.", min=2)] = 3,
    max_seeds: Annotated[int, typer.Option(help="At most this many seeds per candidate.", min=2)] = 24,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="Local worker processes [all cores].",
                                                min=1)] = None,
    dask: Annotated[Optional[str], typer.Option(help="Run on a Dask cluster: tcp://host:port.")] = None,
    sensitivity: Annotated[bool, typer.Option("--sensitivity/--no-sensitivity",
                                              help="Check the answer at half/double RTT and buffer.")] = True,
    prefix: Annotated[str, typer.Option(
        help="Destination prefix of the policy file's route (CIDR, or default).")] = "default",
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Write advice.json, policy.toml, "
                                                "report.html, pareto.png, runs.parquet here.")] = None,
    from_watch: Annotated[Optional[Path], typer.Option(
        "--from-watch", help="iwlab watch's state file: one profile per measured prefix (RTT, retransmission rate, "
                             "mean flow size), one recommendation each, one policy file.")] = None,
    netns: Annotated[Optional[str], typer.Option(help="With --from-watch: the watched namespace [root].")] = None,
    verify: Annotated[bool, typer.Option("--verify", help="Run the recommendation and its runner-up on real "
                                         "Linux TCP (iwlab emulate: root, namespaces) beside the simulator.")] = False,
    verify_seeds: Annotated[int, typer.Option(help="--verify: at most this many paired seeds per arrival process.",
                                              min=3)] = 16,
    verify_duration: Annotated[Optional[str], typer.Option(
        help="--verify: length of each emulated run (20s) [as long as the objective needs].")] = None,
    verify_time: Annotated[Optional[str], typer.Option(
        help="--verify: stop adding seeds after this long (10min) [10min].")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object (recommended, candidates, …).")] = False,
    progress: Annotated[Optional[bool], typer.Option("--progress/--no-progress",
                                                     help="Progress bar [on unless --json].")] = None,
    transport: Annotated[str, typer.Option(help="tcp, or quic: a QUIC IW and each stack's setting "
                                                "(python/iwlab/advise/quic.py).")] = "tcp",
    quic_iw: Annotated[Optional[str], typer.Option(help="--transport quic: candidate IWs in datagrams "
                                                        "[10,16,24,32].")] = None,
    quic_datagram: Annotated[int, typer.Option(help="--transport quic: datagram size (UDP payload).")] = 1200,
    certificate_chain: Annotated[Optional[str], typer.Option(help="--transport quic: the server's certificate "
                                                                  "chain [4kB].")] = None,
) -> None:
    """Recommend an IW for a network profile (see the example above)."""
    from iwlab.advise.advisor import advise as run_advise
    from iwlab.advise.profile import Profile, ProfileError
    from iwlab.advise.types import INSUFFICIENT
    from iwlab.emulate import EmulationError
    from iwlab.scenario import ScenarioError

    flags = {"rate": rate, "rtt": rtt, "buffer": buffer, "background": background, "loss": loss, "sizes": sizes,
             "load": load, "arrivals": arrivals, "tcp": tcp, "clients": clients, "duration": duration, "objective": objective,
             "min_size": min_size, "max_size": max_size, "max_retransmit_pp": max_retransmit_pp,
             "max_harm_pct": max_harm_pct, "max_voip_ms": max_voip_ms}
    try:
        base = Profile.from_toml(profile) if profile is not None else None
        p = Profile.from_flags(base, **{k: v for k, v in flags.items() if v is not None})
        if transport not in ("tcp", "quic"):
            raise ValueError(f"--transport {transport!r} is not allowed; expected tcp or quic")
        if transport == "quic":
            from iwlab.advise.quic import cli as quic_cli

            typer.echo(quic_cli(p, packets=quic_iw, datagram=quic_datagram, chain=certificate_chain, seeds=seeds,
                                jobs=jobs, out=out, as_json=json_))
            return
        if from_watch is not None:
            _from_watch(from_watch, p, netns, out, json_, candidates=candidates, budget=budget, jobs=jobs, dask=dask,
                        seeds=seeds, max_seeds=max_seeds, sensitivity=sensitivity,
                        progress=not json_ if progress is None else progress)
            return
        vdur = None
        if verify_duration is not None:
            from iwlab.emulate.units import seconds

            vdur = seconds(verify_duration, "verify-duration")
            if not 0 < vdur <= p.duration_s:
                raise ValueError(f"verify-duration = {verify_duration!r} is not allowed; expected 0 < it <= the "
                                 f"profile's duration ({p.duration_s:g} s)")
        vtime = 600.0
        if verify_time is not None:
            from iwlab.emulate.units import seconds

            vtime = seconds(verify_time, "verify-time")
            if not vtime > 0:
                raise ValueError(f"verify-time = {verify_time!r} is not allowed; expected a time > 0 ('10min')")
        a = run_advise(p, candidates=candidates, budget=budget, jobs=jobs, dask=dask, seeds=seeds,
                       max_seeds=max_seeds, sensitivity=sensitivity, prefix=prefix,
                       progress=not json_ if progress is None else progress, verify=verify,
                       verify_seeds=verify_seeds, verify_duration=vdur, verify_time=vtime, margin=margin)
    except EmulationError as e:
        typer.echo(f"error: {' '.join(str(e).split())}", err=True)
        raise typer.Exit(2) from None
    except (ProfileError, ScenarioError, ValueError) as e:
        typer.echo(f"error: {' '.join(str(e).split())}", err=True)
        raise typer.Exit(2) from None
    except OSError as e:
        typer.echo(f"error: {e.filename}: {e.strerror}" if e.filename else f"error: {e}", err=True)
        raise typer.Exit(2) from None
    if out is not None:
        written = a.write(out)
    if json_:
        typer.echo(a.to_json())
    else:
        typer.echo(a.summary())
        if out is not None:
            typer.echo(f"\nwritten: {', '.join(str(p) for p in written.values())}")
    if a.stop_reason == INSUFFICIENT:
        # Exit 3: the command worked, the profile cannot carry an answer (not a usage error).
        typer.echo(f"iwlab advise: no recommendation ({INSUFFICIENT}): {a.stop_detail}", err=True)
        raise typer.Exit(3)
    if a.refused:
        typer.echo(f"iwlab advise: {a.refused}", err=True)


def _from_watch(state: Path, p, netns: Optional[str], out: Optional[Path], json_: bool, **kw) -> None:
    import json
    import re

    from iwlab.advise.watch import advise_watch

    w = advise_watch(state, p, netns, **kw)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "policy.toml").write_text(w.policy_file)
        (out / "advice.json").write_text(json.dumps(w.to_dict(), indent=2, default=str) + "\n")
        for prefix, a in w.advice.items():
            a.write(out / re.sub(r"[^\w.-]", "_", prefix))
    typer.echo(json.dumps(w.to_dict(), indent=2, default=str) if json_ else w.summary())


def register(app: typer.Typer) -> None:
    app.command("advise", help=EXAMPLE)(advise)
