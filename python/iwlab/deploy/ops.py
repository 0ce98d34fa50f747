"""The deploy operations as Python functions (what `iwlab plan | apply | rollback` run):

    from iwlab.deploy import ops
    ops.plan("policy.toml", netns="web").describe()
    done = ops.apply("policy.toml", netns="web")            # done.generation, done.plan.edits
    ops.rollback(netns="web").message

Root is needed (netlink). Without `state`, the file is `state.default_state(netns)`: one per namespace. Errors: `iwlab.policy.PolicyFileError` (the file), `netlink.NetlinkError`
(`usage` set for a missing namespace or a prefix no route covers), `state.StateError`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from iwlab.deploy import apply as _apply
from iwlab.deploy import netlink
from iwlab.deploy.plan import Plan
from iwlab.deploy.state import State, StateError, default_state


@dataclass
class Applied:
    plan: Plan
    generation: int | None  # None: nothing to change
    recovered: list[str]  # what was finished for an interrupted earlier command


def _open(netns: str | None, state: str | Path, create: bool = True, changes: bool = False):
    netlink.check_namespace(netns)
    if changes:
        from iwlab.deploy.watch import watcher_running

        if watcher_running(state, netns):
            where = f"namespace {netns}" if netns else "the root namespace"
            raise StateError(f"an `iwlab watch` is running for {where} with state {state}: stop it first "
                             "(systemctl stop iwlab-watch…), then apply or roll back, then start it again")
    return netlink.open_ipr(netns), State(state, create=create)


def _load(policy):
    from iwlab.policy import load_policy

    return load_policy(policy) if isinstance(policy, (str, Path)) else policy


def plan(policy, netns: str | None = None, state: str | Path | None = None, force: bool = False) -> Plan:
    """The route edits `apply` would make; changes nothing (not even a missing state file).
    An IW outside 1…`netlink.MAX_IW_SEGMENTS` is a usage error (`netlink.IwBoundError`) unless `force`."""
    state = default_state(netns) if state is None else state
    pf = _load(policy)
    ipr, st = _open(netns, state if Path(state).exists() else ":memory:")
    with ipr:
        return _apply.apply_policy(ipr, st, netns, pf, _apply.iw_function(st, netns, pf), dry_run=True,
                                   source="plan", force=force)[0]


def apply(policy, netns: str | None = None, state: str | Path | None = None,
          try_seconds: float | None = None, force: bool = False) -> Applied:
    """Applies the file (all or nothing); with `try_seconds`, as a trial that the next command
    reverts once the time is up unless `confirm()` was called (the CLI waits and reverts itself)."""
    state = default_state(netns) if state is None else state
    pf = _load(policy)
    ipr, st = _open(netns, state, changes=True)
    deadline = None if try_seconds is None else time.time() + try_seconds
    with ipr:
        p, gid, notes = _apply.apply_policy(ipr, st, netns, pf, _apply.iw_function(st, netns, pf),
                                            try_deadline=deadline, force=force)
    return Applied(p, gid, notes)


def confirm(netns: str | None = None, state: str | Path | None = None) -> _apply.Outcome:
    return _apply.confirm(State(default_state(netns) if state is None else state, create=False), netns)


def rollback(netns: str | None = None, state: str | Path | None = None, force: bool = False) -> _apply.Outcome:
    """The routes as before the last apply; an interrupted command is recovered first (and
    that is then the rollback). `force`: restore an IW beyond the bound that iwlab wrote with
    an earlier `--force` (`apply.rollback`)."""
    state = default_state(netns) if state is None else state
    ipr, st = _open(netns, state, create=False, changes=True)
    with ipr, st.lock():
        # recovery undoes an interrupted rollback too (all old = the routes before it); the user
        # asked for the rollback, so it is then finished here rather than by a second command
        interrupted = [g["source"] for g in st.generations(netns, ("pending",))]
        notes = _apply.recover(ipr, st, netns, force)
        if notes and "rollback" not in interrupted:
            return _apply.Outcome(None, 0, "\n".join(notes))
        out = _apply.rollback(ipr, st, netns, force)
        return _apply.Outcome(out.generation, out.edits, "\n".join(notes + [out.message])) if notes else out
