"""The accepted range of a run's seed and time limit, checked the same way for specs, the command line
and the Python API; the largest input file an importer reads."""

from __future__ import annotations

import math
import numbers
import os

from dse.errors import SpecError

#: Largest seed accepted (CP-SAT's random_seed is a 32-bit integer).
MAX_SEED = 2**31 - 1
#: Longest time limit accepted, in seconds (30 days).
MAX_TIME_LIMIT_S = 30 * 24 * 3600.0
#: Longest deadline in the cost tables' integer time unit: far inside int64 and CP-SAT's domains.
MAX_DEADLINE_TU = 2**53


def check_seed(seed: object, source: str = "command line", flag: str = "--seed") -> int:
    """``seed`` (an integer, or the command line's text of one) as an int in [0, MAX_SEED]; :class:`SpecError`
    (exit 2) naming ``source`` and ``flag`` otherwise (a float or a bool is refused, not rounded)."""
    value = int(seed) if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) else -1
    if isinstance(seed, str):  # a command's --seed may arrive as text
        value = int(seed) if seed.strip().lstrip("+").isdigit() else -1
    if not 0 <= value <= MAX_SEED:
        raise SpecError(source, flag, seed, f"must be an integer in [0, {MAX_SEED}]")
    return value


def check_time_limit(seconds: object, source: str = "command line", flag: str = "--time-limit") -> float:
    """``seconds`` as a float in (0, MAX_TIME_LIMIT_S]; :class:`SpecError` (exit 2) naming ``source`` and
    ``flag`` otherwise (NaN, infinity, a bool or a string is refused)."""
    ok = isinstance(seconds, numbers.Real) and not isinstance(seconds, bool) and math.isfinite(float(seconds))
    if not ok or not 0 < float(seconds) <= MAX_TIME_LIMIT_S:  # type: ignore[arg-type]
        raise SpecError(source, flag, seconds, f"must be a number of seconds in (0, {MAX_TIME_LIMIT_S:g}]")
    return float(seconds)  # type: ignore[arg-type]


#: Largest input file an importer reads, in MiB, unless :data:`IMPORT_BUDGET_ENV` says otherwise. A graph of
#: :data:`~dse.model.workload.MAX_OPS` ops takes about 12 MiB as TF CSV and 35 to 40 MiB as DOT or JSON with
#: five figures per op; parsing holds up to 30 times the file's size in memory (48 MiB: about 1.5 GiB).
MAX_IMPORT_MIB = 48.0
#: The environment variable that raises (or lowers) :data:`MAX_IMPORT_MIB`.
IMPORT_BUDGET_ENV = "DSE_MAX_IMPORT_MIB"


def import_budget_mib() -> float:
    """The largest input file an importer reads (MiB): ``$DSE_MAX_IMPORT_MIB`` when set, else
    :data:`MAX_IMPORT_MIB`. Raises :class:`SpecError` (exit 2) when the variable is not a positive number."""
    return budget_from_env(IMPORT_BUDGET_ENV, MAX_IMPORT_MIB)


def budget_from_env(name: str, default: float) -> float:
    """The budget environment variable ``name`` sets (a positive number), else ``default``; :class:`SpecError`
    (exit 2) naming the variable when it is set to anything else."""
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise SpecError("environment", name, text, "must be a positive number")
    return value
