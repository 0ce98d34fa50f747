"""A client and a server that exchange sized flows, each with the initial window the policy
gives its size (draft-you's IW(s)): the example of docs/deploy.md "Per-flow IW (eBPF)".

    # server: responses get IW(size) through the eBPF programs of its cgroup
    iwlab flow-iw attach --cgroup web --policy policy.toml
    iwlab flow-iw exec --cgroup web -- python -m iwlab.deploy.examples.sized server \\
        --listen 0.0.0.0:8080 --policy policy.toml
    # client: asks for sized responses; or uploads, with its own IW(size) (--via bpf | mark)
    python -m iwlab.deploy.examples.sized client --connect 10.0.0.1:8080 --get 18000,40000,200000
    python -m iwlab.deploy.examples.sized client --connect 10.0.0.1:8080 --put 200000 --via mark --policy policy.toml

Protocol, one exchange per connection: `GET <bytes>[ undeclared]\\n` → the server sets the
IW for <bytes> (not with `undeclared`: the cgroup's default applies) and sends <bytes> bytes;
`PUT <bytes>\\n<bytes bytes>` → the server answers `OK\\n`. Each side prints one JSON line per
exchange. Standard library and iwlab.deploy only.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import time

from iwlab.deploy.flow_iw_app import FlowSizePolicy, set_flow_size

CHUNK = 1 << 16


def _addr(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host.strip("[]"), int(port)


def _line(conn: socket.socket) -> bytes:
    buf = b""
    while not buf.endswith(b"\n"):
        b = conn.recv(1)
        if not b:
            break
        buf += b
    return buf


def _recv_exact(conn: socket.socket, n: int) -> int:
    got = 0
    while got < n:
        b = conn.recv(min(CHUNK, n - got))
        if not b:
            break
        got += len(b)
    return got


def serve_one(conn: socket.socket, policy: FlowSizePolicy | None, out, lock: threading.Lock) -> None:
    with conn:
        req = _line(conn).decode().split()
        rec: dict = {"peer": conn.getpeername()[0], "op": req[0] if req else None, "iw": None, "error": None}
        try:
            if req[:1] == ["GET"]:
                size = rec["size"] = int(req[1])
                if policy is not None and "undeclared" not in req[2:]:
                    try:
                        rec["iw"] = set_flow_size(conn, size, policy)
                    except OSError as e:  # no per-flow IW here: send with the default one
                        rec["error"] = str(e)
                conn.sendall(b"x" * size)
            elif req[:1] == ["PUT"]:
                rec["size"] = _recv_exact(conn, int(req[1]))
                conn.sendall(b"OK\n")
            else:
                rec["error"] = f"bad request {req!r}"
        except OSError as e:
            rec["error"] = rec["error"] or str(e)
        with lock:
            out.write(json.dumps(rec) + "\n")
            out.flush()


def server(listen: str, policy: FlowSizePolicy | None, count: int | None, ready=None) -> None:
    host, port = _addr(listen)
    lst = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET,
                               backlog=64, reuse_port=False)
    lock, threads = threading.Lock(), []
    if ready:
        ready.write(json.dumps({"listening": lst.getsockname()[:2]}) + "\n")
        ready.flush()
    with lst:
        n = 0
        while count is None or n < count:
            conn, _ = lst.accept()
            t = threading.Thread(target=serve_one, args=(conn, policy, sys.stdout, lock), daemon=True)
            t.start()
            threads.append(t)
            n += 1
    for t in threads:
        t.join()


def _client_socket(size: int, via: str, policy: FlowSizePolicy | None, server: tuple[str, int]):
    """A connected socket whose IW is the policy's IW(size): set after connect (bpf) or chosen
    by the route its mark selects (mark: before connect; the route's initcwnd)."""
    fam = socket.AF_INET6 if ":" in server[0] else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    iw = None
    if via == "mark":
        from iwlab.deploy.flow_iw_marks import set_mark_for

        iw = set_mark_for(s, size, policy, server[0])
    s.connect(server)
    if via == "bpf":
        iw = set_flow_size(s, size, policy)
    return s, iw


def client(server: tuple[str, int], gets: list[int], puts: list[int], via: str, policy: FlowSizePolicy | None,
           undeclared: bool) -> None:
    for op, size in [("GET", n) for n in gets] + [("PUT", n) for n in puts]:
        t0 = time.monotonic()
        if op == "GET":
            s, iw = socket.create_connection(server), None
            s.sendall(f"GET {size}{' undeclared' if undeclared else ''}\n".encode())
            got = _recv_exact(s, size)
        else:
            s, iw = _client_socket(size, via, policy, server) if via != "none" else (socket.create_connection(server), None)
            s.sendall(f"PUT {size}\n".encode() + b"y" * size)
            got = len(_line(s))
        s.close()
        print(json.dumps({"op": op, "size": size, "received": got, "iw": iw, "seconds": time.monotonic() - t0}),
              flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m iwlab.deploy.examples.sized", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="role", required=True)
    s = sub.add_parser("server")
    s.add_argument("--listen", required=True, help="ADDR:PORT (port 0: any; printed on stderr)")
    s.add_argument("--policy", help="policy file: responses get IW(size); without it, no hint is set")
    s.add_argument("--count", type=int, help="exit after this many connections")
    c = sub.add_parser("client")
    c.add_argument("--connect", required=True, help="ADDR:PORT of the server")
    c.add_argument("--get", default="", help="comma-separated response sizes (bytes)")
    c.add_argument("--put", default="", help="comma-separated upload sizes (bytes)")
    c.add_argument("--undeclared", action="store_true", help="ask the server not to declare response sizes")
    c.add_argument("--via", choices=["bpf", "mark", "none"], default="none",
                   help="how an upload gets its IW(size): eBPF hint, route mark, or not at all")
    c.add_argument("--policy", help="policy file (for --via bpf | mark)")
    a = ap.parse_args(argv)
    policy = FlowSizePolicy(a.policy) if a.policy else None
    if a.role == "server":
        server(a.listen, policy, a.count, ready=sys.stderr)
    else:
        if a.via != "none" and policy is None:
            ap.error("--via bpf|mark needs --policy")
        sizes = lambda t: [int(x) for x in t.split(",") if x]  # noqa: E731
        client(_addr(a.connect), sizes(a.get), sizes(a.put), a.via, policy, a.undeclared)


if __name__ == "__main__":
    main()
