"""One solve context for every solver (``dse.solvers.context``): the stopping rule written once, every
registered solver honouring it from its first line, defaults written once (in the options models), and
``dse.solve`` handing each solver its validated options and the Python objects it reads."""

from __future__ import annotations

import dataclasses
import inspect
import re
import signal
import time
from pathlib import Path

import numpy as np
import pytest

import dse
import dse.util.jit
from dse.cost.synthetic import random_tables
from dse.errors import SpecError
from dse.inputs.catalog import spec_path
from dse.mapping.pipeline import PipelineProblem
from dse.mapping.registry import families
from dse.pareto import INTERRUPTED, STATUSES, TIME_LIMIT, ParetoSet, SolveStats, nondominated
from dse.runs.spec import spec_from_dict
from dse.solvers import registry
from dse.solvers.checkpoint import Checkpoint
from dse.solvers.context import SolveContext, solve_context
from dse.solvers.registry import check_options, collect_seeds, heuristics_for, lookup, solvers
from dse.util.interrupt import StopToken, active_token
from dse.util.progress import silent
from dse.util.yamlio import read_yaml

SOLVERS_DIR = Path(dse.solvers.__file__).parent


def _context(start: float, time_limit: float, stopped: bool = False) -> SolveContext:
    token = StopToken()
    if stopped:
        token.request(signal.SIGTERM)
    return SolveContext(seed=0, time_limit=time_limit, start=start, token=token, progress=silent())


# --------------------------------------------------------------------------- the rule, once


def test_the_stopping_rule_says_time_limit_past_the_deadline_and_interrupted_once_asked() -> None:
    now = time.monotonic()
    assert _context(now, 3600.0).stop_status() is None
    assert _context(now - 10.0, 5.0).stop_status() == TIME_LIMIT
    assert _context(now, 3600.0, stopped=True).stop_status() == INTERRUPTED
    assert _context(now - 10.0, 5.0, stopped=True).stop_status() == INTERRUPTED  # a stop request wins
    assert _context(now, 3600.0).cut_status() == TIME_LIMIT  # a search cut short by its own budget
    assert {TIME_LIMIT, INTERRUPTED} <= set(STATUSES)


def test_remaining_and_elapsed_follow_the_clock() -> None:
    now = time.monotonic()
    ctx = _context(now - 2.0, 5.0)
    assert ctx.deadline == now + 3.0
    assert 1.9 <= ctx.elapsed() and 0.0 < ctx.remaining() <= 3.0
    assert _context(now - 10.0, 5.0).remaining() == 0.0


def test_a_derived_context_shares_the_token_and_never_outlives_its_parent() -> None:
    now = time.monotonic()
    parent = dataclasses.replace(_context(now, 10.0), callback=lambda *a: True, resume=(np.zeros(2),))
    longer = parent.derived(time_limit=60.0)
    assert longer.token is parent.token and longer.seed == parent.seed
    assert longer.deadline == pytest.approx(parent.deadline)  # capped at the parent's deadline
    assert parent.derived(time_limit=1.0).deadline <= time.monotonic() + 1.0
    assert parent.derived(deadline=now + 2.0).deadline == pytest.approx(now + 2.0)
    assert longer.callback is None and len(longer.resume) == 1  # the callback is the parent's own
    assert parent.derived(time_limit=0.0).stop_status() == TIME_LIMIT
    parent.token.request()
    assert longer.stop_status() == INTERRUPTED


def test_solve_context_enters_the_stop_handler_and_the_compile_limit_once() -> None:
    before = signal.getsignal(signal.SIGINT)
    with solve_context(seed=3, time_limit=7.0) as ctx:
        assert active_token() is ctx.token
        assert signal.getsignal(signal.SIGINT) is not before
        assert dse.util.jit._ENDS.get() == pytest.approx(ctx.deadline)
        assert ctx.seed == 3 and ctx.time_limit == 7.0
        with solve_context() as unlimited:  # no limit of its own: the caller's compile limit stays
            assert unlimited.token is ctx.token and unlimited.deadline == float("inf")
            assert dse.util.jit._ENDS.get() == pytest.approx(ctx.deadline)
    assert signal.getsignal(signal.SIGINT) is before and active_token() is None


