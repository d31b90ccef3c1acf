"""The bundled catalog: platforms and workloads under ``models/``, problem specs under ``problems/``.

The catalog is found in ``$DSE_HOME`` if set, else in the checkout that
holds this package (``<repo>/models``, ``<repo>/problems``).
"""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """Root folder holding ``models/`` and ``problems/``."""
    env = os.environ.get("DSE_HOME")
    return Path(env) if env else Path(__file__).resolve().parents[1]


def models_dir() -> Path:
    return home() / "models"


def problems_dir() -> Path:
    return home() / "problems"


def _names(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def platforms() -> list[str]:
    """Names of the catalog's platforms."""
    return _names(models_dir() / "platforms")


def workloads() -> list[str]:
    """Names of the catalog's workload files (builders are listed by :func:`builders`)."""
    return _names(models_dir() / "workloads")


def problems() -> list[str]:
    return _names(problems_dir())


def builders() -> list[str]:
    from dse.builders import BUILDERS

    return sorted(BUILDERS)


def _is_file(path: Path) -> bool:
    """``path.is_file()``, but False (not an exception) for a name too long or not representable."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def find(kind: str, ref: str, base: Path | None = None) -> Path | None:
    """Resolve ``ref`` (a catalog name or a path, relative to ``base`` or the catalog home).

    Returns the first candidate that is a file, or ``None`` (also for a name the OS rejects,
    e.g. one too long), so that the caller reports the reference it could not resolve.
    """
    candidates = []
    ref_path = Path(ref)
    if ref_path.suffix in (".yaml", ".yml") or "/" in ref or ref_path.suffix:
        if base is not None:
            candidates.append(base / ref_path)
        candidates += [ref_path, home() / ref_path]
    else:
        candidates.append(models_dir() / kind / f"{ref}.yaml")
    for path in candidates:
        if _is_file(path):
            return path
    return None
