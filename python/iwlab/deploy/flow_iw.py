"""Per-flow IW on Linux with eBPF, the operator's side: attach iwlab's
programs to a cgroup of their own, run applications in it, report, detach. Root.

Linux has no socket option for the initial window; a BPF program may set one with
`bpf_setsockopt(SOL_TCP, TCP_BPF_IW, n)` before the connection has sent data. `iwlab-bpf`
(crates/iwlab-bpf, a Rust binary using aya) loads two programs from bpf/flow_iw.bpf.c:

* a `cgroup/setsockopt` program turns an application's private
  `setsockopt(IPPROTO_TCP, TCP_FLOW_IW, segments)` (flow_iw_app.set_flow_iw / set_flow_size)
  into TCP_BPF_IW, returning the kernel's verdict as errno;
* a `sock_ops` program gives every connection of the cgroup a default IW when it is
  established (for the size-based policy: MinIW, the IW of a flow that declared no size),
  and paces it as a policy file's `[tcp]` says (`pacing`, `paced_iw`): SO_MAX_PACING_RATE
  at IW·MSS per handshake RTT for the first flight, lifted at the first RTT sample
  (docs/deploy.md, "Paced IW").

Both are attached with cgroup links pinned under `<pin root>/<cgroup name>/` (bpffs), next to
their two maps (config, counters). The pins are the whole state: `status` and `detach` read
them. Only a cgroup below /sys/fs/cgroup/unified (this machine's cgroup2 mount) is accepted,
never the hierarchy's root; `attach` creates the cgroup when missing and `detach` removes it
again if it created it and no process is left in it.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
from pathlib import Path
from typing import Any, NoReturn

CGROUP_ROOT = Path(os.environ.get("IWLAB_CGROUP2", "/sys/fs/cgroup/unified"))
BPFFS = Path("/sys/fs/bpf")
PIN_ROOT = BPFFS / "iwlab"
MAX_IW = 1000  # iwlab-bpf's bound on max_iw
CLONE_NEWNET = 0x40000000


class FlowIwError(RuntimeError):
    """`usage`: bad input (the CLI exits 2); otherwise the machine or the kernel refused (exit 1)."""

    def __init__(self, message: str, usage: bool = False):
        super().__init__(message)
        self.usage = usage


def binary() -> Path:
    from iwlab.binaries import find_binary

    found = find_binary("iwlab-bpf", "IWLAB_BPF")
    if found is None:
        raise FlowIwError("iwlab-bpf not found: build it with `make bpf` (clang, libbpf-dev, cargo) "
                          "or set IWLAB_BPF to its path")
    return found


def _bpf(*args: str) -> dict[str, Any]:
    p = subprocess.run([str(binary()), *args], capture_output=True, text=True)
    if p.returncode != 0:
        msg = p.stderr.strip().removeprefix("iwlab-bpf: ") or f"iwlab-bpf exited {p.returncode}"
        raise FlowIwError(msg, usage=p.returncode == 2)
    return json.loads(p.stdout)


def cgroup_dir(name: str) -> Path:
    """/sys/fs/cgroup/unified/NAME; NAME is relative, below the root, without `..`."""
    if not name or name.startswith("/") or any(p in ("", "..", ".") for p in name.split("/")):
        raise FlowIwError(f"--cgroup = {name!r}: allowed a cgroup name below {CGROUP_ROOT} "
                          "(relative, no '.' or '..'), e.g. iwlab-web", usage=True)
    return CGROUP_ROOT / name


def pin_dir(name: str, pin_root: Path = PIN_ROOT) -> Path:
    cgroup_dir(name)
    return Path(pin_root) / name


def _mounts() -> list[tuple[str, str]]:
    """(mount point, file-system type) of this process's mount namespace."""
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, right = line.split(" - ", 1)
        out.append((left.split()[4].replace("\\040", " "), right.split()[0]))
    return out


