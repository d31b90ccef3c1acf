"""Result files read back as specs are: through a schema, never trusted.

A ``front.json`` (``dse solve --out``, :meth:`dse.pareto.ParetoSet.to_json`), a
``front.csv`` and a batch store's rows may have been damaged or edited by hand
before ``dse report``, ``dse results``, ``dse certify``, ``dse solve --resume``
or a trace writer reads them. Each goes through a pydantic model here; what does
not fit (a front that is not an object, a gene given as text or past
:data:`MAX_GENE`, an objective given as text, swept fields that are not an
object, a finish time of ``"yesterday"``, an infinite wall time) is one
:class:`~dse.errors.SpecError` naming the file, the field and the value (exit 2).
Fields a reader does not use are let through, so files of earlier versions
still read.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)
from pydantic.functional_validators import AfterValidator

from dse.errors import SpecError
from dse.util.validation import spec_error_from_validation

#: The largest gene a result file may hold (the genomes' own bound: ``dse.pareto.MAX_GENE_VALUE``).
MAX_GENE = 2**31 - 1


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


#: A gene: an integer (never text, a float or a boolean) in [0, MAX_GENE].
Gene = Annotated[StrictInt, Field(ge=0, le=MAX_GENE)]
#: A number as JSON writes one (never text or a boolean); NaN and infinities are what a solver may have written.
Number = StrictFloat
#: A finite number of seconds, at least 0 (a time, a duration).
Seconds = Annotated[Number, Field(ge=0), AfterValidator(_finite)]


class _Lenient(BaseModel):
    """A record whose unused fields pass through (files of earlier versions keep reading)."""

    model_config = ConfigDict(extra="allow", frozen=True)


class ObjectiveRecord(_Lenient):
    column: StrictStr
    sense: StrictStr = "min"


class FoundByRecord(_Lenient):
    """Who found a point of a distributed run: a worker's label and its task's number, or ``seed``/``resume``."""

    worker: StrictStr
    task: Annotated[StrictInt, Field(ge=1)] | None = None


class PointRecord(_Lenient):
    genome: list[Gene]
    objectives: dict[str, Number | None] = {}
    metrics: dict[str, StrictFloat | StrictStr | StrictBool | None] = {}
    feasible: StrictBool = True
    proven: StrictBool = False
    solver: StrictStr | None = None
    found_by: FoundByRecord | None = None  # written since distributed runs record it; older files lack it


class StatsRecord(_Lenient):
    wall_s: Seconds = 0.0


class FrontRecord(_Lenient):
    solver: StrictStr = ""
    status: StrictStr = ""
    complete: StrictBool = False
    objectives: list[ObjectiveRecord] = []
    stats: StatsRecord = StatsRecord()
    points: list[PointRecord] = []
    baselines: dict[str, PointRecord] = {}


class FrontFile(_Lenient):
    """A ``dse solve --out`` front.json: the problem's name, the spec recorded at solve time, the fronts."""

    problem: StrictStr | None = None
    spec: StrictStr | None = None
    #: The SHA-256 of the spec file's bytes at solve time (``dse certify`` refuses a spec changed since).
    spec_sha256: StrictStr | None = None
    fronts: list[FrontRecord]


class JobRecord(BaseModel):
    """A store's job row as the readers use it."""

    model_config = ConfigDict(frozen=True)

    job_id: StrictStr
    status: StrictStr
    swept: dict[str, Any]
    wall_s: Seconds | None = None
    finished_at: Seconds


def _validated(model: type[BaseModel], data: Any, source: str, prefix: str = "") -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = spec_error_from_validation(source, exc, data, model)
        raise SpecError(error.source, f"{prefix}{error.field}" if error.field != "<root>" or not prefix
                        else prefix.rstrip("."), error.value, error.reason) from None


def front_file(data: Any, source: str) -> dict[str, Any]:
    """``data`` (a parsed front.json) checked as :class:`FrontFile`; a single front
    (:meth:`~dse.pareto.ParetoSet.to_json`) is read as a file of one front. Returns ``data`` (a dict)
    unchanged; raises :class:`SpecError` naming ``source``, the field and the value."""
    if not isinstance(data, dict):
        raise SpecError(source, "<root>", type(data).__name__, "must be an object (a front.json written by dse)")
    _validated(FrontFile, data if "fronts" in data else {"fronts": [data]}, source)
    return data


def store_front(data: Any, source: str, where: str) -> dict[str, Any]:
    """One front of a store's ``fronts`` table (``where`` names its row) checked as :class:`FrontRecord`;
    returns it (a dict). Raises :class:`SpecError`."""
    if not isinstance(data, dict):
        raise SpecError(source, where, type(data).__name__, "must be an object (a front as dse batch writes it)")
    _validated(FrontRecord, data, source, f"{where}.")
    return data


def store_job(row: dict[str, Any], source: str, where: str) -> JobRecord:
    """One job row of a store (``swept`` already parsed) checked as :class:`JobRecord`. Raises
    :class:`SpecError`."""
    return _validated(JobRecord, row, source, f"{where}.")
