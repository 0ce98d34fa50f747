"""The pydantic models of the scenario format, GENERATED from the core's JSON Schema by
scripts/scenario_codegen.py (datamodel-code-generator): do not edit; change the serde structs
of crates/iwlab-core/src/scenario and rerun the script. `ScenarioModel` is a whole scenario file;
validation is the core's (`iwlab.scenario.Scenario.from_data`), these give typed access
(`Scenario.model`) and let Python build scenarios."""

from __future__ import annotations

from typing import Annotated, Literal

from iwlab.scenario_base import ScenarioBase
from pydantic import ConfigDict, Field, RootModel


class ReplayArrivals(ScenarioBase):
    """
    Flows at the start times of a CSV file (columns `start` in seconds from the run's
    start, `response` in bytes, optional `server_iw` and `request`); `file` is relative
    to the scenario file.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    file: str
    kind: Literal["replay"] = "replay"


class Bytes1(RootModel[str]):
    root: Annotated[
        str,
        Field(
            pattern="^\\s*\\+?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*(B|byte|bytes|kB|KB|MB|GB|KiB|MiB|GiB)?\\s*$"
        ),
    ]
    """
    A size such as "1MB" (B, kB, MB, GB (SI: 10^3) or KiB, MiB, GiB (2^10)); a bare number is bytes.
    """


class Bytes2(RootModel[float]):
    root: Annotated[float, Field(ge=0.0)]
    """
    A size such as "1MB" (B, kB, MB, GB (SI: 10^3) or KiB, MiB, GiB (2^10)); a bare number is bytes.
    """


class CubicSpec(ScenarioBase):
    """
    CUBIC parameters (RFC 9438); absent ones take [`crate::tcp::cc::CubicConfig::default`].
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    arithmetic: str | None = None
    """
    How the curve is computed: "rfc9438" (real numbers, default) or "linux" (tcp_cubic.c's
    integer arithmetic).
    """
    beta: float | None = None
    """
    β_cubic, 0 < β < 1 (default 0.7).
    """
    c: float | None = None
    """
    C, segments/s³, > 0 (default 0.4).
    """
    fast_convergence: bool | None = None
    """
    Fast convergence (default true).
    """
    reno_friendly: bool | None = None
    """
    Reno-friendly region (default true).
    """
    ssthresh_from: str | None = None
    """
    What β multiplies at a congestion event: "flight-size" (RFC 9438, default) or "cwnd".
    """


class Constant(ScenarioBase):
    """
    Always `value`.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    cap: float | None = None
    kind: Literal["constant"] = "constant"
    min: float | None = None
    unit: str | None = None
    value: float


class Uniform(ScenarioBase):
    """
    Uniform on [`lo`, `hi`] (`hi` ≥ `lo` ≥ 0).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    cap: float | None = None
    hi: float
    kind: Literal["uniform"] = "uniform"
    lo: float
    min: float | None = None
    unit: str | None = None


class Exponential(ScenarioBase):
    """
    Exponential with mean `mean` (> 0).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    cap: float | None = None
    kind: Literal["exponential"] = "exponential"
    mean: float
    min: float | None = None
    unit: str | None = None


class Pareto(ScenarioBase):
    """
    Pareto type I: P(X > x) = (scale/x)^shape, x ≥ scale (shape, scale > 0).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    cap: float | None = None
    kind: Literal["pareto"] = "pareto"
    min: float | None = None
    scale: float
    shape: float
    unit: str | None = None


class Lomax(ScenarioBase):
    """
    Pareto type II (Lomax): P(X > x) = (1 + x/scale)^−shape, x ≥ 0.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    cap: float | None = None
    kind: Literal["lomax"] = "lomax"
    min: float | None = None
    scale: float
    shape: float
    unit: str | None = None


class Lognormal(ScenarioBase):
    """
    Lognormal, given either by `mu` and `sigma` (ln X ~ Normal(mu, sigma)) or by `mean`
    and `median` (mean > median > 0); exactly one of the two pairs.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    cap: float | None = None
    kind: Literal["lognormal"] = "lognormal"
    mean: float | None = None
    median: float | None = None
    min: float | None = None
    mu: float | None = None
    sigma: float | None = None
    unit: str | None = None


class Weibull(ScenarioBase):
    """
    Weibull: P(X > x) = exp(−(x/scale)^shape).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    cap: float | None = None
    kind: Literal["weibull"] = "weibull"
    min: float | None = None
    scale: float
    shape: float
    unit: str | None = None


class Point(RootModel[list[float]]):
    root: Annotated[list[float], Field(max_length=2, min_length=2)]


class Empirical(ScenarioBase):
    """
    Piecewise-linear empirical CDF from exactly one source: `points` (`[[value, cdf], …]`,
    values strictly increasing, cdf non-decreasing, ending at 1), `csv` (text,
    `value,cdf` per line), `file` (a CSV file; relative paths are relative to the
    scenario file) or `builtin` (`"websearch"`, `"datamining"`: flow sizes in bytes).
    `unit` may only be used with `points`.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    builtin: str | None = None
    cap: float | None = None
    csv: str | None = None
    file: str | None = None
    kind: Literal["empirical"] = "empirical"
    min: float | None = None
    points: list[Point] | None = None
    unit: str | None = None


class Duration1(RootModel[str]):
    root: Annotated[
        str,
        Field(
            pattern="^\\s*\\+?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*(ns|us|µs|ms|s|min)?\\s*$"
        ),
    ]
    """
    A duration such as "50ms" (ns, us, ms, s, min); a bare number is seconds.
    """


class Duration2(RootModel[float]):
    root: Annotated[float, Field(ge=0.0)]
    """
    A duration such as "50ms" (ns, us, ms, s, min); a bare number is seconds.
    """


class FixedOrDistUint321(RootModel[int]):
    root: Annotated[int, Field(ge=0)]
    """
    A fixed value, or a distribution table with a `kind`, drawn from.
    """


class FixedIw(ScenarioBase):
    """
    A fixed number of segments, ≥ 1 (Linux `initcwnd N`; RFC 2415's IW 1..4).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["fixed"] = "fixed"
    segments: Annotated[int, Field(ge=0)]


class Rfc3390Iw(ScenarioBase):
    """
    RFC 3390: min(4·MSS, max(2·MSS, 4380)) bytes.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["rfc3390"] = "rfc3390"


