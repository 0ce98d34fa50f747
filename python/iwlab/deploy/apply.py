"""Executing plans: apply (all or nothing, journaled), rollback, `--try`, recovery.

Every change of routes — `iwlab apply`, a watcher decision, a rollback — is one *generation*:
its edits (each with the route before and after) are written to the state file as `pending`
before the first route is touched (a write-ahead journal), then the routes are changed one by
one, each read back; if one fails, the edits already made are undone in reverse order and the
generation is marked `aborted`. If the process dies in the middle (`kill -9`), the next iwlab
command on that namespace finds the `pending` generation and restores every route of it to
its old form before doing anything else (`recover`). A `--try` generation is `trial` until
confirmed; when its deadline passes unconfirmed — in the waiting process, or, if that died, in
the next command — it is rolled back.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

from iwlab.deploy import netlink
from iwlab.deploy.netlink import IwBoundError, KRoute, NetlinkError
from iwlab.deploy.plan import Edit, Plan
from iwlab.deploy.state import State

# Test hook (tests/test_deploy_kernel.py): after this many route edits of an apply, say so on
# stderr and sleep, so that a test can kill -9 the process between two edits.
PAUSE_ENV = "IWLAB_TEST_PAUSE_AFTER_EDITS"
ACTIVE = ("applied", "trial")


@dataclass
class Outcome:
    generation: int | None
    edits: int
    message: str


def _set(ipr, current: KRoute | None, target: KRoute | None, force: bool = False) -> None:
    """Makes the route with this key read back as `target` (None: absent)."""
    if target is None:
        if current is not None:
            netlink.delete(ipr, current)
    else:
        netlink.write(ipr, target, force)


def check_plan(plan: Plan, where: str, force: bool = False) -> None:
    """The IW bound of every route the plan would write (`netlink.check_iw`, the check the route
    writer makes), before the first is touched or journaled: a refused plan changes nothing.
    `where` names the policy file or the command in the message."""
    for e in plan.edits:
        if e.new is not None:
            try:
                netlink.check_iw(e.new.dst, e.new.proto, e.new.metrics, force)
            except IwBoundError as err:
                raise IwBoundError(f"{where}: prefix {e.prefix!r}: {err}") from None


def _pause(done: int) -> None:
    n = os.environ.get(PAUSE_ENV)
    if n is not None and done == int(n):
        print(f"iwlab-test: paused after {done} edit(s)", file=sys.stderr, flush=True)
        time.sleep(600)


def _journal(e: Edit) -> dict:
    return {"key": e.key, "prefix": e.prefix, "why": e.why,
            "old": None if e.old is None else e.old.to_json(), "new": None if e.new is None else e.new.to_json()}


def _managed_after(state: State, netns: str | None, edits: list[Edit]) -> dict:
    """Updates of the `managed` table: first touch records the original; reaching the original
    again (or deleting a route iwlab created) forgets the route."""
    managed = state.managed(netns)
    out: dict = {}
    for e in edits:
        if e.key not in managed and e.key not in out:
            out[e.key] = None if e.old is None else e.old.to_json()
        original = managed.get(e.key, out.get(e.key))
        if e.new is None or (original is not None and netlink.same(KRoute.from_json(original), e.new)):
            out[e.key] = "forget"
    return out


def execute(ipr, state: State, plan: Plan, source: str, reason: str | None = None,
            try_deadline: float | None = None, force: bool = False) -> int | None:
    """Runs the plan's edits as one generation; returns its id (None: nothing to change).
    The caller holds `state.lock()`. `force`: initcwnd beyond the bound (`check_plan`)."""
    if not plan.edits:
        return None
    check_plan(plan, plan.policy_path or source, force)
    edits = list(plan.edits)
    gid = state.begin_generation(plan.netns, source, [_journal(e) for e in edits], plan.policy_path,
                                 plan.policy_text, plan.policy_sha, reason)
    done: list[Edit] = []
    try:
        for e in edits:
            _set(ipr, e.old, e.new, force)
            done.append(e)
            _pause(len(done))
    except BaseException as first:
        problems = []
        for e in reversed(done):
            try:
                _set(ipr, netlink.find(ipr, e.key, (e.new or e.old).table), e.old, force=True)  # as it was
            except Exception as undo:  # keep undoing the rest; report what could not be undone
                problems.append(str(undo))
        if problems:  # the journal stays pending: the next command retries the undo
            raise NetlinkError(f"{first}; undoing the {len(done)} edit(s) already made also failed: "
                               + "; ".join(problems)) from None
        state.finish_generation(gid, "aborted")
        if isinstance(first, NetlinkError):
            raise NetlinkError(f"{first} — the {len(done)} edit(s) already made were undone", first.usage) from None
        raise
    # an undo (rollback, recovery) records no originals: _forget_originals tidies after it
    managed = _managed_after(state, plan.netns, edits) if source in ("apply", "watch") else {}
    state.finish_generation(gid, "trial" if try_deadline else "applied", managed, try_deadline)
    return gid


def _undo(ipr, state: State, netns: str | None, gids: list[int], source: str, reason: str,
          force: bool = False) -> int | None:
    """Restores every route the generations `gids` touched to its form before the first of
    them, as one new generation (journaled like any other)."""
    target: dict[str, tuple[str, KRoute | None, int]] = {}
    for gid in sorted(gids, reverse=True):  # the oldest generation's "old" wins
        for e in state.edits(gid):
            old = None if e["old"] is None else KRoute.from_json(e["old"])
            table = (old or KRoute.from_json(e["new"])).table
            target[e["key"]] = (e["prefix"], old, table)
    undo = []
    for key, (prefix, old, table) in target.items():
        cur = netlink.find(ipr, key, table)
        if not netlink.same(cur, old):
            undo.append(Edit(key, prefix, cur, old, reason))
    return execute(ipr, state, Plan(netns, tuple(undo)), source, reason, force=force)


def _undo_generation(ipr, state: State, netns: str | None, gid: int, source: str, reason: str,
                     force: bool = False) -> int | None:
    return _undo(ipr, state, netns, [gid], source, reason, force)


def recover(ipr, state: State, netns: str | None, force: bool = False) -> list[str]:
    """Finishes what a killed process left: pending generations are undone (all old), expired
    unconfirmed trials rolled back. Returns what was done, for the user. `force`: the command's
    `--force` (a route iwlab restores is bounded as any it writes)."""
    notes = []
    for g in state.generations(netns, ("pending",)):
        _undo_generation(ipr, state, netns, g["id"], "recover", f"generation {g['id']} was interrupted", force)
        state.set_status(g["id"], "aborted")
        notes.append(f"recovered: generation {g['id']} ({g['source']}) was interrupted; its routes are back as before it")
    for g in state.generations(netns, ("trial",)):
        if g["try_deadline"] is not None and g["try_deadline"] < time.time():
            _undo_generation(ipr, state, netns, g["id"], "rollback", f"--try of generation {g['id']} not confirmed",
                             force)
            state.set_status(g["id"], "rolled_back")
            notes.append(f"reverted: the --try of generation {g['id']} was not confirmed before its deadline")
    if notes:
        _forget_originals(ipr, state, netns)
    return notes


def rollback(ipr, state: State, netns: str | None, force: bool = False) -> Outcome:
    """Restores the routes as they were before the last `iwlab apply` in `netns`: undoes that
    apply and every watcher change made since, as one generation. A route iwlab restores to
    an IW it wrote itself beyond the bound (an earlier `apply --force`) needs `force` again;
    originals, as iwlab found them, are restored whatever their IW."""
    active = [g for g in state.generations(netns, ACTIVE) if g["source"] in ("apply", "watch")]
    applies = [g for g in active if g["source"] == "apply"]
    if not active:
        return Outcome(None, 0, "nothing to roll back")
    first = applies[-1]["id"] if applies else active[0]["id"]
    gens = [g for g in active if g["id"] >= first]
    n = sum(len(state.edits(g["id"])) for g in gens)
    gid = _undo(ipr, state, netns, [g["id"] for g in gens], "rollback",
                f"rollback of generation(s) {', '.join(str(g['id']) for g in gens)}", force)
    for g in gens:
        state.set_status(g["id"], "rolled_back")
    _forget_originals(ipr, state, netns)
    what = ", ".join(f"{g['id']} ({g['source']})" for g in gens)
    return Outcome(gid, n, f"rolled back generation(s) {what}: {n} route edit(s) undone")


def _forget_originals(ipr, state: State, netns: str | None) -> None:
    """Routes back in their original form (or gone, if iwlab created them) are iwlab's no more."""
    forget = {}
    for key, original in state.managed(netns).items():
        table = int(key.split("|")[1])
        cur = netlink.find(ipr, key, table)
        if (original is None and cur is None) or (original is not None and netlink.same(cur, KRoute.from_json(original))):
            forget[key] = "forget"
    if forget:
        with state.tx() as db:
            for key in forget:
                db.execute("DELETE FROM managed WHERE netns = ? AND key = ?", (netns or "", key))


