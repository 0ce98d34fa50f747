"""The pydantic mirror of the scenario format (docs/scenario-format.md): `ScenarioModel` and
its parts, for editors and IDEs (`ScenarioModel.model_json_schema()`, `iwlab schema`), for
building scenarios in Python and for early structural checks before the core checks units,
ranges and references. `iwlab.scenario` re-exports all of it beside the loader."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, model_validator

from iwlab import overrides as ov
from iwlab.scenario_error import ScenarioError

__all__ = ["ScenarioModel", "PROFILES"]


def _from_validation(e: ValidationError, source: str | None) -> ScenarioError:
    path, message = ov.describe_errors(ScenarioModel, e)
    return ScenarioError(message, path, None, None, source)


# --- the pydantic mirror of the format -----------------------------------------------------

U32 = 2**32 - 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _text_or_number(v: Any) -> str:
    return "text" if isinstance(v, str) else "number"


_NonNeg = Union[Annotated[int, Field(ge=0)], Annotated[float, Field(ge=0)]]
# A quantity: a string with a unit ("1.5Mbps", "50ms", "1460B", "11seg", "25pkt", "60%") or a bare
# number >= 0 in the base unit. The core parses units; these only check the shape.
Quantity = Annotated[Union[Annotated[str, Tag("text")], Annotated[_NonNeg, Tag("number")]],
                     Discriminator(_text_or_number)]
Rate = Quantity        # bits/s: "10Mbps", "1.5Mbps", "56kbps"; a bare number is bits/s
Duration = Quantity    # "50ms", "2s", "1min"; a bare number is seconds
Bytes = Quantity       # "1460B", "1MB" (10^6), "64KiB"; a bare number is bytes
Size = Quantity        # bytes, or "11seg" segments of the endpoint's MSS
QueueLimit = Quantity  # "25pkt" or bytes ("64kB"); a bare number is packets
RateOrShare = Quantity  # "600kbps", or "60%" of the bottleneck
Count = Annotated[int, Field(ge=0, le=U32)]


class _Dist(_Model):
    unit: Optional[str] = Field(None, description="Unit of the parameters, min and cap ('Mbps', 'ms', 'kB'); "
                                                  "default: the field's base unit (bits/s, seconds, bytes)")
    min: Optional[float] = Field(None, description="Draws below are raised to it (same unit)")
    cap: Optional[float] = Field(None, description="Draws above are lowered to it (same unit)")


class Constant(_Dist):
    kind: Literal["constant"] = "constant"
    value: float


class Uniform(_Dist):
    """Uniform on [lo, hi], hi >= lo >= 0."""
    kind: Literal["uniform"] = "uniform"
    lo: float
    hi: float


class Exponential(_Dist):
    kind: Literal["exponential"] = "exponential"
    mean: float = Field(description="> 0")


class Pareto(_Dist):
    """Pareto type I: P(X > x) = (scale/x)^shape, x >= scale."""
    kind: Literal["pareto"] = "pareto"
    shape: float
    scale: float


class Lomax(_Dist):
    """Pareto type II: P(X > x) = (1 + x/scale)^-shape."""
    kind: Literal["lomax"] = "lomax"
    shape: float
    scale: float


class Lognormal(_Dist):
    """Exactly one pair: mu and sigma (ln X ~ Normal(mu, sigma)), or mean and median (mean > median > 0)."""
    kind: Literal["lognormal"] = "lognormal"
    mu: Optional[float] = None
    sigma: Optional[float] = None
    mean: Optional[float] = None
    median: Optional[float] = None


class Weibull(_Dist):
    kind: Literal["weibull"] = "weibull"
    shape: float
    scale: float


class Empirical(_Dist):
    """A piecewise-linear CDF from exactly one of points, csv, file, builtin."""
    kind: Literal["empirical"] = "empirical"
    points: Optional[list[Annotated[list[float], Field(min_length=2, max_length=2)]]] = Field(
        None, description="[[value, cdf], ...]: values increasing, cdf non-decreasing, ending at 1")
    csv: Optional[str] = Field(None, description="'value,cdf' lines")
    file: Optional[str] = Field(None, description="A CSV file, relative to the scenario file")
    builtin: Optional[str] = Field(None, description="'websearch' or 'datamining' (flow sizes, bytes)")


Dist = Annotated[Union[Constant, Uniform, Exponential, Pareto, Lomax, Lognormal, Weibull, Empirical],
                 Field(discriminator="kind")]


def _fixed_or_dist(v: Any) -> str:
    return "dist" if isinstance(v, (dict, _Dist)) else "fixed"


def FixedOrDist(fixed: Any) -> Any:  # noqa: N802 - a type constructor
    """A fixed value of type `fixed`, or a distribution table drawn from."""
    return Annotated[Union[Annotated[fixed, Tag("fixed")], Annotated[Dist, Tag("dist")]], Discriminator(_fixed_or_dist)]


class DropTail(_Model):
    kind: Literal["drop-tail"] = "drop-tail"
    limit: QueueLimit = Field(description='"25pkt" or bytes ("64kB"), > 0')


class Red(_Model):
    """RED (Floyd & Jacobson 1993); absent fields take the engine defaults."""
    kind: Literal["red"] = "red"
    limit: Optional[QueueLimit] = Field(None, description="Hard limit (default 25pkt)")
    min_th: Optional[float] = Field(None, ge=0, description="Average-queue threshold, packets (default 5)")
    max_th: Optional[float] = Field(None, ge=0, description="Average-queue threshold, packets (default 15)")
    max_p: Optional[float] = Field(None, ge=0, le=1, description="Drop probability at max_th (default 0.1)")
    w_q: Optional[float] = Field(None, ge=0, le=1, description="EWMA weight (default 0.002)")
    gentle: Optional[bool] = Field(None, description="Gentle RED (default true)")
    ecn: Optional[bool] = Field(None, description="Mark ECT packets instead of dropping (default false)")
    mean_pkt_size: Optional[Bytes] = Field(None, description="Mean packet size (default 1000B)")
    byte_mode: Optional[bool] = Field(None, description="Byte mode (default false)")


class Codel(_Model):
    """CoDel (RFC 8289); absent fields take the engine defaults."""
    kind: Literal["codel"] = "codel"
    limit: Optional[QueueLimit] = Field(None, description="Hard limit (default 1000pkt)")
    target: Optional[Duration] = Field(None, description="TARGET (default 5ms; < interval)")
    interval: Optional[Duration] = Field(None, description="INTERVAL (default 100ms)")
    ecn: Optional[bool] = Field(None, description="Mark ECT packets instead of dropping (default false)")
    mtu: Optional[Bytes] = Field(None, description="maxpacket (default 1514B)")


Queue = Annotated[Union[DropTail, Red, Codel], Field(discriminator="kind")]


class RandomLoss(_Model):
    kind: Literal["random"] = "random"
    p: float = Field(ge=0, lt=1, description="Drop probability per packet, before the queue")
    direction: Literal["both", "forward", "reverse"] = "both"


class LinkOverride(_Model):
    rate: Optional[Rate] = None
    delay: Optional[Duration] = None
    queue: Optional[Queue] = None


class Bottleneck(_Model):
    """The link between the routers; rate, delay and queue apply to both directions unless `reverse` overrides."""
    rate: Rate = Field(description='> 0, such as "1.5Mbps"')
    delay: Duration = Field(description='One-way propagation delay, such as "50ms"')
    queue: Queue
    reverse: Optional[LinkOverride] = Field(None, description="Overrides for R -> L")
    loss: Optional[RandomLoss] = None


class AccessOverride(_Model):
    rate: Optional[FixedOrDist(Rate)] = None
    delay: Optional[FixedOrDist(Duration)] = None
    queue: Optional[Queue] = None


class Access(_Model):
    """A host's access link; a distribution is drawn once per host from the scenario seed."""
    rate: FixedOrDist(Rate)
    delay: FixedOrDist(Duration)
    queue: Queue = Field(default_factory=lambda: DropTail(limit="100pkt"))
    up: Optional[AccessOverride] = Field(None, description="Overrides of the host -> router direction")


