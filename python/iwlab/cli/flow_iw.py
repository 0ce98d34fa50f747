"""`iwlab flow-iw …`: per-flow initial window on Linux with eBPF (python/iwlab/deploy/flow_iw.py)
and with route marks (flow_iw_marks.py). Root for everything but `iw`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from iwlab.cli.common import HelpGroup

H_CGROUP = "cgroup below /sys/fs/cgroup/unified (created by attach when missing; never the root)"
H_PINS = "bpffs directory holding iwlab's pins (mounted at /sys/fs/bpf when missing)"
H_POLICY = "policy file; the route covering --route (default: the file's only or default route) sets the IWs"
H_JSON = "print JSON instead of text"

flow_iw = typer.Typer(name="flow-iw", no_args_is_help=True, cls=HelpGroup, rich_markup_mode=None,
                      help="Per-flow initial window: eBPF programs on a cgroup, applications set IW(size).")


def _fail(e: Exception) -> None:
    from iwlab.cli.common import fail

    fail(str(e), 2 if getattr(e, "usage", False) or isinstance(e, (ValueError, LookupError)) else 1)


def _call(fn, *args, **kw) -> Any:
    from iwlab.deploy.flow_iw import FlowIwError
    from iwlab.deploy.flow_iw_marks import MarksError
    from iwlab.deploy.netlink import NetlinkError

    try:
        return fn(*args, **kw)
    except (FlowIwError, MarksError, NetlinkError, ValueError, LookupError, OSError) as e:
        _fail(e)


def _pin_root(pin_root: Optional[Path]) -> Path:
    from iwlab.deploy.flow_iw import PIN_ROOT

    return pin_root or PIN_ROOT


def _route_limits(policy: Path, route: Optional[str]) -> tuple[int, int, dict]:
    """(default IW, max IW, the file's [tcp] pacing) of the chosen route of a policy file: (MinIW,
    V) of a size-based policy, (N, N) of a fixed one."""
    from iwlab.policy import load_policy

    pf = load_policy(policy)
    routes = [r for r in pf.routes if route is None and (len(pf.routes) == 1 or r.prefix is None)
              or r.key == route]
    if len(routes) != 1:
        have = ", ".join(r.key for r in pf.routes)
        raise LookupError(f"--route = {route!r}: {policy} has routes {have}; name one"
                          if route else f"{policy}: several routes ({have}) and none is 'default'; use --route")
    spec = pf.policies[routes[0].policy]
    if spec.get("kind") == "size-based":
        return spec["min_iw"], spec["v"], pf.tcp
    if spec.get("kind") == "fixed":
        return spec["segments"], spec["segments"], pf.tcp
    raise ValueError(f"route {routes[0].key}: policy {routes[0].policy!r} is {spec.get('kind')!r}; "
                     "flow-iw attach --policy needs a size-based or fixed one (or give --default-iw/--max-iw)")


def _print(out: dict, as_json: bool, text: str) -> None:
    typer.echo(json.dumps(out, indent=2, sort_keys=True) if as_json else text)


def _status_text(s: dict) -> str:
    if not s["attached"]:
        extra = " (pins left: run detach)" if Path(s["pins"]).exists() else ""
        return f"{s['cgroup']}: not attached{extra}"
    c, st = s["config"], s["stats"] or {}
    links = s["links"]
    lines = [f"{s['cgroup']}: attached (sock_ops link {links['sockops']['id']}, "
             f"setsockopt link {links['setsockopt']['id']}; pins {s['pins']})",
             f"  default IW {c['default_iw'] or 'route initcwnd'}, hints accepted 1..{c['max_iw']}, "
             f"pacing {'paced IW, then internal' if c.get('paced_iw') else 'internal' if c.get('pacing') else 'off'}, "
             f"cgroup {'created by iwlab' if c['created_cgroup'] else 'not created by iwlab'}, "
             f"{len(s['processes'])} processes",
             "  " + ", ".join(f"{k} {v}" for k, v in st.items())]
    return "\n".join(lines)


@flow_iw.command("check")
def check_cmd(as_json: bool = typer.Option(False, "--json", help=H_JSON)) -> None:
    """Load iwlab's programs through the kernel's verifier, attach nothing (root)."""
    from iwlab.deploy import flow_iw as f

    out = _call(f.check)
    _print(out, as_json, "ok: the kernel accepts " + " and ".join(out["programs"]))


@flow_iw.command("attach")
def attach_cmd(
    cgroup: str = typer.Option(..., "--cgroup", help=H_CGROUP),
    policy: Optional[Path] = typer.Option(None, "--policy", help=H_POLICY),
    route: Optional[str] = typer.Option(None, "--route", help="route prefix of --policy"),
    default_iw: Optional[int] = typer.Option(None, "--default-iw",
                                             help="IW of connections that set none; 0: the route's (default: MinIW)"),
    max_iw: Optional[int] = typer.Option(None, "--max-iw", help="largest IW an application may set (default: V)"),
    pacing: Optional[bool] = typer.Option(None, "--pacing/--no-pacing",
                                          help="Linux's internal pacing on every connection (default: --policy's [tcp])"),
    paced_iw: Optional[bool] = typer.Option(None, "--paced-iw/--no-paced-iw",
                                            help="first flight spread over the handshake RTT; needs --pacing "
                                                 "(default: --policy's [tcp])"),
    pin_root: Optional[Path] = typer.Option(None, "--pin-root", help=H_PINS),
    as_json: bool = typer.Option(False, "--json", help=H_JSON),
) -> None:
    """Attach the per-flow IW programs to a cgroup (root). Idempotent."""
    from iwlab.deploy import flow_iw as f

    tcp = {"pacing": False, "paced_iw": False}
    if policy is not None:
        lo, v, tcp = _call(_route_limits, policy, route)
        default_iw = lo if default_iw is None else default_iw
        max_iw = v if max_iw is None else max_iw
    if max_iw is None:
        _fail(f.FlowIwError("give --policy FILE, or --max-iw N (and --default-iw)", usage=True))
    pacing = tcp["pacing"] if pacing is None else pacing
    paced_iw = tcp["paced_iw"] if paced_iw is None else paced_iw
    out = _call(f.attach, cgroup, default_iw or 0, max_iw, _pin_root(pin_root), pacing, paced_iw)
    _print(out, as_json, f"{out['action']}\n{_status_text(out)}" if out["changed"]
           else f"no change\n{_status_text(out)}")


@flow_iw.command("status")
def status_cmd(cgroup: str = typer.Option(..., "--cgroup", help=H_CGROUP),
               pin_root: Optional[Path] = typer.Option(None, "--pin-root", help=H_PINS),
               as_json: bool = typer.Option(False, "--json", help=H_JSON)) -> None:
    """What is attached to a cgroup, its configuration and counters (root)."""
    from iwlab.deploy import flow_iw as f

    out = _call(f.status, cgroup, _pin_root(pin_root))
    _print(out, as_json, _status_text(out))


@flow_iw.command("detach")
def detach_cmd(cgroup: str = typer.Option(..., "--cgroup", help=H_CGROUP),
               pin_root: Optional[Path] = typer.Option(None, "--pin-root", help=H_PINS),
               keep_cgroup: bool = typer.Option(False, "--keep-cgroup", help="keep a cgroup attach created"),
               as_json: bool = typer.Option(False, "--json", help=H_JSON)) -> None:
    """Detach and unpin the programs; remove the cgroup if attach created it and it is empty (root)."""
    from iwlab.deploy import flow_iw as f

    out = _call(f.detach, cgroup, _pin_root(pin_root), keep_cgroup)
    text = (f"detached from {out['cgroup']}" + ("; cgroup removed" if out.get("cgroup_removed") else "")
            if out["changed"] else out["note"])
    _print(out, as_json, text + (f"\nnote: {out['note']}" if out["changed"] and out.get("note") else ""))


@flow_iw.command("exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def exec_cmd(ctx: typer.Context,
             cgroup: Optional[str] = typer.Option(None, "--cgroup", help=H_CGROUP),
             netns: Optional[str] = typer.Option(None, "--netns", help="network namespace (ip netns)")) -> None:
    """Run a command in the cgroup (and a network namespace): iwlab flow-iw exec --cgroup N -- CMD … (root)."""
    from iwlab.deploy import flow_iw as f

    _call(f.exec_in, cgroup, netns, list(ctx.args))


@flow_iw.command("iw")
def iw_cmd(policy: Path = typer.Option(..., "--policy", help="policy file"),
           size: int = typer.Option(..., "--size", help="flow size in bytes", min=0),
           peer: str = typer.Option(..., "--peer", help="destination address"),
           mss: int = typer.Option(1448, "--mss", help="segment size in bytes", min=1)) -> None:
    """The IW (segments) the policy gives a flow of SIZE bytes to PEER — what set_flow_size sets."""
    from iwlab.deploy.flow_iw_app import FlowSizePolicy

    typer.echo(_call(lambda: FlowSizePolicy(policy).segments(size, mss, peer)))


marks = typer.Typer(name="marks", no_args_is_help=True, cls=HelpGroup, rich_markup_mode=None,
                    help="Route-mark variant for clients that know their size: SO_MARK → rule → a table "
                         "whose route has initcwnd IW(size).")
flow_iw.add_typer(marks, name="marks")
H_NETNS = "network namespace (default: the host's)"


def _marks_text(s: dict) -> str:
    if not s["routes"]:
        return "no iwlab mark rules or routes"
    lines = [f"{len(s['rules'])} rules (priority 32000), {len(s['routes'])} routes:"]
    lines += [f"  fwmark {r['table']:#x} → table {r['table']:#x}: {r['prefix']} via {r['gateway'] or '-'} "
              f"initcwnd {r['initcwnd']}" for r in s["routes"]]
    return "\n".join(lines)


@marks.command("install")
def marks_install(policy: Path = typer.Option(..., "--policy", help="policy file (its size-based routes)"),
                  netns: Optional[str] = typer.Option(None, "--netns", help=H_NETNS),
                  force: bool = typer.Option(False, "--force", help="write routes with an initcwnd outside "
                                             "1…100 segments (refused otherwise)"),
                  as_json: bool = typer.Option(False, "--json", help=H_JSON)) -> None:
    """One rule and one route per IW MinIW…V of each size-based route (root). Idempotent."""
    from iwlab.deploy import flow_iw_marks as m
    from iwlab.deploy.flow_iw_app import FlowSizePolicy

    out = _call(lambda: m.install(FlowSizePolicy(policy).file, netns, force))
    _print(out, as_json, _marks_text(out))


@marks.command("remove")
def marks_remove(netns: Optional[str] = typer.Option(None, "--netns", help=H_NETNS),
                 as_json: bool = typer.Option(False, "--json", help=H_JSON)) -> None:
    """Delete every rule and route `marks install` writes (root)."""
    from iwlab.deploy import flow_iw_marks as m

    out = _call(m.remove, netns)
    _print(out, as_json, f"removed {out['rules_removed']} rules and {out['routes_removed']} routes")


@marks.command("show")
def marks_show(netns: Optional[str] = typer.Option(None, "--netns", help=H_NETNS),
               as_json: bool = typer.Option(False, "--json", help=H_JSON)) -> None:
    """The mark rules and routes in place."""
    from iwlab.deploy import flow_iw_marks as m

    out = _call(m.show, netns)
    _print(out, as_json, _marks_text(out))


def register(app: typer.Typer) -> None:
    app.add_typer(flow_iw, name="flow-iw")