def ensure_bpffs(pin_root: Path) -> None:
    """The pin root must be on bpffs. /sys/fs/bpf is mounted when it is not (as bpftool and
    systemd do); any other pin root must already be on a bpffs mount."""
    pin_root = Path(pin_root).absolute()
    bpf_mounts = [Path(m) for m, fs in _mounts() if fs == "bpf"]
    if any(m == pin_root or m in pin_root.parents for m in bpf_mounts):
        return
    if BPFFS in pin_root.parents and BPFFS.is_dir():
        p = subprocess.run(["mount", "-t", "bpf", "bpf", str(BPFFS)], capture_output=True, text=True)
        if p.returncode != 0:
            raise FlowIwError(f"mount -t bpf bpf {BPFFS}: {p.stderr.strip()}")
        return
    raise FlowIwError(f"--pin-root = {pin_root}: not on a bpf file system (mount -t bpf bpf DIR)", usage=True)


def check() -> dict[str, Any]:
    """Loads both programs through the verifier and attaches nothing."""
    return _bpf("check")


def status(name: str, pin_root: Path = PIN_ROOT) -> dict[str, Any]:
    pins = pin_dir(name, pin_root)
    out = _bpf("status", "--pins", str(pins)) if pins.exists() else {"attached": False, "pins": str(pins)}
    cg = cgroup_dir(name)
    out["cgroup"] = str(cg)
    out["cgroup_exists"] = cg.is_dir()
    out["processes"] = _procs(cg)
    return out