class HostGroup(_Model):
    name: str = Field(description="Unique across both sides; apps name it in clients/servers")
    count: int = Field(ge=1, le=10_000, description="Hosts in the group (at most 10 000 in all)")
    access: Access


class Dumbbell(_Model):
    """Left hosts - router L - bottleneck - router R - right hosts."""
    kind: Literal["dumbbell"] = "dumbbell"
    bottleneck: Bottleneck
    left: list[HostGroup] = Field(default_factory=list)
    right: list[HostGroup] = Field(default_factory=list)
    jitter: Optional[Duration] = Field(
        None, description="Per-packet jitter on every link, 0..1s (default 0): a uniform extra delay in [0, jitter) "
                          "that never reorders; breaks the phase lock of equal-RTT flows")


class Cubic(_Model):
    beta: Optional[float] = Field(None, gt=0, lt=1, description="beta_cubic (default 0.7)")
    c: Optional[float] = Field(None, gt=0, description="C, segments/s^3 (default 0.4)")
    fast_convergence: Optional[bool] = None
    reno_friendly: Optional[bool] = None
    ssthresh_from: Optional[Literal["flight-size", "cwnd"]] = Field(
        None, description="what beta multiplies at a congestion event: flight-size (RFC 9438, default) or cwnd (Linux, ns-3)")
    arithmetic: Optional[Literal["rfc9438", "linux"]] = Field(
        None, description="how the curve is computed: rfc9438 (real numbers, default) or linux (tcp_cubic.c's integers)")


