"""The two kinds of failure of a probe: bad input (exit 2) and a network outcome (exit 1)."""

from __future__ import annotations


class ProbeError(Exception):
    """A probe that could not measure: the target did not answer, refused, or reset."""

    usage = False


class ProbeInputError(ProbeError):
    """Bad input: a target that is not a URL or HOST:PORT, an MSS out of range, a missing namespace."""

    usage = True