def test_no_solver_module_enters_the_handlers_or_writes_a_status_out() -> None:
    """Only the context enters ``interruptible`` and ``time_limit_ends``; the statuses are the constants of
    :mod:`dse.pareto` (a status written out as text, docstrings, comments and the time limit's argument
    name aside)."""
    status = r"""["'](""" + "|".join(STATUSES) + r""")["']"""
    found = []
    for path in sorted(SOLVERS_DIR.glob("*.py")):
        if path.name == "context.py":
            continue
        code = re.sub(r'"""(.|\n)*?"""|#.*|check_time_limit\([^)]*\)', "", path.read_text())
        for pattern in (r"interruptible\(", r"time_limit_ends\(", status):
            found += [f"{path.name}: {m.group(0)}" for m in re.finditer(pattern, code)]
    assert found == []


# --------------------------------------------------------------------------- every solver honours it


def _small_problems() -> dict[str, object]:
    examples = families()
    dag = [examples["dag"].examples(s) for s in range(20)]
    return {
        "pipeline": examples["pipeline"].examples(0),
        "pipeline-3": PipelineProblem(random_tables(4, n_ops=5, n_dev=3), ("throughput", "energy", "latency"),
                                      memory=False),
        "dag-1": next(p for p in dag if len(p.objectives) == 1),
        "dag-2": next(p for p in dag if len(p.objectives) == 2),
    }


PROBLEMS = _small_problems()
CASES = [(solver, problem) for solver, entry in sorted(solvers().items()) for problem, instance in PROBLEMS.items()
         if entry.supports(instance) is None]


def _handed(problem) -> list[np.ndarray]:
    """What a solver is handed to continue from: the problem's seed genomes and a few random ones, so that
    the front of what it is handed is that of these genomes whatever seeds it adds itself."""
    rng = np.random.default_rng(1)
    random = problem.repair(rng.integers(problem.lower, problem.upper + 1, size=(5, problem.n_genes)))
    return [*collect_seeds(problem), *random]


def _front_values(problem, genomes: list[np.ndarray]) -> list[tuple[int, ...]]:
    ev = problem.evaluate(np.array(genomes, dtype=np.int64))
    F = ev.F[ev.feasible]
    return sorted(map(tuple, F[nondominated(F)].tolist()))


def _entry(solver: str, problem):
    """``(entry, fixed, label)``: the registered solver, what its name sets, the name ``dse.solve`` takes
    (a heuristic of the problem's family for ``heuristic``)."""
    label = f"heuristic:{heuristics_for(problem).names()[0]}" if solver == "heuristic" else solver
    entry, fixed = lookup(label, problem)[0]
    return entry, fixed, label


def test_the_cases_cover_every_registered_solver() -> None:
    assert {solver for solver, _ in CASES} == set(solvers())


@pytest.mark.parametrize("how", ["expired", "stopped"])
@pytest.mark.parametrize(("solver", "name"), CASES)
def test_a_solver_handed_a_finished_context_returns_what_it_was_handed(solver: str, name: str, how: str) -> None:
    problem = PROBLEMS[name]
    entry, fixed, _ = _entry(solver, problem)
    handed = _handed(problem) if "resume" in entry.inputs else []
    with solve_context(seed=0, time_limit=60.0, resume=handed) as outer:
        if how == "expired":
            ctx, expected = outer.derived(time_limit=0.0), TIME_LIMIT
        else:
            ctx, expected = outer, INTERRUPTED
            outer.token.request()
        front = entry.run(problem, ctx, check_options(entry, {}, fixed=fixed))
    assert front.status == expected
    assert not any(p.proven for p in front.points)
    values = sorted(tuple(p.internal) for p in front.points)
    assert values == (_front_values(problem, handed) if handed else [])


def test_cpsat_stopped_before_its_model_keeps_the_heuristic_seeds_and_proves_nothing() -> None:
    """Without resume genomes the two-objective epsilon walk runs: stopped before it builds its model, it
    keeps the front of the seeds it computed, with a certificate that proves nothing: the whole objective
    space stays open, not even bounded by the problem's own objective bounds (they take seconds to minutes on
    a large problem, and the run has no time left), and the message says so."""
    problem = PROBLEMS["dag-2"]
    entry = solvers()["cpsat"]
    with solve_context(seed=0, time_limit=60.0) as outer:
        front = entry.run(problem, outer.derived(time_limit=0.0), check_options(entry, {}))
    assert front.status == TIME_LIMIT and front.stats.message.startswith("stopped before the model was built")
    assert sorted(tuple(p.internal) for p in front.points) == _front_values(problem, collect_seeds(problem))
    assert "own objective bounds were not computed" in front.stats.message
    certificate = front.certificate()
    assert not certificate.proven and certificate.gap == 1.0 and certificate.hypervolume_bound is None