class DelayedAck(_Model):
    segments: int = Field(2, ge=1, le=U32)
    timeout: Duration = "200ms"


def _bool_or_other(v: Any) -> str:
    return "bool" if isinstance(v, bool) else "other"


def _switch(value: Any) -> Any:
    """`false`, or a value."""
    return Annotated[Union[Annotated[Literal[False], Tag("bool")], Annotated[value, Tag("other")]],
                     Discriminator(_bool_or_other)]


def _flag_or(names: Any) -> Any:
    """`true`, `false` or a variant name."""
    return Annotated[Union[Annotated[bool, Tag("bool")], Annotated[names, Tag("other")]],
                     Discriminator(_bool_or_other)]


class Tcp(_Model):
    """TCP options; absent ones take the engine defaults. An app's `tcp` overrides the scenario's field by field."""
    profile: Optional[Literal["linux"]] = Field(
        None, description="Named defaults under the explicit fields: 'linux' = Linux 6.x (see PROFILES)")
    mss: Optional[Bytes] = Field(None, description="Payload bytes per segment, 1..65000 (default 1460)")
    cc: Optional[str] = Field(None, description="'reno', 'newreno' or 'cubic' (default 'reno')")
    cubic: Optional[Cubic] = Field(None, description="Only with cc = 'cubic'")
    recovery: Optional[str] = Field(None, description="'reno', 'newreno', 'sack' or 'rack' (RFC 8985; sack and rack "
                                    "need sack) (default 'newreno')")
    tlp: Optional[bool] = Field(None, description="RFC 8985 tail loss probe, needs sack (default: on with rack)")
    sack: Optional[bool] = None
    timestamps: Optional[bool] = None
    delayed_ack: Optional[Annotated[Union[Annotated[bool, Tag("bool")], Annotated[DelayedAck, Tag("other")]],
                                    Discriminator(_bool_or_other)]] = Field(
        None, description="false, true (2 segments, 200ms) or { segments, timeout }")
    rcv_wnd: Optional[Size] = Field(None, description="Largest advertised window, >= 1 MSS (default 1GiB)")
    initial_rcv_wnd: Optional[_switch(Size)] = Field(None, description="A size, or false (default false)")
    initial_rto: Optional[Duration] = Field(None, description="> 0 (default 1s)")
    min_rto: Optional[Duration] = Field(None, description="<= max_rto (default 1s)")
    max_rto: Optional[Duration] = Field(None, description="(default 60s)")
    granularity: Optional[Duration] = Field(None, description="Clock granularity G; 0 = exact (default 0)")
    dupthresh: Optional[int] = Field(None, ge=1, le=U32, description="(default 3)")
    limited_transmit: Optional[bool] = None
    abc_l: Optional[Count] = Field(None, description="RFC 3465 L, segments; 0 = no ABC (default 0)")
    syn_loss: Optional[Literal["reduce-to-one", "rfc6928"]] = None
    restart_after_idle: Optional[bool] = None
    ecn: Optional[bool] = None
    initial_ssthresh: Optional[_switch(Size)] = Field(None, description="A size, or false = arbitrarily high")
    syn_retries: Optional[Count] = None
    pacing: Optional[bool] = Field(None, description="Pace departures at ratio x cwnd/SRTT, as Linux (default false)")
    pacing_ss_ratio: Optional[int] = Field(None, ge=1, le=10000, description="Percent while cwnd < ssthresh/2 (default 200)")
    pacing_ca_ratio: Optional[int] = Field(None, ge=1, le=10000, description="Percent otherwise (default 120)")
    paced_iw: Optional[bool] = Field(None, description="Spread the initial window over the handshake RTT (default false)")
    pacer: Optional[Literal["exact", "linux"]] = Field(
        None, description="'exact' (every departure paced; default) or 'linux' (the first 10 data segments unpaced, "
                          "a late departure forgiven up to half a gap)")
    prr: Optional[_flag_or(Literal["crb", "ssrb", "linux"])] = Field(
        None, description="RFC 6937 PRR in SACK or RACK recovery: true (= 'ssrb'), 'crb', 'ssrb', 'linux' or false (default)")
    hystart: Optional[_flag_or(Literal["rfc9406", "hystart++", "linux"])] = Field(
        None, description="Slow-start exit on RTT rise: true (= 'rfc9406', HyStart++), 'linux' or false (default)")
    quickack: Optional[Count] = Field(None, description="Linux quick-ACK mode: first N ACKs at once; 0 = off (default)")
    timers: Optional[Literal["rfc", "linux"]] = Field(
        None, description="RTO and loss-probe arithmetic: 'rfc' (RFC 6298, RFC 8985; default) or 'linux' "
                          "(RTO = SRTT + max(variance, min_rto), restarted when the head is resent; PTO = 2 SRTT + min_rto "
                          "with one segment out)")
    rto_ssthresh: Optional[Literal["each-expiry", "once-per-window"]] = Field(
        None, description="'each-expiry' (RFC 5681; default) or 'once-per-window' (Linux tcp_enter_loss)")
    cwnd_growth: Optional[Literal["every-ack", "cwnd-limited"]] = Field(
        None, description="'every-ack' (RFC 5681; default) or 'cwnd-limited' (Linux tcp_is_cwnd_limited: "
                          "grow only while the flow fills its window, by the segments each ACK newly delivers)")
    idle_restart: Optional[Literal["rfc5681", "halve-per-rto"]] = Field(
        None, description="'rfc5681' (min(IW, cwnd) after idle; default) or 'halve-per-rto' "
                          "(Linux tcp_cwnd_restart: halve once per RTO of idle, down to min(IW, cwnd))")
    fin: Optional[Literal["with-write", "after-write"]] = Field(
        None, description="'with-write' (a write-and-close sends the FIN on the last data segment; default) or "
                          "'after-write' (Linux tcp_send_fin: the write leaves first; the FIN joins the last "
                          "segment only if it is unsent, else goes alone when cwnd has room)")
    rto_window: Optional[Literal["from-snd-una", "packets-in-flight"]] = Field(
        None, description="The window of the resends after an RTO: 'from-snd-una' (go-back-N within snd.una + cwnd, "
                          "SACKed segments included; default) or 'packets-in-flight' (Linux tcp_xmit_retransmit_queue: "
                          "resend while the packets in flight, SACKed ones not counted, are below cwnd)")
    reordering: Optional[Literal["fixed", "learned"]] = Field(
        None, description="The degree of reordering: 'fixed' (dupthresh throughout; default) or 'learned' (Linux "
                          "tcp_check_sack_reordering: raised from SACKs below the highest SACKed; above dupthresh, "
                          "ACKs that only SACK data grow cwnd)")
    frto: Optional[bool] = Field(
        None, description="F-RTO after an RTO (RFC 5682 with SACK, Linux tcp_frto = 2): undo a spurious RTO (default false)")
    dsack: Optional[bool] = Field(
        None, description="D-SACK (RFC 2883): report duplicate segments; use the reports to undo and adapt RACK (default false)")
    undo: Optional[bool] = Field(
        None, description="Undo a cwnd reduction shown spurious by D-SACKs or timestamps (Linux tcp_try_undo_*; default false)")


