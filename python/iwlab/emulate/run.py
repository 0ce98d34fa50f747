"""`emulate()`: one run of a scenario on the kernel's TCP in network namespaces.

Order of a run: plan → namespaces, links, routes (topology.py) → the relay (`ready`) →
one agent per host (`ready`) → optional captures → `go T0` to every agent → relay counters
at T0 + warm-up and at T0 + duration (SIGUSR1) → agents stop at T0 + duration, sample their
open connections and exit → records (collect.py). Everything is taken down in `finally`,
on success, on error, on Ctrl-C and on SIGTERM/SIGHUP (turned into an exception while a run
is in progress); `PR_SET_PDEATHSIG` makes the children die with this process even if it is
killed with SIGKILL, and `iwlab emulate --cleanup` removes the namespaces such a run leaves.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import platform
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import iwlab.emulate.collect as collect
from iwlab.emulate.plan import Plan, build_plan
from iwlab.emulate.topology import Topology, rundir_root
from iwlab.emulate.watchers import READY

AGENT = Path(__file__).with_name("agent.py")
SETUP = Path(__file__).with_name("setup.sh")
GO_MARGIN = 0.5  # seconds between `go` and T0


class EmulationError(RuntimeError):
    pass


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived during a run."""


def relay_binary() -> Path:
    """`$IWLAB_LINK`, the workspace's release build, or `iwlab-link` on PATH."""
    from iwlab.binaries import find_binary

    found = find_binary("iwlab-link", "IWLAB_LINK")
    if found:
        return found
    raise EmulationError("iwlab-link not found: build it with `cargo build --release -p iwlab-link` "
                         "or set IWLAB_LINK to its path")


def preflight() -> list[str]:
    """Reasons this machine cannot emulate (empty when it can)."""
    why = []
    if os.geteuid() != 0:
        why.append("needs root (network namespaces, TUN devices)")
    if shutil.which("ip") is None:
        why.append("`ip` (iproute2) not found")
    if not os.path.exists("/dev/net/tun"):
        why.append("/dev/net/tun is missing")
    return why


def _pdeathsig() -> None:
    # The child gets SIGKILL when the emulator dies, whatever killed it.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Signals:
    """While a run is on, SIGINT raises `KeyboardInterrupt` and SIGTERM/SIGHUP raise
    `Interrupted` in the main thread; during the teardown (`tearing_down()`) they are only
    remembered, so that the teardown always finishes, and the last one is re-raised after it."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.down = False
        self.pending: int | None = None
        self.old: dict[int, Any] = {}

    def _handler(self, signum, _frame) -> None:
        if self.down:
            self.pending = signum
            return
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Interrupted(f"signal {signal.Signals(signum).name}")

    def __enter__(self) -> "Signals":
        if threading.current_thread() is threading.main_thread():
            self.old = {s: signal.signal(s, self._handler) for s in self.SIGNALS}
        return self

    def tearing_down(self) -> None:
        self.down = True

    def __exit__(self, exc_type, *_) -> None:
        for s, h in self.old.items():
            signal.signal(s, h)
        if self.pending is not None and exc_type is None:
            if self.pending == signal.SIGINT:
                raise KeyboardInterrupt
            raise Interrupted(f"signal {signal.Signals(self.pending).name}")


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    log: Path

    def stop(self, sig: int = signal.SIGTERM, wait: float = 3.0) -> None:
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.popen.send_signal(sig)
            try:
                self.popen.wait(wait)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        for f in (self.popen.stdin, self.popen.stdout):
            if f:
                with contextlib.suppress(OSError):
                    f.close()


@dataclass
class Session:
    plan: Plan
    rundir: Path
    procs: list[Proc] = field(default_factory=list)
    say: Callable[[str], None] = lambda s: None

    def spawn(self, name: str, ns: str, cmd: list[str], stdin: bool = False, stdout: bool = False) -> Proc:
        log = self.rundir / f"{name}.log"
        with open(log, "w") as errf:
            p = subprocess.Popen(["ip", "netns", "exec", ns, *cmd],
                                 stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                 stdout=subprocess.PIPE if stdout else errf, stderr=errf, text=True,
                                 preexec_fn=_pdeathsig, start_new_session=True)
        proc = Proc(name, p, log)
        self.procs.append(proc)
        return proc

    def wait_line(self, procs: list[Proc], want: str, timeout: float, source: str = "stdout") -> None:
        """Waits until every proc printed a line starting with `want` (stdout or its log file)."""
        deadline = time.monotonic() + timeout
        waiting = {p.name: p for p in procs}
        while waiting:
            for name, p in list(waiting.items()):
                if p.popen.poll() is not None:
                    raise EmulationError(f"{name} exited with status {p.popen.returncode} before `{want}`:\n"
                                         + p.log.read_text()[-3000:])
                if source == "log":
                    if any(line.startswith(want) for line in p.log.read_text().splitlines()):
                        del waiting[name]
                    continue
                r, _, _ = select.select([p.popen.stdout], [], [], 0)
                if r:
                    line = p.popen.stdout.readline()
                    if line.startswith(want):
                        del waiting[name]
            if time.monotonic() > deadline:
                raise EmulationError(f"timed out after {timeout:g} s waiting for `{want}` from {sorted(waiting)}")
            time.sleep(0.01)

    def stop_all(self) -> None:
        for p in reversed(self.procs):
            p.stop()


def _dump_relay(relay: Proc, stats: Path, timeout: float = 3.0) -> dict[str, Any]:
    """SIGUSR1: the relay writes its counters; returns them once the file has changed."""
    before = stats.stat().st_mtime_ns if stats.exists() else 0
    relay.popen.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if stats.exists() and stats.stat().st_mtime_ns != before:
            with contextlib.suppress(json.JSONDecodeError):
                return json.loads(stats.read_text())
        time.sleep(0.005)
    raise EmulationError("the relay did not write its counters")


def _cpu_seconds(pid: int) -> float | None:
    """utime + stime of a live process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _sleep_until(t: float) -> None:
    while (d := t - time.monotonic()) > 0:
        time.sleep(min(d, 0.2))