class Rfc6928Iw(ScenarioBase):
    """
    RFC 6928: min(10·MSS, max(2·MSS, 14600)) bytes.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["rfc6928"] = "rfc6928"


class Rfc6928FallbackIw(ScenarioBase):
    """
    RFC 6928 with a per-destination cache of loss evidence on the sending host: cached
    destinations get the RFC 3390 IW until `expiry` (> 0) has passed [3600 s, Linux's
    tcp_metrics lifetime].
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    expiry: Annotated[Duration1 | Duration2 | None, Field(validate_default=True)] = (
        "3600s"
    )
    """
    A duration such as "50ms" (ns, us, ms, s, min); a bare number is seconds.
    """
    kind: Literal["rfc6928-fallback"] = "rfc6928-fallback"
    max_entries: Annotated[int | None, Field(ge=0)] = None
    """
    Destinations the cache holds, ≥ 1 [16 384]; a full cache drops expired entries,
    then the one expiring soonest.
    """


class SizeBasedIw(ScenarioBase):
    """
    IW(s) = V if s ≤ θ, else ⌊(θ/s)·V + (1 − θ/s)·MinIW⌋ segments (You et al.; Barik &
    Divakaran), s = the size the application declares for the connection.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["size-based"] = "size-based"
    min_iw: Annotated[int | None, Field(ge=0)] = 4
    """
    MinIW, segments, ≥ 1 (default 4).
    """
    theta: Annotated[Bytes1 | Bytes2 | None, Field(validate_default=True)] = "200kB"
    """
    θ, bytes, > 0 (default 200 kB = 200 000 B).
    """
    v: Annotated[int | None, Field(ge=0)] = 10
    """
    V, segments, ≥ 1 (default 10).
    """


class AimdIw(ScenarioBase):
    """
    Per-destination AIMD on the IW (segments; tcp/iw/aimd.rs): starts at `initial`,
    + `step` after `raise_after` consecutive clean connections, halved on RFC 6928 §4
    evidence (loss in the IW after > 4 KB), within [`min`, `max`].
    1 ≤ min ≤ initial ≤ max; step, raise_after ≥ 1 [10, 3, 40, 1, 8].
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    initial: Annotated[int | None, Field(ge=0)] = 10
    kind: Literal["aimd"] = "aimd"
    max: Annotated[int | None, Field(ge=0)] = 40
    min: Annotated[int | None, Field(ge=0)] = 3
    raise_after: Annotated[int | None, Field(ge=0)] = 8
    step: Annotated[int | None, Field(ge=0)] = 1


class LearnedIw(ScenarioBase):
    """
    Per-destination IW learned from the last `samples` connections' min(cwnd at close,
    bytes acked): their `percentile` (nearest rank), ⌊/MSS⌋ segments, clamped to [`min`,
    `max`]; `initial` before any (tcp/iw/learned.rs).
    1 ≤ min ≤ initial ≤ max; samples ≥ 1; 1 ≤ percentile ≤ 100 [10, 3, 40, 8, 50].
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    initial: Annotated[int | None, Field(ge=0)] = 10
    kind: Literal["learned"] = "learned"
    max: Annotated[int | None, Field(ge=0)] = 40
    min: Annotated[int | None, Field(ge=0)] = 3
    percentile: Annotated[int | None, Field(ge=0)] = 50
    samples: Annotated[int | None, Field(ge=0)] = 8


class RandomLoss(ScenarioBase):
    """
    Every packet is dropped with probability `p` (0 ≤ p < 1), independently, from the
    link's own random stream.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    direction: Literal["both", "forward", "reverse"] | None = "both"
    """
    Which bottleneck directions: `"both"` (default), `"forward"` (L → R), `"reverse"`.
    """
    kind: Literal["random"] = "random"
    p: float


class QueueLimit1(RootModel[str]):
    root: Annotated[
        str,
        Field(
            pattern="^\\s*\\+?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*(pkt|pkts|packet|packets|p|B|byte|bytes|kB|KB|MB|GB|KiB|MiB|GiB)?\\s*$"
        ),
    ]
    """
    A queue limit in packets ("25pkt") or bytes ("64kB"; B, kB, MB, GB (SI: 10^3) or KiB, MiB, GiB (2^10)); a bare number is packets.
    """


class QueueLimit2(RootModel[float]):
    root: Annotated[float, Field(ge=0.0)]
    """
    A queue limit in packets ("25pkt") or bytes ("64kB"; B, kB, MB, GB (SI: 10^3) or KiB, MiB, GiB (2^10)); a bare number is packets.
    """


class DropTail(ScenarioBase):
    """
    First in, first out; arrivals beyond `limit` are dropped.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["drop-tail"] = "drop-tail"
    limit: QueueLimit1 | QueueLimit2
    """
    `"25pkt"` or bytes (`"64kB"`), > 0.
    """


class Red(ScenarioBase):
    """
    RED (Floyd & Jacobson 1993), see [`crate::net::queue::red`].
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    byte_mode: bool | None = None
    """
    Byte mode (default false).
    """
    ecn: bool | None = None
    """
    Mark ECT packets instead of dropping (default false).
    """
    gentle: bool | None = None
    """
    Gentle RED (default true).
    """
    kind: Literal["red"] = "red"
    limit: QueueLimit1 | QueueLimit2 | None = None
    """
    Hard limit (default 25 packets).
    """
    max_p: float | None = None
    """
    Drop probability at max_th (default 0.1; 0..=1).
    """
    max_th: float | None = None
    mean_pkt_size: Bytes1 | Bytes2 | None = None
    """
    Mean packet size (default 1000 B; > 0).
    """
    min_th: float | None = None
    """
    Average-queue thresholds, packets (default 5 and 15; 0 ≤ min_th ≤ max_th).
    """
    w_q: float | None = None
    """
    EWMA weight (default 0.002; 0..=1).
    """