# `tcp.profile` values, as crates/iwlab-core/src/scenario/profile.rs defines them (the emulator
# reads the kernel settings from these; tests/test_scenario.py checks the two agree).
PROFILES: dict[str, dict[str, Any]] = {
    "linux": {
        "mss": 1448, "cc": "cubic", "abc_l": 65535, "sack": True, "recovery": "rack", "tlp": True, "prr": "linux", "hystart": "linux",
        "timestamps": True, "delayed_ack": {"segments": 2, "timeout": "40ms"}, "quickack": 16,
        "initial_rto": "1s", "min_rto": "200ms", "max_rto": "120s", "limited_transmit": True,
        "syn_loss": "rfc6928", "dupthresh": 3, "restart_after_idle": True, "syn_retries": 6,
        "cubic": {"ssthresh_from": "cwnd", "arithmetic": "linux"}, "timers": "linux", "rto_ssthresh": "once-per-window",
        "pacer": "linux",
        "cwnd_growth": "cwnd-limited", "idle_restart": "halve-per-rto", "fin": "after-write",
        "rto_window": "packets-in-flight", "reordering": "learned",
        "frto": True, "dsack": True, "undo": True,
    },
}


class FixedIw(_Model):
    kind: Literal["fixed"] = "fixed"
    segments: int = Field(ge=1, le=U32)


