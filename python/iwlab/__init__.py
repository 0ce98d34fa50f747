"""iwlab: a laboratory for TCP's initial congestion window."""

from iwlab._core import core_version

__version__ = "0.1.0"
__all__ = ["__version__", "core_version"]