def confirm(state: State, netns: str | None) -> Outcome:
    trials = state.generations(netns, ("trial",))
    if not trials:
        return Outcome(None, 0, "no --try is waiting for confirmation")
    for g in trials:
        state.finish_generation(g["id"], "applied")
    return Outcome(trials[-1]["id"], 0, f"confirmed generation {trials[-1]['id']}")


def wait_for_confirmation(ipr, state: State, netns: str | None, gid: int, seconds: float,
                          poll: float = 0.2, force: bool = False) -> bool:
    """Waits until generation `gid` is confirmed (`iwlab apply --confirm`) or `seconds` pass;
    reverts it in the latter case. True if confirmed."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        row = state.db.execute("SELECT status FROM generations WHERE id = ?", (gid,)).fetchone()
        if row["status"] != "trial":
            return row["status"] == "applied"
        time.sleep(poll)
    with state.lock():
        row = state.db.execute("SELECT status FROM generations WHERE id = ?", (gid,)).fetchone()
        if row["status"] != "trial":
            return row["status"] == "applied"
        _undo_generation(ipr, state, netns, gid, "rollback", f"--try of generation {gid} not confirmed", force)
        state.set_status(gid, "rolled_back")
        _forget_originals(ipr, state, netns)
    return False


def apply_policy(ipr, state: State, netns: str | None, pf, iw_for, *, dry_run: bool = False, source: str = "apply",
                 reason: str | None = None, only: set[str] | None = None,
                 try_deadline: float | None = None, force: bool = False) -> tuple[Plan, int | None, list[str]]:
    """The one path from a policy file (and an IW function: a Decider's) to the routes, used
    by `iwlab plan`, `iwlab apply` and the watcher: recover, compute the plan, execute it.
    Every IW is bounded (`check_plan`) unless `force`; the dry run checks as `apply` would."""
    from iwlab.deploy import plan as planning

    if dry_run:
        p = planning.compute(ipr, pf, iw_for, state.managed(netns), netns, only=only, why=reason)
        check_plan(p, p.policy_path or source, force)
        return p, None, []
    with state.lock():
        notes = recover(ipr, state, netns, force)
        p = planning.compute(ipr, pf, iw_for, state.managed(netns), netns, only=only, why=reason)
        gid = execute(ipr, state, p, source, reason, try_deadline, force)
    return p, gid, notes


def decider_for(state: State, netns: str | None, pf):
    """The policy file's Decider, resumed from the watcher's snapshot when it was made for the
    same file text (so `apply` keeps what the watcher learned)."""
    from iwlab.deploy.plan import sha
    from iwlab.policy import Decider

    row = state.watch_row(netns)
    if row is not None and row["snapshot"] and row["policy_sha"] == sha(pf.text):
        return Decider.restore(pf, row["snapshot"])
    return Decider(pf)


def iw_function(state: State, netns: str | None, pf):
    """IW (segments) of each policy prefix by the file's Decider (resumed as `decider_for` says)."""
    from iwlab.deploy.plan import fresh_iw_for

    return fresh_iw_for(decider_for(state, netns, pf))