def pool_slots(plan: Plan) -> int:
    slots = 4096
    for d in plan.links:
        spec = d.queue.split(":", 1)[1] if ":" in d.queue else ""
        for part in spec.replace("limit=", "").split(","):
            if part.endswith("pkt") and part[:-3].isdigit():
                slots += int(part[:-3])
            elif part.endswith("B") and part[:-1].isdigit():
                slots += int(part[:-1]) // 64 + 1
        slots += int(d.rate_bps * d.delay / 8 / 64) + 16
    return max(8192, min(slots, 1 << 20))


def emulate(scenario, seed: int | None = None, out: str | Path | None = None, duration: float | None = None,
            capture: list[str] | tuple[str, ...] = (), keep_rundir: bool = False, replay: bool = True,
            say: Callable[[str], None] | None = None, relay_rt: int | None = None, save: bool = True,
            ns_prefix: str | None = None, quic_stack: str = "aioquic"):
    """Runs `scenario` once on real kernel TCP stacks in network namespaces.

    `duration` shortens the run (seconds, at most the scenario's); `capture` names hosts
    (`"right-0"`) whose interface is captured with tcpdump into `<out>/capture-<host>.pcap`;
    `replay` takes the workload's random draws from the simulator's run of the same scenario
    and seed (workload.py); `relay_rt` runs the relay at this SCHED_FIFO priority (`chrt -f`), so a
    busy machine delays the link model less; `save=False` writes only the captures to `out`, not the
    records (the caller stores them its own way); `ns_prefix` names its namespaces and links (default
    `iwl<pid>-`); `quic_stack` runs the apps with `transport = "quic"` on "aioquic" or "quinn"
    (quic_apps.py). Returns an `iwlab.Result` whose summary has `"mode": "emulated"`."""
    from iwlab.api import Result
    from iwlab.scenario import Scenario, load

    say = say or (lambda s: None)
    sc = scenario if isinstance(scenario, Scenario) else load(scenario)
    why = preflight()
    if why:
        raise EmulationError("cannot emulate here: " + "; ".join(why))
    relay_bin = relay_binary()
    if capture and shutil.which("tcpdump") is None:
        subprocess.run(["bash", str(SETUP)], check=True)
    plan = build_plan(sc, seed=seed, duration=duration, replay=replay, ns_prefix=ns_prefix, quic_stack=quic_stack)
    unknown = sorted(set(capture) - {h.name for h in plan.hosts})
    if unknown:
        raise EmulationError(f"capture = {unknown}: no such host; hosts are {', '.join(h.name for h in plan.hosts)}")
    rundir = Path(rundir_root()) / f"iwlab-emulate-{os.getpid()}"
    wall0, cpu0 = time.monotonic(), _children_cpu()
    topo = Topology(plan)
    session = Session(plan, rundir, say=say)
    with Signals() as sigs:
        try:
            parts = _run(session, topo, relay_bin, list(capture), relay_rt)
            parts["children_cpu"] = _children_cpu() - cpu0
        finally:
            sigs.tearing_down()
            session.stop_all()
            problems = topo.destroy()
            # Captures, and each watcher's record of IW questions and events (iwlab.policy.replay reads it).
            pcaps = sorted([*rundir.glob("capture-*.pcap"), *rundir.glob("watch-*.jsonl")]) if out is not None else []
            if pcaps:
                Path(out).mkdir(parents=True, exist_ok=True)
                for p in pcaps:
                    shutil.copy(p, Path(out) / p.name)
            if not keep_rundir:
                shutil.rmtree(rundir, ignore_errors=True)
            if problems:
                print("iwlab emulate: teardown problems: " + "; ".join(problems), file=sys.stderr)

    records = parts["records"]
    flows, pages = collect.flows_and_pages(plan, records)
    t_from = plan.warmup if parts["base"] is not None else 0.0
    links = collect.links(plan, parts["final"], parts["base"], t_from, plan.duration)
    summary = _summary(plan, flows, pages, links, records, parts, time.monotonic() - wall0)
    summary["workload"] = "replayed from the simulator's run" if replay else "drawn by the emulator"
    quic = {a["name"]: a["quic"] for a in plan.apps if a.get("quic")}
    if quic:
        summary["quic"] = quic
    result = Result(scenario=sc, seed=plan.seed, flows=flows, pages=pages, links=links, queues=collect.queues(),
                    summary=summary)
    if out is not None and save:
        result.save(out)
    return result


