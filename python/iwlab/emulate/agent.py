#!/usr/bin/env python3
"""The traffic agent: one asyncio process per host namespace, standard library only.

    ip netns exec NS python3 agent.py CONFIG.json

It opens the listeners, UDP sinks and its notice socket, prints `ready`, reads `go T0` (a
`CLOCK_MONOTONIC` instant shared by every namespace) from stdin and then runs the host's
applications on the real kernel TCP stack, with times in seconds since T0:

* **exchanges** (FTP transfers, short flows, Poisson flows, HTTP/1.0 objects): the client
  writes `request` bytes; the server, once it has them, writes `response` bytes and shuts
  its side down; the client closes when it has the whole response; the server samples
  `tcp_info` when it sees the client's FIN (by then all its data is acknowledged);
* **HTTP/1.1 pages**: one connection; the server answers object i as soon as request i has
  arrived; the client pipelines the embedded requests once the primary is in;
* **closed-loop short flows**: one exchange at a time, then the think time before the next;
* **bulk**: the sender writes until the run stops;
* **UDP**: constant bit rate or Poisson datagrams at a wire rate (payload + 28 bytes);
* **QUIC** short flows: run by a QUIC endpoint per app (quic_peer.py or iwlab-quic-peer), which
  the agent starts before `ready` and hands each flow to (`quic_exchange`).

A server learns what to send from a *notice*: before connecting, the client binds its
socket, and writes `{uid, peer: [ip, port], mode, sizes}` to the server agent's Unix socket
(a path in the run directory, reachable from every namespace). The notice travels in
microseconds, the SYN in milliseconds; the server still waits for it if it is late.

Initial windows are per destination prefix (see `topology.py`): a host has one address per
IW value `w`, `198.19.0.0 + 1024·w + g`, and every host routes `198.19.(4w).0/22` with
`initcwnd w`. The client binds its source to its own address for the server's IW and
connects to the server's address for its own IW, so each direction gets its window from the
kernel's route. At `stop` every connection still open is sampled and recorded as
incomplete. Records go, one JSON object per line, to `<rundir>/<host>.jsonl`.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import struct
import sys
import time
from typing import Any

if __package__:
    from . import dists
else:  # run as a script: import the sibling file, not the (heavy) iwlab package
    import dists  # type: ignore[no-redef]

ALIAS_BASE = struct.unpack("!I", socket.inet_aton("198.19.0.0"))[0]
LINK_BASE = struct.unpack("!I", socket.inet_aton("198.18.0.0"))[0]
MAX_EMBEDDED = 65_535
CHUNK = 1 << 20
ZEROS = memoryview(bytes(CHUNK))
TCP_INFO_LEN = 280


def alias(g: int, w: int) -> str:
    """Address of host `g` that peers reach with an initial window of `w` segments."""
    return socket.inet_ntoa(struct.pack("!I", ALIAS_BASE + 1024 * w + g))


def own_addr(g: int) -> str:
    """Host `g`'s own address (198.18.0.0 + 4g + 2, plan.py)."""
    return socket.inet_ntoa(struct.pack("!I", LINK_BASE + 4 * g + 2))


def iw_segments(policy: dict[str, Any], declared: int | None) -> int:
    """The window a policy gives a flow that declared `declared` bytes (None: unknown)."""
    if policy["kind"] in ("const", "watch"):
        return int(policy["w"])
    theta, v, lo = policy["theta"], policy["v"], policy["min_iw"]
    if declared is None:
        return lo
    if declared <= theta:
        return v
    return (theta * v + (declared - theta) * lo) // declared


def tcp_info(sock: socket.socket) -> dict[str, Any] | None:
    """The `struct tcp_info` fields iwlab records (offsets of linux/tcp.h)."""
    try:
        b = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
        cc = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0", 1)[0].decode()
    except OSError:
        return None
    u32 = lambda off: struct.unpack_from("=I", b, off)[0] if len(b) >= off + 4 else None  # noqa: E731
    out = {
        "state": b[0], "ca_state": b[1], "snd_mss": u32(16), "rtt_us": u32(68), "snd_cwnd": u32(80),
        "total_retrans": u32(100), "segs_out": u32(136), "data_segs_out": u32(156),
        "delivered_ce": u32(196), "cc": cc,
        "bytes_retrans": struct.unpack_from("=Q", b, 208)[0] if len(b) >= 216 else None,
        "total_rto": struct.unpack_from("=H", b, 240)[0] if len(b) >= 242 else None,
        "received_ce": u32(248),
    }
    return out


