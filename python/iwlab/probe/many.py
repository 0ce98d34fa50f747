"""Many targets: a bounded number of probes at once, and a bounded rate of new connections.

The defaults are polite for servers one does not run: at most 4 probes at a time and 2 new
connections per second overall (each probe holds one connection on the server until its
retransmission timer fires, ~0.2–1 s, then resets it). Raise them only for servers of your own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

DEFAULT_CONCURRENCY = 4
DEFAULT_RATE = 2.0  # new connections per second


class RateLimit:
    """Start times at least 1/rate apart (across threads)."""

    def __init__(self, rate: float):
        self.gap = 1.0 / rate
        self.next = time.monotonic()
        self.lock = threading.Lock()

    def wait(self, stop: threading.Event) -> None:
        with self.lock:
            at = max(self.next, time.monotonic())
            self.next = at + self.gap
        while not stop.is_set():
            left = at - time.monotonic()
            if left <= 0:
                return
            stop.wait(min(left, 0.05))
        raise KeyboardInterrupt


def run_many(items: Sequence, work: Callable, concurrency: int = DEFAULT_CONCURRENCY,
             rate: float = DEFAULT_RATE, stop: threading.Event | None = None,
             on_done: Callable | None = None) -> list:
    """`work(item, stop, pace)` for every item, `pace()` before each new connection; results in
    input order. An
    interrupt (KeyboardInterrupt in the calling thread) sets `stop`, lets the running probes clean
    up, and is raised again."""
    stop = stop or threading.Event()
    limit = RateLimit(rate)
    out: list = [None] * len(items)

    def one(i: int):
        out[i] = work(items[i], stop, lambda: limit.wait(stop))
        if on_done is not None:
            on_done(i, out[i])

    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="iwlab-probe")
    try:
        futures = [pool.submit(one, i) for i in range(len(items))]
        for f in futures:
            while not f.done():
                time.sleep(0.05)
            f.result()
    except BaseException:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return out
