"""Running a probe inside a network namespace (`/run/netns/NAME`): setns(2) on the calling
thread, which is where the prober's sockets and the `nft` it runs are created."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from iwlab.probe.errors import ProbeInputError

CLONE_NEWNET = 0x40000000


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise PermissionError(err, f"setns: {os.strerror(err)} (iwlab probe --netns needs root)")


@contextmanager
def in_netns(name: str | None) -> Iterator[None]:
    """Inside the block this thread is in namespace `name` (None: stays where it is)."""
    if name is None:
        yield
        return
    path = Path("/run/netns") / name
    if "/" in name or not path.exists():
        raise ProbeInputError(f"--netns = {name!r}: no such network namespace (allowed: a name under /run/netns)")
    back = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            _setns(fd)
        finally:
            os.close(fd)
        try:
            yield
        finally:
            _setns(back)
    finally:
        os.close(back)
