"""Type stubs of `iwlab._core`, the PyO3 bindings of the Rust simulator core
(crates/iwlab-py/src/lib.rs). Keep in step with it: tests/test_api.py compares the two."""

from collections.abc import Callable, Sequence
from typing import Literal, NotRequired, TypedDict

Format = Literal["toml", "json"]
ColumnType = Literal["u64", "i64", "f64", "opt_f64", "bool", "str"]
Column = list[int] | list[float] | list[float | None] | list[bool] | list[str]

class ScenarioError(ValueError):
    """A scenario was rejected: args = (message, path, line, column); line and column are
    1-based, None when unknown."""

    args: tuple[str, str, int | None, int | None]  # type: ignore[assignment]

class Summary(TypedDict):
    seed: int
    duration: float
    warmup: float
    events: int
    packets_created: int
    packets_delivered: int
    packets_dropped: int
    packets_in_flight: int
    flows: int
    flows_completed: int
    pages: int
    pages_completed: int
    wall_seconds: float
    cpu_seconds: float
    core_version: str
    engine_id: str
    # The headline, read off the record tables (crates/iwlab-core/src/metrics/headline.rs): medians over
    # completed rows after warm-up (numpy's median), the bottleneck's first link row per direction.
    median_flow_completion: float | None
    median_page_delay: float | None
    bottleneck_forward_utilisation: float | None
    bottleneck_forward_drop_rate: float | None
    bottleneck_reverse_utilisation: float | None
    bottleneck_reverse_drop_rate: float | None

class Tables(TypedDict):
    flows: dict[str, ColumnType]
    pages: dict[str, ColumnType]
    links: dict[str, ColumnType]
    queues: dict[str, ColumnType]
    iw_events: NotRequired[dict[str, ColumnType]]

#: One column of a chunk handed to a sink: (kind, rows, data, validity bitmap or None,
#: null count, int32 offsets or None) — the buffers of `pyarrow.Array.from_buffers`.
ColumnBuffers = tuple[str, int, bytes, bytes | None, int, bytes | None]

class RunOutput(TypedDict):
    # Absent when the run had a sink or `out`: only "summary" then (and "tables" with `out`).
    flows: NotRequired[dict[str, Column]]
    pages: NotRequired[dict[str, Column]]
    links: NotRequired[dict[str, Column]]
    queues: NotRequired[dict[str, Column]]
    iw_events: NotRequired[dict[str, Column]]
    types: NotRequired[Tables]
    tables: NotRequired[list[str]]
    summary: Summary

def core_version() -> str:
    """The version of the simulator core."""

def engine_id() -> str:
    """Fingerprint of this engine build: same id, same scenario and seed, identical results."""

def normalize(text: str, format: Format = "toml") -> str:
    """Parses and validates a scenario; returns its canonical JSON (defaults filled in).
    Raises ScenarioError."""

def normalize_path(path: str) -> str:
    """Reads a scenario file (JSON if it ends in `.json`, else TOML) and validates it,
    relative paths inside it resolved against its folder; returns canonical JSON."""

def to_toml(text: str, format: Format = "json") -> str:
    """Canonical TOML of a scenario given as TOML or JSON."""

def schema(which: Literal["scenario", "policy-file"] = "scenario") -> str:
    """The JSON Schema of scenario files or policy files, derived from the core's serde
    structs (doc comments as descriptions)."""

def tcp_profile_names() -> list[str]:
    """Names of the TCP profiles (`tcp.profile`)."""

def tcp_profile_toml(name: str) -> str:
    """The `[tcp]` table of a TCP profile, as TOML text."""

def run(
    text: str,
    format: Format = "json",
    seed: int | None = None,
    pcap: str | None = None,
    flows: Sequence[int] | None = None,
    iw_events: bool = False,
    sink: Callable[[str, dict[str, ColumnBuffers]], None] | None = None,
    out: str | None = None,
    keylog: str | None = None,
) -> RunOutput:
    """Runs a scenario with `seed` (the scenario's own if None); with `pcap`, writes the
    bottleneck's packets of `flows` (all if None) to that file; with `keylog` too, the QUIC
    connections' TLS secrets go to that file (SSLKEYLOGFILE) and the pcap carries the QUIC
    datagrams' bytes. With `iw_events`, the output
    also has an "iw_events" table (every IW decision and policy event). Releases the GIL while it runs.
    With `sink`, the tables are not in the output: each goes to `sink(name, columns)` as it is
    read off the engine, at most 4 096 rows at a time (at least one call per table), every
    column as Arrow buffers; the output then holds only "summary". With `out` (a folder, created
    if need be) instead of a sink, the same chunks are written to `out/NAME.parquet` by the
    extension (one row group each, Snappy); the output then holds "summary" and "tables" (the
    names of the files written)."""

def conform(paths: list[str], tolerance_usecs: int | None = None) -> tuple[int, str, str]:
    """Runs packetdrill-format scripts against one engine endpoint (iwlab-conform): (exit code
    0 all passed / 1 some failed / 2 some could not be parsed, text report, JSON report)."""
    ...

def parse_policy_file(text: str) -> str:
    """Parses and validates a policy file (TOML); returns its canonical JSON: "policies"
    (canonical specs by name), "default", "routes" (prefix text or None for the default route,
    policy, initrwnd, congctl, line). Raises ScenarioError."""

def route_for(prefixes: list[str], addr: str) -> int | None:
    """The index of the prefix ("default" or a CIDR) covering `addr`: the longest network of
    its family (the first of equal length), else the first "default"; None if neither
    (crates/iwlab-prefix). ValueError for a bad prefix or address, naming it."""

def peer_route(prefixes: list[str], addr: str) -> int | None:
    """As `route_for` for a connection's peer: IPv4-mapped IPv6 as IPv4, loopback: None."""

def prefix_index(prefixes: list[str], prefix: str) -> int | None:
    """The index of the prefix equal to `prefix` (compared as networks); None if none."""

def summary_kinds() -> list[str]:
    """The policy kinds whose decisions depend only on IW-loss events (their routes' clean
    closes may be summed per prefix by `iwlab-bpf evidence`)."""

class PolicyEngine:
    """The simulator's IW policies (crates/iwlab-core/src/tcp/iw), one instance per policy
    name; destinations are strings (route prefixes) interned to the core's opaque keys."""

    def __init__(self, policies_json: str) -> None:
        """`{"name": {"kind": …, …}}`, validated by the scenario code (ScenarioError)."""
    def policies(self) -> list[str]: ...
    def kind(self, policy: str) -> str:
        """The policy's kind (KeyError for an unknown name)."""
    def initial_window(self, policy: str, dst: str, mss: int, now_ns: int,
                       declared_size: int | None = None) -> int:
        """IW in bytes of a new connection to `dst`."""
    def learn(self, policy: str, dst: str, now_ns: int, kind: str, bytes_sent: int, loss: bool = False,
              cwnd: int = 0, bytes_acked: int | None = None, retrans: int = 0) -> None:
        """Feeds an event: kind "loss_in_initial_window" or "closed"."""
    def describe(self, policy: str, dst: str, now_ns: int) -> str:
        """JSON of what the policy holds about `dst` ("null" for stateless policies)."""
    def snapshot(self) -> str:
        """Every policy's learned state, as JSON."""
    def restore(self, snapshot: str) -> None:
        """Restores a snapshot (ValueError if malformed; the engine is unchanged then)."""
