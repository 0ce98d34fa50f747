"""Where runs go: this process, a pool of local processes kept for as long as the `Pool` lives,
or a Dask cluster. Any function of the `iwlab` package can be sent (`run_one`, or a study's
own run-and-reduce function), with the same extra arguments for every item."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import as_completed
from typing import Any

from iwlab import workers

__all__ = ["Pool", "orphan_guard", "run_many"]


def orphan_guard(parent: int) -> None:
    """Pool worker initializer: exit when the parent process is gone (e.g. `kill -9`), rather than
    wait forever on a task queue whose other end this worker also holds."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, name="iwlab-orphan-guard", daemon=True).start()


class Pool:
    """`jobs` spawned local processes (default: all cores; 1 = this process), or a Dask cluster
    with `dask` (an address such as "tcp://host:port", or a `distributed.Client`; its workers need
    iwlab installed). The local processes start on the first `map` of more than one item and are
    kept until `close`, so rounds of runs do not pay the start-up again."""

    def __init__(self, jobs: int | None = None, dask: Any = None):
        if jobs is not None and jobs < 1:
            raise ValueError(f"jobs = {jobs} is not allowed; expected >= 1")
        self.jobs = jobs or os.cpu_count() or 1
        self.client = None
        self.own_client = False
        self.executor = None
        if dask is not None:
            from distributed import Client

            self.own_client = not isinstance(dask, Client)
            self.client = Client(dask) if self.own_client else dask

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def map(self, fn: Callable[..., Any], items: Iterable[Any], *args: Any, ordered: bool = False,
            names: Callable[[Any], str] | None = None) -> Iterator[Any]:
        """`fn(item, *args)` for every item: the results as they complete (in the items' order
        with `ordered`). `names` gives each item's Dask task key (made unique per call)."""
        items = list(items)
        if not items:
            return
        if self.client is not None:
            yield from self._dask(fn, items, args, ordered, names)
        elif self.jobs == 1 or len(items) == 1:
            for item in items:
                yield fn(item, *args)
        else:
            yield from self._local(fn, items, args, ordered)

    def _local(self, fn: Callable[..., Any], items: list[Any], args: tuple[Any, ...], ordered: bool) -> Iterator[Any]:
        if self.executor is None:
            # spawned workers that start clean and never run the caller's script (iwlab.workers)
            self.executor = workers.pool(self.jobs, orphan_guard, (os.getpid(),))
        futures = [self.executor.submit(fn, item, *args) for item in items]
        try:
            if ordered:
                for fut in futures:
                    yield fut.result()
                return
            # as_completed waits on each future once (wait(FIRST_COMPLETED) in a loop is O(items²))
            for fut in as_completed(futures):
                yield fut.result()
        finally:
            for fut in futures:
                fut.cancel()

    def _dask(self, fn: Callable[..., Any], items: list[Any], args: tuple[Any, ...], ordered: bool,
              names: Callable[[Any], str] | None) -> Iterator[Any]:
        from distributed import as_completed

        call = uuid.uuid4().hex[:8]
        keys = [f"iwlab-{fn.__name__}-{call}-{i}-{names(item) if names else ''}" for i, item in enumerate(items)]
        futures = self.client.map(fn, items, *([a] * len(items) for a in args), key=keys, pure=False)
        try:
            for fut in futures if ordered else as_completed(futures):
                yield fut.result()
        finally:
            for fut in futures:
                fut.cancel()

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None
        if self.client is not None and self.own_client:
            self.client.close()
        self.client = None


def run_many(tasks: Sequence[Any], fn: Callable[..., Any] | None = None, *args: Any, jobs: int | None = None,
             dask: Any = None, ordered: bool = False) -> Iterator[Any]:
    """`fn(task, *args)` (default `run_one`) for every task in a `Pool(jobs, dask)` made for this
    call: the results as they complete (in order with `ordered`)."""
    if fn is None:
        from iwlab.runs.execute import run_one as fn
    with Pool(min(jobs or os.cpu_count() or 1, max(len(tasks), 1)), dask) as pool:
        yield from pool.map(fn, tasks, *args, ordered=ordered, names=lambda t: getattr(t, "run_id", ""))