def _run(session: Session, topo: Topology, relay_bin: Path, capture: list[str],
         relay_rt: int | None = None) -> dict[str, Any]:
    """Builds, runs and stops one emulation; returns the raw material of the records."""
    plan, rundir, say = session.plan, session.rundir, session.say
    shutil.rmtree(rundir, ignore_errors=True)
    rundir.mkdir(parents=True)
    os.chmod(rundir, 0o755)
    say(f"building {len(plan.hosts)} hosts + router ({plan.prefix}*)")
    topo.build()
    stats = rundir / "relay-stats.json"
    cfg = dict(plan.relay_config(str(stats)), pool_slots=pool_slots(plan))
    (rundir / "relay.json").write_text(json.dumps(cfg, indent=1))
    rt = ["chrt", "-f", str(relay_rt)] if relay_rt else []
    relay = session.spawn("relay", plan.router_ns, [*rt, str(relay_bin), "--config", str(rundir / "relay.json")])
    session.wait_line([relay], "iwlab-link: ready", 10, source="log")
    watchers = []
    for name, text in plan.watchers.items():
        # iwlab watch in the sender's namespace (watchers.py): its routes are written when it
        # prints `watching`, before any agent connects.
        h = plan.host(name)
        (rundir / f"watch-{name}.toml").write_text(text)
        watchers.append(session.spawn(f"watch-{name}", h.ns, [
            sys.executable, "-c", "from iwlab.cli import main; main()", "watch",
            "--policy", str(rundir / f"watch-{name}.toml"), "--state", str(rundir / f"watch-{name}.sqlite"),
            "--record", str(rundir / f"watch-{name}.jsonl"), "--interval", "0.05"], stdout=True))
    if watchers:
        session.wait_line(watchers, READY, 60)
    agents = []
    for h in plan.hosts:
        conf = rundir / f"{h.name}.json"
        conf.write_text(json.dumps(dict(plan.agents[h.name], rundir=str(rundir), stop=plan.duration)))
        agents.append(session.spawn(f"agent-{h.name}", h.ns, [sys.executable, "-S", "-E", str(AGENT), str(conf)],
                                    stdin=True, stdout=True))
    session.wait_line(agents, "ready", 30)
    caps = []
    for name in capture:
        h = plan.host(name)
        caps.append(session.spawn(f"tcpdump-{name}", h.ns, [
            "tcpdump", "-i", h.dev, "-w", str(rundir / f"capture-{name}.pcap"), "-U", "--immediate-mode",
            "-Z", "root", "-s", "256", "-n", "tcp"]))
    if caps:
        session.wait_line(caps, "tcpdump: listening", 10, source="log")
    t0 = time.monotonic() + GO_MARGIN
    for a in agents:
        a.popen.stdin.write(f"go {t0!r}\n")
        a.popen.stdin.flush()
    say(f"running {plan.duration:g} s" + (f" (scenario: {plan.scenario_duration:g} s)"
                                          if plan.duration < plan.scenario_duration else ""))
    base = None
    if plan.warmup > 0:
        _sleep_until(t0 + plan.warmup)
        base = _dump_relay(relay, stats)
    _sleep_until(t0 + plan.duration)
    final = _dump_relay(relay, stats)
    deadline = time.monotonic() + 30
    for a in agents:
        try:
            a.popen.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise EmulationError(f"{a.name} did not finish; log:\n{a.log.read_text()[-3000:]}") from None
    failed = [a for a in agents if a.popen.returncode != 0]
    if failed:
        raise EmulationError("agents failed: " + "; ".join(
            f"{a.name} (status {a.popen.returncode}): {a.log.read_text()[-1500:]}" for a in failed))
    for c in caps:
        c.stop(signal.SIGINT)
    for w in watchers:
        w.stop()
    relay_cpu = _cpu_seconds(relay.popen.pid)
    relay.stop()
    return {"records": collect.read_logs(rundir, plan), "base": base, "final": final,
            "kernel_failures": topo.kernel_failures, "ethtool": topo.ethtool, "relay_cpu": relay_cpu}