class Rfc3390Iw(_Model):
    """min(4*MSS, max(2*MSS, 4380)) bytes."""
    kind: Literal["rfc3390"] = "rfc3390"


class Rfc6928Iw(_Model):
    """min(10*MSS, max(2*MSS, 14600)) bytes."""
    kind: Literal["rfc6928"] = "rfc6928"


class Rfc6928FallbackIw(_Model):
    """RFC 6928 with a per-destination loss cache on the sending host."""
    kind: Literal["rfc6928-fallback"] = "rfc6928-fallback"
    expiry: Duration = "3600s"
    max_entries: Optional[int] = Field(None, ge=1, le=U32, description="Destinations held (default 16384); "
                                       "a full cache drops expired entries, then the one expiring soonest")


class SizeBasedIw(_Model):
    """IW(s) = V if s <= theta, else floor((theta/s)*V + (1 - theta/s)*MinIW) segments."""
    kind: Literal["size-based"] = "size-based"
    theta: Bytes = "200kB"
    v: int = Field(10, ge=1, le=U32)
    min_iw: int = Field(4, ge=1, le=U32)


class AimdIw(_Model):
    """Per-destination AIMD on the IW (segments): + step after raise_after consecutive clean
    connections, halved on loss in the IW after > 4 KB (RFC 6928 §4), within [min, max].
    1 <= min <= initial <= max (checked by the core)."""
    kind: Literal["aimd"] = "aimd"
    initial: int = Field(10, ge=1, le=U32)
    min: int = Field(3, ge=1, le=U32)
    max: int = Field(40, ge=1, le=U32)
    step: int = Field(1, ge=1, le=U32)
    raise_after: int = Field(8, ge=1, le=U32, description="Consecutive clean connections per raise")


class LearnedIw(_Model):
    """Per-destination IW learned from the last `samples` connections' min(cwnd at close, bytes
    acked): their `percentile` (nearest rank) over the MSS, in [min, max] segments.
    1 <= min <= initial <= max (checked by the core)."""
    kind: Literal["learned"] = "learned"
    initial: int = Field(10, ge=1, le=U32)
    min: int = Field(3, ge=1, le=U32)
    max: int = Field(40, ge=1, le=U32)
    samples: int = Field(8, ge=1, le=U32)
    percentile: int = Field(50, ge=1, le=100)


IwPolicy = Annotated[Union[FixedIw, Rfc3390Iw, Rfc6928Iw, Rfc6928FallbackIw, SizeBasedIw, AimdIw, LearnedIw],
                     Field(discriminator="kind")]


class IwRoute(_Model):
    """A destination route (policy files; `iwlab run --policy`): hosts whose address (the
    emulator's, 198.18.0.0 + 4g + 2) the prefix covers get the route's policy."""
    prefix: str = Field(description='IPv4/IPv6 CIDR with host bits zero, or "default"')
    policy: str
    initrwnd: Optional[int] = Field(None, ge=1, le=U32, description="Deployment only; ignored by the simulator")
    congctl: Optional[str] = Field(None, description="Deployment only; ignored by the simulator")


class IwSection(_Model):
    default: Optional[str] = Field(None, description="Policy of apps that name none")
    policies: dict[str, IwPolicy] = Field(default_factory=dict)
    routes: Optional[list[IwRoute]] = None