SO_MAX_PACING_RATE = 47  # asm-generic/socket.h
# sk_setsockopt(SO_MAX_PACING_RATE): ~0U is "no limit" and leaves sk_pacing_status alone; any
# other value turns TCP's internal pacing on for good (no fq needed).
RATE_UNLIMITED, RATE_HIGHEST = 0xFFFFFFFF, 0xFFFFFFFE


def _max_rate(sock: socket.socket, rate: int) -> None:
    sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("=I", rate))


def start_pacing(sock: socket.socket, pacing: bool, paced_iw: bool) -> float | None:
    """What iwlab-bpf's sock_ops program does at establishment (crates/iwlab-bpf/bpf/flow_iw.bpf.c):
    `paced_iw` caps the rate at IW·MSS per handshake RTT (tcpi_rtt, tcpi_snd_cwnd, tcpi_snd_mss)
    and returns that RTT in seconds — lift the cap one RTT after the first flight starts;
    `pacing` (or a paced IW without an RTT sample) turns internal pacing on without a cap.
    Returns None when there is no cap to lift."""
    if paced_iw:
        info = tcp_info(sock)
        if info and info["rtt_us"] and info["snd_cwnd"] and info["snd_mss"]:
            _max_rate(sock, min(RATE_HIGHEST, max(1, info["snd_cwnd"] * info["snd_mss"] * 1_000_000 // info["rtt_us"])))
            return info["rtt_us"] / 1e6
    if pacing or paced_iw:
        _max_rate(sock, RATE_HIGHEST)
        _max_rate(sock, RATE_UNLIMITED)
    return None


def lift_pacing(sock: socket.socket) -> None:
    """The first flight's cap goes; internal pacing stays (as the program's RTT callback)."""
    try:
        _max_rate(sock, RATE_UNLIMITED)
    except OSError:  # closed meanwhile
        pass


class Agent:
    def __init__(self, cfg: dict[str, Any]):
        self.cfg = cfg
        self.host: str = cfg["host"]
        self.g: int = cfg["g"]
        self.apps: dict[int, dict[str, Any]] = {int(k): v for k, v in cfg["apps"].items()}
        # [app, server g] pairs whose server IW the server's watcher decides (watchers.py)
        self.watched: list[list[int]] = cfg.get("watched", [])
        self.rundir: str = cfg["rundir"]
        self.stop_at: float = cfg["stop"]
        self.t0 = 0.0
        self.records: list[dict[str, Any]] = []
        self.pending: dict[tuple[str, int], asyncio.Future] = {}
        self.peers: dict[str, asyncio.StreamWriter] = {}
        self.peer_lock = asyncio.Lock()
        self.tasks: set[asyncio.Task] = set()
        self.seq = 0
        self.udp_rx: dict[int, list[int]] = {}
        self.quic_clients: dict[int, Any] = {}
        self.quic_pending: dict[str, asyncio.Future] = {}
        self.quic_peers: list[Any] = []
        self.quic_logs: list[str] = []

    # ---- helpers -------------------------------------------------------------------------
    def now(self) -> float:
        return time.monotonic() - self.t0

    async def sleep_until(self, t: float) -> None:
        d = t - self.now()
        if d > 0:
            await asyncio.sleep(d)

    def spawn(self, coro) -> asyncio.Task:
        t = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(t)
        t.add_done_callback(self._done)
        return t

    def _done(self, t: asyncio.Task) -> None:
        self.tasks.discard(t)
        if not t.cancelled() and t.exception() is not None:
            e = t.exception()
            print(f"agent {self.host}: task failed: {e!r}", file=sys.stderr)
            self.records.append({"type": "error", "host": self.host, "error": repr(e), "t": self.now()})

    def uid(self) -> str:
        self.seq += 1
        return f"{self.host}/{self.seq}"

    def tcp_socket(self, app: int) -> socket.socket:
        a = self.apps[app]
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, a["cc"].encode())
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a["maxseg"])
        if a.get("clamp"):
            # A fixed receive buffer turns autotuning off, which would otherwise raise the clamp.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2 * a["clamp"])
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, a["clamp"])
        return s

    @staticmethod
    async def send_bytes(sock: socket.socket, n: int) -> None:
        loop = asyncio.get_running_loop()
        while n > 0:
            k = min(n, CHUNK)
            await loop.sock_sendall(sock, ZEROS[:k])
            n -= k

    # ---- notices -------------------------------------------------------------------------
    def notice_future(self, key: tuple[str, int]) -> asyncio.Future:
        fut = self.pending.get(key)
        if fut is None:
            fut = self.pending[key] = asyncio.get_running_loop().create_future()
        return fut

    async def on_notice_conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                msg = json.loads(line)
                fut = self.notice_future((msg["peer"][0], msg["peer"][1]))
                if not fut.done():
                    fut.set_result(msg)
        finally:
            writer.close()

    async def notify(self, server_host: str, msg: dict[str, Any]) -> None:
        async with self.peer_lock:
            w = self.peers.get(server_host)
            if w is None:
                _, w = await asyncio.open_unix_connection(os.path.join(self.rundir, f"{server_host}.sock"))
                self.peers[server_host] = w
        w.write(json.dumps(msg).encode() + b"\n")
        await w.drain()

    # ---- server side ---------------------------------------------------------------------
    async def accept_loop(self, lsock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            conn, peer = await loop.sock_accept(lsock)
            conn.setblocking(False)
            self.spawn(self.serve(conn, peer, self.port_app.get(lsock.getsockname()[1])))

    async def serve(self, conn: socket.socket, peer: tuple[str, int], app: int | None = None) -> None:
        loop = asyncio.get_running_loop()
        rec: dict[str, Any] = {"type": "server", "host": self.host, "accept": self.now()}
        info0 = tcp_info(conn)
        a = self.apps.get(app, {}) if app is not None else {}
        cap_rtt = start_pacing(conn, bool(a.get("pacing")), bool(a.get("paced_iw")))

        def first_send() -> None:
            # The first flight starts now; its first ACK comes back one RTT later.
            nonlocal cap_rtt
            if cap_rtt is not None:
                loop.call_later(cap_rtt, lift_pacing, conn)
                cap_rtt = None

        buf = bytearray(65536)
        got = 0
        try:
            key = (peer[0], peer[1])
            msg = await asyncio.wait_for(self.notice_future(key), 30)
            self.pending.pop(key, None)
            rec["uid"] = msg["uid"]
            mode = msg["mode"]
            if mode == "exchange":
                while got < msg["request"]:
                    n = await loop.sock_recv_into(conn, buf)
                    if n == 0:
                        raise ConnectionError("client closed before its request was complete")
                    got += n
                first_send()
                await self.send_bytes(conn, msg["response"])
                conn.shutdown(socket.SHUT_WR)
                while n := await loop.sock_recv_into(conn, buf):
                    got += n
            elif mode == "http11":
                served, sizes, req = 0, msg["sizes"], msg["request"]
                while True:
                    n = await loop.sock_recv_into(conn, buf)
                    if n == 0:
                        break
                    got += n
                    while served < min(got // req, len(sizes)):
                        first_send()
                        await self.send_bytes(conn, sizes[served])
                        served += 1
            elif mode == "bulk-down":
                first_send()
                while True:
                    await loop.sock_sendall(conn, ZEROS)
            elif mode == "bulk-up":
                clamp = self.apps[msg["app"]].get("clamp") if "app" in msg else None
                while n := await loop.sock_recv_into(conn, buf):
                    got += n
                    if clamp:
                        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, clamp)
        except (OSError, ConnectionError, asyncio.TimeoutError) as e:
            rec["error"] = repr(e)
        finally:
            rec["end"], rec["received"] = self.now(), got
            rec["info0"], rec["info"] = info0, tcp_info(conn)
            conn.close()
            self.records.append(rec)

    # ---- client side ---------------------------------------------------------------------
    async def exchange(self, app: int, server: dict[str, Any], request: int, response: int,
                       label: dict[str, Any], mode: str = "exchange", sizes: list[int] | None = None,
                       first_write: int | None = None, on_data=None, server_iw: dict[str, Any] | None = None) -> bool:
        """One connection: request/response (or an HTTP/1.1 page, or bulk). True if complete.

        `request`/`response` are the bytes each side sends in all (declared to the IW policy);
        `first_write` is what the client writes at once (default: all of `request`); `server_iw`:
        this flow's server policy (a mix's combination), default the application's."""
        loop = asyncio.get_running_loop()
        a = self.apps[app]
        if a.get("quic"):
            return await self.quic_exchange(app, server, request, response, label, server_iw)
        declared_resp = None if mode.startswith("bulk") else response
        declared_req = None if mode.startswith("bulk") else request
        # The server's watcher decides its IW toward us (adaptive policy, iw.routes): connect from
        # our own address, which its routes cover, and learn the IW from the server's record.
        watched = [app, server["g"]] in self.watched and server_iw is None
        w_srv = None if watched else iw_segments(server_iw or a["server_iw"], declared_resp)
        w_cli = iw_segments(a["client_iw"], declared_req)
        sock = self.tcp_socket(app)
        rec: dict[str, Any] = {"type": "client", "host": self.host, "app": app, **label,
                               "server_host": server["host"], "request_bytes": request,
                               "response_bytes": response, "iw_server": w_srv, "iw_client": w_cli,
                               "delivered": 0, "completed": False}
        buf = bytearray(262144)
        clamp = a.get("clamp")
        try:
            sock.bind((own_addr(self.g) if w_srv is None else alias(self.g, w_srv), 0))
            uid = rec["uid"] = self.uid()
            first = request if first_write is None else first_write
            msg = {"uid": uid, "app": app, "peer": list(sock.getsockname()), "mode": mode,
                   "request": first, "response": response}
            if sizes is not None:
                msg["sizes"] = sizes
            await self.notify(server["host"], msg)
            rec["start"] = self.now()
            await loop.sock_connect(sock, (alias(server["g"], w_cli), a["port"]))
            rec["syn_ack"] = self.now()
            rec["info0"] = tcp_info(sock)
            if mode == "bulk-up":
                while True:
                    await loop.sock_sendall(sock, ZEROS)
            if first > 0:
                await self.send_bytes(sock, first)
            got = 0
            while mode == "bulk-down" or got < response or response == 0:
                n = await loop.sock_recv_into(sock, buf)
                if n == 0:
                    if response == 0 and mode == "exchange":
                        rec["last_byte"] = self.now()
                        rec["completed"] = True
                    break
                if got == 0:
                    rec["first_byte"] = self.now()
                if clamp:
                    # Linux resets the clamp from the receive buffer when the segment size changes.
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, clamp)
                got += n
                rec["delivered"] = got
                if on_data is not None:
                    await on_data(sock, got)
            if response > 0 and got >= response:
                rec["last_byte"] = self.now()
                rec["completed"] = True
        except (OSError, ConnectionError) as e:
            rec["error"] = repr(e)
        finally:
            rec["end"] = self.now()
            rec["info"] = tcp_info(sock)
            sock.close()
            self.records.append(rec)
        return bool(rec["completed"])

    # ---- QUIC (quic_peer.py, crates/iwlab-quic-peer) -----------------------------------------
    async def start_quic_peers(self) -> None:
        """A server endpoint per QUIC app this host serves, a client endpoint per QUIC app it is a
        client of; each prints `ready`. The client's results come back on its stdout."""
        mine = {f["app"] for f in self.cfg["schedule"]} | {x["app"] for x in self.cfg.get("closed", [])}
        peers = []
        for app, a in sorted(self.apps.items()):
            q = a.get("quic")
            if not q:
                continue
            if app in self.cfg["listen"]:
                log = os.path.join(self.rundir, f"{self.host}-quic-{app}.jsonl")
                self.quic_logs.append(log)
                peers.append(await asyncio.create_subprocess_exec(
                    *q["server_args"], log, stdout=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL))
            if app in mine:
                p = await asyncio.create_subprocess_exec(*q["client_args"], stdin=asyncio.subprocess.PIPE,
                                                         stdout=asyncio.subprocess.PIPE)
                self.quic_clients[app] = p
                peers.append(p)
        for p in peers:
            line = await asyncio.wait_for(p.stdout.readline(), 30)
            if not line.startswith(b"ready"):
                raise SystemExit(f"agent {self.host}: a QUIC peer did not start (exit {await p.wait()})")
        self.quic_peers = peers
        for p in self.quic_clients.values():
            self.spawn(self.quic_results(p))

    async def quic_results(self, p) -> None:
        while line := await p.stdout.readline():
            r = json.loads(line)
            fut = self.quic_pending.pop(r["uid"], None)
            if fut is not None and not fut.done():
                fut.set_result(r)

    async def quic_exchange(self, app: int, server: dict[str, Any], request: int, response: int,
                            label: dict[str, Any], server_iw: dict[str, Any] | None) -> bool:
        """One flow on the app's QUIC client endpoint, between the hosts' own addresses: the window
        is the endpoint's (the routes' initcwnd does not act on UDP), and a server socket bound to
        0.0.0.0 answers from the address its route picks, the host's own, which is where the
        client must have sent (an aioquic client drops datagrams from another address)."""
        a = self.apps[app]
        w_srv = iw_segments(server_iw or a["server_iw"], response)
        w_cli = iw_segments(a["client_iw"], request)
        uid = self.uid()
        flow = (self.g << 32) | self.seq
        rec: dict[str, Any] = {"type": "client", "transport": "quic", "host": self.host, "app": app, **label,
                               "server_host": server["host"], "request_bytes": request, "response_bytes": response,
                               "iw_server": w_srv, "iw_client": w_cli, "uid": uid, "flow_no": flow, "delivered": 0,
                               "completed": False, "start": self.now()}
        fut = self.quic_pending[uid] = asyncio.get_running_loop().create_future()
        job = {"uid": uid, "flow": flow, "bind": own_addr(self.g), "dst": own_addr(server["g"]),
               "port": a["port"], "request": request, "response": response}
        try:
            p = self.quic_clients[app]
            p.stdin.write(json.dumps(job).encode() + b"\n")
            await p.stdin.drain()
            r = await fut
            for k in ("start", "handshake", "first_byte", "last_byte"):
                if r.get(k) is not None:
                    rec["syn_ack" if k == "handshake" else k] = r[k] - self.t0
            rec.update(delivered=r.get("delivered", 0), completed=bool(r.get("completed")),
                       quic={k: r.get(k) for k in ("pto", "datagrams", "bytes", "lost")})
            if r.get("error"):
                rec["error"] = r["error"]
        finally:
            self.quic_pending.pop(uid, None)
            rec["end"] = self.now()
            self.records.append(rec)
        return bool(rec["completed"])

    async def stop_quic_peers(self) -> None:
        for p in self.quic_peers:
            if p.returncode is None:
                p.terminate()
        for p in self.quic_peers:
            try:
                await asyncio.wait_for(p.wait(), 5)
            except asyncio.TimeoutError:
                p.kill()
                await p.wait()
        for log in self.quic_logs:
            if os.path.exists(log):
                with open(log) as f:
                    self.records += [json.loads(line) for line in f if line.strip()]

    async def run_schedule(self, flows: list[dict[str, Any]]) -> None:
        """Open-loop flows (short flows, Poisson flows) at their precomputed instants."""
        for f in flows:
            await self.sleep_until(f["t"])
            if self.now() >= self.stop_at:
                return
            label = {"app_id": f["app_id"], "app_kind": f["app_kind"], "role": "transfer"}
            if f.get("policy") is not None:
                label.update(server_policy=f["policy"], server_kind=f["iw"]["name"])
            self.spawn(self.exchange(f["app"], f["server"], f["request"], f["response"], label,
                                     server_iw=f.get("iw")))

    async def run_closed(self, x: dict[str, Any]) -> None:
        """A closed-loop short-flows client: one flow at a time, then the think time (from its
        completion or failure) before the next. The reference's (size, IW) sequence and think
        times first, while it has them; then its own draws."""
        rng = random.Random(x["seed"])
        picks = dists.mix_picks(len(x["combos"]), x["order"], rng)
        await self.sleep_until(x["start"])
        sequence, thinks = x.get("sequence") or [], x.get("thinks") or []
        done = 0
        while (x["flows"] is None or done < x["flows"]) and self.now() < self.stop_at:
            combo = sequence[done] if done < len(sequence) else x["combos"][next(picks)]
            label = {"app_id": x["app_id"], "app_kind": "short", "role": "transfer"}
            own = combo["policy"] == x["default"]  # the app's policy: the agent's (or its watcher's)
            if not own:
                label.update(server_policy=combo["policy"], server_kind=x["policies"][combo["policy"]]["name"])
            await self.exchange(x["app"], x["server"], x["request"], combo["response"], label,
                                server_iw=None if own else x["policies"][combo["policy"]])
            think = thinks[done] if done < len(thinks) else dists.sample(x["think"], rng)
            done += 1
            await asyncio.sleep(max(0.0, think))

    async def run_ftp(self, x: dict[str, Any]) -> None:
        rng = random.Random(x["seed"])
        await self.sleep_until(x["start"])
        done = 0
        label = {"app_id": x["app_id"], "app_kind": "ftp", "role": "transfer"}
        gaps = x.get("gaps") or []
        while x["transfers"] is None or done < x["transfers"]:
            done += 1
            await self.exchange(x["app"], x["server"], x["request"], x["size"], label)
            if done <= len(gaps):  # the simulator's gap
                await asyncio.sleep(max(0.0, gaps[done - 1]))
            elif x["gap"] is not None:
                await asyncio.sleep(max(0.0, dists.sample(x["gap"], rng)))

    async def run_bulk(self, x: dict[str, Any]) -> None:
        await self.sleep_until(x["start"])
        mode = "bulk-up" if x["upload"] else "bulk-down"
        label = {"app_id": x["app_id"], "app_kind": "bulk", "role": "upload" if x["upload"] else "download"}
        await self.exchange(x["app"], x["server"], 0, 0, label, mode=mode)

    async def run_web(self, x: dict[str, Any]) -> None:
        rng = random.Random(x["seed"])
        await self.sleep_until(x["start"])
        n = 0
        replay = x.get("replay") or []
        while x["pages"] is None or n < x["pages"]:
            n += 1
            think = None
            if n <= len(replay):  # the simulator's page and think time
                sizes, think = replay[n - 1]["sizes"], replay[n - 1]["think"]
                k = len(sizes) - 1
            else:  # draws in the simulator's order: primary, count, each embedded
                primary = dists.draw_bytes(x["primary"], rng, 1)
                k = dists.sample(x["embedded_count"], rng)
                k = 0 if not k >= 0 else min(int(round(k)), MAX_EMBEDDED)
                sizes = [primary] + [dists.draw_bytes(x["embedded"], rng, 1) for _ in range(k)]
            page = {"type": "page", "host": self.host, "server_host": x["server"]["host"], "app": x["app_id"],
                    "key": f"{self.host}/{x['app']}/{x['inst']}/{n}", "start": self.now(), "objects": 1 + k,
                    "bytes": sum(sizes), "end": None}
            try:
                if x["http"] == "1.0":
                    ok = await self.page_http10(x, page["key"], sizes)
                else:
                    ok = await self.page_http11(x, page["key"], sizes)
                if ok:
                    page["end"] = self.now()
            finally:
                self.records.append(page)
            await asyncio.sleep(max(0.0, think if think is not None else dists.sample(x["think"], rng)))

    async def page_http10(self, x: dict[str, Any], key: str, sizes: list[int]) -> bool:
        req = x["request"]
        label = {"app_id": x["app_id"], "app_kind": "web", "role": "primary", "page": key}
        ok = await self.exchange(x["app"], x["server"], req, sizes[0], label)
        if not ok:
            return False
        label = dict(label, role="embedded")
        res = await asyncio.gather(*(self.exchange(x["app"], x["server"], req, s, label) for s in sizes[1:]))
        return all(res)

    async def page_http11(self, x: dict[str, Any], key: str, sizes: list[int]) -> bool:
        req, k = x["request"], len(sizes) - 1
        asked = False

        async def on_data(sock: socket.socket, got: int) -> None:
            nonlocal asked
            if not asked and got >= sizes[0]:
                asked = True
                if k > 0:
                    await self.send_bytes(sock, req * k)

        label = {"app_id": x["app_id"], "app_kind": "web", "role": "page", "page": key}
        return await self.exchange(x["app"], x["server"], req * (1 + k), sum(sizes), label,
                                   mode="http11", sizes=sizes, first_write=req, on_data=on_data)

    # ---- UDP -----------------------------------------------------------------------------
    def udp_sink(self, port: int) -> socket.socket:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        s.bind(("0.0.0.0", port))
        s.setblocking(False)
        counts = self.udp_rx.setdefault(port, [0, 0])

        def readable() -> None:
            while True:
                try:
                    n = s.recv_into(UDP_BUF)
                except BlockingIOError:
                    return
                counts[0] += 1
                counts[1] += n

        asyncio.get_running_loop().add_reader(s.fileno(), readable)
        return s

    async def run_udp(self, x: dict[str, Any]) -> None:
        rng = random.Random(x["seed"])
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setblocking(False)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
        payload = bytes(x["payload"])
        gap = (x["payload"] + 28) * 8 / x["rate_bps"]
        stop = min(self.stop_at, x["stop"] if x["stop"] is not None else self.stop_at)
        t0, sent, errors, nxt = x["start"], 0, 0, x["start"]
        dst = (x["dst"], x["port"])
        try:
            await self.sleep_until(t0)
            while nxt < stop:
                while nxt <= self.now() and nxt < stop:
                    try:
                        s.sendto(payload, dst)
                        sent += 1
                    except OSError:
                        errors += 1
                    nxt = t0 + sent * gap if not x["poisson"] else nxt + rng.expovariate(1.0 / gap)
                await self.sleep_until(min(nxt, stop))
        finally:
            s.close()
            self.records.append({"type": "udp", "host": self.host, "app": x["app"], "sent": sent,
                                 "bytes": sent * x["payload"], "errors": errors})

    # ---- main ----------------------------------------------------------------------------
    async def main(self) -> None:
        loop = asyncio.get_running_loop()
        keep: list[socket.socket] = []
        self.port_app = {self.apps[app]["port"]: app for app in self.cfg["listen"]}
        for app in self.cfg["listen"]:
            if self.apps[app].get("quic"):
                continue
            ls = self.tcp_socket(app)
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind(("0.0.0.0", self.apps[app]["port"]))
            ls.listen(4096)
            keep.append(ls)
        for port in self.cfg["udp_sinks"]:
            keep.append(self.udp_sink(port))
        path = os.path.join(self.rundir, f"{self.host}.sock")
        server = await asyncio.start_unix_server(self.on_notice_conn, path)
        await self.start_quic_peers()
        print("ready", flush=True)
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line.startswith("go "):
            raise SystemExit(f"agent {self.host}: expected 'go T0', got {line!r}")
        self.t0 = float(line.split()[1])
        for ls in keep:
            if ls.type == socket.SOCK_STREAM:
                self.spawn(self.accept_loop(ls))
        if self.cfg["schedule"]:
            self.spawn(self.run_schedule(self.cfg["schedule"]))
        for x in self.cfg.get("closed", []):
            self.spawn(self.run_closed(x))
        for x in self.cfg["ftp"]:
            self.spawn(self.run_ftp(x))
        for x in self.cfg["bulk"]:
            self.spawn(self.run_bulk(x))
        for x in self.cfg["web"]:
            self.spawn(self.run_web(x))
        for x in self.cfg["udp"]:
            self.spawn(self.run_udp(x))
        await self.sleep_until(self.stop_at)
        for t in list(self.tasks):
            t.cancel()
        await asyncio.gather(*list(self.tasks), return_exceptions=True)
        await self.stop_quic_peers()
        server.close()
        for w in self.peers.values():
            w.close()
        for port, (pkts, nbytes) in self.udp_rx.items():
            self.records.append({"type": "udp-sink", "host": self.host, "port": port, "packets": pkts, "bytes": nbytes})
        for s in keep:
            s.close()
        out = os.path.join(self.rundir, f"{self.host}.jsonl")
        with open(out + ".tmp", "w") as f:
            for r in self.records:
                f.write(json.dumps(r) + "\n")
        os.replace(out + ".tmp", out)


UDP_BUF = bytearray(65536)


def main(argv: list[str]) -> int:
    with open(argv[1]) as f:
        cfg = json.load(f)
    asyncio.run(Agent(cfg).main())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
