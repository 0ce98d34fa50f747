"""Field paths (`apps[0].count`, `topology.bottleneck.rate`): parse them, set them in scenario
data, find the pydantic type they lead to, read `--set PATH=VALUE` overrides, and describe
pydantic's errors by the path the user wrote (union tags left out).

Values of `--set` are TOML literals (`32`, `true`, `"2Mbps"`, `{ kind = "red" }`); text that is
not a TOML literal is taken as a bare string (`2Mbps`, `cubic`, `20s`). A literal that the
field does not accept but whose text it does is also taken as a string (`apps[0].http=1.1`
gives `"1.1"`, `name=2024` gives `"2024"`).

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
import json
import re
import sys
import typing
from functools import lru_cache
from typing import Annotated, Any, Union

from pydantic import BaseModel, Discriminator, Tag, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["PathError", "Seg", "annotation_at", "coerce", "describe_errors", "format_path", "literal", "parse_path",
           "set_path", "split_set", "tags_of", "walk_loc"]

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


# --- walking the pydantic models -----------------------------------------------------------

@lru_cache(maxsize=None)
def _hints(model: type[BaseModel]) -> dict[str, Any]:
    return typing.get_type_hints(model, include_extras=True)


def _discriminator(meta: typing.Iterable[Any]) -> str | Discriminator | None:
    for m in meta:
        if isinstance(m, Discriminator):
            return m
        if isinstance(m, FieldInfo) and m.discriminator is not None:
            return m.discriminator
    return None


def _unwrap(tp: Any) -> tuple[Any, str | Discriminator | None]:
    """Strips `Annotated` and `Optional`; returns the bare type and a union's discriminator."""
    disc = None
    while True:
        if typing.get_origin(tp) is Annotated:
            disc = _discriminator(tp.__metadata__) or disc
            tp = typing.get_args(tp)[0]
            continue
        args = typing.get_args(tp)
        if typing.get_origin(tp) is Union and type(None) in args:
            rest = [a for a in args if a is not type(None)]
            tp = rest[0] if len(rest) == 1 else Union[tuple(rest)]
            continue
        return tp, disc


def _member(tp: Any, disc: str | Discriminator, tag: Any) -> Any:
    for arg in typing.get_args(tp):
        if isinstance(disc, str):
            model, _ = _unwrap(arg)
            kind = _hints(model).get(disc) if isinstance(model, type) and issubclass(model, BaseModel) else None
            if kind is not None and tag in typing.get_args(_unwrap(kind)[0]):
                return arg
        elif typing.get_origin(arg) is Annotated:
            if any(isinstance(m, Tag) and m.tag == tag for m in arg.__metadata__):
                return arg
    return None


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def walk_loc(root: type[BaseModel], loc: tuple[Seg, ...]) -> tuple[list[Seg], type[BaseModel] | None, Any]:
    """The user-visible path of a pydantic error location (union tags dropped), the last
    model on the way (whose fields an unknown key could have been) and the type reached."""
    tp: Any = root
    out: list[Seg] = []
    model: type[BaseModel] | None = root
    for seg in loc:
        base, disc = _unwrap(tp)
        if typing.get_origin(base) is Union:
            if disc is None:
                break  # a plain union: the rest of `loc` names its members
            tp = _member(base, disc, seg)
            if tp is None:
                break
            continue
        out.append(seg)
        if _is_model(base):
            model = base
            tp = _hints(base).get(str(seg))
        elif typing.get_origin(base) is list:
            tp = typing.get_args(base)[0]
        elif typing.get_origin(base) is dict:
            tp = typing.get_args(base)[1]
        else:
            tp = None
        if tp is None:
            break
    return out, model, tp