def _procs(cg: Path) -> list[int]:
    try:
        return [int(x) for x in (cg / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _pacing_args(pacing: bool, paced_iw: bool) -> list[str]:
    if paced_iw and not pacing:
        raise FlowIwError("paced_iw = True: allowed only with pacing = True (Linux keeps pacing a socket "
                          "once its max pacing rate was set)", usage=True)
    return (["--pacing"] if pacing else []) + (["--paced-iw"] if paced_iw else [])


def attach(name: str, default_iw: int, max_iw: int, pin_root: Path = PIN_ROOT, pacing: bool = False,
           paced_iw: bool = False) -> dict[str, Any]:
    """Attaches (or re-configures) the programs on cgroup NAME; `pacing`/`paced_iw` as a policy
    file's `[tcp]`. Idempotent: `changed` says whether anything was done."""
    pace = _pacing_args(pacing, paced_iw)
    if not 1 <= max_iw <= MAX_IW:
        raise FlowIwError(f"max_iw = {max_iw}: allowed 1..{MAX_IW} segments", usage=True)
    if not 0 <= default_iw <= max_iw:
        raise FlowIwError(f"default_iw = {default_iw}: allowed 0 (the route's initcwnd) or 1..max_iw ({max_iw})",
                          usage=True)
    cg, pins = cgroup_dir(name), pin_dir(name, pin_root)
    ensure_bpffs(pin_root)
    before = status(name, pin_root)
    if before["attached"]:
        cfg = before["config"]
        if (cfg["default_iw"], cfg["max_iw"], cfg["pacing"], cfg["paced_iw"]) == (default_iw, max_iw, pacing,
                                                                                  paced_iw):
            return {"changed": False, "action": "none", **before}
        after = _bpf("configure", "--pins", str(pins), "--default-iw", str(default_iw), "--max-iw", str(max_iw),
                     *pace)
        return {"changed": True, "action": "configured", **status(name, pin_root), "was": cfg, "raw": after}
    action = "attached"
    if pins.exists():  # a partial attach, or links whose cgroup was removed: start again
        _bpf("detach", "--pins", str(pins))
        action = "re-attached (the old pins were incomplete or their cgroup was gone)"
    created = not cg.exists()
    if created:
        if not cg.parent.is_dir():
            raise FlowIwError(f"--cgroup = {name!r}: {cg.parent} does not exist", usage=True)
        cg.mkdir()
    pins.parent.mkdir(parents=True, exist_ok=True)
    args = ["attach", "--cgroup", str(cg), "--pins", str(pins), "--default-iw", str(default_iw), "--max-iw", str(max_iw),
            *pace]
    try:
        _bpf(*args, *(["--created-cgroup"] if created else []))
    except FlowIwError:
        if created:
            cg.rmdir()
        _remove_empty_dirs(pins.parent, Path(pin_root))
        raise
    return {"changed": True, "action": action, "created_cgroup": created, **status(name, pin_root)}


def detach(name: str, pin_root: Path = PIN_ROOT, keep_cgroup: bool = False) -> dict[str, Any]:
    """Detaches and unpins everything of cgroup NAME; removes the cgroup if `attach` created it
    and it is empty (unless `keep_cgroup`). Idempotent."""
    cg, pins = cgroup_dir(name), pin_dir(name, pin_root)
    if not pins.exists():
        return {"changed": False, "note": f"nothing attached to {cg}", "cgroup": str(cg)}
    before = _bpf("status", "--pins", str(pins))
    out = _bpf("detach", "--pins", str(pins))
    _remove_empty_dirs(pins.parent, Path(pin_root))
    created = bool((before.get("config") or {}).get("created_cgroup"))
    out.update(changed=True, cgroup=str(cg), cgroup_removed=False)
    if created and not keep_cgroup and cg.is_dir():
        procs = _procs(cg)
        if procs:
            out["note"] = f"cgroup {cg} kept: processes {procs} are still in it"
        else:
            cg.rmdir()
            out["cgroup_removed"] = True
    return out


def _remove_empty_dirs(d: Path, stop: Path) -> None:
    """Removes `d` and its parents while empty, up to and including `stop` (our pin root)."""
    stop = stop.absolute()
    d = d.absolute()
    while d == stop or stop in d.parents:
        try:
            d.rmdir()
        except OSError:
            return
        d = d.parent


def enter(cgroup: str | None = None, netns: str | None = None) -> None:
    """Moves this process into cgroup NAME and network namespace NETNS. Not `ip netns exec`:
    that remounts /sys, and the cgroup2 tree is then out of sight (iproute2 `ip netns exec` mounts a new sysfs for the namespace)."""
    if netns is not None:
        path = Path("/run/netns") / netns
        if not path.exists():
            raise FlowIwError(f"--netns = {netns!r}: no such network namespace (ip netns list)", usage=True)
    if cgroup is not None:
        cg = cgroup_dir(cgroup)
        if not cg.is_dir():
            raise FlowIwError(f"--cgroup = {cgroup!r}: {cg} does not exist (iwlab flow-iw attach creates it)",
                              usage=True)
        (cg / "cgroup.procs").write_text(str(os.getpid()))
    if netns is not None:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            if libc.setns(fd, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise FlowIwError(f"setns({path}): {os.strerror(err)}")
        finally:
            os.close(fd)


def exec_in(cgroup: str | None, netns: str | None, argv: list[str]) -> NoReturn:
    """Runs ARGV in cgroup NAME and network namespace NETNS (replaces this process)."""
    if not argv:
        raise FlowIwError("a command to run is required (after --)", usage=True)
    enter(cgroup, netns)
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        raise FlowIwError(f"{argv[0]}: {e.strerror}", usage=True) from None


# ── The hook `iwlab apply` calls (owned by deploy-host's apply; documented in docs/deploy.md) ──

def size_based_limits(policy_file) -> dict[str, int] | None:
    """{"min_iw", "max_iw"} over the file's routes that use a size-based policy; None if none do."""
    specs = [policy_file.policies[r.policy] for r in policy_file.routes]
    sb = [s for s in specs if s.get("kind") == "size-based"]
    if not sb:
        return None
    return {"min_iw": min(s["min_iw"] for s in sb), "max_iw": max(s["v"] for s in sb)}


def apply_hook(policy_file, cgroup: str | None, pin_root: Path = PIN_ROOT, dry_run: bool = False) -> dict | None:
    """FLOW-IW HOOK for `iwlab apply POLICY.toml --flow-iw-cgroup NAME`: when a route of the
    file uses a size-based policy, attach (or re-configure) the programs on cgroup NAME so its
    applications can set IW(s) per flow (flow_iw_app.set_flow_size). The default IW stays the
    route's (`default_iw = 0`): apply sets each route's initcwnd to the policy's IW for an
    undeclared size (MinIW). max_iw = the largest V. Returns what was (or, with `dry_run`,
    would be) done; None when the file has no size-based route. Idempotent."""
    limits = size_based_limits(policy_file)
    if limits is None or cgroup is None:
        return None
    if dry_run:
        return {"cgroup": str(cgroup_dir(cgroup)), "default_iw": 0, "max_iw": limits["max_iw"],
                "attached_now": status(cgroup, pin_root)["attached"]}
    return attach(cgroup, 0, limits["max_iw"], pin_root)


def rollback_hook(cgroup: str | None, pin_root: Path = PIN_ROOT) -> dict | None:
    """FLOW-IW HOOK for `iwlab rollback`: detach what apply_hook attached."""
    return None if cgroup is None else detach(cgroup, pin_root)
