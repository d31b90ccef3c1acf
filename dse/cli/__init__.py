"""Layer 11, face: the ``dse`` command (:mod:`~dse.cli.app`) and its subcommands
(:mod:`~dse.cli.commands`, one module each)."""

from __future__ import annotations

from dse.cli.app import main

__all__ = ["main"]
