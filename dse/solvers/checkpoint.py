"""Checkpoints of the exact box search: what a killed run needs to go on where it was.

The exact search by search-region boxes (:func:`~dse.solvers.cpsat.solve_cpsat_boxes`, and its Dask
driver :func:`~dse.solvers.cpsat_distributed.solve_cpsat_distributed`) is fully described at any moment
by three things: the points found, the boxes still open (each with its proven lower corner) and the
``top`` corner the first box started from. Every box not in the list was closed by a proof, so a run
restarted from that state searches only what is still open and ends on the same front and certificate.
Restarting from the points alone (``dse solve --resume`` on a ``front.json``) searches again every box
already proven empty.

A run given a :class:`Checkpoint` writes a :class:`RegionState` to ``write_to`` (JSON, replaced
atomically, so a kill leaves the previous state or the new one, never half of one) at most every
``every_s`` seconds while it searches, and once more when it ends, whatever the reason; it reads
``read_from`` first. A state is used only when it was written for the same problem (``key``: the
spec's SHA-256, given by ``dse solve``) and the same ``top`` (the formulation's objective domains);
otherwise the run starts afresh and its progress says why. A file that is not a checkpoint of this
format is refused, naming the file, the field and the value (:class:`~dse.errors.SpecError`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from dse.errors import OutputError, SpecError
from dse.util.files import write_text
from dse.util.validation import spec_error_from_validation

__all__ = ["Checkpoint", "Checkpointer", "RegionState", "read_state", "resumable", "write_state"]

#: The format line of a checkpoint file.
FORMAT = "dse-region-checkpoint/1"

_Int = Annotated[StrictInt, Field(ge=-(2**62), le=2**62)]


@dataclass(frozen=True)
class Checkpoint:
    """Where a run keeps its state: ``write_to`` (its own), ``read_from`` (a previous run's, or None),
    ``key`` (what the problem is: a state of another key is not used) and ``every_s``, the least seconds
    between two writes while searching."""

    write_to: Path
    key: str
    read_from: Path | None = None
    every_s: float = 1.0


@dataclass(frozen=True)
class RegionState:
    """A box search's state: ``top`` (the first box's upper corner), the open ``boxes`` as (upper corner,
    proven lower corner) pairs, and the points found, ``genomes`` with their objective ``values``."""

    top: tuple[int, ...]
    boxes: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    genomes: tuple[tuple[int, ...], ...]
    values: tuple[tuple[int, ...], ...]

    @staticmethod
    def of(top: Sequence[int], boxes: Sequence[tuple[int, ...]], lowers: dict[tuple[int, ...], tuple[int, ...]],
           genomes: Sequence[np.ndarray], values: Sequence[tuple[int, ...]]) -> RegionState:
        """The state of a search holding ``boxes`` with their ``lowers`` and the points ``genomes``/``values``."""
        return RegionState(tuple(int(v) for v in top),
                           tuple((tuple(map(int, u)), tuple(map(int, lowers[u]))) for u in boxes),
                           tuple(tuple(int(g) for g in genome) for genome in genomes),
                           tuple(tuple(map(int, z)) for z in values))

    def lowers(self) -> dict[tuple[int, ...], tuple[int, ...]]:
        """Each open box's proven lower corner."""
        return dict(self.boxes)


def resumable(checkpoint: Checkpoint | None) -> bool:
    """Whether ``checkpoint`` names a previous run's file to go on from (it may still not fit the problem)."""
    return checkpoint is not None and checkpoint.read_from is not None and checkpoint.read_from.is_file()


class _StateFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: StrictStr
    key: StrictStr
    top: list[_Int] = Field(min_length=1)
    boxes: list[tuple[list[_Int], list[_Int]]]
    genomes: list[list[_Int]]
    values: list[list[_Int]]


def write_state(path: Path, key: str, state: RegionState) -> None:
    """Write ``state`` to ``path`` (replaced atomically: :func:`dse.util.files.write_text`). Raises
    :class:`~dse.errors.OutputError` when it cannot be written."""
    data = {"format": FORMAT, "key": key, "top": list(state.top),
            "boxes": [[list(u), list(low)] for u, low in state.boxes],
            "genomes": [list(g) for g in state.genomes], "values": [list(z) for z in state.values]}
    write_text(path, json.dumps(data, separators=(",", ":")) + "\n")


