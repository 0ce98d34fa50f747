"""Where iwlab's helper programs (Rust binaries built from this workspace) are found:
`$ENV_VAR`, the newest of the workspace's builds (target/tools from `make tools`, target/release,
target/debug), then `PATH`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# cargo's output directories for the profiles the helpers are built with (Cargo.toml)
PROFILES = ("tools", "release", "debug")


def _executable(p: Path) -> bool:
    return p.is_file() and os.access(p, os.X_OK)


def find_binary(name: str, env_var: str) -> Path | None:
    """The first executable `name` among `$env_var`, the workspace's builds (the newest first:
    an older build of another profile is stale) and PATH."""
    env = os.environ.get(env_var)
    if env and _executable(Path(env)):
        return Path(env)
    built = [p for p in (REPO / "target" / d / name for d in PROFILES) if _executable(p)]
    if built:
        return max(built, key=lambda p: p.stat().st_mtime)
    which = shutil.which(name)
    return Path(which) if which else None
