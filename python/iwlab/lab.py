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
measures), `client` the host that probes it (`--netns client`, `--probe-netns client`). Where
the machine has a cgroup2 hierarchy (`iwlab.deploy.flow_iw.CGROUP_ROOT`), web's servers run in a
cgroup `web` below it (made when missing, and then removed by `down`): the service `--cgroup web`
names (`iwlab watch --source bpf`, `iwlab flow-iw attach`); never the root cgroup. `--quic` adds
an HTTP/3 server on web's UDP 443 (python/iwlab/lab_h3.py: aioquic as it comes, IW 12 000 B) for
`iwlab probe --quic`. The
addresses (private 10.0.1.0/24, RFC 1918; documentation 2001:db8::/32, RFC 3849) exist only
inside the two namespaces: nothing is connected to the root namespace, whose routes and sysctls
are never touched.

Built with the emulator's namespace helpers (`iwlab.emulate.topology`: `ip -batch` per
namespace, `remove_namespace` kills what runs inside before deleting it). `--name PREFIX` makes
`PREFIX-web` and `PREFIX-client` (and the cgroup `PREFIX-web`), so that several labs (e.g.
concurrent test runs) never meet.
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
QUIC_PORT = 443
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
    cgroup: str = ""  # the cgroup web's servers run in ("": no cgroup2 hierarchy here)
    cgroup_made: bool = False  # `up` made it, so `down` removes it
    quic_pid: int = 0  # the HTTP/3 server of `--quic` (0: none)

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
        return LabState(d["name"], dict(d["namespaces"]), int(d["server_pid"]), d["www"], d.get("cgroup", ""),
                        bool(d.get("cgroup_made", False)), int(d.get("quic_pid", 0)))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _ours(st: LabState | None, ns: str) -> bool:
    return st is not None and ns in st.namespaces and _inode(ns) == st.namespaces[ns]


def _listening(ns: str, port: int, proto: str = "tcp") -> bool:
    """A socket bound to `::` port `port` (dual-stack): TCP in LISTEN (0A), UDP unconnected (07)."""
    from iwlab.emulate.topology import ns_exec

    r = ns_exec(ns, "cat", f"/proc/net/{proto}6", check=False)
    return f":{port:04X} 00000000000000000000000000000000:0000 {'0A' if proto == 'tcp' else '07'}" in r.stdout


def _server_alive(pid: int) -> bool:
    from iwlab.workers import pid_alive

    for p in _STARTED:  # a server this process started and that died is reaped here, not seen as a zombie
        p.poll()
    return pid_alive(pid)


def is_up(st: LabState | None) -> bool:
    """Both namespaces are the ones `up` made, its server lives and listens (a killed server's
    socket can outlive it for a moment)."""
    return (st is not None and all(_ours(st, ns) for ns in st.namespaces) and _server_alive(st.server_pid)
            and _listening(st.web, HTTP_PORT)
            and (not st.quic_pid or (_server_alive(st.quic_pid) and _listening(st.web, QUIC_PORT, "udp"))))


def _serve(web: str, argv: list[str], log: Path, cgroup: str, what: str, port: int, proto: str) -> int:
    """Starts a server in namespace `web` (and `cgroup`) and waits until it listens. Returns its pid."""
    with open(log, "ab") as f:
        p = subprocess.Popen(["ip", "netns", "exec", web, sys.executable, *argv], stdin=subprocess.DEVNULL,
                             stdout=f, stderr=f, start_new_session=True)
    _STARTED.append(p)
    if cgroup:
        (Path(cgroup) / "cgroup.procs").write_text(str(p.pid))
    deadline = time.monotonic() + 10
    while not _listening(web, port, proto):
        if p.poll() is not None or time.monotonic() > deadline:
            raise LabError(f"the {what} in {web} did not start: see {log}")
        time.sleep(0.05)
    return p.pid


