"""Process pools that never run the user's script again: `iwlab.sweep(...)` and every other
parallel entry point work from a plain script with no `if __name__ == "__main__":` guard.

multiprocessing's "spawn" start method (chosen because workers then start clean: no inherited
threads or locks from pyarrow, tqdm or the caller) prepares each child by running the parent's
main module again under the name `__mp_main__` (multiprocessing/spawn.py,
`get_preparation_data` → `init_main_from_path`/`init_main_from_name`), so that functions
defined there can be unpickled. A script that calls a pool at its top level then calls it
again in every child, and the child refuses (`freeze_support()` … "bootstrapping phase"): the
pool breaks (BrokenProcessPool). iwlab's workers need nothing from `__main__` — every task is a
function and data of the `iwlab` package — so this context's processes are launched with the
main module left out of the preparation data: a child imports `iwlab` and nothing else.
"""

from __future__ import annotations

import os
import sys
import threading
from multiprocessing import context, popen_spawn_posix

__all__ = ["CONTEXT", "pid_alive", "pool"]

_LAUNCH = threading.Lock()


class _Popen(popen_spawn_posix.Popen):
    def _launch(self, process_obj) -> None:
        """The spawn launch, with `__main__`'s file and spec out of sight while the preparation
        data is made (the child then skips running the main module)."""
        main = sys.modules.get("__main__")
        if main is None:
            return super()._launch(process_obj)
        with _LAUNCH:
            saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
            main.__dict__.pop("__file__", None)
            main.__dict__["__spec__"] = None
            try:
                super()._launch(process_obj)
            finally:
                main.__dict__.pop("__spec__", None)
                main.__dict__.update(saved)


class _Process(context.SpawnProcess):
    _start_method = "spawn"

    @staticmethod
    def _Popen(process_obj):
        return _Popen(process_obj)


class _Context(context.SpawnContext):
    Process = _Process


CONTEXT = _Context()


def pool(jobs: int, initializer=None, initargs: tuple = ()):
    """A `ProcessPoolExecutor` of `jobs` clean spawned workers (see the module docstring)."""
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=jobs, mp_context=CONTEXT, initializer=initializer, initargs=initargs)


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (one owned by another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
