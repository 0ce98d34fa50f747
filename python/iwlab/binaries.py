"""Where iwlab's helper programs (Rust binaries built from this workspace) are found:
`$ENV_VAR`, the workspace's release or debug build, then `PATH`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def find_binary(name: str, env_var: str) -> Path | None:
    """The first executable `name` among `$env_var`, target/release, target/debug and PATH."""
    env = os.environ.get(env_var)
    candidates = [Path(env)] if env else []
    candidates += [REPO / "target" / "release" / name, REPO / "target" / "debug" / name]
    which = shutil.which(name)
    if which:
        candidates.append(Path(which))
    return next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)
