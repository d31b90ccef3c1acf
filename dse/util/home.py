"""Where the bundled catalog lives: ``models/`` (platforms, workloads, datasets...) and ``problems/``.

The catalog is found in ``$DSE_HOME`` if set, else in the checkout that holds this
package. Only folder locations live here, so that any layer can find its files;
:mod:`dse.inputs.catalog` lists and describes what the folders hold.
"""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """Root folder holding ``models/`` and ``problems/``."""
    env = os.environ.get("DSE_HOME")
    return Path(env) if env else Path(__file__).resolve().parents[2]


def models_dir() -> Path:
    return home() / "models"


def problems_dir() -> Path:
    return home() / "problems"
