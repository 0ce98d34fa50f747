"""Field paths (`apps[0].count`, `topology.bottleneck.rate`): parse them, set them in scenario
data and read `--set PATH=VALUE` overrides. What a field accepts is the core's to say
(`Scenario.with_sets` asks it); nothing here knows the format.

Values of `--set` are TOML literals (`32`, `true`, `"2Mbps"`, `{ kind = "red" }`); text that is
not a TOML literal is taken as a bare string (`2Mbps`, `cubic`, `20s`).

>>> parse_path("apps[0].tcp.cc")
['apps', 0, 'tcp', 'cc']
>>> format_path(['topology', 'left', 1, 'access', 'rate'])
'topology.left[1].access.rate'
>>> split_set("topology.bottleneck.rate=2Mbps")
('topology.bottleneck.rate', '2Mbps')
>>> literal("32"), literal('"2Mbps"'), literal("2Mbps"), literal("{ kind = 'red' }")
(32, '2Mbps', '2Mbps', {'kind': 'red'})
"""

from __future__ import annotations

import datetime
import re
import sys
import typing
from typing import Any, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["PathError", "Seg", "format_path", "literal", "parse_path", "set_path", "split_set"]

Seg = Union[str, int]

_TOKEN = re.compile(r'\.?([A-Za-z0-9_-]+)|\.?"([^"]*)"|\[(\d+)\]')
_PATH_HELP = "keys separated by dots, with [N] for list entries, such as apps[0].count or topology.bottleneck.rate"


class PathError(ValueError):
    """A field path that does not parse or does not fit the data: `(message, path)`."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message, path)
        self.message, self.path = message, path

    def __str__(self) -> str:
        return self.message


def parse_path(path: str) -> list[Seg]:
    """`apps[0].count` → `['apps', 0, 'count']` (keys may be quoted: `iw.policies."a.b"`)."""
    segs: list[Seg] = []
    pos = 0
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if m is None or (pos == 0 and path.startswith(".")) or (pos > 0 and m.group(0)[0] not in ".["):
            raise PathError(f"{path!r} is not a field path; expected {_PATH_HELP}", path)
        key, quoted, index = m.groups()
        segs.append(int(index) if index is not None else key if key is not None else quoted)
        pos = m.end()
    if not segs or isinstance(segs[0], int):
        raise PathError(f"{path!r} is not a field path; expected {_PATH_HELP}", path)
    return segs


def format_path(segs: typing.Sequence[Seg]) -> str:
    """The inverse of `parse_path`."""
    out = ""
    for s in segs:
        if isinstance(s, int):
            out += f"[{s}]"
        else:
            key = s if re.fullmatch(r"[A-Za-z0-9_-]+", s) else f'"{s}"'
            out += f".{key}" if out else key
    return out


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Sets `path` in `data` in place, creating missing tables on the way; list entries must exist.

    >>> d = {"apps": [{"count": 1}]}
    >>> set_path(d, "apps[0].tcp.cc", "cubic"); d
    {'apps': [{'count': 1, 'tcp': {'cc': 'cubic'}}]}
    >>> set_path(d, "apps[3].count", 2)
    Traceback (most recent call last):
    ...
    iwlab.overrides.PathError: apps[3]: no such entry; apps has 1 entry (apps[0])
    """
    segs = parse_path(path)
    node: Any = data
    for i, seg in enumerate(segs):
        here, last = format_path(segs[: i + 1]), i == len(segs) - 1
        if isinstance(seg, int):
            if not isinstance(node, list):
                raise PathError(f"{here}: {format_path(segs[:i])} is not a list", path)
            if seg >= len(node):
                have = f"{len(node)} entr{'y' if len(node) == 1 else 'ies'}"
                span = f"{format_path(segs[:i])}[0]" + (f" to {format_path(segs[:i])}[{len(node) - 1}]"
                                                        if len(node) > 1 else "")
                raise PathError(f"{here}: no such entry; {format_path(segs[:i])} has {have}"
                                + (f" ({span})" if node else ""), path)
        elif not isinstance(node, dict):
            parent = format_path(segs[:i])
            raise PathError(f"{here}: {parent} is {_kind_of(node)}, not a table", path)
        if last:
            node[seg] = value
        else:
            if isinstance(seg, str) and seg not in node:
                node[seg] = {}
            node = node[seg]


def _kind_of(v: Any) -> str:
    return "a list" if isinstance(v, list) else f"a value ({v!r})"


def split_set(item: str) -> tuple[str, str]:
    """`PATH=VALUE` → (path, value text)."""
    path, eq, value = item.partition("=")
    if not eq or not path.strip():
        raise PathError(f"{item!r}: expected PATH=VALUE, such as apps[0].count=32 or "
                        f"topology.bottleneck.rate=2Mbps", item)
    path = path.strip()
    parse_path(path)
    return path, value.strip()


def literal(text: str) -> Any:
    """A TOML literal (`32`, `true`, `"2Mbps"`, `[1, 2]`, `{ kind = "red" }`), else the text itself."""
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    if isinstance(value, (datetime.date, datetime.time)):  # `2024-01-01` is a date in TOML
        return text
    return value
