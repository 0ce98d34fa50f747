"""`iwlab plan | apply | rollback | watch | watch status | export-evidence | import-evidence`: IW
policies on real Linux hosts (python/iwlab/deploy/; docs/deploy.md). Root for everything (netlink, sock_diag, namespaces)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from iwlab.cli.common import HelpGroup

H_NETNS = "network namespace (/run/netns/NAME); default: the root namespace"
H_STATE = ("SQLite state file (default: /var/lib/iwlab/deploy.sqlite; with --netns NAME, "
           "/var/lib/iwlab/netns/NAME/deploy.sqlite)")
H_JSON = "print JSON instead of text"
H_HOST = "this host's name in status, metrics and exported evidence (default: the hostname)"
H_FLOW_IW = ("cgroup whose applications set per-flow IWs (size-based routes): apply attaches iwlab's eBPF "
             "programs there, rollback detaches them (docs/deploy.md, Per-flow IW)")
H_FORCE = "write an IW outside 1…100 segments (a typo such as 1000 for 10 is refused otherwise)"
MAX_TRY_SECONDS = 7 * 86400.0  # a trial longer than a week is a forgotten one, not a trial


def _fail(e: BaseException | str, usage: bool | None = None) -> None:
    from iwlab.cli.common import fail

    fail(str(e), 2 if (usage if usage is not None else getattr(e, "usage", False)) else 1)


class _Errors:
    """Maps the deploy errors to exit codes: bad input (policy file, namespace, state file) 2."""

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if e is None or isinstance(e, (typer.Exit, KeyboardInterrupt, SystemExit)):
            return False
        from iwlab.deploy.netlink import NetlinkError
        from iwlab.deploy.state import StateError
        from iwlab.policy import PolicyFileError

        if isinstance(e, (PolicyFileError, StateError)):
            _fail(e, usage=True)
        if isinstance(e, NetlinkError):
            _fail(e)
        if getattr(e, "usage", False):  # e.g. metrics.MetricsAddressError
            _fail(e, usage=True)
        if isinstance(e, PermissionError):
            _fail(f"{e} (deploy commands need root)")
        return False


def _load(policy: Path):
    from iwlab.policy import load_policy

    if not policy.is_file():
        _fail(f"{policy}: no such policy file", usage=True)
    return load_policy(policy)


def _state(state: Optional[Path], netns: Optional[str]) -> Path:
    """--state, or the namespace's own file (`iwlab.deploy.state.default_state`)."""
    from iwlab.deploy.state import default_state

    return default_state(netns) if state is None else state


def _open(netns: Optional[str], state: Path, create: bool = True):
    from iwlab.deploy import netlink
    from iwlab.deploy.state import State

    netlink.check_namespace(netns)
    return netlink.open_ipr(netns), State(state, create=create)


def _flow_iw(call) -> Any:
    """Runs a flow_iw hook; its errors are deploy errors (exit 1, or 2 for bad input)."""
    from iwlab.deploy import flow_iw

    try:
        return call(flow_iw)
    except flow_iw.FlowIwError as e:
        _fail(e)


def _print(out: dict[str, Any], as_json: bool, text: str) -> None:
    typer.echo(json.dumps(out, indent=2, sort_keys=True) if as_json else text)


