"""Builds the plan's dumbbell out of network namespaces, and takes it down again.

```
 host ns iwl<pid>-left-0              router ns iwl<pid>-router                    host ns iwl<pid>-right-0
 ┌──────────────┐  veth            ┌───────────────────────────────────────┐  veth  ┌──────────────┐
 │ e0 198.18.0.2├──────────────────┤v0 ─► u0 ─► bf ─► d2 ─► v2             ├────────┤e2 198.18.0.10│
 │ lo 198.19.…  │                  │ v0 ◄─ d0 ◄─ br ◄─ u2 ◄─ v2            │        │ lo 198.19.…  │
 └──────────────┘                  └───────────────────────────────────────┘        └──────────────┘
```

One router namespace stands for both of the simulator's routers. Every link direction —
each host's up and down access link and the two bottleneck directions — is a TUN device in
it, served by one `iwlab-link` relay (rate, queue discipline, loss and delay: the
simulator's model, see crates/iwlab-link/README.md). Policy routing chains them: a packet
from host `g` enters on `v<g>` and goes to `u<g>`; written back on `u<g>`, it goes to the
bottleneck TUN of its direction (or, for a host on the same side, straight to the
destination's `d<h>`); written back on `bf`/`br`, to the destination's `d<h>`; written back
on `d<h>`, the main table forwards it out of `v<h>`. Nothing is connected to the host's own
namespace, and the host's routes are never touched.

Every name starts with `iwl<pid>-`, so runs never collide and `cleanup()` can find the
leftovers of a killed run.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from iwlab.emulate.plan import Plan, alias, iw_prefix
from iwlab.workers import pid_alive

NAME_RE = re.compile(r"^iwl(\d+)-")
T_HOST = 1000  # + g: "whatever enters from host g goes to its up link"
T_AFTER_UP = {"left": 10, "right": 11}
T_AFTER_BN = {"forward": 12, "reverse": 13}


class TopologyError(RuntimeError):
    pass


def run(cmd: list[str], stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if check and p.returncode != 0:
        shown = " ".join(cmd)
        extra = f"\n--- input ---\n{stdin[:2000]}" if stdin else ""
        raise TopologyError(f"`{shown}` failed ({p.returncode}): {p.stderr.strip()}{extra}")
    return p


def ip_batch(ns: str | None, lines: list[str]) -> None:
    cmd = ["ip"] + (["-n", ns] if ns else []) + ["-batch", "-"]
    run(cmd, "\n".join(lines) + "\n")


def ns_exec(ns: str, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return run(["ip", "netns", "exec", ns, *cmd], check=check)


def host_addrs(plan: Plan, hosts) -> list[str]:
    """Every address of these hosts, as prefixes: link /30 host address and IW addresses."""
    out = []
    for h in hosts:
        out.append(f"{h.addr}/32")
        out += [f"{alias(h.g, w)}/32" for w in plan.iw_values]
    return out


@dataclass
class Topology:
    plan: Plan
    log: list[str] = field(default_factory=list)
    built: list[str] = field(default_factory=list)  # namespaces created, in order
    ethtool: bool = False
    kernel_failures: dict[str, str] = field(default_factory=dict)  # optional sysctl -> why not set

    @property
    def namespaces(self) -> list[str]:
        return [self.plan.router_ns] + [h.ns for h in self.plan.hosts]

    # ---- build -------------------------------------------------------------------------------
    def build(self) -> "Topology":
        p = self.plan
        for ns in leftovers()["namespaces"]:
            if ns.startswith(p.prefix):  # a dead process with our pid left it
                remove_namespace(ns)
        for ns in self.namespaces:
            run(["ip", "netns", "add", ns])
            self.built.append(ns)
        # Settings that new devices inherit go first.
        base = ["net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1",
                "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"]
        ns_exec(p.router_ns, "sysctl", "-qw", *base, "net.ipv4.ip_forward=1",
                "net.ipv4.conf.all.send_redirects=0", "net.ipv4.conf.default.send_redirects=0")
        for h in p.hosts:
            ns_exec(h.ns, "sysctl", "-qw", *base, *(f"{k}={v}" for k, v in p.kernel.sysctls.items()))
            for k, v in p.kernel.optional_sysctls.items():
                r = ns_exec(h.ns, "sysctl", "-qw", f"{k}={v}", check=False)
                if r.returncode != 0:
                    self.kernel_failures[k] = r.stderr.strip() or f"exit status {r.returncode}"
        mtu = str(p.kernel.mtu)
        for h in p.hosts:
            lines = ["link set lo up",
                     f"link add {h.dev} type veth peer name {h.rdev} netns {p.router_ns}",
                     f"link set {h.dev} mtu {mtu}",
                     f"addr add {h.addr}/30 dev {h.dev}"]
            lines += [f"addr add {alias(h.g, w)}/32 dev lo" for w in p.iw_values]
            # A watcher's routes copy the default route's metrics: give it the kernel options.
            opts = (" " + " ".join(p.kernel.route_opts)) if h.name in p.watchers and p.kernel.route_opts else ""
            lines += [f"link set {h.dev} up", f"route add default via {h.router_addr} dev {h.dev}{opts}"]
            lines += [f"route add {iw_prefix(w)} via {h.router_addr} dev {h.dev} initcwnd {w} "
                      + " ".join(p.kernel.route_opts) for w in p.iw_values]
            ip_batch(h.ns, lines)
        ip_batch(p.router_ns, self._router_lines())
        self.ethtool = shutil.which("ethtool") is not None
        if self.ethtool:
            for h in p.hosts:
                # Segment counts in captures are real segments only without TSO/GSO.
                ns_exec(h.ns, "ethtool", "-K", h.dev, "tso", "off", "gso", "off", "gro", "off", check=False)
        return self

    def _router_lines(self) -> list[str]:
        p = self.plan
        mtu = p.kernel.mtu
        lines = ["link set lo up"]
        tuns = [d.tun for d in p.links]
        for t in tuns:
            lines += [f"tuntap add dev {t} mode tun", f"link set {t} mtu {mtu}", f"link set {t} up"]
        side_hosts = {s: [h for h in p.hosts if h.side == s] for s in ("left", "right")}
        for h in p.hosts:
            lines += [f"link set {h.rdev} mtu {mtu}", f"addr add {h.router_addr}/30 dev {h.rdev}",
                      f"link set {h.rdev} up"]
            lines += [f"route add {alias(h.g, w)}/32 via {h.addr} dev {h.rdev}" for w in p.iw_values]
            lines += [f"route add default dev {h.up.tun} table {T_HOST + h.g}",
                      f"rule add iif {h.rdev} lookup {T_HOST + h.g} pref 100",
                      f"rule add iif {h.up.tun} lookup {T_AFTER_UP[h.side]} pref 200"]
        for side, bn in (("left", p.forward), ("right", p.reverse)):
            table = T_AFTER_UP[side]
            lines.append(f"route add default dev {bn.tun} table {table}")
            for h in side_hosts[side]:  # same side: no bottleneck
                lines += [f"route add {a} dev {h.down.tun} table {table}" for a in host_addrs(p, [h])]
        for key, bn, dest_side in (("forward", p.forward, "right"), ("reverse", p.reverse, "left")):
            table = T_AFTER_BN[key]
            for h in side_hosts[dest_side]:
                lines += [f"route add {a} dev {h.down.tun} table {table}" for a in host_addrs(p, [h])]
            lines += [f"route add unreachable default table {table}",
                      f"rule add iif {bn.tun} lookup {table} pref 300"]
        return lines

    # ---- take down ---------------------------------------------------------------------------
    def destroy(self) -> list[str]:
        """Kills whatever still runs in our namespaces and deletes them. Returns problems."""
        problems = []
        for ns in reversed(self.built):
            problems += remove_namespace(ns)
        self.built.clear()
        return problems

    def __enter__(self) -> "Topology":
        try:
            return self.build()
        except BaseException:
            self.destroy()
            raise

    def __exit__(self, *exc) -> None:
        self.destroy()


def namespace_pids(ns: str) -> list[int]:
    r = run(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in r.stdout.split()] if r.returncode == 0 else []


def remove_namespace(ns: str) -> list[str]:
    problems = []
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = namespace_pids(ns)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 2.0
        while namespace_pids(ns) and time.monotonic() < deadline:
            time.sleep(0.05)
    r = run(["ip", "netns", "del", ns], check=False)
    if r.returncode != 0 and "No such file" not in r.stderr:
        problems.append(f"ip netns del {ns}: {r.stderr.strip()}")
    return problems


def leftovers() -> dict[str, list[str]]:
    """Namespaces, root-namespace links and run directories named like ours."""
    ns = [line.split()[0] for line in run(["ip", "netns", "list"], check=False).stdout.splitlines() if line.strip()]
    links = []
    for line in run(["ip", "-o", "link", "show"], check=False).stdout.splitlines():
        parts = line.split(":")
        if len(parts) > 1:
            links.append(parts[1].strip().split("@")[0])
    runs = [str(p) for p in Path(rundir_root()).glob("iwlab-emulate-*")] if Path(rundir_root()).exists() else []
    return {"namespaces": [n for n in ns if NAME_RE.match(n)], "links": [n for n in links if NAME_RE.match(n)],
            "rundirs": runs}


def rundir_root() -> str:
    return os.environ.get("TMPDIR", "/tmp")


def cleanup(force: bool = False) -> list[str]:
    """Removes what killed runs left: namespaces (and every process in them), links named
    `iwl<pid>-…` in the root namespace, and run directories — of runs whose process is gone
    (all of them with `force`). Returns what it removed."""
    removed = []
    found = leftovers()
    me = os.getpid()

    def dead(name: str, pattern: re.Pattern = NAME_RE) -> bool:
        m = pattern.match(name)
        if not m:
            return False
        pid = int(m.group(1))
        return force and pid != me or not pid_alive(pid)

    for ns in found["namespaces"]:
        if dead(ns):
            remove_namespace(ns)
            removed.append(f"namespace {ns}")
    for link in found["links"]:
        if dead(link):
            run(["ip", "link", "del", link], check=False)
            removed.append(f"link {link}")
    run_re = re.compile(r"^iwlab-emulate-(\d+)")
    for d in found["rundirs"]:
        if dead(Path(d).name, run_re):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(f"directory {d}")
    return removed
