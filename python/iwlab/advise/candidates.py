"""What the advisor chooses between: a registry of candidate kinds, each turning parameters into
an `[iw.policies]` entry (the same table a scenario and a policy file use), TCP fields it needs
(paced IW), and the IW in segments a connection starts with.

A new kind = one function registered with `@kind("name")` that yields `Candidate`s, each saying
how it deploys (`types.DEPLOY`).

>>> [c.name for c in expand(["fixed:3,10", "rfc6928", "paced:10"], mss=1448)]
['iw3', 'iw10', 'rfc6928', 'paced-iw10']
>>> expand(["bogus"], 1448)
Traceback (most recent call last):
...
ValueError: candidates: 'bogus' is not allowed; expected KIND[:ARGS] with KIND one of ['adaptive', 'fixed', 'paced', 'rfc3390', 'rfc6928', 'size-based']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from iwlab.advise.types import Candidate

__all__ = ["Candidate", "KINDS", "kind", "expand", "DEFAULT", "DEPLOYABLE", "BASELINE", "PACED_TCP"]


KINDS: dict[str, Callable[[str, int], Iterator[Candidate]]] = {}


def kind(name: str) -> Callable[[Callable[[str, int], Iterator[Candidate]]], Callable[[str, int], Iterator[Candidate]]]:
    def register(fn: Callable[[str, int], Iterator[Candidate]]) -> Callable[[str, int], Iterator[Candidate]]:
        KINDS[name] = fn
        return fn

    return register


def _ints(args: str, default: Sequence[int], what: str) -> list[int]:
    if not args:
        return list(default)
    out = []
    for part in args.split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    if not out or any(not 1 <= n <= 1000 for n in out):
        raise ValueError(f"{what}: {args!r}: segments must be 1…1000")
    return out


FIXED_DEFAULT = (1, 2, 3, 4, 7, 10, 16, 24, 32, 46, 64)


@kind("fixed")
def _fixed(args: str, mss: int) -> Iterator[Candidate]:
    """fixed[:N,M,A-B]: a constant IW of N segments (Linux `initcwnd N`)."""
    for n in _ints(args, FIXED_DEFAULT, "fixed"):
        yield Candidate(f"iw{n}", "fixed", {"kind": "fixed", "segments": n}, n)


@kind("rfc3390")
def _rfc3390(args: str, mss: int) -> Iterator[Candidate]:
    """RFC 3390: min(4·MSS, max(2·MSS, 4380 B))."""
    yield Candidate("rfc3390", "rfc3390", {"kind": "rfc3390"}, max(1, min(4 * mss, max(2 * mss, 4380)) // mss))


@kind("rfc6928")
def _rfc6928(args: str, mss: int) -> Iterator[Candidate]:
    """RFC 6928: min(10·MSS, max(2·MSS, 14600 B)); `rfc6928:fallback` adds the per-destination cache."""
    iw = max(1, min(10 * mss, max(2 * mss, 14600)) // mss)
    if args == "fallback":
        yield Candidate("rfc6928-fallback", "rfc6928-fallback", {"kind": "rfc6928-fallback", "expiry": "600s"}, iw,
                        deploy="watch")
    else:
        yield Candidate("rfc6928", "rfc6928", {"kind": "rfc6928"}, iw)


SIZE_THETAS = ("50kB", "200kB")
SIZE_VS = (10, 16, 32)


@kind("size-based")
def _size_based(args: str, mss: int) -> Iterator[Candidate]:
    """size-based[:THETA/V,…]: draft-you's IW(s) with θ and V searched (default θ ∈ {50 kB, 200 kB},
    V ∈ {10, 16, 32}, MinIW 4). The IW a connection of unknown size starts with is MinIW."""
    pairs = []
    if args:
        for part in args.split(","):
            theta, _, v = part.partition("/")
            pairs.append((theta.strip(), int(v)))
    else:
        pairs = [(t, v) for t in SIZE_THETAS for v in SIZE_VS]
    for theta, v in pairs:
        if not 1 <= v <= 1000:
            raise ValueError(f"size-based: V = {v} must be 1…1000")
        # A connection whose size is not declared starts with MinIW (what a route or the eBPF
        # default gives it, docs/deploy.md); declared sizes up to θ get V.
        yield Candidate(f"size-{theta}-v{v}", "size-based", {"kind": "size-based", "theta": theta, "v": v, "min_iw": 4},
                        4, deploy="flow-iw",
                        note="IW V for flows up to θ, falling to MinIW 4 for large flows and unknown sizes")


@kind("paced")
def _paced(args: str, mss: int) -> Iterator[Candidate]:
    """paced[:N,…]: IW N paced over the handshake RTT as `iwlab flow-iw` deploys it (default N ∈
    {10, 16, 32}): the sock_ops program caps SO_MAX_PACING_RATE at IW·MSS per handshake RTT and
    lifts the cap at the first RTT sample, after which Linux keeps pacing the socket internally
    (`tcp.pacing`); Linux's pacer leaves a connection's first 10 data segments unpaced
    (`tcp.pacer = "linux"`), so a paced IW 32 sends 10 back to back and paces 22."""
    for n in _ints(args, (10, 16, 32), "paced"):
        yield Candidate(f"paced-iw{n}", "paced", {"kind": "fixed", "segments": n}, n, dict(PACED_TCP),
                        deploy="paced", note="paced over the handshake RTT")


#: The `tcp` of a paced candidate: what a policy file's `[tcp] pacing/paced_iw = true` deploys
#: through `iwlab flow-iw` and simulates (`iwlab.policy.with_policy`).
PACED_TCP = {"pacing": True, "paced_iw": True, "pacer": "linux"}


# Adaptive policies: offered by `iwlab.adaptive.candidates` when the engine has them.
@kind("adaptive")
def _adaptive(args: str, mss: int) -> Iterator[Candidate]:
    """adaptive[:KIND,…]: the engine's adaptive IW policies, when this build has them."""
    from iwlab.adaptive.candidates import adaptive_candidates

    yield from adaptive_candidates(args, mss)


#: What iwlab deploys on a Linux host (`apply`, `flow-iw`, `watch`): the default set. The paced
#: first flight deploys through `iwlab flow-iw attach --policy` (the file's `[tcp]`).
DEFAULT = ("fixed", "rfc3390", "rfc6928", "size-based", "paced", "adaptive")
#: Deployment methods this iwlab can carry out (types.DEPLOY).
DEPLOYABLE = frozenset({"route", "flow-iw", "paced", "watch"})
BASELINE = "iw3"


def expand(specs: Sequence[str], mss: int) -> list[Candidate]:
    """`KIND[:ARGS]` strings → candidates (duplicates by name dropped, first kept)."""
    out: dict[str, Candidate] = {}
    for spec in specs:
        k, _, args = str(spec).strip().partition(":")
        fn = KINDS.get(k)
        if fn is None:
            raise ValueError(f"candidates: {spec!r} is not allowed; expected KIND[:ARGS] with KIND one of {sorted(KINDS)}")
        try:
            for c in fn(args.strip(), mss):
                out.setdefault(c.name, c)
        except ValueError as e:
            if str(e).startswith(k):
                raise ValueError(f"candidates: {e}") from None
            raise ValueError(f"candidates: {spec!r} has bad arguments ({e})") from None
    return list(out.values())
