"""`iwlab lab up` / `iwlab lab down`: the two hosts the documents' root examples talk to.

```
 namespace `web`                                namespace `client`
 ┌────────────────────────────────┐  veth       ┌────────────────────────┐
 │ eth0 10.0.1.1/24  2001:db8::1  ├─────────────┤ eth0 10.0.1.2/24       │
 │ HTTP :80 (/big.bin, 1 MiB)     │             │      2001:db8::2       │
 │ default via 10.0.1.2           │             │                        │
 └────────────────────────────────┘             └────────────────────────┘
```

`web` is the server host (`--netns web` of plan/apply/watch/rollback, the server the probe
measures), `client` the host that probes it (`--netns client`, `--probe-netns client`). The
addresses (private 10.0.1.0/24, RFC 1918; documentation 2001:db8::/32, RFC 3849) exist only
inside the two namespaces: nothing is connected to the root namespace, whose routes and sysctls
are never touched.

Built with the emulator's namespace helpers (`iwlab.emulate.topology`: `ip -batch` per
namespace, `remove_namespace` kills what runs inside before deleting it). `--name PREFIX` makes
`PREFIX-web` and `PREFIX-client`, so that several labs (e.g. concurrent test runs) never meet.
What a lab made is recorded in RUN_DIR/lab-NAME/lab.json with each namespace's inode, so `up` is
idempotent, `down` removes only what `up` made, and `up` refuses a namespace of the same name that
it did not make.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

RUN_DIR = Path(os.environ.get("IWLAB_RUN_DIR", "/run/iwlab"))
NETNS_DIR = Path("/run/netns")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
BIG_BYTES = 1 << 20  # larger than any IW the documents probe (64 × 1460 B = 93 kB)
HTTP_PORT = 80
# The servers this process started: kept (a Popen collected while its process runs warns) and
# reaped by `down` (a caller such as a test session outlives them).
_STARTED: list[subprocess.Popen] = []


class LabError(RuntimeError):
    """`usage`: bad input or a name taken by something else (exit 2); otherwise the kernel refused (exit 1)."""

    def __init__(self, message: str, usage: bool = False):
        super().__init__(message)
        self.usage = usage


@dataclass(frozen=True)
class Host:
    role: str  # "web" or "client"
    dev: str
    v4: str
    v6: str


WEB = Host("web", "eth0", "10.0.1.1", "2001:db8::1")
CLIENT = Host("client", "eth0", "10.0.1.2", "2001:db8::2")
HOSTS = (WEB, CLIENT)


@dataclass
class LabState:
    name: str
    namespaces: dict[str, int]  # namespace → inode of /run/netns/NAME when made
    server_pid: int
    www: str

    @property
    def web(self) -> str:
        return next(iter(self.namespaces))


def namespace_name(prefix: str, role: str) -> str:
    return f"{prefix}-{role}" if prefix else role


def check_name(prefix: str) -> None:
    if prefix and not NAME_RE.match(prefix):
        raise LabError(f"--name = {prefix!r}: a prefix of 1-32 letters, digits, '-' or '_' starting with a letter "
                       "or digit (namespaces PREFIX-web and PREFIX-client)", usage=True)


def state_dir(prefix: str) -> Path:
    return RUN_DIR / f"lab-{prefix or 'default'}"


def _inode(ns: str) -> int | None:
    try:
        return (NETNS_DIR / ns).stat().st_ino
    except OSError:
        return None


def load(prefix: str) -> LabState | None:
    try:
        d = json.loads((state_dir(prefix) / "lab.json").read_text())
        return LabState(d["name"], dict(d["namespaces"]), int(d["server_pid"]), d["www"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _ours(st: LabState | None, ns: str) -> bool:
    return st is not None and ns in st.namespaces and _inode(ns) == st.namespaces[ns]


def _listening(ns: str, port: int) -> bool:
    from iwlab.emulate.topology import ns_exec

    r = ns_exec(ns, "cat", "/proc/net/tcp6", check=False)
    return f":{port:04X} 00000000000000000000000000000000:0000 0A" in r.stdout


def _server_alive(pid: int) -> bool:
    from iwlab.workers import pid_alive

    for p in _STARTED:  # a server this process started and that died is reaped here, not seen as a zombie
        p.poll()
    return pid_alive(pid)


def is_up(st: LabState | None) -> bool:
    """Both namespaces are the ones `up` made, its server lives and listens (a killed server's
    socket can outlive it for a moment)."""
    return (st is not None and all(_ours(st, ns) for ns in st.namespaces) and _server_alive(st.server_pid)
            and _listening(st.web, HTTP_PORT))


def up(prefix: str = "") -> tuple[LabState, bool]:
    """Makes the lab (or finds it made). Returns (its state, whether this call made it)."""
    from iwlab.emulate.topology import TopologyError, ip_batch, remove_namespace, run

    check_name(prefix)
    if os.geteuid() != 0:
        raise LabError("needs root (network namespaces)")
    st = load(prefix)
    if is_up(st):
        return st, False
    names = [namespace_name(prefix, h.role) for h in HOSTS]
    taken = [ns for ns in names if _inode(ns) is not None and not _ours(st, ns)]
    if taken:
        raise LabError(f"namespace {taken[0]!r} exists and was not made by `iwlab lab up"
                       f"{' --name ' + prefix if prefix else ''}`: remove it (ip netns del {taken[0]}) or choose "
                       "another --name", usage=True)
    for ns in names:  # a half-made lab of ours (a server that died, a namespace deleted by hand)
        if _ours(st, ns):
            remove_namespace(ns)
    d = state_dir(prefix)
    d.mkdir(parents=True, exist_ok=True)
    made: list[str] = []
    try:
        for ns in names:
            run(["ip", "netns", "add", ns])
            made.append(ns)
        web, client = names
        ip_batch(web, ["link set lo up", f"link add {WEB.dev} type veth peer name {CLIENT.dev} netns {client}"])
        for ns, h in ((web, WEB), (client, CLIENT)):
            ip_batch(ns, ["link set lo up", f"addr add {h.v4}/24 dev {h.dev}", f"addr add {h.v6}/64 dev {h.dev} nodad",
                          f"link set {h.dev} up"])
        # A default route, so that `iwlab apply` of a prefix beyond the lab's network (the
        # documents' 203.0.113.0/24) finds the covering route it creates its route through.
        ip_batch(web, [f"route add default via {CLIENT.v4} dev {WEB.dev}"])
        www = d / "www"
        www.mkdir(exist_ok=True)
        big = www / "big.bin"
        if not big.is_file() or big.stat().st_size != BIG_BYTES:
            big.write_bytes(os.urandom(BIG_BYTES))
        log = open(d / "server.log", "ab")
        # http.server binds `::` dual-stack (its DualStackServer): one server for both families.
        server = subprocess.Popen(["ip", "netns", "exec", web, sys.executable, "-m", "http.server", str(HTTP_PORT),
                                   "--bind", "::", "--directory", str(www)],
                                  stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        log.close()
        _STARTED.append(server)
        deadline = time.monotonic() + 10
        while not _listening(web, HTTP_PORT):
            if server.poll() is not None or time.monotonic() > deadline:
                raise LabError(f"the HTTP server in {web} did not start: see {d / 'server.log'}")
            time.sleep(0.05)
        st = LabState(prefix, {ns: _inode(ns) for ns in names}, server.pid, str(www))
        (d / "lab.json").write_text(json.dumps(asdict(st), indent=1) + "\n")
        return st, True
    except (TopologyError, OSError) as e:
        for ns in reversed(made):
            remove_namespace(ns)
        raise LabError(str(e)) from e
    except BaseException:
        for ns in reversed(made):
            remove_namespace(ns)
        raise


def down(prefix: str = "") -> list[str]:
    """Removes what `up` made (the namespaces, what runs in them, the state). Returns what it removed."""
    from iwlab.emulate.topology import remove_namespace

    check_name(prefix)
    if os.geteuid() != 0:
        raise LabError("needs root (network namespaces)")
    st = load(prefix)
    removed = []
    if st is not None:
        for ns in st.namespaces:
            if _ours(st, ns):  # a namespace of that name made since by someone else stays
                problems = remove_namespace(ns)
                if problems:
                    raise LabError("; ".join(problems))
                removed.append(ns)
    for p in list(_STARTED):
        if p.poll() is not None:
            _STARTED.remove(p)
    d = state_dir(prefix)
    for f in ("lab.json", "server.log", "www/big.bin"):
        (d / f).unlink(missing_ok=True)
    for sub in (d / "www", d):
        try:
            sub.rmdir()
        except OSError:
            pass
    return removed


def describe(st: LabState) -> str:
    web, client = st.namespaces
    return (f"{web}: {WEB.v4}/24 {WEB.v6}/64, http://{WEB.v4}/big.bin ({BIG_BYTES} B, port {HTTP_PORT}, "
            f"also [{WEB.v6}])\n{client}: {CLIENT.v4}/24 {CLIENT.v6}/64")
