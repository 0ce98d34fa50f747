"""The advisor's progress: a bar on a terminal; elsewhere (a pipe, a log file, CI) one plain line
per round, since a bar's carriage returns turn into garbage there."""

from __future__ import annotations

import sys
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """`enabled`: show progress at all. `stream` (default stderr): a bar when it is a terminal, a
    line per `round()` otherwise."""

    def __init__(self, enabled: bool, desc: str, unit: str = "run", total: int = 0, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(enabled and isatty is not None and isatty())
        self.bar: Any = None
        self.done = 0
        self.desc = desc
        if self.tty:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, file=self.stream, dynamic_ncols=True)

    def round(self, text: str, runs: int) -> None:
        """A new round of `runs` runs, described by `text`."""
        if self.bar is not None:
            self.bar.set_description(text)
            self.bar.total += runs
            self.bar.refresh()
        elif self.enabled:
            print(f"{self.desc}: {text}: {runs} runs", file=self.stream, flush=True)

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)

    def line(self, text: str) -> None:
        """A message between rounds (above the bar on a terminal)."""
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        elif self.enabled:
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