def plan_cmd(policy: Path = typer.Argument(..., help="policy file (TOML; docs/deploy.md)"),
             netns: Optional[str] = typer.Option(None, "--netns", help=H_NETNS),
             flow_iw_cgroup: Optional[str] = typer.Option(None, "--flow-iw-cgroup", help=H_FLOW_IW),
             state: Optional[Path] = typer.Option(None, "--state", help=H_STATE),
             force: bool = typer.Option(False, "--force", help=H_FORCE),
             as_json: bool = typer.Option(False, "--json", help=H_JSON)) -> None:
    """Show exactly which routes `apply` would change, and change nothing."""
    from iwlab.deploy import ops
    from iwlab.deploy.state import State

    with _Errors():
        state = _state(state, netns)
        pf = _load(policy)
        p = ops.plan(pf, netns, state, force=force)
        pending = State(state).generations(netns, ("pending",)) if state.exists() else []
        note = (f"\n(generation {pending[-1]['id']} was interrupted; the next apply/rollback restores it first)"
                if pending else "")
        hook = _flow_iw(lambda fi: fi.apply_hook(pf, flow_iw_cgroup, dry_run=True))
        if hook:
            note += (f"\nper-flow IW: programs on cgroup {hook['cgroup']} (max IW {hook['max_iw']}; "
                     f"{'attached now' if hook['attached_now'] else 'not attached now'})")
        _print({"edits": [e.to_json() for e in p.edits], "flow_iw": hook}, as_json, p.describe() + note)


def apply_cmd(policy: Optional[Path] = typer.Argument(None, help="policy file (TOML; docs/deploy.md)"),
              try_: Optional[str] = typer.Option(None, "--try", metavar="DURATION",
                                                 help="revert by itself after DURATION (e.g. 60s) unless "
                                                      "`iwlab apply --confirm` is run meanwhile"),
              confirm: bool = typer.Option(False, "--confirm", help="keep the change a running --try made"),
              netns: Optional[str] = typer.Option(None, "--netns", help=H_NETNS),
              flow_iw_cgroup: Optional[str] = typer.Option(None, "--flow-iw-cgroup", help=H_FLOW_IW),
              state: Optional[Path] = typer.Option(None, "--state", help=H_STATE),
              verify_probe: Optional[str] = typer.Option(None, "--verify-probe", metavar="TARGET",
                                                         help="then probe TARGET (docs/probe.md) and exit 1 unless "
                                                              "its IW equals the route's initcwnd"),
              probe_netns: Optional[str] = typer.Option(None, "--probe-netns", help="probe from this namespace"),
              force: bool = typer.Option(False, "--force", help=H_FORCE),
              as_json: bool = typer.Option(False, "--json", help=H_JSON)) -> None:
    """Set the routes' initcwnd (and initrwnd, congctl) as the policy file says: all or nothing,
    idempotent, recorded for `iwlab rollback`."""
    from iwlab.deploy import apply, ops

    with _Errors():
        state_given, state = state, _state(state, netns)
        if confirm:
            if policy is not None or try_ is not None:
                _fail("--confirm takes no policy file and no --try", usage=True)
            out = ops.confirm(netns, state)
            _print({"generation": out.generation, "message": out.message}, as_json, out.message)
            raise typer.Exit(0 if out.generation else 1)
        if policy is None:
            _fail("a policy file is needed (or --confirm)", usage=True)
        seconds = None
        if try_ is not None:
            from iwlab.emulate.units import seconds as parse_seconds

            try:
                seconds = parse_seconds(try_, "--try")
            except ValueError as e:
                _fail(f"{e}; allowed e.g. 60s, 2min", usage=True)
            if not 0 < seconds <= MAX_TRY_SECONDS:  # also NaN and inf
                _fail(f"--try = {try_!r}: allowed a duration > 0 and at most {MAX_TRY_SECONDS:g} s (7 days)",
                      usage=True)
        pf = _load(policy)
        done = ops.apply(pf, netns, state, try_seconds=seconds, force=force)
        p, gid, notes = done.plan, done.generation, done.recovered
        for n in notes:
            typer.echo(n, err=True)
        try:
            hook = _flow_iw(lambda fi: fi.apply_hook(pf, flow_iw_cgroup))
        except Exception:
            if gid is not None:  # all or nothing: the routes of this apply go back too
                ops.rollback(netns, state, force=force)
            raise
        text = p.describe() if gid is None else f"applied (generation {gid}): " + p.describe()
        if hook:
            text += f"\nper-flow IW: programs on cgroup {hook['cgroup']} ({'changed' if hook.get('changed') else 'unchanged'})"
        _print({"generation": gid, "edits": [e.to_json() for e in p.edits], "recovered": notes, "flow_iw": hook},
               as_json, text)
        if verify_probe:  # before a --try waits: the check decides whether to confirm
            from iwlab.cli.probe import verify_after_apply

            verify_after_apply(verify_probe, netns, probe_netns)
        if gid is not None and seconds is not None:
            typer.echo(f"trying for {seconds:g} s: run `iwlab apply --confirm{' --netns ' + netns if netns else ''}"
                       f"{' --state ' + str(state) if state_given is not None else ''}` to keep it", err=True)
            ipr, st = _open(netns, state)
            if apply.wait_for_confirmation(ipr, st, netns, gid, seconds, force=force):
                typer.echo("confirmed: the change stays")
            else:
                typer.echo(f"not confirmed: generation {gid} reverted")
                raise typer.Exit(1)


