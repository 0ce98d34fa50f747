"""The initial-window defaults of QUIC stacks, as data (profiles.toml, docs/quic.md "Stack defaults").

    from iwlab.quic.profiles import load
    p = load()["quic-go"]
    p.iw_bytes, p.setting        # 40960, "none (a constant; …)"

Each value carries FILE:LINE in the stack's repository at the named release; values not read in the
source are listed in `unverified`. `load` checks the file's schema and raises ProfileError naming the
stack, the field, the value and what is allowed.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

PROFILES = Path(__file__).with_name("profiles.toml")
SOURCE = re.compile(r"^[\w./+-]+:[1-9]\d*$")  # FILE:LINE
RFC9002_FLOOR = 14720  # RFC 9002 §7.2


class ProfileError(ValueError):
    """A profiles file that does not follow the schema."""


class Iw(BaseModel):
    """What the initial window is counted in."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    rule: Literal["packets", "rfc9002", "bytes"]
    packets: int | None = None
    packet_bytes: int | None = None
    bytes: int | None = None

    @model_validator(mode="after")
    def _fields_of_rule(self) -> Iw:
        need = {"packets": {"packets", "packet_bytes"}, "rfc9002": {"packet_bytes"}, "bytes": {"bytes"}}[self.rule]
        given = {k for k in ("packets", "packet_bytes", "bytes") if getattr(self, k) is not None}
        if given != need:
            raise ValueError(f"rule {self.rule!r} takes exactly {sorted(need)}, got {sorted(given)}")
        for k in given:
            if not 0 < getattr(self, k) <= 10_000_000:
                raise ValueError(f"{k} = {getattr(self, k)}: allowed 1..10000000")
        return self

    def to_bytes(self) -> int:
        if self.rule == "packets":
            return self.packets * self.packet_bytes
        if self.rule == "rfc9002":  # min(10 × size, max(14 720, 2 × size))
            return min(10 * self.packet_bytes, max(RFC9002_FLOOR, 2 * self.packet_bytes))
        return self.bytes


class Profile(BaseModel):
    """One stack's defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    vendor: str
    repository: str
    ref: str  # a release tag, or a commit where the project has none
    iw: Iw
    iw_at: list[str]
    setting: str  # how a user changes the IW ("none …" when it cannot be)
    setting_at: str
    max_datagram_size: int
    max_datagram_size_at: str
    cc: str
    cc_at: str
    pacing: str
    pacing_at: str
    amplification: str
    amplification_at: str
    initial_rtt_ms: int
    initial_rtt_at: str
    unverified: list[str]
    note: str = ""

    @field_validator("repository")
    @classmethod
    def _github(cls, v: str) -> str:
        if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", v):
            raise ValueError(f"{v!r}: allowed https://github.com/OWNER/NAME")
        return v

    @field_validator("iw_at")
    @classmethod
    def _sources(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("allowed a non-empty list of FILE:LINE")
        for s in v:
            cls._source(s)
        return v

    @field_validator("max_datagram_size_at", "cc_at", "pacing_at", "amplification_at", "initial_rtt_at")
    @classmethod
    def _source(cls, v: str) -> str:
        if not SOURCE.match(v):
            raise ValueError(f"{v!r}: allowed FILE:LINE, e.g. src/lib.rs:42")
        return v

    @field_validator("max_datagram_size")
    @classmethod
    def _datagram(cls, v: int) -> int:
        if not 1200 <= v <= 65527:  # RFC 9000 §14, §18.2 max_udp_payload_size
            raise ValueError(f"{v}: allowed 1200..65527 bytes")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        if self.setting_at and not SOURCE.match(self.setting_at):
            raise ValueError(f"setting_at = {self.setting_at!r}: allowed FILE:LINE or '' (no setting)")
        if not self.setting_at and not self.setting.startswith("none"):
            raise ValueError(f"setting = {self.setting!r} without setting_at: allowed FILE:LINE, or a setting "
                             "that starts with 'none'")
        fields = set(type(self).model_fields) - {"unverified", "note"}
        bad = [u for u in self.unverified if u not in fields]
        if bad:
            raise ValueError(f"unverified = {bad}: allowed field names {sorted(fields)}")
        return self

    @property
    def iw_bytes(self) -> int:
        """The initial window in bytes (RFC 9002 §7.2 counts it in bytes)."""
        return self.iw.to_bytes()

    @property
    def iw_datagrams(self) -> float:
        """The window in datagrams of `max_datagram_size` (what a probe of a first flight sees)."""
        return self.iw_bytes / self.max_datagram_size


def parse(text: str, origin: str = "profiles") -> dict[str, Profile]:
    """Profiles from TOML text; a schema error raises ProfileError naming stack, field and value."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{origin}: {e}") from None
    out = {}
    for key, table in data.items():
        if not isinstance(table, dict):
            raise ProfileError(f"{origin}: {key} = {table!r}: allowed a table [{key}] per stack")
        try:
            out[key] = Profile.model_validate(table)
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            value = err.get("input")
            raise ProfileError(f"{origin}: [{key}] {where}" + (f" = {value!r}" if not isinstance(value, dict) else "")
                               + f": {err['msg']}") from None
    return out


@cache
def load() -> dict[str, Profile]:
    """The packaged profiles (python/iwlab/quic/profiles.toml), by key."""
    return parse(PROFILES.read_text(), str(PROFILES.name))
