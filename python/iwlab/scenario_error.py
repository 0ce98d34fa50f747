"""The error of a rejected scenario, below the loader (`scenario_io`), which raises it."""

from __future__ import annotations

from typing import Any

from iwlab import _core

__all__ = ["ScenarioError"]


class ScenarioError(_core.ScenarioError):
    """A rejected scenario: `message` names the field path, the value and what is allowed;
    `path` is the field path (`apps[0].count`), `line`/`column` (1-based) locate it in
    `source` (a file name, `--set …` or `<memory>`) when known.

    >>> str(ScenarioError("apps[0].count = 0 is not allowed; expected >= 1", "apps[0].count", 12, 1, "a.toml"))
    'a.toml:12:1: apps[0].count = 0 is not allowed; expected >= 1'
    """

    def __init__(self, message: str, path: str = "", line: int | None = None, column: int | None = None,
                 source: str | None = None) -> None:
        super().__init__(message, path, line, column)
        self.message, self.path, self.line, self.column, self.source = message, path, line, column, source

    def __reduce__(self) -> tuple[Any, ...]:  # keeps `source` across processes (sweeps)
        return type(self), (self.message, self.path, self.line, self.column, self.source)

    def __str__(self) -> str:
        where = self.source or ""
        if where and self.line is not None:
            where += f":{self.line}:{self.column}"
        text = f"{where}: {self.message}" if where else self.message
        # one line, whatever the user typed: a control character (a newline in a --set value)
        # is shown escaped, as repr shows it
        return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)

    @classmethod
    def from_core(cls, e: _core.ScenarioError, source: str | None, located: bool = True) -> ScenarioError:
        """An error of the core, with its `source`; `located`: its line refers to the user's
        text (not to JSON made here)."""
        message, path, line, column = (list(e.args) + ["", None, None])[:4]
        message = str(message)
        if line is not None:
            message = message.removesuffix(f" (at line {line}, column {column})")
            message = message.replace(f"syntax error at line {line}, column {column}:", "syntax error:")
        message = "; ".join(part.strip() for part in message.splitlines() if part.strip())
        if not located:
            line = column = None
        return cls(message, str(path or ""), line, column, source)
