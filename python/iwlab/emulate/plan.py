"""From a scenario to an emulation plan: hosts and addresses, one relay direction per link,
kernel TCP settings, IW routes, and each agent's work. Pure: builds nothing, so it is tested
without root.

Addresses (all in the benchmarking range 198.18.0.0/15, RFC 2544, never routed to the host):

* host `g` (left hosts first, then right) and the router share the /30 at
  `198.18.0.0 + 4g`: router `.1`, host `.2`;
* host `g` also owns `198.19.0.0 + 1024·w + g` for every IW value `w` of the run. Every host
  routes `198.19.(4w).0/22` with `initcwnd w`, so the window a sender uses is chosen by the
  destination address (agent.py binds and connects accordingly) — except where the sender's
  watcher decides it (adaptive policies, `iw.routes`: watchers.py), toward the peer's own
  address.

Per-host link parameters (rates and delays drawn per host from the seed) are taken from the
simulator's own builder — the links table of its run of the same scenario and seed (the
*reference run*, whose flows and pages also give the workload's draws, see workload.py) —
so that the emulated population is the simulated one, port for port.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from typing import Any

from iwlab.emulate.errors import PlanError
from iwlab.emulate.tcp_options import maxseg, merged_tcp
from iwlab.emulate.units import queue_limit, relay_duration, seconds, size_bytes
from iwlab.emulate.watchers import watch_file
from iwlab.emulate.workload import Workload

MAX_HOSTS = 1000  # interface names: iwl<pid ≤ 7 digits>-u<g ≤ 3 digits> ≤ 15 characters
MAX_IW = 63  # IW addresses: 198.19.0.0 + 1024·w + g stays inside 198.19.0.0/16
LINK_BASE = int(ipaddress.IPv4Address("198.18.0.0"))
ALIAS_BASE = int(ipaddress.IPv4Address("198.19.0.0"))



def ip(n: int) -> str:
    return str(ipaddress.IPv4Address(n))


def alias(g: int, w: int) -> str:
    return ip(ALIAS_BASE + 1024 * w + g)


def iw_prefix(w: int) -> str:
    return f"{ip(ALIAS_BASE + 1024 * w)}/22"


@dataclass
class LinkDir:
    """One direction of a link: a TUN in the router namespace, served by the relay."""

    port: int
    src: str
    dst: str
    rate_bps: int
    delay: float
    queue: str
    loss: float = 0.0
    tun: str = ""

    def relay(self) -> dict[str, Any]:
        return {"tun": self.tun, "rate": f"{self.rate_bps}bps", "delay": relay_duration(self.delay),
                "queue": self.queue, "loss": self.loss}


@dataclass
class Host:
    g: int
    name: str  # the simulator's node name: left-0, right-3
    side: str
    node: int
    ns: str
    dev: str  # veth end in the host namespace
    rdev: str  # veth end in the router namespace
    up: LinkDir
    down: LinkDir

    @property
    def addr(self) -> str:
        return ip(LINK_BASE + 4 * self.g + 2)

    @property
    def router_addr(self) -> str:
        return ip(LINK_BASE + 4 * self.g + 1)


@dataclass
class Kernel:
    """Kernel TCP settings of every host namespace (from the scenario's [tcp])."""

    sysctls: dict[str, str]
    optional_sysctls: dict[str, str]  # set when the kernel has them
    route_opts: list[str]  # appended to every IW route
    cc: str
    mtu: int


@dataclass
class Plan:
    prefix: str
    seed: int
    duration: float  # what is run
    scenario_duration: float
    warmup: float
    hosts: list[Host]
    forward: LinkDir
    reverse: LinkDir
    router_ns: str
    iw_values: list[int]
    kernel: Kernel
    agents: dict[str, dict[str, Any]]  # host name -> agent config (rundir/stop added at run time)
    apps: list[dict[str, Any]]  # per scenario app: what the collector needs
    notes: list[str] = field(default_factory=list)
    # host name -> the policy file its `iwlab watch` runs (watchers.py): adaptive policies, iw.routes
    watchers: dict[str, str] = field(default_factory=dict)

    @property
    def time_scale(self) -> float:
        return self.duration / self.scenario_duration

    @property
    def links(self) -> list[LinkDir]:
        out = [self.forward, self.reverse]
        for h in self.hosts:
            out += [h.up, h.down]
        return sorted(out, key=lambda d: d.port)

    def relay_config(self, stats_json: str) -> dict[str, Any]:
        return {"seed": self.seed, "stats_json": stats_json, "links": [d.relay() for d in self.links]}

    def host(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)


# ---- queues ------------------------------------------------------------------------------------

def relay_queue(q: dict[str, Any], field_path: str) -> str:
    """A scenario queue table as the relay's `--queue` grammar."""
    def lim(v: Any) -> str:
        n, unit = queue_limit(v, field_path + ".limit")
        return f"{n}{unit}"

    kind = q["kind"]
    if kind == "drop-tail":
        return f"droptail:{lim(q['limit'])}"
    parts: list[str] = []
    if kind == "red":
        names = {"min_th": "min", "max_th": "max", "max_p": "maxp", "w_q": "wq"}
        for key in ("limit", "min_th", "max_th", "max_p", "w_q", "gentle", "ecn", "mean_pkt_size", "byte_mode"):
            if q.get(key) is None:
                continue
            v = q[key]
            if key == "limit":
                parts.append(f"limit={lim(v)}")
            elif key == "mean_pkt_size":
                parts.append(f"mean={size_bytes(v)}")
            elif isinstance(v, bool):
                parts.append(f"{ {'byte_mode': 'bytes'}.get(key, key)}={int(v)}")
            else:
                parts.append(f"{names[key]}={v}")
        return "red:" + ",".join(parts) if parts else "red"
    if kind == "codel":
        for key in ("limit", "target", "interval", "ecn", "mtu"):
            if q.get(key) is None:
                continue
            v = q[key]
            if key == "limit":
                parts.append(f"limit={lim(v)}")
            elif key in ("target", "interval"):
                parts.append(f"{key}={relay_duration(seconds(v))}")
            elif key == "mtu":
                parts.append(f"mtu={size_bytes(v)}")
            else:
                parts.append(f"ecn={int(bool(v))}")
        return "codel:" + ",".join(parts) if parts else "codel"
    raise PlanError(f"{field_path}.kind = {kind!r} cannot be emulated; allowed: drop-tail, red, codel")


# ---- TCP ---------------------------------------------------------------------------------------

def kernel_settings(tcp: dict[str, Any], notes: list[str]) -> Kernel:
    mss = size_bytes(tcp["mss"])
    ts = bool(tcp["timestamps"])
    cc = {"reno": "reno", "newreno": "reno", "cubic": "cubic"}[tcp["cc"]]
    min_rto, max_rto = seconds(tcp["min_rto"]), seconds(tcp["max_rto"])
    syn_retries = int(tcp["syn_retries"])
    sysctls = {
        "net.ipv4.tcp_sack": str(int(bool(tcp["sack"]))),
        "net.ipv4.tcp_timestamps": str(int(ts)),
        "net.ipv4.tcp_ecn": str(int(bool(tcp["ecn"]))),
        "net.ipv4.tcp_slow_start_after_idle": str(int(bool(tcp["restart_after_idle"]))),
        "net.ipv4.tcp_no_metrics_save": "1",
        "net.ipv4.tcp_syn_retries": str(min(max(syn_retries, 1), 127)),
        "net.ipv4.tcp_synack_retries": str(min(max(syn_retries, 1), 255)),
        "net.ipv4.tcp_reordering": str(int(tcp["dupthresh"])),
        "net.ipv4.tcp_autocorking": "0",
        # F-RTO (2 = RFC 5682's SACK-enhanced version, the default) and D-SACK as the scenario says.
        "net.ipv4.tcp_frto": "2" if tcp.get("frto") else "0",
        "net.ipv4.tcp_dsack": str(int(bool(tcp.get("dsack")))),
    }
    optional = {
        # The default CC of a namespace may only be one the root namespace allows (EPERM
        # otherwise); the agents set it on every socket anyway.
        "net.ipv4.tcp_congestion_control": cc,
        "net.ipv4.tcp_rto_min_us": str(max(1, int(round(min_rto * 1e6)))),
        "net.ipv4.tcp_rto_max_ms": str(min(max(int(round(max_rto * 1e3)), 1000), 120_000)),
    }
    route_opts: list[str] = []
    if tcp["delayed_ack"] is False:
        route_opts += ["quickack", "1"]
    elif isinstance(tcp["delayed_ack"], dict) and int(tcp["delayed_ack"].get("segments", 2)) != 2:
        notes.append("tcp.delayed_ack.segments: Linux ACKs every second full segment (or quickly at start)")
    if isinstance(tcp["delayed_ack"], dict) or tcp["delayed_ack"] is True:
        notes.append("tcp.delayed_ack.timeout: Linux's delayed-ACK timer is adaptive (40 ms … 200 ms), "
                     "and it ACKs every segment in quick-ack mode at connection start")
    if tcp["initial_rcv_wnd"] not in (False, None):
        route_opts += ["initrwnd", str(max(1, size_bytes(tcp["initial_rcv_wnd"], mss) // mss))]
    if tcp["initial_ssthresh"] not in (False, None):
        route_opts += ["ssthresh", str(max(2, size_bytes(tcp["initial_ssthresh"], mss) // mss))]
    if abs(seconds(tcp["initial_rto"]) - 1.0) > 1e-9:
        notes.append(f"tcp.initial_rto = {tcp['initial_rto']}: Linux's initial RTO is fixed at 1 s")
    if max_rto > 120 or max_rto < 1:
        notes.append(f"tcp.max_rto = {tcp['max_rto']}: Linux allows 1 s … 120 s")
    if tcp["recovery"] not in ("sack", "rack") and tcp["sack"]:
        notes.append(f"tcp.recovery = {tcp['recovery']}: Linux uses SACK/RACK recovery whenever SACK is on")
    if tcp["recovery"] == "reno":
        notes.append("tcp.recovery = reno: Linux recovers like NewReno without SACK")
    if tcp["sack"] and not tcp["prr"]:
        notes.append("tcp.prr = false: Linux always reduces cwnd in recovery by PRR")
    if cc == "cubic" and tcp["hystart"] != "linux":
        notes.append("tcp.hystart: Linux's CUBIC runs its own HyStart (module parameter hystart = 1)")
    if tcp["delayed_ack"] is not False and int(tcp["quickack"]) != 16:
        notes.append("tcp.quickack: Linux ACKs at once in quick-ack mode (16 ACKs at connection start)")
    if not tcp["limited_transmit"]:
        notes.append("tcp.limited_transmit = false: Linux always uses Limited Transmit (and RACK-TLP)")
    if int(tcp["abc_l"]) != 0:
        notes.append("tcp.abc_l: Linux counts acknowledged segments (ABC with L = 2 in slow start)")
    if seconds(tcp["granularity"]) > 0:
        notes.append("tcp.granularity: Linux timers have jiffy granularity; not set")
    if tcp.get("cubic") and tcp["cubic"] != {"ssthresh_from": "cwnd", "arithmetic": "linux"}:
        notes.append("tcp.cubic: Linux's CUBIC parameters are module-wide; kernel defaults used")
    if tcp["timers"] != "linux":
        notes.append("tcp.timers: Linux computes the RTO and the loss-probe time its own way (timers = \"linux\")")
    if tcp["rto_ssthresh"] != "once-per-window":
        notes.append("tcp.rto_ssthresh: Linux reduces ssthresh once per loss episode (\"once-per-window\")")
    if not tcp.get("undo"):
        notes.append("tcp.undo = false: Linux always undoes a reduction D-SACKs or timestamps show spurious "
                     "(tcp_try_undo_*; without D-SACK only the timestamp test remains)")
    if tcp["cwnd_growth"] != "cwnd-limited":
        notes.append("tcp.cwnd_growth: Linux grows cwnd only while the flow fills its window (\"cwnd-limited\")")
    if tcp["restart_after_idle"] and tcp["idle_restart"] != "halve-per-rto":
        notes.append("tcp.idle_restart: after idle Linux halves cwnd once per RTO down to the IW (\"halve-per-rto\")")
    if tcp["fin"] != "after-write":
        notes.append("tcp.fin: Linux sends a write before the close that follows it; the FIN rides on the last "
                     "segment only if that is unsent, else goes alone when cwnd has room (\"after-write\")")
    if tcp["rto_window"] != "packets-in-flight":
        notes.append("tcp.rto_window: after an RTO Linux resends while the packets in flight, SACKed ones not "
                     "counted, are below cwnd (\"packets-in-flight\")")
    if tcp["reordering"] != "learned":
        notes.append("tcp.reordering: Linux learns the degree of reordering from SACKs (\"learned\")")
    if (tcp.get("paced_iw") or tcp.get("pacing")) and tcp.get("pacer", "exact") != "linux":
        # tcp_update_skb_after_send(): "Original sch_fq does not pace first 10 MSS".
        notes.append("tcp.pacer: Linux leaves a connection's first 10 data segments unpaced and forgives a late "
                     "departure up to half a gap (pacer = \"linux\")")
    if tcp.get("paced_iw"):
        notes.append("tcp.paced_iw: the server agents cap SO_MAX_PACING_RATE at IW·MSS per handshake RTT "
                     "for the first RTT of their responses, as `iwlab flow-iw` deploys it, and the socket "
                     "stays internally paced")
    elif tcp.get("pacing"):
        notes.append("tcp.pacing: the server agents turn on Linux's internal pacing (SO_MAX_PACING_RATE); "
                     "client sockets are not paced")
    mtu = max(1500, mss + 40 + (12 if ts else 0))
    return Kernel(sysctls, optional, route_opts, cc, mtu)


# ---- topology ----------------------------------------------------------------------------------

def _groups(topo: dict[str, Any]) -> dict[str, tuple[str, int, int]]:
    """group name -> (side, first host index on that side, count)."""
    out: dict[str, tuple[str, int, int]] = {}
    for side in ("left", "right"):
        i = 0
        for grp in topo[side]:
            out[grp["name"]] = (side, i, int(grp["count"]))
            i += int(grp["count"])
    return out


def reference_run(scenario, seed: int, duration: float | None, with_apps: bool = True):
    """The simulator's run of the same scenario, seed and duration. Its links table gives the
    per-host draws; with the applications, its flows and pages give the workload's draws."""
    import iwlab
    from iwlab.scenario import Scenario

    sc = shortened(scenario, duration)
    if not with_apps:
        data = dict(sc.data, apps=[], duration="1ms", warmup="0s")
        data.pop("sample_interval", None)
        sc = Scenario.from_data(data, scenario.source)
    return iwlab.run(sc, seed=seed)


def run_window(data: dict[str, Any], duration: float | None) -> tuple[float, float, float]:
    """(scenario duration, run duration, warm-up) when the run is shortened to `duration`
    seconds; a warm-up that would not end before the run does is scaled with it."""
    scen = seconds(data["duration"])
    run = scen if duration is None else float(duration)
    if not 0 < run <= scen:
        raise PlanError(f"duration = {duration} is not allowed; expected 0 < duration <= the scenario's {scen:g} s")
    warmup = seconds(data.get("warmup", "0s"))
    if warmup >= run:
        warmup = warmup * run / scen
    return scen, run, warmup


def shortened(scenario, duration: float | None):
    """The scenario cut to `duration` seconds (warm-up as `run_window`), for the simulator."""
    from iwlab.scenario import Scenario

    if duration is None:
        return scenario
    _, run, warmup = run_window(scenario.data, duration)
    data = dict(scenario.data, duration=f"{int(round(run * 1e9))}ns", warmup=f"{int(round(warmup * 1e9))}ns")
    return Scenario.from_data(data, scenario.source)


def build_plan(scenario, seed: int | None = None, duration: float | None = None, pid: int | None = None,
               replay: bool = True, ns_prefix: str | None = None, quic_stack: str = "aioquic") -> Plan:
    """Everything the emulator will build and run for `scenario`, as data.

    With `replay` (the default) the workload replays the draws of the simulator's run of the
    same scenario, seed and duration (workload.py); without, the emulator draws its own.
    `quic_stack` runs the QUIC applications on "aioquic" or "quinn" (quic_apps.py)."""
    data = scenario.data
    seed = int(data.get("seed", 1) if seed is None else seed)
    pid = os.getpid() if pid is None else pid
    # `ns_prefix`: a caller's own namespace prefix (helpers running beside other emulations).
    prefix = ns_prefix or f"iwl{pid}-"
    notes: list[str] = []
    topo = data["topology"]
    if topo.get("kind") != "dumbbell":
        raise PlanError(f"topology.kind = {topo.get('kind')!r} cannot be emulated; allowed: dumbbell")
    scen_duration, run_duration, warmup = run_window(data, duration)
    if warmup != seconds(data.get("warmup", "0s")):
        notes.append(f"warm-up scaled to {warmup:g} s with the shortened run")
    if run_duration < scen_duration:
        notes.append(f"run shortened from {scen_duration:g} s to {run_duration:g} s (--duration): "
                     f"time scale {run_duration / scen_duration:.3g}")

    if seconds(topo.get("jitter", "0s")) > 0:
        notes.append(f"topology.jitter = {topo['jitter']}: not added by the relay; real stacks and the relay have "
                     "timing noise of their own (relay lateness in the summary)")
    groups = _groups(topo)
    n_left = sum(int(g["count"]) for g in topo["left"])
    n_right = sum(int(g["count"]) for g in topo["right"])
    if n_left + n_right > MAX_HOSTS:
        raise PlanError(f"topology has {n_left + n_right} hosts; the emulator allows at most {MAX_HOSTS}")
    if len(prefix) + 4 > 15:
        raise PlanError(f"process id {pid} is too long for interface names")

    # Links: the simulator's ports, in its order (0 = L→R, 1 = R→L, then up/down per host).
    reference = reference_run(scenario, seed, duration if run_duration < scen_duration else None, with_apps=replay)
    sim_links = {(r["from"], r["to"]): r for r in reference.links.to_dict("records")}
    bn = topo["bottleneck"]
    rev = bn.get("reverse") or {}
    loss = bn.get("loss") or {}
    p_loss = float(loss.get("p", 0.0)) if loss else 0.0
    direction = loss.get("direction", "both") if loss else "both"

    def port_of(src: str, dst: str) -> dict[str, Any]:
        return sim_links[(src, dst)]

    fl, rl = port_of("router-left", "router-right"), port_of("router-right", "router-left")
    forward = LinkDir(int(fl["port"]), "router-left", "router-right", int(fl["rate_bps"]), float(fl["delay"]),
                      relay_queue(bn["queue"], "topology.bottleneck.queue"),
                      p_loss if direction in ("both", "forward") else 0.0, prefix + "bf")
    reverse = LinkDir(int(rl["port"]), "router-right", "router-left", int(rl["rate_bps"]), float(rl["delay"]),
                      relay_queue(rev.get("queue", bn["queue"]), "topology.bottleneck.reverse.queue"),
                      p_loss if direction in ("both", "reverse") else 0.0, prefix + "br")

    hosts: list[Host] = []
    for side, offset, count_side in (("left", 0, n_left), ("right", n_left, n_right)):
        router = f"router-{side}"
        i = 0
        for gi, grp in enumerate(topo[side]):
            acc = grp.get("access") or {}
            q_down = relay_queue(acc.get("queue", {"kind": "drop-tail", "limit": "100pkt"}),
                                 f"topology.{side}[{gi}].access.queue")
            up = acc.get("up") or {}
            q_up = relay_queue(up["queue"], f"topology.{side}[{gi}].access.up.queue") if up.get("queue") else q_down
            for _ in range(int(grp["count"])):
                g = offset + i
                name = f"{side}-{i}"
                u, d = port_of(name, router), port_of(router, name)
                hosts.append(Host(
                    g=g, name=name, side=side, node=2 + g, ns=prefix + name, dev=f"{prefix}e{g}", rdev=f"{prefix}v{g}",
                    up=LinkDir(int(u["port"]), name, router, int(u["rate_bps"]), float(u["delay"]), q_up,
                               tun=f"{prefix}u{g}"),
                    down=LinkDir(int(d["port"]), router, name, int(d["rate_bps"]), float(d["delay"]), q_down,
                                 tun=f"{prefix}d{g}")))
                i += 1
        assert i == count_side

    tcp0 = merged_tcp(data)
    kernel = kernel_settings(tcp0, notes)

    work = Workload(scenario, seed, run_duration, hosts, groups, forward, reverse, notes, quic_stack)
    work.assign(reference if replay else None)
    iw_values = work.iw_values
    if iw_values and max(iw_values) > MAX_IW:
        raise PlanError(f"an IW of {max(iw_values)} segments cannot be emulated; at most {MAX_IW}")
    # Linux advertises ~64 KB in its first window; larger IWs need a larger receive buffer.
    biggest = max([*iw_values, work.iw_max], default=10) * (size_bytes(tcp0["mss"]) + 52)
    if biggest > 60_000:
        kernel.sysctls["net.ipv4.tcp_rmem"] = f"4096 {max(131072, 4 * biggest)} {max(6291456, 8 * biggest)}"
    watchers = {name: watch_file(data["iw"]["policies"], list(routes.values()))
                for name, routes in sorted(work.watch.items())}
    if watchers:
        notes.append("adaptive IW policies and iw.routes: decided by iwlab watch in each sending host's namespace "
                     "from the connections that closed before (the simulator decides at each connection)")
    return Plan(prefix=prefix, seed=seed, duration=run_duration, scenario_duration=scen_duration, warmup=warmup,
                hosts=hosts, forward=forward, reverse=reverse, router_ns=prefix + "router",
                iw_values=sorted(iw_values), kernel=kernel, agents=work.agents, apps=work.apps,
                notes=sorted(set(notes)), watchers=watchers)