class Codel(ScenarioBase):
    """
    CoDel (RFC 8289), see [`crate::net::queue::codel`].
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    ecn: bool | None = None
    """
    Mark ECT packets instead of dropping (default false).
    """
    interval: Duration1 | Duration2 | None = None
    """
    INTERVAL (default 100 ms; > 0).
    """
    kind: Literal["codel"] = "codel"
    limit: QueueLimit1 | QueueLimit2 | None = None
    """
    Hard limit (default 1000 packets).
    """
    mtu: Bytes1 | Bytes2 | None = None
    """
    maxpacket (default 1514 B).
    """
    target: Duration1 | Duration2 | None = None
    """
    TARGET (default 5 ms; > 0, < interval).
    """


class QuicWindow1(RootModel[int]):
    root: Annotated[int, Field(ge=0)]
    """
    Bytes ("14720", "12kB") or datagrams of max_datagram_size ("10pkt").
    """


class QuicWindow2(RootModel[str]):
    root: Annotated[
        str, Field(pattern="^\\s*[0-9]+\\s*(pkt|pkts|packets|datagrams)\\s*$")
    ]
    """
    Bytes ("14720", "12kB") or datagrams of max_datagram_size ("10pkt").
    """


class Rate1(RootModel[str]):
    root: Annotated[
        str,
        Field(
            pattern="^\\s*\\+?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*([bB][pP][sS]|[bB]\\/[sS]|[kK][bB][pP][sS]|[kK][bB]\\/[sS]|[mM][bB][pP][sS]|[mM][bB]\\/[sS]|[gG][bB][pP][sS]|[gG][bB]\\/[sS])?\\s*$"
        ),
    ]
    """
    A rate such as "1.5Mbps" (bps, kbps, Mbps, Gbps (SI, case-insensitive; also b/s, kb/s, Mb/s, Gb/s)); a bare number is bits/s.
    """


class Rate2(RootModel[float]):
    root: Annotated[float, Field(ge=0.0)]
    """
    A rate such as "1.5Mbps" (bps, kbps, Mbps, Gbps (SI, case-insensitive; also b/s, kb/s, Mb/s, Gb/s)); a bare number is bits/s.
    """


class RateOrShare1(RootModel[str]):
    root: Annotated[
        str,
        Field(
            pattern="^\\s*\\+?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*([bB][pP][sS]|[bB]\\/[sS]|[kK][bB][pP][sS]|[kK][bB]\\/[sS]|[mM][bB][pP][sS]|[mM][bB]\\/[sS]|[gG][bB][pP][sS]|[gG][bB]\\/[sS]|\\%)?\\s*$"
        ),
    ]
    """
    A rate such as "600kbps" (bps, kbps, Mbps, Gbps (SI, case-insensitive; also b/s, kb/s, Mb/s, Gb/s); a bare number is bits/s) or a share of the bottleneck such as "60%".
    """


class RateOrShare2(RootModel[float]):
    root: Annotated[float, Field(ge=0.0)]
    """
    A rate such as "600kbps" (bps, kbps, Mbps, Gbps (SI, case-insensitive; also b/s, kb/s, Mb/s, Gb/s); a bare number is bits/s) or a share of the bottleneck such as "60%".
    """


class RouteSpec(ScenarioBase):
    """
    A route of the file, as written.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    congctl: str | None = None
    initrwnd: Annotated[int | None, Field(ge=0)] = None
    policy: str
    prefix: str


class Share(RootModel[str]):
    root: Annotated[
        str,
        Field(
            pattern="^\\s*\\+?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*(\\%)\\s*$"
        ),
    ]
    """
    A share of the bottleneck such as "10%" (bare numbers are refused: 10 and 0.1 would be confused).
    """


class Size1(RootModel[str]):
    root: Annotated[
        str,
        Field(
            pattern="^\\s*\\+?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*(B|byte|bytes|kB|KB|MB|GB|KiB|MiB|GiB|seg|segs|segment|segments)?\\s*$"
        ),
    ]
    """
    A size in bytes (B, kB, MB, GB (SI: 10^3) or KiB, MiB, GiB (2^10)) or in segments of the endpoint's MSS ("11seg"); a bare number is bytes.
    """


class Size2(RootModel[float]):
    root: Annotated[float, Field(ge=0.0)]
    """
    A size in bytes (B, kB, MB, GB (SI: 10^3) or KiB, MiB, GiB (2^10)) or in segments of the endpoint's MSS ("11seg"); a bare number is bytes.
    """


class PeriodicArrivals(ScenarioBase):
    """
    One flow every `period` (> 0), the first at the instance's start.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["periodic"] = "periodic"
    period: Duration1 | Duration2
    """
    A duration such as "50ms" (ns, us, ms, s, min); a bare number is seconds.
    """


class PoissonArrivals(ScenarioBase):
    """
    A Poisson process: `rate` flows per second (> 0), or `load`, a share of the
    bottleneck (servers' side → clients' side): rate = load × bottleneck rate /
    (8 × mean response bytes over the mix), per instance. Exactly one of the two.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["poisson"] = "poisson"
    load: Share | None = None
    rate: float | None = None


class BurstsArrivals(ScenarioBase):
    """
    `flows` flows at once (≥ 1), the next burst `gap` after this burst's start (> 0 on
    average; an exponential gap makes Poisson bursts). The first burst at the start.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    flows: Annotated[int, Field(ge=0)]
    gap: (
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
    )
    """
    A fixed value, or a distribution table with a `kind`, drawn from.
    """
    kind: Literal["bursts"] = "bursts"


class ClosedLoopArrivals(ScenarioBase):
    """
    One flow at a time: the next starts `think` after the previous one completed (the
    client has the last byte of the response) or failed. The first at the start.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    kind: Literal["closed-loop"] = "closed-loop"
    think: (
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
    )
    """
    A fixed value, or a distribution table with a `kind`, drawn from.
    """