class _App(_Model):
    name: Optional[str] = Field(None, description='Label in records (default "<kind>-<index>")')
    clients: str = Field(description="Host group of the clients")
    servers: str = Field(description="Host group of the servers")
    count: int = Field(1, ge=1, le=100_000, description="Instances (poisson-flows: client/server pairs)")
    mapping: Literal["modulo", "distinct"] = "modulo"
    offset: Count = 0
    start: FixedOrDist(Duration) = Field("0s", description="Start of each instance, drawn per instance")
    server_iw: Optional[str] = Field(None, description="IW policy of the servers (default iw.default)")
    client_iw: Optional[str] = Field(None, description="IW policy of the clients (default iw.default)")
    tcp: Optional[Tcp] = None


class FtpApp(_App):
    """Repeated transfers on new connections."""
    kind: Literal["ftp"] = "ftp"
    size: Size = "1MB"
    request: Size = "250B"
    gap: Optional[FixedOrDist(Duration)] = Field(None, description="Pause between transfers; absent = back to back")
    transfers: Optional[int] = Field(None, ge=1, le=U32, description="Absent = until the end")


class BulkApp(_App):
    """One connection that never runs dry."""
    kind: Literal["bulk"] = "bulk"
    upload: bool = False


def _pareto_object() -> Pareto:
    return Pareto(shape=1.2, scale=1122.46, cap=1e6)


class WebApp(_App):
    """An HTTP client: pages of a primary and embedded objects, then a think time."""
    kind: Literal["web"] = "web"
    http: Literal["1.0", "1.1"] = "1.0"
    request: Size = "250B"
    primary: FixedOrDist(Bytes) = Field(default_factory=_pareto_object)
    embedded: FixedOrDist(Bytes) = Field(default_factory=_pareto_object)
    embedded_count: FixedOrDist(Count) = 3
    think: FixedOrDist(Duration) = Field(default_factory=lambda: Uniform(lo=1.0, hi=5.0))
    pages: Optional[int] = Field(None, ge=1, le=U32, description="Absent = until the end")


class Periodic(_Model):
    """One flow every `period`, the first at the instance's start."""
    kind: Literal["periodic"] = "periodic"
    period: Duration


# A share of the bottleneck: "10%" (bare numbers are refused: 10 and 0.1 would be confused).
Share = Annotated[str, Field(pattern=r"^\s*\+?[0-9.eE+-]+\s*%\s*$")]


def _exactly_one(model: BaseModel, a: str, b: str, what: str) -> None:
    if (getattr(model, a) is None) == (getattr(model, b) is None):
        raise ValueError(f"give exactly one of `{a}` and `{b}` ({what})")


class PoissonArrivals(_Model):
    """A Poisson process: `rate` flows/s, or `load` a share of the bottleneck; exactly one."""
    kind: Literal["poisson"] = "poisson"
    rate: Optional[float] = Field(None, gt=0, description="Flows per second (per instance)")
    load: Optional[Share] = Field(None, description='Share of the bottleneck such as "10%": rate = load x '
                                                     "bottleneck rate / (8 x mean response bytes of the mix)")

    @model_validator(mode="after")
    def _one_rate(self) -> PoissonArrivals:
        _exactly_one(self, "rate", "load", "flows per second, or a share of the bottleneck")
        return self


class BurstArrivals(_Model):
    """`flows` flows at once, the next burst `gap` after this burst's start."""
    kind: Literal["bursts"] = "bursts"
    flows: int = Field(ge=1, le=U32, description="Flows per burst")
    gap: FixedOrDist(Duration) = Field(description="From a burst's start to the next (exponential: Poisson bursts)")


class ClosedLoopArrivals(_Model):
    """One flow at a time: the next starts `think` after the previous one completed."""
    kind: Literal["closed-loop"] = "closed-loop"
    think: FixedOrDist(Duration) = Field(description="Pause after each completed flow")


class ReplayArrivals(_Model):
    """Flows at recorded start times: a CSV with `start` (s from the run's start), `response` (bytes),
    optional `server_iw` and `request`; relative to the scenario file."""
    kind: Literal["replay"] = "replay"
    file: str


Arrivals = Annotated[Union[Periodic, PoissonArrivals, BurstArrivals, ClosedLoopArrivals, ReplayArrivals],
                     Field(discriminator="kind")]


class MixEntry(_Model):
    """One (response size, server IW) combination."""
    response: Size = Field(description='Such as "9seg"')
    server_iw: Optional[str] = Field(None, description="IW policy of the server (default: the app's server_iw)")


