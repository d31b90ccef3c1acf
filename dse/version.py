"""The engine's version, read from the installed distribution."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def engine_version() -> str:
    """The installed distribution's version (pyproject.toml), or ``0+unknown`` when not installed."""
    try:
        return version("dse")
    except PackageNotFoundError:
        return "0+unknown"


__version__ = engine_version()