def read_state(path: Path, key: str, top: Sequence[int], n_genes: int) -> tuple[RegionState | None, str]:
    """The state in ``path`` when it was written for ``key`` and ``top``, with ``n_genes`` genes a genome;
    else None, with the reason (no file, another problem, other objective domains). Raises
    :class:`~dse.errors.SpecError` naming the file, the field and the value when the file is not a
    checkpoint (not JSON, another format, a field of the wrong shape)."""
    if not path.is_file():
        return None, f"no checkpoint at {path}"
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SpecError(str(path), "checkpoint", path.name, f"cannot be read as JSON: {exc}") from None
    try:
        parsed = _StateFile.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(str(path), exc, data, _StateFile) from None
    if parsed.format != FORMAT:
        raise SpecError(str(path), "format", parsed.format, f"is not a checkpoint of this version ({FORMAT})")
    k = len(parsed.top)
    for name, rows, width in (("boxes", [c for pair in parsed.boxes for c in pair], k),
                              ("values", parsed.values, k), ("genomes", parsed.genomes, n_genes)):
        bad = next((row for row in rows if len(row) != width), None)
        if bad is not None:
            raise SpecError(str(path), name, bad, f"has {len(bad)} entries where this problem has {width}")
    if len(parsed.genomes) != len(parsed.values):
        raise SpecError(str(path), "values", len(parsed.values), f"must pair with the {len(parsed.genomes)} genomes")
    if parsed.key != key:
        return None, f"{path} was written for another problem"
    if tuple(parsed.top) != tuple(int(t) for t in top):
        return None, f"{path} was written for other objective domains"
    return RegionState(tuple(parsed.top), tuple((tuple(u), tuple(low)) for u, low in parsed.boxes),
                       tuple(tuple(g) for g in parsed.genomes), tuple(tuple(z) for z in parsed.values)), ""


class Checkpointer:
    """Writes a run's state to its :class:`Checkpoint` at most every ``every_s`` seconds (:meth:`due`
    says when) and at the end (:meth:`write`); does nothing without one. A write that fails (a full
    disk) ends the checkpointing, never the search: :meth:`summary` says so."""

    def __init__(self, checkpoint: Checkpoint | None) -> None:
        self.checkpoint = checkpoint
        self._last = -math.inf  # the first look writes: a run killed early still leaves its state
        self.restored: RegionState | None = None
        self.notes: list[str] = []

    def restore(self, top: Sequence[int], n_genes: int, note: Callable[[str], None]) -> RegionState | None:
        """The previous run's state, when the checkpoint names one that fits (else None, and ``note`` says
        why). Raises :class:`~dse.errors.SpecError` for a file that is not a checkpoint."""
        if self.checkpoint is None or self.checkpoint.read_from is None:
            return None
        self.restored, why = read_state(self.checkpoint.read_from, self.checkpoint.key, top, n_genes)
        if self.restored is None:
            self.notes.append(f"checkpoint not used, starting afresh: {why}")
            note(self.notes[-1])
        return self.restored

    def due(self) -> bool:
        """Whether a write is due (``every_s`` since the last)."""
        return self.checkpoint is not None and time.monotonic() - self._last >= self.checkpoint.every_s

    def write(self, state: Callable[[], RegionState]) -> None:
        """Write ``state()`` now (nothing without a checkpoint, or after a write failed)."""
        if self.checkpoint is None:
            return
        try:
            write_state(self.checkpoint.write_to, self.checkpoint.key, state())
        except OutputError as exc:
            self.notes.append(f"checkpointing stopped: {exc}")
            self.checkpoint = None
        self._last = time.monotonic()

    def summary(self) -> str:
        """What the checkpoint did, for a run's stats message: ``""`` without one."""
        parts = list(self.notes)
        if self.restored is not None:
            parts.insert(0, f"went on from a checkpoint ({len(self.restored.values)} points, "
                            f"{len(self.restored.boxes)} open boxes)")
        return "".join(f"{p}; " for p in parts)