class Quic(_Model):
    """QUIC stack settings (`[quic]`, or an app's `quic` overriding it field by field)."""
    profile: Optional[Literal["quinn", "rfc9002"]] = Field(
        None, description='Named stack defaults: "quinn" (CUBIC) or "rfc9002" (NewReno); default "quinn"')
    initial_window: Optional[Quantity] = Field(
        None, description='Bytes ("14720", "12kB") or datagrams ("10pkt"); default RFC 9002 §7.2')
    max_datagram_size: Optional[int] = Field(None, ge=1200, le=65527, description="UDP payload bytes (default 1200)")
    certificate_chain: Optional[Bytes] = Field(None, description='DER bytes of the server chain (default "4kB")')
    cc: Optional[Literal["reno", "newreno", "cubic", "bbr"]] = None
    pacing: Optional[Literal[True]] = Field(None, description="quinn-proto always paces: only true")


class ShortFlowsApp(_App):
    """Request/response flows, each on a new connection, started by `arrivals`; exactly one of `response`
    and `mix` (neither with replayed arrivals)."""
    kind: Literal["short-flows"] = "short-flows"
    request: Size = "100B"
    response: Optional[Size] = Field(None, description='Such as "10seg"')
    mix: Optional[list[MixEntry]] = Field(None, min_length=1, description="(response, server_iw) combinations")
    mix_order: Optional[Literal["permuted-blocks", "cyclic", "random"]] = Field(
        None, description='Only with mix; default "permuted-blocks" (every combination once per block)')
    arrivals: Arrivals
    flows: Optional[int] = Field(None, ge=1, le=U32)
    transport: Optional[Literal["tcp", "quic"]] = Field(None, description='"tcp" (default) or "quic" (quinn-proto)')
    quic: Optional[Quic] = Field(None, description="Overrides of [quic] (with transport = \"quic\")")

    @model_validator(mode="after")
    def _sizes(self) -> ShortFlowsApp:
        if self.arrivals.kind == "replay":
            if self.response is not None or self.mix is not None:
                raise ValueError("`response` and `mix` are not allowed with replayed arrivals (the file has them)")
        else:
            _exactly_one(self, "response", "mix", "one size, or several (response, server_iw) combinations")
        if self.mix_order is not None and self.mix is None:
            raise ValueError("`mix_order` is only allowed with `mix`")
        return self


class PoissonFlowsApp(_App):
    """Poisson flow arrivals over `count` client/server pairs; exactly one of rate and load."""
    kind: Literal["poisson-flows"] = "poisson-flows"
    size: FixedOrDist(Bytes)
    rate: Optional[float] = Field(None, gt=0, description="Flows per second")
    load: Optional[float] = Field(None, gt=0, le=1, description="Fraction of the bottleneck")
    request: Size = "100B"
    flows: Optional[int] = Field(None, ge=1, le=U32)


class UdpApp(_App):
    """UDP background from the server host to the client host."""
    kind: Literal["udp"] = "udp"
    rate: RateOrShare = Field(description='Wire rate ("600kbps") or a share of the bottleneck ("60%")')
    payload: Bytes = "1000B"
    poisson: bool = False
    stop: Optional[Duration] = None


App = Annotated[Union[FtpApp, BulkApp, WebApp, ShortFlowsApp, PoissonFlowsApp, UdpApp], Field(discriminator="kind")]


class ScenarioModel(_Model):
    """A whole scenario file (docs/scenario-format.md).

    >>> m = ScenarioModel.model_validate(load("rfc2415").data)
    >>> m.apps[0].kind, m.topology.bottleneck.rate
    ('web', '1.5Mbps')
    """
    name: str = Field(min_length=1)
    description: Optional[str] = None
    seed: int = Field(1, ge=0, le=2**63 - 1)
    duration: Duration = Field(description="> 0; the run stops at this instant")
    warmup: Duration = Field("0s", description="< duration; records before it are warm-up")
    sample_interval: Optional[Duration] = Field(None, description="Bottleneck queue sampling period")
    topology: Dumbbell
    tcp: Optional[Tcp] = None
    iw: Optional[IwSection] = None
    quic: Optional[Quic] = None
    apps: list[App] = Field(default_factory=list)

    def to_data(self) -> dict[str, Any]:
        """The scenario as plain data (what the core reads)."""
        return self.model_dump(mode="json", exclude_none=True)