def _quic(st: LabState) -> int:
    return _serve(st.web, ["-m", "iwlab.lab_h3", "--port", str(QUIC_PORT), "--directory", st.www],
                  state_dir(st.name) / "quic.log", st.cgroup, "HTTP/3 server", QUIC_PORT, "udp")


def _save(st: LabState) -> None:
    (state_dir(st.name) / "lab.json").write_text(json.dumps(asdict(st), indent=1) + "\n")


def up(prefix: str = "", quic: bool = False) -> tuple[LabState, bool]:
    """Makes the lab (or finds it made), with the HTTP/3 server when `quic`. Returns (its state,
    whether this call made or changed it)."""
    from iwlab.emulate.topology import TopologyError, ip_batch, remove_namespace, run

    check_name(prefix)
    if os.geteuid() != 0:
        raise LabError("needs root (network namespaces)")
    st = load(prefix)
    if is_up(st):
        if not quic or st.quic_pid:
            return st, False
        st.quic_pid = _quic(st)  # a lab made without --quic: the server added
        _save(st)
        return st, True
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
    cgroup, cgroup_new = _cgroup_dir(namespace_name(prefix, WEB.role)), False
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
        if cgroup and not Path(cgroup).is_dir():
            Path(cgroup).mkdir()
            cgroup_new = True
        cgroup_made = cgroup_new or (st is not None and st.cgroup_made and st.cgroup == cgroup)  # ours, made again
        # http.server binds `::` dual-stack (its DualStackServer): one server for both families.
        pid = _serve(web, ["-m", "http.server", str(HTTP_PORT), "--bind", "::", "--directory", str(www)],
                     d / "server.log", cgroup, "HTTP server", HTTP_PORT, "tcp")
        st = LabState(prefix, {ns: _inode(ns) for ns in names}, pid, str(www), cgroup, cgroup_made)
        if quic:
            st.quic_pid = _quic(st)
        _save(st)
        return st, True
    except BaseException as e:
        for ns in reversed(made):
            remove_namespace(ns)
        if cgroup_new:
            _remove_cgroup(Path(cgroup))
        if isinstance(e, (TopologyError, OSError)):
            raise LabError(str(e)) from e
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
    if st is not None and st.cgroup_made:
        _remove_cgroup(Path(st.cgroup))
    d = state_dir(prefix)
    for f in ("lab.json", "server.log", "quic.log", "www/big.bin"):
        (d / f).unlink(missing_ok=True)
    for sub in (d / "www", d):
        try:
            sub.rmdir()
        except OSError:
            pass
    return removed


def _cgroup_dir(name: str) -> str:
    """The cgroup NAME for web's servers below the cgroup2 hierarchy ("" when there is none)."""
    from iwlab.deploy.flow_iw import CGROUP_ROOT

    return str(CGROUP_ROOT / name) if (CGROUP_ROOT / "cgroup.procs").is_file() else ""


def _remove_cgroup(cg: Path) -> None:
    """rmdir of a cgroup `up` made; its processes ran in web's namespace and are gone with it
    (a process that was killed leaves the cgroup when it has exited: a moment)."""
    deadline = time.monotonic() + 2
    while cg.is_dir():
        try:
            cg.rmdir()
        except OSError as e:
            if time.monotonic() > deadline:
                procs = (cg / "cgroup.procs").read_text().split()
                raise LabError(f"cgroup {cg} not removed ({e.strerror}): processes {', '.join(procs) or 'none'} "
                               "still in it") from None
            time.sleep(0.05)


def describe(st: LabState) -> str:
    web, client = st.namespaces
    cg = f", servers in cgroup {st.cgroup}" if st.cgroup else ""
    quic = f"; HTTP/3 on UDP {QUIC_PORT} (aioquic, IW 12000 B)" if st.quic_pid else ""
    return (f"{web}: {WEB.v4}/24 {WEB.v6}/64, http://{WEB.v4}/big.bin ({BIG_BYTES} B, port {HTTP_PORT}, "
            f"also [{WEB.v6}]{quic}{cg})\n{client}: {CLIENT.v4}/24 {CLIENT.v6}/64")