def rollback_cmd(netns: Optional[str] = typer.Option(None, "--netns", help=H_NETNS),
                 flow_iw_cgroup: Optional[str] = typer.Option(None, "--flow-iw-cgroup", help=H_FLOW_IW),
                 state: Optional[Path] = typer.Option(None, "--state", help=H_STATE),
                 force: bool = typer.Option(False, "--force", help="restore an IW outside 1…100 segments that an "
                                            "earlier `apply --force` wrote"),
                 as_json: bool = typer.Option(False, "--json", help=H_JSON)) -> None:
    """Restore the routes as they were before the last apply (and the watcher's changes since)."""
    from iwlab.deploy import ops

    with _Errors():
        out = ops.rollback(netns, _state(state, netns), force=force)
        hook = _flow_iw(lambda fi: fi.rollback_hook(flow_iw_cgroup))
        msg = out.message + (f"\nper-flow IW: programs detached from cgroup {flow_iw_cgroup}" if hook else "")
        _print({"generation": out.generation, "edits": out.edits, "message": out.message, "flow_iw": hook}, as_json, msg)


watch_app = typer.Typer(name="watch", help="Watch TCP connections, detect IW loss (RFC 6928), fall back.",
                        cls=HelpGroup, rich_markup_mode=None)


@watch_app.callback(invoke_without_command=True)
def watch_cmd(ctx: typer.Context,
              policy: Optional[Path] = typer.Option(None, "--policy",
                                                    help="policy file (default: the one last applied here)"),
              metrics: Optional[str] = typer.Option(None, "--metrics", metavar="ADDR",
                                                    help="serve Prometheus metrics, e.g. 127.0.0.1:9464"),
              interval: float = typer.Option(0.1, "--interval", help="seconds between INET_DIAG polls"),
              duration: Optional[float] = typer.Option(None, "--duration", help="stop after this many seconds"),
              record: Optional[Path] = typer.Option(None, "--record", help="append every event and IW question "
                                                    "to this JSON-lines file (iwlab.policy.replay reads it)"),
              source: str = typer.Option("auto", "--source", help="IW-loss evidence: bpf (eBPF sock_ops on "
                                         "--cgroup, exact), poll (sock_diag), auto (bpf where available)"),
              cgroup: Optional[str] = typer.Option(None, "--cgroup", help="the watched service's cgroup (a name "
                                                   "below the cgroup2 mount, e.g. the flow-iw cgroup): bpf source"),
              netns: Optional[str] = typer.Option(None, "--netns", help=H_NETNS),
              state: Optional[Path] = typer.Option(None, "--state", help=H_STATE),
              host_label: Optional[str] = typer.Option(None, "--host-label", help=H_HOST),
              force: bool = typer.Option(False, "--force", help=H_FORCE)) -> None:
    """Run the watcher in the foreground (Ctrl-C or SIGTERM stops it). Bad configuration (a
    policy file, a missing --cgroup, an IW out of bounds) exits 2, which the systemd units do
    not restart on."""
    if ctx.invoked_subcommand is not None:
        return
    import logging

    from iwlab.deploy import watch

    logging.basicConfig(format="iwlab watch: %(message)s", level=logging.WARNING)  # stderr (journald)

    with _Errors():
        state = _state(state, netns)
        if not 0.001 <= interval <= 3600:  # also NaN and inf
            _fail(f"--interval = {interval}: allowed 0.001 to 3600 (seconds)", usage=True)
        if source not in ("auto", "bpf", "poll"):
            _fail(f"--source = {source!r}: allowed bpf, poll or auto", usage=True)
        if source == "bpf" and cgroup is None:
            _fail("--source = bpf: needs --cgroup NAME (the cgroup the watched service runs in)", usage=True)
        if cgroup is not None:
            from iwlab.deploy import flow_iw

            flow_iw.cgroup_dir(cgroup)  # a bad name: one line, exit 2
        if duration is not None and not 0 < duration <= 366 * 86400:
            _fail(f"--duration = {duration}: allowed a number of seconds > 0 and at most one year", usage=True)
        ipr, st = _open(netns, state)
        if policy is None:  # the policy is the last applied one: finish an interrupted command first
            for note in watch.recover(ipr, st, netns, force):
                typer.echo(note, err=True)
        pf = _load(policy) if policy is not None else watch.applied_policy(st, netns)
        addr = None
        if metrics is not None:
            host, _, port = metrics.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                _fail(f"--metrics = {metrics!r}: allowed HOST:PORT with a port 1-65535, e.g. 127.0.0.1:9464",
                      usage=True)
            addr = (host.strip("[]"), int(port))
        from iwlab.deploy import evidence_bpf

        try:
            # `--record` writes every event: a line per connection then, no sums
            evidence, fallback = evidence_bpf.start(source, cgroup, pf if record is None else None)
        except evidence_bpf.BpfUnavailable as e:
            _fail(f"--source = bpf: {e}", usage=e.usage)
        try:
            w = watch.Watcher(ipr, st, netns, pf, interval=interval, metrics_addr=addr,
                              record=None if record is None else str(record), evidence=evidence,
                              host=_host(host_label), force=force,
                              evidence_info=evidence_bpf.describe(evidence, source, fallback))
        except BaseException:
            if evidence is not None:
                evidence.close()
            raise
        if fallback:
            logging.getLogger("iwlab.watch").warning("%s", fallback)
        try:
            w.run(duration)
        except evidence_bpf.BpfUnavailable as e:  # the reader died: counters are flushed, exit 1
            _fail(f"evidence source bpf: {e}")


