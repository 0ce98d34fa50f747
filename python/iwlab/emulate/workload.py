"""The scenario's applications as work for the agents: which host listens where, which flows
each client opens and when, and which IW each direction gets.

**Replaying the simulator's draws.** Given the simulator's run of the same scenario, seed
and duration (`reference`), the workload takes every random draw from it, so the emulated
run sees the same workload as `iwlab run` and the two differ only by what the network and
the TCP stacks do:

* open-loop flows (short flows, Poisson flows): each flow's start, client, server and sizes,
  and a short flow's server IW (a mix's combination);
* closed-loop short flows: the (size, IW) sequence and the think time after each flow (next
  start − previous last byte); the emulated client runs one flow at a time and pauses, and
  goes on with its own draws once the reference has no more;
* the start of every application instance (its first connection);
* FTP: the gap after each transfer (next start − previous last byte);
* HTTP/1.0 pages: each page's object sizes and the think time after it (next page start −
  page end). When the emulated client gets further than the simulated one, it goes on with
  its own draws from the same distributions; so does an HTTP/1.1 client throughout (the
  simulator's records do not split a page into objects);
* UDP sources draw their own start.

Without a reference every draw is the emulator's own (Python's `random`, seeded per
application instance from the scenario seed): the same distributions, other samples.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from iwlab.emulate.dists import draw_bytes, mean, mix_picks, normalize, sample
from iwlab.emulate.errors import PlanError
from iwlab.emulate.quic_apps import quic_settings
from iwlab.emulate.tcp_options import maxseg, merged_tcp
from iwlab.emulate.units import rate_bps, rate_or_share, seconds, size_bytes
from iwlab.emulate.watchers import ADAPTIVE

APP_PORT = 10_000
UDP_PORT = 20_000
APP_KIND_LABEL = {"short-flows": "short", "poisson-flows": "poisson", "ftp": "ftp", "bulk": "bulk", "web": "web"}
PARETO_DEFAULT = {"kind": "pareto", "shape": 1.2, "scale": 1122.46, "cap": 1e6}
THINK_DEFAULT = {"kind": "uniform", "lo": 1, "hi": 5}
CC = {"reno": "reno", "newreno": "reno", "cubic": "cubic"}


def seed_for(*parts: Any) -> int:
    return random.Random("/".join(map(str, parts))).getrandbits(63)


def iw_policy(data: dict[str, Any], name: str, mss: int, notes: list[str]) -> dict[str, Any]:
    """A scenario IW policy as the agent's rule: a constant window or the size-based function."""
    p = data["iw"]["policies"][name]
    kind = p["kind"]
    if kind == "fixed":
        return {"kind": "const", "w": int(p["segments"]), "name": kind}
    if kind == "rfc3390":
        return {"kind": "const", "w": max(1, min(4 * mss, max(2 * mss, 4380)) // mss), "name": kind}
    if kind == "rfc6928":
        return {"kind": "const", "w": max(1, min(10 * mss, max(2 * mss, 14600)) // mss), "name": kind}
    if kind == "size-based":
        return {"kind": "size", "theta": size_bytes(p["theta"]), "v": int(p["v"]), "min_iw": int(p["min_iw"]),
                "name": kind}
    if kind in ADAPTIVE:
        # Decided by the sender's watcher (watchers.py); `w` is the window of its first
        # connection to a destination, which the agents use where no watcher decides (a
        # client's request).
        first = int(p.get("initial", 10)) if kind != "rfc6928-fallback" else \
            max(1, min(10 * mss, max(2 * mss, 14600)) // mss)
        top = int(p.get("max", 40)) if kind != "rfc6928-fallback" else first
        return {"kind": "watch", "w": first, "max": top, "name": kind, "policy": name}
    raise PlanError(f"iw.policies.{name}.kind = {kind!r} cannot be emulated")


def policy_windows(p: dict[str, Any]) -> set[int]:
    if p["kind"] in ("const", "watch"):
        return {p["w"]}
    lo, hi = sorted((p["min_iw"], p["v"]))
    return set(range(lo, hi + 1))


class Workload:
    """Fills `agents` (host name → agent config) and `apps` (per scenario application: what
    the collector needs) from the scenario's `[[apps]]`."""

    def __init__(self, scenario, seed: int, duration: float, hosts, groups, forward, reverse, notes: list[str],
                 quic_stack: str = "aioquic"):
        self.sc, self.data, self.seed, self.duration = scenario, scenario.data, seed, duration
        self.quic_stack = quic_stack
        self.hosts, self.groups, self.forward, self.reverse, self.notes = hosts, groups, forward, reverse, notes
        self.by_side = {side: [h for h in hosts if h.side == side] for side in ("left", "right")}
        self.by_node = {h.node: h for h in hosts}
        self.agents: dict[str, dict[str, Any]] = {
            h.name: {"host": h.name, "g": h.g, "apps": {}, "listen": [], "udp_sinks": [], "schedule": [],
                     "closed": [], "ftp": [], "bulk": [], "web": [], "udp": [], "watched": []} for h in hosts}
        self.apps: list[dict[str, Any]] = []
        self.iw_values: set[int] = set()
        self.iw_max = 0  # the largest IW a watcher may give (receive buffers, plan.py)
        # Sending host → its watcher's routes (watchers.py), prefix → route.
        self.watch: dict[str, dict[str, dict[str, Any]]] = {}
        routes = (self.data.get("iw") or {}).get("routes") or []
        self.routes_pf = None
        if routes:
            from iwlab.emulate.watchers import watch_file
            from iwlab.policy import parse_policy

            self.routes_pf = parse_policy(watch_file(self.data["iw"]["policies"], routes), "iw.routes")
        src = scenario.source
        self.base_dir = Path(src).parent if src and src not in ("<memory>", "<test>") else None

    # ---- helpers ---------------------------------------------------------------------------------
    def group_host(self, gname: str, idx: int):
        side, first, _ = self.groups[gname]
        return self.by_side[side][first + idx]

    def ends(self, app: dict[str, Any], i: int):
        _, _, c = self.groups[app["clients"]]
        _, _, s = self.groups[app["servers"]]
        k = int(app.get("offset", 0)) + i
        if app.get("mapping", "modulo") == "distinct":
            return self.group_host(app["clients"], k), self.group_host(app["servers"], k)
        return self.group_host(app["clients"], k % c), self.group_host(app["servers"], k % s)

    def dist(self, v: Any, kind: str, path: str, mss: int = 1460) -> dict[str, Any]:
        """A fixed-or-dist field in base units: kind "s" (seconds), "B" (bytes), "count"."""
        if isinstance(v, dict):
            factor = 1.0
            if v.get("unit") is not None:
                factor = {"s": lambda u: seconds(f"1{u}"), "B": lambda u: size_bytes(f"1{u}"),
                          "bps": lambda u: rate_bps(f"1{u}")}.get(kind, lambda u: 1.0)(v["unit"])
            return normalize(v, factor, self.base_dir)
        fixed = {"s": lambda x: seconds(x, path), "B": lambda x: size_bytes(x, mss, path)}.get(kind, float)(v)
        return normalize(None, 1.0, fixed=fixed)

    def toward_clients(self, app: dict[str, Any]) -> int:
        """Bottleneck rate from the servers' side to the clients' side."""
        return self.forward.rate_bps if self.groups[app["servers"]][0] == "left" else self.reverse.rate_bps

    @staticmethod
    def srv(h) -> dict[str, Any]:
        return {"host": h.name, "g": h.g}

    # ---- the applications ------------------------------------------------------------------------
    def assign(self, reference=None) -> None:
        ref_flows = reference.flows.to_dict("records") if reference is not None else []
        ref_pages = reference.pages.to_dict("records") if reference is not None and len(reference.pages) else []
        flows_of: dict[int, list[dict[str, Any]]] = {}
        for f in ref_flows:
            flows_of.setdefault(int(f["app"]), []).append(f)
        pages_of: dict[int, list[dict[str, Any]]] = {}
        for p in ref_pages:
            pages_of.setdefault(int(p["app"]), []).append(p)
        objects: dict[int, list[dict[str, Any]]] = {}
        for f in ref_flows:
            if f["page"] is not None and int(f["page"]) >= 0:
                objects.setdefault(int(f["page"]), []).append(f)
        tcp0 = merged_tcp(self.data)
        next_id = 0
        for ai, app in enumerate(self.data.get("apps") or []):
            kind, path = app["kind"], f"apps[{ai}]"
            tcp = merged_tcp(self.data, app)
            mss = size_bytes(tcp["mss"])
            for key in ("sack", "timestamps", "ecn", "delayed_ack", "min_rto", "restart_after_idle", "initial_rto"):
                if tcp.get(key) != tcp0.get(key):
                    self.notes.append(f"{path}.tcp.{key}: per-application values are not emulated; the scenario's "
                                      "[tcp] value is used (kernel settings are per host)")
            count = int(app.get("count", 1))
            base = next_id  # the simulator's application ids: one per instance, one for poisson-flows
            next_id += 1 if kind == "poisson-flows" else count
            meta: dict[str, Any] = {"index": ai, "kind": kind, "name": app.get("name") or f"{kind}-{ai}", "mss": mss,
                                    "app_ids": list(range(base, next_id))}
            self.apps.append(meta)
            pairs = [self.ends(app, i) for i in range(count)]

            def start(i: int) -> float:
                rows = flows_of.get(base + i)
                if rows:
                    return min(float(r["start"]) for r in rows)
                return sample(self.dist(app.get("start", "0s"), "s", f"{path}.start"),
                                    random.Random(seed_for(self.seed, ai, i, "start")))

            if kind == "udp":
                for i, (c, s) in enumerate(pairs):
                    port = UDP_PORT + ai
                    self.agents[c.name]["udp_sinks"] = sorted(set(self.agents[c.name]["udp_sinks"]) | {port})
                    self.agents[s.name]["udp"].append({
                        "app": ai, "app_id": base + i, "dst": c.addr, "port": port, "start": max(0.0, start(i)),
                        "rate_bps": rate_or_share(app["rate"], self.toward_clients(app), f"{path}.rate"),
                        "payload": size_bytes(app.get("payload", "1000B")), "poisson": bool(app.get("poisson", False)),
                        "stop": seconds(app["stop"]) if app.get("stop") is not None else None,
                        "seed": seed_for(self.seed, ai, i, "udp")})
                continue
            default_iw = (self.data.get("iw") or {}).get("default")
            pol_s = iw_policy(self.data, app.get("server_iw") or default_iw, mss, self.notes)
            pol_c = iw_policy(self.data, app.get("client_iw") or default_iw, mss, self.notes)
            self.iw_values |= policy_windows(pol_s) | policy_windows(pol_c)
            self.iw_max = max([self.iw_max, *(p["max"] for p in (pol_s, pol_c) if p["kind"] == "watch")])
            if tcp.get("rcv_wnd") is not None:
                self.notes.append("tcp.rcv_wnd is kept by TCP_WINDOW_CLAMP on a fixed receive buffer, "
                                  "re-applied after every read (Linux resets the clamp when segment sizes change)")
            cfg = {"cc": CC[tcp["cc"]], "maxseg": maxseg(tcp),
                   "clamp": size_bytes(tcp["rcv_wnd"], mss) if tcp.get("rcv_wnd") is not None else None,
                   "server_iw": pol_s, "client_iw": pol_c, "port": APP_PORT + ai,
                   "pacing": bool(tcp.get("pacing")), "paced_iw": bool(tcp.get("paced_iw"))}
            meta.update(server_iw=pol_s["name"], client_iw=pol_c["name"], label=APP_KIND_LABEL[kind],
                        server_policy=app.get("server_iw") or default_iw)
            if pol_c["kind"] == "watch":
                self.notes.append(f"{path}.client_iw: the client's side of an adaptive policy starts every "
                                  f"connection with its first window ({pol_c['w']} segments); the watcher decides "
                                  "the servers' side")
            for c, s in pairs:
                self.agents[c.name]["apps"][ai] = cfg
                self.agents[s.name]["apps"][ai] = cfg
                self._watch(ai, path, c, s, pol_s)
                if ai not in self.agents[s.name]["listen"]:
                    self.agents[s.name]["listen"].append(ai)
            request = size_bytes(app.get("request", "250B" if kind in ("ftp", "web") else "100B"), mss,
                                 f"{path}.request")
            if kind == "short-flows" and app.get("transport") == "quic":
                # A real QUIC endpoint carries these flows (quic_apps.py); the route's initcwnd is TCP's only.
                cfg["quic"] = quic_settings(self.data, app, path, self.quic_stack, request, cfg["port"])
                meta["quic"] = {k: v for k, v in cfg["quic"].items() if not k.endswith("_args")}
            if kind == "short-flows":
                rows = [r for i in range(count) for r in flows_of.get(base + i, [])]
                self._short_flows(ai, app, path, base, pairs, request, mss, start,
                                  rows if reference is not None else None, app.get("server_iw") or default_iw)
            elif kind == "poisson-flows":
                if reference is not None:
                    self._replay_open_loop(ai, kind, flows_of.get(base, []))
                else:
                    self._draw_open_loop(ai, app, path, base, pairs, request, mss, start)
            elif kind == "ftp":
                gap = app.get("gap")
                for i, (c, s) in enumerate(pairs):
                    rows = sorted(flows_of.get(base + i, []), key=lambda r: r["start"])
                    gaps = [float(b["start"]) - float(a["last_byte"]) for a, b in zip(rows, rows[1:])
                            if a["last_byte"] is not None]
                    self.agents[c.name]["ftp"].append({
                        "app": ai, "app_id": base + i, "inst": i, "start": start(i), "server": self.srv(s),
                        "request": request, "size": size_bytes(app.get("size", "1MB"), mss, f"{path}.size"),
                        "gap": None if gap is None else self.dist(gap, "s", f"{path}.gap"), "gaps": gaps,
                        "transfers": app.get("transfers"), "seed": seed_for(self.seed, ai, i, "ftp")})
            elif kind == "bulk":
                for i, (c, s) in enumerate(pairs):
                    self.agents[c.name]["bulk"].append({
                        "app": ai, "app_id": base + i, "inst": i, "start": start(i), "server": self.srv(s),
                        "upload": bool(app.get("upload", False))})
            elif kind == "web":
                http = app.get("http", "1.0")
                for i, (c, s) in enumerate(pairs):
                    replay = self._replay_pages(pages_of.get(base + i, []), objects) if http == "1.0" else []
                    self.agents[c.name]["web"].append({
                        "app": ai, "app_id": base + i, "inst": i, "start": start(i), "server": self.srv(s),
                        "request": request, "http": http, "replay": replay,
                        "primary": self.dist(app.get("primary", PARETO_DEFAULT), "B", f"{path}.primary", mss),
                        "embedded": self.dist(app.get("embedded", PARETO_DEFAULT), "B", f"{path}.embedded", mss),
                        "embedded_count": self.dist(app.get("embedded_count", 3), "count", f"{path}.embedded_count"),
                        "think": self.dist(app.get("think", THINK_DEFAULT), "s", f"{path}.think"),
                        "pages": app.get("pages"), "seed": seed_for(self.seed, ai, i, "web")})
            else:
                raise PlanError(f"{path}.kind = {kind!r} cannot be emulated")
        for a in self.agents.values():
            a["schedule"].sort(key=lambda f: f["t"])

    def _watch(self, ai: int, path: str, c, s, pol_s: dict[str, Any]) -> None:
        """Server `s`'s IW toward client `c` is its watcher's when a route of `iw.routes` covers
        `c` (the route's policy) or the application's server policy is adaptive (a /32 route
        per client host); `c` then connects from its own address."""
        import ipaddress

        route = self.routes_pf.route_for(ipaddress.ip_address(c.addr)) if self.routes_pf else None
        if route is None and pol_s["kind"] != "watch":
            return
        if [ai, s.g] not in self.agents[c.name]["watched"]:
            self.agents[c.name]["watched"].append([ai, s.g])
        mine = self.watch.setdefault(s.name, {})
        if route is not None:
            for r in self.data["iw"]["routes"]:
                mine.setdefault(r["prefix"], dict(r))
            return
        key = f"{c.addr}/32"
        had = mine.setdefault(key, {"prefix": key, "policy": pol_s["policy"]})
        if had["policy"] != pol_s["policy"]:
            raise PlanError(f"{path}.server_iw = {pol_s['policy']!r} cannot be emulated: {s.name} already "
                            f"decides its IW toward {c.name} with policy {had['policy']!r} (one watcher route "
                            "per destination)")

    def _replay_open_loop(self, ai: int, kind: str, rows: list[dict[str, Any]], flow_iw=None) -> None:
        """The reference's flows at their instants; with `flow_iw` (a short-flows app), each with
        the server IW its record names."""
        for r in rows:
            t = float(r["start"])
            if t >= self.duration:
                continue
            c, s = self.by_node[int(r["client"])], self.by_node[int(r["server"])]
            f = {"t": t, "app": ai, "app_id": int(r["app"]), "app_kind": APP_KIND_LABEL[kind], "server": self.srv(s),
                 "request": int(r["request_bytes"]), "response": int(r["response_bytes"])}
            if flow_iw is not None:
                f.update(flow_iw(r["server_iw"]))
            self.agents[c.name]["schedule"].append(f)

    # ---- short flows: the arrival model of crates/iwlab-core/src/traffic/arrivals.rs -----------
    def _short_flows(self, ai, app, path, base, pairs, request, mss, start, ref_rows, default_policy) -> None:
        """Each flow's (response, server IW): `response` and the app's policy, a `mix` in its order,
        or a replay file's rows. Open-loop kinds become each client's schedule (the reference's
        flows when given); a closed loop runs in the agent (`run_closed`), one flow at a time."""
        arr, limit = app["arrivals"], app.get("flows")
        if app.get("mix") is not None:
            combos = [{"response": size_bytes(m["response"], mss, f"{path}.mix[{k}].response"),
                       "policy": m.get("server_iw") or default_policy} for k, m in enumerate(app["mix"])]
        elif arr["kind"] == "replay":
            combos = self._replay_file(arr["file"], request, default_policy, f"{path}.arrivals.file")
        else:
            combos = [{"response": size_bytes(app["response"], mss, f"{path}.response"), "policy": default_policy}]
        names = sorted({c["policy"] for c in combos} | {r["server_iw"] for r in ref_rows or []})
        policies = {n: iw_policy(self.data, n, mss, self.notes) for n in names}
        for n, p in policies.items():
            if p["kind"] == "watch" and n != default_policy:
                raise PlanError(f"{path}: the adaptive policy {n!r} cannot be emulated per flow (its watcher decides "
                                "per destination); name it as the app's server_iw")
            self.iw_values |= policy_windows(p)

        def flow_iw(name: str) -> dict[str, Any]:
            # The app's own policy is the agent's default (and its watcher's, when adaptive).
            return {} if name == default_policy else {"policy": name, "iw": policies[name]}

        if arr["kind"] == "closed-loop":
            self._closed_loop(ai, app, path, base, pairs, request, start, ref_rows, combos, policies, default_policy)
            return
        if ref_rows is not None:
            self._replay_open_loop(ai, "short-flows", ref_rows, flow_iw)
            return
        if arr["kind"] == "replay":
            for i, (c, s) in enumerate(pairs):
                for f in combos[:limit]:
                    if f["t"] < self.duration:
                        self.agents[c.name]["schedule"].append({
                            "t": f["t"], "app": ai, "app_id": base + i, "app_kind": "short", "server": self.srv(s),
                            "request": f["request"], "response": f["response"], **flow_iw(f["policy"])})
            return
        mean_response = sum(c["response"] for c in combos) / len(combos)
        for i, (c, s) in enumerate(pairs):
            rng = random.Random(seed_for(self.seed, ai, i, "arrivals"))
            picks = mix_picks(len(combos), app.get("mix_order", "permuted-blocks"),
                              random.Random(seed_for(self.seed, ai, i, "mix")))
            k = 0
            for t, n in self._open_loop_times(arr, start(i), rng, mean_response, app, path):
                for _ in range(n):
                    if t >= self.duration or (limit is not None and k >= int(limit)):
                        break
                    combo = combos[next(picks)]
                    self.agents[c.name]["schedule"].append({
                        "t": t, "app": ai, "app_id": base + i, "app_kind": "short", "server": self.srv(s),
                        "request": request, "response": combo["response"], **flow_iw(combo["policy"])})
                    k += 1
                if t >= self.duration or (limit is not None and k >= int(limit)):
                    break

    def _open_loop_times(self, arr, t, rng, mean_response, app, path):
        """(instant, flows) of a periodic, Poisson or burst source starting at `t`, without end."""
        kind = arr["kind"]
        if kind == "poisson":
            # load: a share of the bottleneck toward the clients over the mean response (per instance).
            rate = float(arr["rate"]) if arr.get("rate") is not None else \
                float(str(arr["load"]).strip().removesuffix("%")) / 100.0 * self.toward_clients(app) / (8.0 * mean_response)
            t += rng.expovariate(rate)
        gap = self.dist(arr["gap"], "s", f"{path}.arrivals.gap") if kind == "bursts" else None
        while True:
            yield t, int(arr["flows"]) if kind == "bursts" else 1
            if kind == "periodic":
                t += seconds(arr["period"])
            elif kind == "poisson":
                t += rng.expovariate(rate)
            else:
                t += max(0.0, sample(gap, rng))

    def _closed_loop(self, ai, app, path, base, pairs, request, start, ref_rows, combos, policies, default) -> None:
        think = self.dist(app["arrivals"]["think"], "s", f"{path}.arrivals.think")
        for i, (c, s) in enumerate(pairs):
            mine = sorted((r for r in ref_rows or [] if int(r["app"]) == base + i), key=lambda r: r["start"])
            # The reference's think times: the next start minus the previous flow's end (its last
            # byte), while every flow before completed.
            thinks = []
            for a, b in zip(mine, mine[1:]):
                if a["last_byte"] is None or a["last_byte"] != a["last_byte"]:
                    break
                thinks.append(float(b["start"]) - float(a["last_byte"]))
            self.agents[c.name].setdefault("closed", []).append({
                "app": ai, "app_id": base + i, "inst": i, "start": float(mine[0]["start"]) if mine else start(i),
                "server": self.srv(s), "request": request, "combos": combos, "policies": policies, "default": default,
                "order": app.get("mix_order", "permuted-blocks"), "think": think, "thinks": thinks,
                "sequence": [{"response": int(r["response_bytes"]), "policy": r["server_iw"]} for r in mine],
                "flows": app.get("flows"), "seed": seed_for(self.seed, ai, i, "closed-loop")})

    def _replay_file(self, file: str, request: int, default_policy: str, path: str) -> list[dict[str, Any]]:
        """The rows of a replay file (columns start, response, server_iw?, request?), by start."""
        import csv

        p = Path(file)
        if not p.is_absolute() and self.base_dir is not None:
            p = self.base_dir / p
        try:
            lines = [ln for ln in p.read_text().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        except OSError as e:
            raise PlanError(f"{path} = {file!r}: cannot read: {e}") from None
        out = []
        for r in csv.DictReader(lines, skipinitialspace=True):
            r = {k.strip(): (v or "").strip() for k, v in r.items() if k is not None}
            out.append({"t": float(r["start"]), "response": int(r["response"]),
                        "policy": r.get("server_iw") or default_policy,
                        "request": int(r["request"]) if r.get("request") else request})
        out.sort(key=lambda f: f["t"])
        return out

    def _draw_open_loop(self, ai, app, path, base, pairs, request, mss, start) -> None:
        limit = app.get("flows")
        size_d = self.dist(app["size"], "B", f"{path}.size", mss)
        if app.get("rate") is not None:
            rate = float(app["rate"])
        else:
            rate = float(app["load"]) * self.toward_clients(app) / (8.0 * mean(size_d))
        rng = random.Random(seed_for(self.seed, ai, "flows"))
        t, k = start(0) + rng.expovariate(rate), 0
        while t < self.duration and (limit is None or k < int(limit)):
            c, s = pairs[rng.randrange(len(pairs))]
            self.agents[c.name]["schedule"].append({"t": t, "app": ai, "app_id": base, "app_kind": "poisson",
                                                    "server": self.srv(s), "request": request,
                                                    "response": draw_bytes(size_d, rng, 1)})
            k += 1
            t += rng.expovariate(rate)

    @staticmethod
    def _replay_pages(pages: list[dict[str, Any]], objects: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
        """HTTP/1.0 pages of one client: object sizes and the think time after each page,
        while the simulator's records hold them completely."""
        out: list[dict[str, Any]] = []
        pages = sorted(pages, key=lambda p: p["start"])
        for p, nxt in zip(pages, pages[1:] + [None]):
            objs = objects.get(int(p["page"]), [])
            primary = [int(o["response_bytes"]) for o in objs if o["role"] == "primary"]
            embedded = [int(o["response_bytes"]) for o in sorted(objs, key=lambda o: o["flow"])
                        if o["role"] == "embedded"]
            if len(primary) != 1 or 1 + len(embedded) != int(p["objects"]):
                break
            think = None
            if p["end"] is not None and nxt is not None:
                think = float(nxt["start"]) - float(p["end"])
            out.append({"sizes": primary + embedded, "think": think})
            if think is None:
                break
        return out