def _summary(plan: Plan, flows, pages, links, records, parts, wall: float) -> dict[str, Any]:
    ccs = sorted({r[k]["cc"] for r in records for k in ("info",) if r.get(k)})
    errors = [r for r in records if r.get("type") == "error"]
    lateness = {d["tun"]: d.get("lateness_us", {}).get("p99") for d in parts["final"].get("directions", [])}
    notes = list(plan.notes)
    for k, why in sorted(parts["kernel_failures"].items()):
        notes.append(f"sysctl {k} not set ({why})")
    bn = [v for k, v in lateness.items() if k in (plan.forward.tun, plan.reverse.tun) and v is not None]
    if bn and max(bn) > 1000:
        notes.append(f"relay lateness p99 {max(bn) / 1000:.1f} ms on the bottleneck: the machine was too busy "
                     "to hold the link model's timing; treat timings with care")
    if not parts["ethtool"]:
        notes.append("ethtool missing: TSO/GSO left on (captures may show multi-segment packets)")
    udp = [r for r in records if r.get("type") in ("udp", "udp-sink")]
    return {
        "mode": "emulated",
        "seed": plan.seed,
        "duration": plan.duration,
        "scenario_duration": plan.scenario_duration,
        "time_scale": plan.time_scale,
        "shortened": plan.duration < plan.scenario_duration,
        "warmup": plan.warmup,
        "flows": int(len(flows)),
        "flows_completed": int(flows["completed"].sum()) if len(flows) else 0,
        "pages": int(len(pages)),
        "pages_completed": int(pages["completed"].sum()) if len(pages) else 0,
        "packets_dropped": int((links["queue_drops"] + links["loss_drops"]).sum()) if len(links) else 0,
        "kernel": platform.release(),
        "congestion_control": ccs,
        "iw_values": plan.iw_values,
        "relay_lateness_p99_us": lateness,
        "agent_errors": [e["error"] for e in errors][:20],
        "cpu_seconds": {"relay": parts["relay_cpu"], "all_children": parts["children_cpu"]},
        "udp": udp,
        "notes": notes,
        "wall_seconds": wall,
    }