def tags_of(tp: Any) -> list[str]:
    """The `kind`s of a union discriminated by `kind` (after `walk_loc`), else []."""
    base, disc = _unwrap(tp)
    if typing.get_origin(base) is Union and isinstance(disc, Discriminator):  # fixed-or-dist: the dist part
        return [t for arg in typing.get_args(base) for t in tags_of(arg)]
    if typing.get_origin(base) is not Union or not isinstance(disc, str):
        return []
    return [t for arg in typing.get_args(base) for t in typing.get_args(_unwrap(_hints(_unwrap(arg)[0])[disc])[0])]


def describe_errors(root: type[BaseModel], e: ValidationError) -> tuple[str, str]:
    """The path and a one-line message (naming the path, the value and what is allowed) of the
    first problem pydantic found, with the number of other fields that have problems."""
    problems: dict[str, str] = {}
    for err in e.errors(include_url=False):
        path, msg = _describe(root, err)
        problems.setdefault(path, msg)
    path, msg = next(iter(problems.items()))
    if len(problems) > 1:
        msg += f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})"
    return path, msg


def _describe(root: type[BaseModel], err: Any) -> tuple[str, str]:
    segs, model, tp = walk_loc(root, tuple(err["loc"]))
    path = format_path(segs)
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind == "extra_forbidden":
        allowed = ", ".join(f"`{k}`" for k in (model.model_fields if model else {}))
        return path, f"{path}: unknown key `{segs[-1]}`; expected one of {allowed}"
    if kind == "missing":
        return path, f"{path}: missing; this key is required"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        at = format_path([*segs, "kind"])
        tags = ctx.get("expected_tags") or ", ".join(f"'{t}'" for t in tags_of(tp))
        got = "is missing" if kind == "union_tag_not_found" else f"= {json.dumps(ctx.get('tag'))} is not allowed"
        return at, f"{at} {got}; expected one of {tags}"
    value = json.dumps(err.get("input"), default=str)
    value = value if len(value) <= 60 else value[:57] + "..."
    what = err["msg"][0].lower() + err["msg"][1:]
    return path, f"{path} = {value} is not allowed: {what}"


def annotation_at(root: type[BaseModel], data: Any, segs: list[Seg]) -> Any:
    """The annotation of the field `segs` leads to in `data` (unions resolved by the data's
    `kind` and shape), or None if the path leaves the model."""
    tp: Any = root
    node = data
    for seg in segs:
        base, disc = _unwrap(tp)
        if typing.get_origin(base) is Union and disc is not None:
            tag = node.get(disc) if isinstance(disc, str) and isinstance(node, dict) else None
            if isinstance(disc, Discriminator) and callable(disc.discriminator) and node is not None:
                tag = disc.discriminator(node)
            base, _ = _unwrap(_member(base, disc, tag)) if tag is not None else (None, None)
        if _is_model(base) and isinstance(seg, str):
            tp = _hints(base).get(seg)
        elif typing.get_origin(base) is list and isinstance(seg, int):
            tp = typing.get_args(base)[0]
        elif typing.get_origin(base) is dict and isinstance(seg, str):
            tp = typing.get_args(base)[1]
        else:
            return None
        if tp is None:
            return None
        node = _child(node, seg)
    return tp


def _child(node: Any, seg: Seg) -> Any:
    if isinstance(node, dict) and isinstance(seg, str):
        return node.get(seg)
    if isinstance(node, list) and isinstance(seg, int) and seg < len(node):
        return node[seg]
    return None


_RANGE_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "too_short", "too_long"}


def coerce(annotation: Any, value: Any, text: str) -> Any:
    """`value` (a parsed literal), or `text` if `value` is a number of a type the field does
    not take while the field takes the text (`http=1.1`, `name=2024`)."""
    if annotation is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    adapter = TypeAdapter(annotation)
    try:
        adapter.validate_python(value)
        return value
    except ValidationError as e:
        if any(err["type"] in _RANGE_ERRORS for err in e.errors()):
            return value
    try:
        adapter.validate_python(text)
        return text
    except ValidationError:
        return value