class DelayedAckTable(ScenarioBase):
    """
    Delayed ACKs on: an ACK at least every `segments` full segments, or after `timeout`.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    segments: Annotated[int | None, Field(ge=0)] = 2
    """
    Full segments per ACK, ≥ 1 (default 2).
    """
    timeout: Annotated[Duration1 | Duration2 | None, Field(validate_default=True)] = (
        "200ms"
    )
    """
    Longest delay of an ACK (default 200ms).
    """


class IwSection(ScenarioBase):
    """
    Initial-window policies. Each application names the policy of its servers and of its
    clients (`server_iw`, `client_iw`), falling back to `default`.

    **Instances**: one policy instance exists per (host, policy name) pair, created the first
    time an application on that host uses that name. Every connection a host sends on with
    that policy — across all applications and instances on the host — shares the instance,
    so a per-destination fallback cache (`rfc6928-fallback`) lives on the sending host, as
    RFC 6928 §4 describes. Two policies with the same parameters but different names are
    separate instances (use that to keep populations' caches apart).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    default: str | None = None
    """
    Policy used where an application names none. Required if some application does.
    """
    policies: Annotated[
        dict[
            str,
            FixedIw
            | Rfc3390Iw
            | Rfc6928Iw
            | Rfc6928FallbackIw
            | SizeBasedIw
            | AimdIw
            | LearnedIw,
        ]
        | None,
        Field(validate_default=True),
    ] = {}
    """
    Policies by name.
    """
    routes: list[RouteSpec] | None = None
    """
    Destination routes (`[[iw.routes]]`, what `iwlab run --policy FILE` adds): a sender's
    IW towards a host whose address (the emulator's, 198.18.0.0 + 4g + 2) a route covers is
    that route's policy (tcp/iw/routed.rs); other destinations use the application's.
    """


class LinkOverride(ScenarioBase):
    """
    Per-direction overrides of a link; each absent field keeps the other direction's value.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    delay: Duration1 | Duration2 | None = None
    queue: DropTail | Red | Codel | None = None
    rate: Rate1 | Rate2 | None = None


class MixSpec(ScenarioBase):
    """
    One (response size, server IW) combination of a `mix`.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    response: Size1 | Size2
    """
    Response bytes, ≥ 1 (`"9seg"`: 9 full segments of the server's MSS).
    """
    server_iw: str | None = None
    """
    IW policy name of the server for these flows (default: the app's `server_iw`).
    """


class AccessOverride(ScenarioBase):
    """
    Overrides of an access link's host → router direction.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    delay: (
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None
    ) = None
    queue: DropTail | Red | Codel | None = None
    rate: (
        Rate1
        | Rate2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None
    ) = None


class AccessSpec(ScenarioBase):
    """
    A host's access link. `rate` and `delay` are fixed, or a distribution drawn **per host**
    from the scenario seed (population experiments, the RFC 6928 study, docs/studies.md): the i-th host
    of the group gets the i-th draw of a stream owned by (group, field), so adding hosts never
    changes the earlier hosts' draws. Both directions get the same draw unless `up` overrides.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    delay: (
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
    )
    """
    One-way propagation delay, ≥ 0 (a distribution is in seconds unless `unit`).
    """
    queue: Annotated[DropTail | Red | Codel | None, Field(validate_default=True)] = {
        "kind": "drop-tail",
        "limit": "100pkt",
    }
    """
    Queue at each end of the link. Default drop-tail, 100 packets.
    """
    rate: (
        Rate1
        | Rate2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
    )
    """
    Rate, > 0; a distribution's draws (bits/s unless `unit`) are rounded to whole
    bits/s and must stay ≥ 1 bps (give a `min` for laws that reach 0).
    """
    up: AccessOverride | None = None
    """
    Overrides for the host → router direction (uploads, requests, ACKs of downloads);
    a distribution here is drawn separately.
    """


class BottleneckSpec(ScenarioBase):
    """
    The bottleneck: `rate`, `delay` and `queue` describe the forward direction (L → R) and,
    unless `reverse` overrides some of them, the reverse direction too.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    delay: Duration1 | Duration2
    """
    One-way propagation delay (`"50ms"`), ≥ 0.
    """
    loss: RandomLoss | None = None
    """
    Random loss on the bottleneck, before the queue.
    """
    queue: DropTail | Red | Codel
    """
    Queue discipline of the output port.
    """
    rate: Rate1 | Rate2
    """
    Rate, > 0 (`"1.5Mbps"`).
    """
    reverse: LinkOverride | None = None
    """
    Overrides for R → L; absent fields are copied from the forward direction.
    """


class HostGroup(ScenarioBase):
    """
    A group of `count` hosts on one side, each on its own access link.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    access: AccessSpec
    """
    The access link of every host of the group.
    """
    count: Annotated[int, Field(ge=0)]
    """
    Hosts in the group, ≥ 1 (at most 10 000 hosts in all groups together).
    """
    name: str
    """
    Unique across both sides; applications name it in `clients` / `servers`.
    """