@watch_app.command("status")
def watch_status_cmd(netns: Optional[str] = typer.Option(None, "--netns", help=H_NETNS),
                     state: Optional[Path] = typer.Option(None, "--state", help=H_STATE),
                     host_label: Optional[str] = typer.Option(None, "--host-label", help=H_HOST),
                     as_json: bool = typer.Option(False, "--json", help=H_JSON)) -> None:
    """Per-prefix state: IW now, evidence, since when, why (--json: schema in docs/deploy.md)."""
    from iwlab.deploy import watch
    from iwlab.deploy.state import State

    with _Errors():
        from iwlab.deploy import netlink

        st = State(_state(state, netns), create=False)
        netlink.check_namespace(netns)
        with netlink.open_ipr(netns) as ipr:  # the routes are the truth about the IW now
            out = watch.status(st, netns, ipr, host=_host(host_label))
        _print(out, as_json, watch.status_text(out))


def _host(label: Optional[str]) -> Optional[str]:
    if label is not None and not (0 < len(label) <= 253 and label.isprintable()):
        _fail(f"--host-label = {label!r}: allowed 1-253 printable characters", usage=True)
    return label


@watch_app.command("export-evidence")
def export_evidence_cmd(netns: Optional[str] = typer.Option(None, "--netns", help=H_NETNS),
                        state: Optional[Path] = typer.Option(None, "--state", help=H_STATE),
                        since: float = typer.Option(0.0, "--since", help="only evidence seen at or after this time "
                                                    "(seconds since the epoch)"),
                        host_label: Optional[str] = typer.Option(None, "--host-label", help=H_HOST)) -> None:
    """Print the IW-loss evidence this host's watcher saw, one JSON record per line (for
    `iwlab watch import-evidence` on other hosts)."""
    from iwlab.deploy import evidence
    from iwlab.deploy.state import State

    with _Errors():
        if not 0 <= since < 1e11:  # also NaN and inf
            _fail(f"--since = {since}: allowed seconds since the epoch, >= 0", usage=True)
        st = State(_state(state, netns), create=False)
        for rec in evidence.export(st, netns, evidence.host_label(_host(host_label)), since):
            typer.echo(json.dumps(rec, sort_keys=True))


