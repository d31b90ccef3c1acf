"""Sweeps: problem specs times a grid of dotted-path overrides, expanded into jobs with stable identities.

A grid is a YAML mapping from a spec field's dotted path to the values it takes::

    constraints.power_w: [200, 300, 400]
    solver.seed: [0, 1, 2]
    platform: [server_cpu_gpu_fpga, edge_soc]

Every combination of values, applied to every spec, is one :class:`Job`. A
job's identity is the SHA-256 of the canonical JSON of its resolved spec
mapping together with the SHA-256 of every file that mapping names (catalog
platforms and workloads by name, and any ``path:`` entry), so a renamed or
moved file with the same content is the same job and an edited file is a new
one. Workloads built by a builder are identified by their parameters; the
engine's version is recorded with each result but is not part of the identity.

Example::

    jobs = expand_jobs(["problems/quickstart.yaml"], {"solver.seed": [0, 1]})
"""

from __future__ import annotations

import glob
import hashlib
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dse.errors import SpecError
from dse.inputs import catalog
from dse.runs.spec import apply_override, check_path
from dse.util.yamlio import read_yaml

#: Most jobs one sweep may expand to (a typo such as a 1,000-value range times a few others).
MAX_JOBS = 1_000_000

#: A spec given as a file path, or as a mapping already parsed.
SpecInput = str | Path | Mapping[str, Any]


@dataclass(frozen=True)
class Job:
    """One resolved spec to solve.

    ``spec``: the spec mapping with the grid's overrides applied; ``swept``: the
    value of each swept field (dotted path -> value; ``spec`` names the file when
    a sweep has several); ``source``: the spec's file (or ``<spec>``); ``base``:
    the folder its relative paths are read from; ``job_id``: the identity hash.
    """

    job_id: str
    spec: dict[str, Any]
    swept: dict[str, Any] = field(default_factory=dict)
    source: str = "<spec>"
    base: str = "."


def canonical_json(value: Any) -> str:
    """``value`` as JSON with sorted keys and no spaces: equal mappings give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _named_files(spec: Mapping[str, Any], base: Path) -> dict[str, str]:
    """SHA-256 of each file ``spec`` reads: catalog/relative ``platform`` and ``workload`` names and
    every ``path`` entry; references that resolve to no file are left to the job to report."""
    found: dict[str, str] = {}
    for kind, key in (("platforms", "platform"), ("workloads", "workload")):
        ref = spec.get(key)
        if isinstance(ref, str):
            path = catalog.find(kind, ref, base)
            if path is not None:
                found[f"{key}:{ref}"] = _file_digest(path)

    def walk(value: Any, where: str) -> None:
        if isinstance(value, Mapping):
            ref = value.get("path")
            if isinstance(ref, str) and ref:
                for path in (base / ref, Path(ref), catalog.home() / ref):
                    try:
                        if path.is_file():
                            found[f"{where}.path:{ref}"] = _file_digest(path)
                            break
                    except (OSError, ValueError):
                        break
            for k, v in value.items():
                walk(v, f"{where}.{k}" if where else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]")

    walk(spec, "")
    return found


def job_identity(spec: Mapping[str, Any], base: str | Path = ".") -> str:
    """The job id of ``spec``: SHA-256 (hex) of its canonical JSON and of the files it names."""
    doc = {"spec": spec, "files": _named_files(spec, Path(base))}
    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()


def make_job(spec: Mapping[str, Any], swept: Mapping[str, Any] | None = None, source: str = "<spec>",
             base: str | Path = ".") -> Job:
    """A :class:`Job` for one spec mapping (its id computed from the spec and the files it names)."""
    data = json.loads(canonical_json(spec))  # a plain, independent copy
    base_path = str(Path(base).resolve())
    return Job(job_identity(data, base_path), data, dict(swept or {}), str(source), base_path)


# ------------------------------------------------------------------ grids
def load_grid(grid: str | Path | Mapping[str, Any] | None) -> dict[str, list[Any]]:
    """A grid from a YAML file or a mapping: dotted path -> list of values (a scalar is one value).

    Raises :class:`SpecError` for a file that is not such a mapping, a key that names no spec
    field, or an empty list of values.
    """
    if grid is None:
        return {}
    source = str(grid) if not isinstance(grid, Mapping) else "grid"
    data = read_yaml(grid) if not isinstance(grid, Mapping) else grid
    if not isinstance(data, Mapping):
        raise SpecError(source, "<root>", type(data).__name__,
                        "a grid must be a mapping from spec field paths to lists of values")
    out: dict[str, list[Any]] = {}
    for key, values in data.items():
        check_path(str(key), source)
        listed = list(values) if isinstance(values, list | tuple) else [values]
        if not listed:
            raise SpecError(source, str(key), [], "give at least one value")
        out[str(key)] = listed
    return out


# ------------------------------------------------------------------ specs and jobs
def spec_files(refs: Iterable[str | Path]) -> list[Path]:
    """Spec files named by ``refs``: files, folders (their ``*.yaml``) and glob patterns, in order.

    Raises :class:`SpecError` for a reference that names no file.
    """
    found: list[Path] = []
    for ref in refs:
        text = str(ref)
        path = Path(text)
        if any(ch in text for ch in "*?["):
            matches = sorted(Path(m) for m in glob.glob(text, recursive=True) if Path(m).is_file())
        elif path.is_dir():
            matches = sorted([*path.glob("*.yaml"), *path.glob("*.yml")])
        else:
            matches = [path] if path.is_file() else []
            if not matches:
                named = catalog.problems_dir() / f"{text}.yaml"
                matches = [named] if "/" not in text and named.is_file() else []
        if not matches:
            raise SpecError("command line", "SPEC", text, "no such spec file, folder or matching file")
        found += [m for m in matches if m not in found]
    return found


def expand_jobs(specs: SpecInput | Sequence[SpecInput], grid: str | Path | Mapping[str, Any] | None = None
                ) -> list[Job]:
    """Every job of ``specs`` (files, folders, globs or mappings) times ``grid``; duplicates once.

    Raises :class:`SpecError` for an unreadable spec file, a bad grid or a sweep past
    :data:`MAX_JOBS`. A spec whose content is invalid still becomes a job: it fails when run.
    """
    items = [specs] if isinstance(specs, str | Path | Mapping) else list(specs)
    loaded: list[tuple[Mapping[str, Any], str, Path]] = []
    for item in items:
        if isinstance(item, Mapping):
            loaded.append((dict(item), "<spec>", Path(".")))
        else:
            for path in spec_files([item]):
                data = read_yaml(path)
                if not isinstance(data, Mapping):
                    raise SpecError(str(path), "<root>", type(data).__name__, "a problem spec must be a YAML mapping")
                loaded.append((data, str(path), path.parent))
    table = load_grid(grid)
    total = len(loaded)
    for values in table.values():
        total *= len(values)
    if total > MAX_JOBS:
        raise SpecError(str(grid), "<grid>", total, f"expands to more than {MAX_JOBS:,} jobs")
    several = len(loaded) > 1
    jobs: dict[str, Job] = {}
    for data, source, base in loaded:
        for combo in itertools.product(*table.values()):
            swept = dict(zip(table, combo, strict=True))
            spec = json.loads(canonical_json(data))
            for dotted, value in swept.items():
                apply_override(spec, dotted, value, str(grid) if grid is not None else "grid")
            if several:
                swept = {"spec": Path(source).stem if source != "<spec>" else str(spec.get("name", "?")),
                         **swept}
            job = make_job(spec, swept, source, base)
            jobs.setdefault(job.job_id, job)
    return list(jobs.values())