class QuicSpec(ScenarioBase):
    """
    `[quic]` or an application's `quic`: absent fields take the profile's defaults.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    cc: str | None = None
    """
    Congestion controller: `"reno"`, `"cubic"` or `"bbr"` (default: the profile's).
    """
    certificate_chain: Size1 | Size2 | None = None
    """
    DER bytes of the server's certificate chain (default 4kB).
    """
    initial_window: QuicWindow1 | QuicWindow2 | Size1 | Size2 | None = None
    """
    Bytes or `"Npkt"` (N × max_datagram_size), ≥ 2 datagrams (default RFC 9002 §7.2:
    min(10 × size, max(14 720, 2 × size))).
    """
    max_datagram_size: Annotated[int | None, Field(ge=0)] = None
    """
    UDP payload bytes of every datagram, 1200..=65527 (default 1200; PMTU discovery off).
    """
    pacing: bool | None = None
    """
    Pacing (RFC 9002 §7.7). quinn-proto always paces; `false` is refused.
    """
    profile: str | None = None
    """
    Named stack defaults: `"quinn"` (quinn-proto 0.11 as shipped: CUBIC) or `"rfc9002"`
    (RFC 9002's NewReno); both: IW per RFC 9002 §7.2, 1 200-byte datagrams (default "quinn").
    """


class TcpSpec(ScenarioBase):
    """
    TCP options. Every field is optional: the scenario-level `[tcp]` fills in the engine's
    defaults ([`crate::tcp::config::TcpConfig::default`], given as "default …" below), and an
    application's `tcp` table overrides the scenario's, field by field. The same resolved
    options apply to both ends of the application's connections.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    abc_l: Annotated[int | None, Field(ge=0)] = None
    """
    RFC 3465 Appropriate Byte Counting limit L, segments; 0 = count ACKs, no ABC (default 0).
    """
    cc: str | None = None
    """
    Congestion control: `"reno"`, `"newreno"` (the same controller) or `"cubic"` (default "reno").
    """
    cubic: CubicSpec | None = None
    """
    CUBIC parameters, only with `cc = "cubic"`.
    """
    cwnd_growth: str | None = None
    """
    When an ACK grows cwnd: `"every-ack"` (RFC 5681; default) or `"cwnd-limited"` (Linux
    tcp_is_cwnd_limited: only while the flow fills its window; in slow start while
    cwnd < 2 * the segments out).
    """
    delayed_ack: bool | DelayedAckTable | None = None
    """
    `false` ACKs every segment; a table `{ segments = 2, timeout = "200ms" }` delays
    ACKs (RFC 5681 §4.2; segments ≥ 1, timeout > 0); `true` = that table (default true).
    """
    dsack: bool | None = None
    """
    D-SACK (RFC 2883, Linux net.ipv4.tcp_dsack = 1): the receiver reports duplicate
    segments in a first SACK block; the sender counts retransmissions so shown needless and
    widens RACK's reordering window (default false).
    """
    dupthresh: Annotated[int | None, Field(ge=0)] = None
    """
    Duplicate ACKs that trigger fast retransmit, ≥ 1 (default 3).
    """
    ecn: bool | None = None
    """
    RFC 3168 ECN (default false).
    """
    fin: str | None = None
    """
    How a close after a write sends the FIN: `"with-write"` (the FIN rides on the last data
    segment; a bare FIN ignores cwnd; default) or `"after-write"` (Linux tcp_send_fin: the
    write leaves first, the FIN joins the last segment only if it is unsent, else goes
    alone when cwnd has room).
    """
    frto: bool | None = None
    """
    F-RTO (RFC 5682 with SACK, Linux net.ipv4.tcp_frto = 2): after an RTO, an ACK of data
    never retransmitted shows the timeout was spurious and undoes it; the first ACK of the
    retransmission lets new data out instead of more retransmissions (default false).
    """
    granularity: Duration1 | Duration2 | None = None
    """
    Clock granularity G (RFC 6298); timers are rounded up to it; 0 = exact (default 0s).
    """
    hystart: bool | str | None = None
    """
    Slow-start exit on RTT increase: `true` (= `"rfc9406"`, HyStart++), `"rfc9406"`,
    `"linux"` (Linux CUBIC's HyStart delay detector), or `false` (default false).
    """
    hz: Annotated[int | None, Field(ge=0)] = None
    """
    Timer clock, ticks per second (Linux CONFIG_HZ: 100, 250, 300 or 1000): the
    retransmission, loss-probe, RACK, zero-window and delayed-ACK timers count whole ticks
    and run from Linux's timer wheel; 0 = exact (default 0, under the linux profile too).
    """
    idle_restart: str | None = None
    """
    The window after idle: `"rfc5681"` (min(IW, cwnd) at once; default) or `"halve-per-rto"`
    (Linux tcp_cwnd_restart: cwnd halves once per RTO of idle, down to min(IW, cwnd)).
    """
    initial_rcv_wnd: Literal[False] | Size1 | Size2 | None = None
    """
    Initial receive window (Linux `initrwnd`), bytes or segments, ≥ 1 MSS, or `false`
    to advertise `rcv_wnd` from the start (default false).
    """
    initial_rto: Duration1 | Duration2 | None = None
    """
    RTO before any RTT sample (RFC 6298 (2.1)), > 0 (default 1s).
    """
    initial_ssthresh: Literal[False] | Size1 | Size2 | None = None
    """
    Initial ssthresh, bytes or segments, or `false` for "arbitrarily high" (RFC 5681) (default false).
    """
    limited_transmit: bool | None = None
    """
    RFC 3042 Limited Transmit (default false).
    """
    max_rto: Duration1 | Duration2 | None = None
    """
    Upper bound of the RTO (RFC 6298 (2.5)) (default 60s).
    """
    min_rto: Duration1 | Duration2 | None = None
    """
    Lower bound of the RTO (RFC 6298 (2.4); Linux 200 ms), ≤ max_rto (default 1s).
    """
    mss: Bytes1 | Bytes2 | None = None
    """
    Sender maximum segment size, payload bytes, 1..=65000 (default 1460). With timestamps the
    wire segment is 12 bytes longer (Linux: MSS 1460 → 1448 payload bytes: write 1448).
    """
    paced_iw: bool | None = None
    """
    Spread the initial window over the handshake RTT (default false).
    """
    pacer: str | None = None
    """
    Which rules move the pacing clock: `"exact"` (default: every departure paced, no
    credit) or `"linux"` (tcp_update_skb_after_send: the first 10 data segments unpaced, a
    late departure forgiven up to half a gap).
    """
    pacing: bool | None = None
    """
    Sender pacing at ratio × cwnd / SRTT, as Linux's internal pacing (default false).
    """
    pacing_ca_ratio: Annotated[int | None, Field(ge=0)] = None
    """
    Pacing ratio otherwise, percent, 1..=10000 (default 120).
    """
    pacing_ss_ratio: Annotated[int | None, Field(ge=0)] = None
    """
    Pacing ratio in slow start (cwnd < ssthresh/2), percent, 1..=10000 (default 200).
    """
    profile: str | None = None
    """
    A named set of defaults under this table's fields: `"linux"` (what Linux 6.x does by
    default; see `scenario/profile.rs` and docs/scenario-format.md). Fields set explicitly —
    here, in `[tcp]` or in an application's `tcp` — override it (default none).
    """
    prr: bool | str | None = None
    """
    Proportional Rate Reduction (RFC 6937) for cwnd during SACK or RACK recovery: `true`
    (= `"ssrb"`), `"crb"`, `"ssrb"`, `"linux"` (SSRB's extra segment only on ACKs that
    advance snd.una), or `false` (default false: RFC 6675's cwnd = ssthresh).
    """
    quickack: Annotated[int | None, Field(ge=0)] = None
    """
    Linux quick-ACK mode: the receiver ACKs its first this many ACKs' worth of data at once
    even with delayed ACKs (Linux TCP_MAX_QUICKACKS = 16); 0 = off (default 0).
    """
    rcv_wnd: Size1 | Size2 | None = None
    """
    Receive buffer: the largest advertised window (RFC 2415's "maximum window"), bytes
    or segments of this endpoint's MSS (`"11seg"`), ≥ 1 MSS (default 1 GiB).
    """
    recovery: str | None = None
    """
    Loss recovery: `"reno"`, `"newreno"`, `"sack"` (RFC 6675) or `"rack"` (RFC 8985 RACK
    with SACK recovery); `sack` and `rack` need `sack = true` (default "newreno").
    """
    reordering: str | None = None
    """
    The degree of reordering: `"fixed"` (`dupthresh` throughout; default) or `"learned"`
    (Linux tcp_check_sack_reordering: raised from SACKs of segments below the highest
    SACKed; above `dupthresh`, ACKs that only SACK data grow cwnd).
    """
    restart_after_idle: bool | None = None
    """
    RFC 5681 §4.1 restart window after an idle period longer than the RTO (default true).
    """
    rto_ssthresh: str | None = None
    """
    When an RTO reduces ssthresh: `"each-expiry"` (RFC 5681 (4); default) or
    `"once-per-window"` (Linux tcp_enter_loss: not again inside fast recovery or on a
    repeated expiry of the same episode).
    """
    rto_window: str | None = None
    """
    The window of the resends after an RTO: `"from-snd-una"` (go-back-N within
    snd.una + cwnd, SACKed segments included; default) or `"packets-in-flight"` (Linux
    tcp_xmit_retransmit_queue: resend while the packets in flight, SACKed ones not
    counted, are below cwnd).
    """
    sack: bool | None = None
    """
    Offer and use SACK (RFC 2018) (default false).
    """
    syn_loss: Literal["reduce-to-one", "rfc6928"] | None = None
    """
    IW after a retransmitted SYN or SYN-ACK: `"reduce-to-one"` (RFC 3390 §2 / RFC 5681
    §3.1) or `"rfc6928"` (keep it unless retransmitted more than once) (default "rfc6928").
    """
    syn_retries: Annotated[int | None, Field(ge=0)] = None
    """
    SYN / SYN-ACK retransmissions before a connection gives up (default 6).
    """
    timers: str | None = None
    """
    RTO and loss-probe arithmetic: `"rfc"` (RFC 6298 RTO, RFC 8985 PTO; default) or
    `"linux"` (tcp_rtt_estimator/__tcp_set_rto: RTO = SRTT + max(variance, min_rto);
    tcp_schedule_loss_probe: PTO = 2·SRTT + min_rto with one segment out, + 2 ms otherwise).
    """
    timestamps: bool | None = None
    """
    Offer and use timestamps (RFC 7323; 12 option bytes per segment) (default false).
    """
    tlp: bool | None = None
    """
    RFC 8985 §7 Tail Loss Probe; needs `sack = true` (default true with `recovery =
    "rack"`, else false).
    """
    undo: bool | None = None
    """
    Undo a cwnd reduction shown spurious (Linux tcp_try_undo_*: every retransmission of the
    episode D-SACKed, or a timestamp echo older than the first retransmission, RFC 3522):
    cwnd and ssthresh back to their values before it (default false). F-RTO's own undo
    comes with `frto`.
    """


class Dumbbell(ScenarioBase):
    """
    Left hosts — router L — bottleneck — router R — right hosts, each host on its own
    access link.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    bottleneck: BottleneckSpec
    """
    The link between the routers.
    """
    jitter: Duration1 | Duration2 | None = None
    """
    Per-packet jitter on every link direction (`"200us"`), ≥ 0, default 0: each packet's
    propagation is lengthened by a uniform draw in [0, jitter) from the link's own random
    stream, never overtaking the packet before it. A deterministic simulator's flows with equal
    RTTs otherwise stay locked in phase with the queue's departures (Floyd & Jacobson,
    "On Traffic Phase Effects in Packet-Switched Gateways", 1992; ns-2's TCP `overhead_`).
    """
    kind: Literal["dumbbell"] = "dumbbell"
    left: Annotated[list[HostGroup] | None, Field(validate_default=True)] = []
    """
    Host groups behind router L (the forward direction leaves from here).
    """
    right: Annotated[list[HostGroup] | None, Field(validate_default=True)] = []
    """
    Host groups behind router R.
    """


class FtpApp(ScenarioBase):
    """
    `kind = "ftp"`: repeated transfers, each on a new connection: the client sends
    `request`, the server answers `size` (the FTP clients of the RFC 2415 study, docs/studies.md: 1 MB back to back).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    client_iw: str | None = None
    """
    IW policy of the clients (default: `iw.default`).
    """
    clients: str
    """
    Host group of the clients (they open the connections).
    """
    count: Annotated[int | None, Field(ge=0)] = 1
    """
    Number of instances, 0..=100 000 (default 1); 0 keeps the entry but starts
    nothing (a sweep over 0..N clients). For `poisson-flows`: the number of
    (client, server) pairs of its single flow source.
    """
    gap: (
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None
    ) = None
    """
    Pause between a completed transfer and the next request, fixed or drawn (seconds
    unless `unit`); absent = back to back.
    """
    kind: Literal["ftp"] = "ftp"
    mapping: Literal["modulo", "distinct"] | None = "modulo"
    """
    Instance → host mapping (default "modulo").
    """
    name: str | None = None
    """
    Label in records (default `"<kind>-<index>"`, e.g. `"web-0"`).
    """
    offset: Annotated[int | None, Field(ge=0)] = 0
    """
    Host index of instance 0 in both groups (default 0).
    """
    request: Annotated[Size1 | Size2 | None, Field(validate_default=True)] = "250B"
    """
    Request bytes, ≥ 1 (default 250B).
    """
    server_iw: str | None = None
    """
    IW policy of the servers (default: `iw.default`).
    """
    servers: str
    """
    Host group of the servers (a different group).
    """
    size: Annotated[Size1 | Size2 | None, Field(validate_default=True)] = "1MB"
    """
    Bytes per transfer, ≥ 1 (`"Nseg"`: N server MSS) (default 1MB = 10⁶ B).
    """
    start: Annotated[
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None,
        Field(validate_default=True),
    ] = "0s"
    """
    When each instance starts: a duration, or a distribution (seconds unless
    `unit`) drawn per instance from the scenario seed (default 0s).
    """
    tcp: TcpSpec | None = None
    """
    Overrides of the scenario's `[tcp]`, field by field.
    """
    transfers: Annotated[int | None, Field(ge=0)] = None
    """
    Transfers per instance, ≥ 1; absent = until the end of the run.
    """


class BulkApp(ScenarioBase):
    """
    `kind = "bulk"`: one connection that never runs out of data (iperf-like).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    client_iw: str | None = None
    """
    IW policy of the clients (default: `iw.default`).
    """
    clients: str
    """
    Host group of the clients (they open the connections).
    """
    count: Annotated[int | None, Field(ge=0)] = 1
    """
    Number of instances, 0..=100 000 (default 1); 0 keeps the entry but starts
    nothing (a sweep over 0..N clients). For `poisson-flows`: the number of
    (client, server) pairs of its single flow source.
    """
    kind: Literal["bulk"] = "bulk"
    mapping: Literal["modulo", "distinct"] | None = "modulo"
    """
    Instance → host mapping (default "modulo").
    """
    name: str | None = None
    """
    Label in records (default `"<kind>-<index>"`, e.g. `"web-0"`).
    """
    offset: Annotated[int | None, Field(ge=0)] = 0
    """
    Host index of instance 0 in both groups (default 0).
    """
    server_iw: str | None = None
    """
    IW policy of the servers (default: `iw.default`).
    """
    servers: str
    """
    Host group of the servers (a different group).
    """
    start: Annotated[
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None,
        Field(validate_default=True),
    ] = "0s"
    """
    When each instance starts: a duration, or a distribution (seconds unless
    `unit`) drawn per instance from the scenario seed (default 0s).
    """
    tcp: TcpSpec | None = None
    """
    Overrides of the scenario's `[tcp]`, field by field.
    """
    upload: bool | None = False
    """
    The client sends instead of the server (default false).
    """


class WebApp(ScenarioBase):
    """
    `kind = "web"`: an HTTP client: a page = a primary object, then `embedded_count`
    embedded objects (HTTP/1.0: on parallel new connections once the primary is in;
    HTTP/1.1: on the page's one connection), then a think time. Defaults are the RFC 2415 study's (docs/studies.md).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    client_iw: str | None = None
    """
    IW policy of the clients (default: `iw.default`).
    """
    clients: str
    """
    Host group of the clients (they open the connections).
    """
    count: Annotated[int | None, Field(ge=0)] = 1
    """
    Number of instances, 0..=100 000 (default 1); 0 keeps the entry but starts
    nothing (a sweep over 0..N clients). For `poisson-flows`: the number of
    (client, server) pairs of its single flow source.
    """
    embedded: Annotated[
        Bytes1
        | Bytes2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None,
        Field(validate_default=True),
    ] = {"cap": 1000000.0, "kind": "pareto", "scale": 1122.46, "shape": 1.2}
    """
    Embedded object size (default as `primary`).
    """
    embedded_count: Annotated[
        FixedOrDistUint321
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None,
        Field(validate_default=True),
    ] = 3
    """
    Embedded objects per page, a count or a distribution (rounded) (default 3).
    """
    http: Literal["1.0", "1.1"] | None = "1.0"
    """
    `"1.0"` or `"1.1"` (default "1.0").
    """
    kind: Literal["web"] = "web"
    mapping: Literal["modulo", "distinct"] | None = "modulo"
    """
    Instance → host mapping (default "modulo").
    """
    name: str | None = None
    """
    Label in records (default `"<kind>-<index>"`, e.g. `"web-0"`).
    """
    offset: Annotated[int | None, Field(ge=0)] = 0
    """
    Host index of instance 0 in both groups (default 0).
    """
    pages: Annotated[int | None, Field(ge=0)] = None
    """
    Pages per instance, ≥ 1; absent = until the end of the run.
    """
    primary: Annotated[
        Bytes1
        | Bytes2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None,
        Field(validate_default=True),
    ] = {"cap": 1000000.0, "kind": "pareto", "scale": 1122.46, "shape": 1.2}
    """
    Primary object size, bytes, fixed or drawn per object [Pareto I shape 1.2, scale
    1122.46 B (median 2000 B), cap 10⁶ B].
    """
    request: Annotated[Size1 | Size2 | None, Field(validate_default=True)] = "250B"
    """
    Request bytes per object, ≥ 1 (default 250B).
    """
    server_iw: str | None = None
    """
    IW policy of the servers (default: `iw.default`).
    """
    servers: str
    """
    Host group of the servers (a different group).
    """
    start: Annotated[
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None,
        Field(validate_default=True),
    ] = "0s"
    """
    When each instance starts: a duration, or a distribution (seconds unless
    `unit`) drawn per instance from the scenario seed (default 0s).
    """
    tcp: TcpSpec | None = None
    """
    Overrides of the scenario's `[tcp]`, field by field.
    """
    think: Annotated[
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None,
        Field(validate_default=True),
    ] = {"hi": 5.0, "kind": "uniform", "lo": 1.0}
    """
    Think time after a page (seconds unless `unit`) (default uniform 1..5 s).
    """


class ShortFlowsApp(ScenarioBase):
    """
    `kind = "short-flows"`: request/response flows, each on a new connection, started by
    the `arrivals` model (open loop, bursts, closed loop or replayed; the congested-links study, docs/studies.md). Each flow's
    response size and server IW: `response` and `server_iw`, or one combination of `mix`
    (exactly one of `response` and `mix`; neither with replayed arrivals, whose file has them).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    arrivals: (
        PeriodicArrivals
        | PoissonArrivals
        | BurstsArrivals
        | ClosedLoopArrivals
        | ReplayArrivals
    )
    """
    When flows start.
    """
    client_iw: str | None = None
    """
    IW policy of the clients (default: `iw.default`).
    """
    clients: str
    """
    Host group of the clients (they open the connections).
    """
    count: Annotated[int | None, Field(ge=0)] = 1
    """
    Number of instances, 0..=100 000 (default 1); 0 keeps the entry but starts
    nothing (a sweep over 0..N clients). For `poisson-flows`: the number of
    (client, server) pairs of its single flow source.
    """
    flows: Annotated[int | None, Field(ge=0)] = None
    """
    Flows per instance, ≥ 1; absent = until the end.
    """
    kind: Literal["short-flows"] = "short-flows"
    mapping: Literal["modulo", "distinct"] | None = "modulo"
    """
    Instance → host mapping (default "modulo").
    """
    mix: list[MixSpec] | None = None
    """
    (response, server IW) combinations the flows go through in `mix_order`.
    """
    mix_order: Literal["permuted-blocks", "cyclic", "random"] | None = None
    """
    `"permuted-blocks"` (default), `"cyclic"` or `"random"`; only with `mix`.
    """
    name: str | None = None
    """
    Label in records (default `"<kind>-<index>"`, e.g. `"web-0"`).
    """
    offset: Annotated[int | None, Field(ge=0)] = 0
    """
    Host index of instance 0 in both groups (default 0).
    """
    quic: QuicSpec | None = None
    """
    Overrides of the scenario's `[quic]`, field by field (with `transport = "quic"`).
    """
    request: Annotated[Size1 | Size2 | None, Field(validate_default=True)] = "100B"
    """
    Request bytes, ≥ 0 (default 100B).
    """
    response: Size1 | Size2 | None = None
    """
    Response bytes, ≥ 1; `"10seg"` = 10 full segments of the server's MSS.
    """
    server_iw: str | None = None
    """
    IW policy of the servers (default: `iw.default`).
    """
    servers: str
    """
    Host group of the servers (a different group).
    """
    start: Annotated[
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None,
        Field(validate_default=True),
    ] = "0s"
    """
    When each instance starts: a duration, or a distribution (seconds unless
    `unit`) drawn per instance from the scenario seed (default 0s).
    """
    tcp: TcpSpec | None = None
    """
    Overrides of the scenario's `[tcp]`, field by field.
    """
    transport: Literal["tcp"] | Literal["quic"] | None = None
    """
    `"tcp"` (default) or `"quic"` (quinn-proto; settings from `[quic]` and `quic`).
    """


class PoissonFlowsApp(ScenarioBase):
    """
    `kind = "poisson-flows"`: one source of Poisson flow arrivals over `count` (client,
    server) pairs chosen uniformly per flow; response sizes from `size` (the IW-function study, docs/studies.md; docs/scenario-format.md).
    Give exactly one of `rate` and `load`.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    client_iw: str | None = None
    """
    IW policy of the clients (default: `iw.default`).
    """
    clients: str
    """
    Host group of the clients (they open the connections).
    """
    count: Annotated[int | None, Field(ge=0)] = 1
    """
    Number of instances, 0..=100 000 (default 1); 0 keeps the entry but starts
    nothing (a sweep over 0..N clients). For `poisson-flows`: the number of
    (client, server) pairs of its single flow source.
    """
    flows: Annotated[int | None, Field(ge=0)] = None
    """
    Flows in all, ≥ 1; absent = until the end.
    """
    kind: Literal["poisson-flows"] = "poisson-flows"
    load: float | None = None
    """
    Offered load as a fraction of the bottleneck (0 < load ≤ 1): rate = load ×
    bottleneck rate (servers' side → clients' side) / (8 × mean size).
    """
    mapping: Literal["modulo", "distinct"] | None = "modulo"
    """
    Instance → host mapping (default "modulo").
    """
    name: str | None = None
    """
    Label in records (default `"<kind>-<index>"`, e.g. `"web-0"`).
    """
    offset: Annotated[int | None, Field(ge=0)] = 0
    """
    Host index of instance 0 in both groups (default 0).
    """
    rate: float | None = None
    """
    Flows per second, > 0.
    """
    request: Annotated[Size1 | Size2 | None, Field(validate_default=True)] = "100B"
    """
    Request bytes, ≥ 1 (default 100B).
    """
    server_iw: str | None = None
    """
    IW policy of the servers (default: `iw.default`).
    """
    servers: str
    """
    Host group of the servers (a different group).
    """
    size: (
        Bytes1
        | Bytes2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
    )
    """
    Response size, bytes, fixed or drawn per flow (its mean must be finite for `load`).
    """
    start: Annotated[
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None,
        Field(validate_default=True),
    ] = "0s"
    """
    When each instance starts: a duration, or a distribution (seconds unless
    `unit`) drawn per instance from the scenario seed (default 0s).
    """
    tcp: TcpSpec | None = None
    """
    Overrides of the scenario's `[tcp]`, field by field.
    """


class UdpApp(ScenarioBase):
    """
    `kind = "udp"`: UDP background from the server to the client host, constant bit rate
    or Poisson, each packet `payload` + 28 header bytes (the congested-links study's constant congestion, docs/studies.md).
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    client_iw: str | None = None
    """
    IW policy of the clients (default: `iw.default`).
    """
    clients: str
    """
    Host group of the clients (they open the connections).
    """
    count: Annotated[int | None, Field(ge=0)] = 1
    """
    Number of instances, 0..=100 000 (default 1); 0 keeps the entry but starts
    nothing (a sweep over 0..N clients). For `poisson-flows`: the number of
    (client, server) pairs of its single flow source.
    """
    kind: Literal["udp"] = "udp"
    mapping: Literal["modulo", "distinct"] | None = "modulo"
    """
    Instance → host mapping (default "modulo").
    """
    name: str | None = None
    """
    Label in records (default `"<kind>-<index>"`, e.g. `"web-0"`).
    """
    offset: Annotated[int | None, Field(ge=0)] = 0
    """
    Host index of instance 0 in both groups (default 0).
    """
    payload: Annotated[Bytes1 | Bytes2 | None, Field(validate_default=True)] = "1kB"
    """
    Payload bytes per packet, 1..=65507 (default 1000B).
    """
    poisson: bool | None = False
    """
    Exponential gaps instead of constant ones (default false).
    """
    rate: RateOrShare1 | RateOrShare2
    """
    Wire rate (headers included): absolute (`"600kbps"`, > 0) or a share of the
    bottleneck in the servers' side → clients' side direction (`"60%"`, 0 < x ≤ 100).
    """
    server_iw: str | None = None
    """
    IW policy of the servers (default: `iw.default`).
    """
    servers: str
    """
    Host group of the servers (a different group).
    """
    start: Annotated[
        Duration1
        | Duration2
        | Constant
        | Uniform
        | Exponential
        | Pareto
        | Lomax
        | Lognormal
        | Weibull
        | Empirical
        | None,
        Field(validate_default=True),
    ] = "0s"
    """
    When each instance starts: a duration, or a distribution (seconds unless
    `unit`) drawn per instance from the scenario seed (default 0s).
    """
    stop: Duration1 | Duration2 | None = None
    """
    When to stop sending; absent = the end of the run.
    """
    tcp: TcpSpec | None = None
    """
    Overrides of the scenario's `[tcp]`, field by field.
    """


class ScenarioModel(ScenarioBase):
    """
    A whole scenario file.
    """

    model_config = ConfigDict(
        extra="forbid",
    )
    apps: Annotated[
        list[FtpApp | BulkApp | WebApp | ShortFlowsApp | PoissonFlowsApp | UdpApp]
        | None,
        Field(validate_default=True),
    ] = []
    """
    The applications, in order (their index is the `apps[i]` of error messages).
    """
    description: str | None = None
    """
    Free text: what the scenario models and how a study varies it.
    """
    duration: Duration1 | Duration2
    """
    Simulated time; the run stops at this instant. Duration, > 0.
    """
    iw: IwSection | None = None
    """
    Named initial-window policies and the default one.
    """
    name: str
    """
    Short identifier, used in records and file names. Required, non-empty.
    """
    quic: QuicSpec | None = None
    """
    QUIC stack settings of applications with `transport = "quic"` (see [`super::quic`]).
    """
    sample_interval: Duration1 | Duration2 | None = None
    """
    Period of queue-length sampling on the bottleneck; absent = no sampling. Duration, > 0.
    """
    seed: Annotated[int | None, Field(ge=0)] = 1
    """
    Seed of every random stream (per-host draws, start times, links, flows). Default 1;
    `Scenario::build(Some(seed))` overrides it. 0 ..= 2⁶³−1 (a TOML integer).
    """
    tcp: TcpSpec | None = None
    """
    TCP options of every endpoint, unless an application overrides them. Absent fields
    take the engine's defaults ([`crate::tcp::config::TcpConfig::default`]).
    """
    topology: Dumbbell
    """
    The network.
    """
    warmup: Annotated[Duration1 | Duration2 | None, Field(validate_default=True)] = "0s"
    """
    Records before this instant are warm-up (the study layer drops them). Duration,
    default 0 s, < `duration`.
    """