@watch_app.command("import-evidence")
def import_evidence_cmd(file: Path = typer.Argument(..., help="JSON lines of `iwlab watch export-evidence` "
                                                     "(- for stdin)"),
                        netns: Optional[str] = typer.Option(None, "--netns", help=H_NETNS),
                        state: Optional[Path] = typer.Option(None, "--state", help=H_STATE),
                        policy: Optional[Path] = typer.Option(None, "--policy", help="policy file whose routes the "
                                                              "evidence must match (default: the one last applied)"),
                        as_json: bool = typer.Option(False, "--json", help=H_JSON)) -> None:
    """Store other hosts' IW-loss evidence; the watcher feeds it to the policy (within a
    second if it runs, else when it starts), as if it had seen it here."""
    import sys

    from iwlab.deploy import evidence, watch
    from iwlab.deploy.state import State

    with _Errors():
        state = _state(state, netns)
        if str(file) == "-":
            records = evidence.parse(sys.stdin, "<stdin>")
        else:
            try:
                text = file.read_text()
            except (OSError, UnicodeDecodeError) as e:
                _fail(f"{file}: cannot read it ({getattr(e, 'strerror', None) or e})", usage=True)
            records = evidence.parse(text.splitlines(), str(file))
        st = State(state, create=False)
        pf = _load(policy) if policy is not None else watch.applied_policy(st, netns)
        mine, other = evidence.routed(records, pf)
        new = st.import_evidence(netns, mine)
        out = {"records": len(records), "imported": new, "already_present": len(mine) - new,
               "not_routed_here": sorted({r["prefix"] for r in other}),
               "watcher_running": watch.watcher_running(state, netns)}
        text = (f"imported {new} of {len(records)} record(s) ({len(mine) - new} already present"
                + (f"; prefixes not routed here: {', '.join(out['not_routed_here'])}" if other else "") + "); "
                + ("the running watcher feeds them to the policy within a second" if out["watcher_running"]
                   else "the watcher feeds them to the policy when it starts"))
        _print(out, as_json, text)


@watch_app.command("unit")
def watch_unit_cmd(template: bool = typer.Option(False, "--template", help="the template for namespaces "
                                                 "(iwlab-watch@NAME) instead of the root namespace's unit")) -> None:
    """Print the systemd unit shipped with iwlab, with this installation's `iwlab` in ExecStart."""
    import shutil
    import sys

    name = "iwlab-watch@.service" if template else "iwlab-watch.service"
    exe = Path(sys.executable).with_name("iwlab")  # this installation's, else the one on PATH
    exe = str(exe) if exe.exists() else (shutil.which("iwlab") or "iwlab")
    import iwlab.deploy

    text = (Path(iwlab.deploy.__file__).parent / name).read_text()  # shipped beside the deploy code
    typer.echo(text.replace("@IWLAB@", exe), nl=False)


def register(app: typer.Typer) -> None:
    app.command("plan")(plan_cmd)
    app.command("apply")(apply_cmd)
    app.command("rollback")(rollback_cmd)
    app.add_typer(watch_app)