# --------------------------------------------------------------------------- defaults, once


@pytest.mark.parametrize("name", sorted(solvers()))
def test_a_run_signature_declares_no_setting(name: str) -> None:
    """``run(problem, ctx, options)``: every default lives in the options model."""
    parameters = inspect.signature(solvers()[name].run).parameters
    assert list(parameters) == ["problem", "ctx", "options"]
    assert all(p.default is inspect.Parameter.empty for p in parameters.values())


@pytest.mark.parametrize("name", sorted(solvers()))
def test_dse_solve_without_options_hands_the_models_defaults(name: str, monkeypatch) -> None:
    entry = solvers()[name]
    problem = next(PROBLEMS[p] for s, p in CASES if s == name)
    _, fixed, label = _entry(name, problem)
    seen: list[tuple[SolveContext, object]] = []
    # what the solver returns comes back as it is (stopped: no diagnosis is added to a front without points)
    front = ParetoSet(problem.name, problem.objectives, (), name, INTERRUPTED, False, SolveStats(0.0))

    def spy(problem, ctx, options):
        seen.append((ctx, options))
        return front

    monkeypatch.setitem(registry._SOLVERS, name, dataclasses.replace(entry, run=spy))
    assert dse.solve(problem, label, time_limit=12.5, seed=4, progress=False) is front
    (ctx, options), = seen
    assert options == entry.options(**fixed)  # each field at the default its model declares
    assert ctx.seed == 4 and ctx.time_limit == 12.5 and ctx.resume == () and ctx.callback is None


def test_dse_solve_validates_settings_into_the_model() -> None:
    problem = PROBLEMS["pipeline"]
    with pytest.raises(SpecError, match=r"^dse\.solve: field 'pop_size' = 2\.5: "):
        dse.solve(problem, "nsga2", time_limit=5, pop_size=2.5)
    with pytest.raises(SpecError, match=r"field 'popsize' = 3: unknown option \(did you mean 'pop_size'\?\); "
                                        r"nsga2 options are pop_size, generations"):
        dse.solve(problem, "nsga2", time_limit=5, popsize=3)


def test_dse_solve_refuses_what_a_solver_does_not_read() -> None:
    problem = PROBLEMS["pipeline"]
    genomes = _handed(problem)
    with pytest.raises(SpecError, match=r"field 'resume' = .*exhaustive does not read resume"):
        dse.solve(problem, "exhaustive", time_limit=5, resume=genomes)
    with pytest.raises(SpecError, match=r"field 'callback' = .*cpsat does not read callback \(it reads checkpoint, client, resume\)"):
        dse.solve(problem, "cpsat", time_limit=5, callback=lambda *a: None)
    with pytest.raises(SpecError, match=r"field 'client' = 'a Dask client': exhaustive does not read client"):
        dse.solve(problem, "exhaustive", time_limit=5, client=object())
    with pytest.raises(SpecError, match=r"field 'checkpoint' = 'a checkpoint': nsga2 does not read checkpoint"):
        dse.solve(problem, "nsga2", time_limit=5, checkpoint=Checkpoint(Path("c.json"), "key"))
    with pytest.raises(TypeError, match=r"dse\.solve: checkpoint must be of type Checkpoint, got str"):
        dse.solve(problem, "cpsat", time_limit=5, checkpoint="c.json")
    front = dse.solve(problem, "nsga2", time_limit=60, seed=0, progress=False, resume=genomes, generations=1,
                      use_heuristic_seeds=False)  # NSGA-II reads it: never worse than what it was handed
    F = front.internal()
    assert all(((F <= np.array(v)).all(axis=1)).any() for v in _front_values(problem, genomes))


def test_the_heuristic_name_goes_through_its_options_model() -> None:
    problem = PROBLEMS["dag-2"]
    _, fixed, label = _entry("heuristic", problem)
    assert dse.solve(problem, label, time_limit=5).solver == label
    with pytest.raises(SpecError, match=r"field 'name' = 'x': set by the solver's name; heuristic takes no options"):
        dse.solve(problem, label, time_limit=5, name="x")
    path = spec_path("quickstart")
    spec = {**read_yaml(path), "solver": {"name": "nsga2", "options": {"heuristic": {"name": "heft"}}}}
    with pytest.raises(SpecError, match=r"field 'solver\.options\.heuristic\.name' = 'heft': set by the solver's"):
        spec_from_dict(spec, "<test>", path.parent)
