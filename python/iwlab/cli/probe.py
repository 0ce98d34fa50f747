"""`iwlab probe`: the initial window a server sends, measured from the outside (python/iwlab/probe/;
docs/probe.md). Root: raw sockets and an nftables rule for the duration of the run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

HELP = """\
Measure the initial window (IW) of servers: connect, send a request (HTTP GET, or a TLS
ClientHello with SNI for https://), withhold every ACK, and count what arrives before the
server's first retransmission.

\b
TARGET: http://HOST[:PORT]/PATH (ask for a large object), https://HOST[:PORT]/PATH,
HOST:PORT (an HTTP GET of /); IPv6 as [ADDR]:PORT. `≥ N` means the response ran out before
the window did (a lower bound). --many: polite defaults, 4 probes at a time and 2 new
connections per second. Exit 2: bad input; 1: a target could not be measured (or --expect
failed); 130: interrupted. docs/probe.md explains the method and how to read a result.

\b
--quic: TARGET is HOST[:PORT] (UDP 443 by default) or https://HOST[:PORT]/PATH; an HTTP/3 GET
of --path over QUIC, nothing acknowledged; the IW in bytes (docs/quic.md). No root needed
except for --netns.
"""


def _msses(text: Optional[str]) -> list[Optional[int]]:
    from iwlab.cli.common import fail

    if not text:
        return [None]
    out = []
    for part in text.split(","):
        if not part.strip().isdigit():
            fail(f"--mss = {text!r}: allowed a comma-separated list of sizes in bytes, e.g. 536,1460")
        out.append(int(part))
    return out


def _targets(targets: list[str], many: Optional[Path]) -> list[str]:
    from iwlab.cli.common import fail

    out = list(targets)
    if many is not None:
        try:
            lines = many.read_text().splitlines()
        except OSError as e:
            fail(f"--many = {str(many)!r}: {e.strerror}")
        out += [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]
    if not out:
        fail("no target: give TARGET… or --many FILE")
    return out


def _line(p) -> str:
    if p.error:
        return f"{p.target}  error: {p.error}"
    rows = []
    for r in p.results:
        rto = f"{r.rto_ms:g} ms" if r.rto_ms is not None else "-"
        rows.append(f"{r.target}  {r.address}  mss {r.segment_size}  IW {r.iw_text()} segments "
                    f"({'≥ ' if r.lower_bound else ''}{r.bytes} bytes)  RTO {rto}  [{r.why}]")
    if p.kind:
        rows.append(f"{p.target}  IW is {'segment' if p.kind == 'segments' else 'byte' if p.kind == 'bytes' else 'un'}"
                    f"{'-based' if p.kind != 'unclear' else 'clear (neither segment- nor byte-based)'}")
    return "\n".join(rows)


def probe_cmd(targets: Optional[list[str]] = typer.Argument(None, metavar="TARGET…", show_default=False),
              many: Optional[Path] = typer.Option(None, "--many", metavar="FILE",
                                                  help="more targets, one a line (# comments)"),
              mss: Optional[str] = typer.Option(None, "--mss", metavar="LIST",
                                                help="MSS values to advertise, one run each (e.g. 536,1460: "
                                                     "tells segment- from byte-based IWs); default: the path MTU's"),
              netns: Optional[str] = typer.Option(None, "--netns", help="probe from this network namespace"),
              timeout: float = typer.Option(3.0, "--timeout", metavar="SECONDS",
                                            help="wait this long for the SYN-ACK, the first data, a retransmission"),
              concurrency: int = typer.Option(4, "--concurrency", help="probes at a time"),
              rate: float = typer.Option(2.0, "--rate", help="new connections per second, over all probes"),
              expect: Optional[int] = typer.Option(None, "--expect", metavar="N",
                                                   help="exit 1 unless every run measures exactly N segments "
                                                        "(the deploy check of docs/deploy.md)"),
              request: Optional[str] = typer.Option(None, "--request", metavar="TEXT",
                                                    help="for HOST:PORT targets: send TEXT (backslash escapes "
                                                         "such as \\n allowed) instead of an HTTP GET of /"),
              quic: bool = typer.Option(False, "--quic", help="probe a QUIC (HTTP/3) server: its IW in bytes"),
              path: str = typer.Option("/", "--path", help="with --quic: the object to ask for (a large one)"),
              as_json: bool = typer.Option(False, "--json", help="print JSON instead of text")) -> None:
    import signal

    from iwlab.cli.common import fail
    from iwlab.probe import ProbeError, ProbeInputError, probe_many

    if quic:
        for given, name in ((mss, "--mss"), (request, "--request"), (expect, "--expect")):
            if given is not None:
                fail(f"{name} with --quic: allowed only for TCP targets")
    elif path != "/":
        fail(f"--path = {path!r} without --quic: for TCP give the path in the URL (http://HOST/PATH)")
    msses = _msses(mss)
    payload = None
    if request is not None:
        try:
            payload = request.encode("latin-1").decode("unicode_escape").encode("latin-1")
        except (UnicodeError, ValueError):
            fail(f"--request = {request!r}: allowed text with Python backslash escapes (\\n, \\r, \\xNN)")
    todo = _targets(targets or [], many)
    if not 0 < timeout <= 60:
        fail(f"--timeout = {timeout:g}: allowed > 0 and ≤ 60 seconds")
    if quic:
        _quic(todo, path, timeout, netns, concurrency, rate, as_json)

    def terminate(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, terminate)
    shown = [False] * len(todo)

    def done(i, p):  # text mode: each target as soon as it is measured
        if not as_json and len(todo) > 1:
            typer.echo(_line(p))
            shown[i] = True

    try:
        results = probe_many(todo, msses, timeout, netns, concurrency, rate, on_done=done, request=payload)
    except ProbeInputError as e:
        fail(str(e))
    except (ProbeError, PermissionError) as e:
        typer.echo(f"iwlab: {e}", err=True)
        raise typer.Exit(1)
    except KeyboardInterrupt:
        typer.echo("iwlab: interrupted (rules and sockets removed)", err=True)
        raise typer.Exit(130)
    finally:
        signal.signal(signal.SIGTERM, old)
    code = 0
    for p in results:
        if p.error:
            code = 1
            if len(todo) == 1 and not as_json:
                typer.echo(f"iwlab: {p.error}", err=True)
        elif expect is not None and any(r.lower_bound or r.segments != expect for r in p.results):
            code = 1
    if as_json:
        typer.echo(json.dumps([p.to_json() for p in results], indent=2, sort_keys=True))
    elif len(todo) == 1:
        if not results[0].error:
            typer.echo(_line(results[0]))
    if expect is not None and code == 1 and not as_json:
        bad = [p.target for p in results if not p.error and any(r.lower_bound or r.segments != expect for r in p.results)]
        if bad:
            typer.echo(f"iwlab: --expect {expect}: not measured on {', '.join(bad)}", err=True)
    raise typer.Exit(code)


def _quic(todo: list[str], path: str, timeout: float, netns: Optional[str], concurrency: int, rate: float,
          as_json: bool) -> None:
    """`iwlab probe --quic`: one line (or JSON object) per target; exits."""
    import signal

    from iwlab.cli.common import fail
    from iwlab.probe import ProbeError, ProbeInputError
    from iwlab.probe.quic import QuicError, probe_quic_many

    def terminate(signum, frame):
        raise KeyboardInterrupt

    def done(i, r):
        if not as_json and len(todo) > 1:
            typer.echo(r.line())

    old = signal.signal(signal.SIGTERM, terminate)
    try:
        results = probe_quic_many(todo, path, timeout, netns, concurrency, rate, on_done=done)
    except ProbeInputError as e:
        fail(str(e))
    except (ProbeError, PermissionError) as e:
        typer.echo(f"iwlab: {e}", err=True)
        raise typer.Exit(1)
    except KeyboardInterrupt:
        typer.echo("iwlab: interrupted (connections closed)", err=True)
        raise typer.Exit(130)
    finally:
        signal.signal(signal.SIGTERM, old)
    failed = any(isinstance(r, QuicError) for r in results)
    if as_json:
        typer.echo(json.dumps([r.to_json() for r in results], indent=2, sort_keys=True))
    elif len(todo) == 1:
        if failed:
            typer.echo(f"iwlab: {results[0].error}", err=True)
        else:
            typer.echo(results[0].line())
    raise typer.Exit(1 if failed else 0)


def verify_after_apply(target: str, server_netns: Optional[str], client_netns: Optional[str]) -> None:
    """`iwlab apply --verify-probe TARGET [--probe-netns NS]`: one line; exit 1 unless the IW on the
    wire equals the initcwnd of the managed route covering the prober (iwlab.probe.verify)."""
    from iwlab.cli.common import fail
    from iwlab.probe import ProbeError, ProbeInputError
    from iwlab.probe.verify import verify

    try:
        v = verify(target, server_netns, client_netns)
    except ProbeInputError as e:
        fail(f"--verify-probe: {e}")
    except (ProbeError, PermissionError) as e:
        typer.echo(f"iwlab: --verify-probe: {e}", err=True)
        raise typer.Exit(1)
    typer.echo(v.message, err=not v.ok)
    if not v.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("probe", help=HELP)(probe_cmd)
