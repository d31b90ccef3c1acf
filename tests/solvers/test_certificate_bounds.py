"""Certificates with the problem's own bounds, and one hypervolume for fronts, certificates and commands.

* Every open region's lower corner respects the family's bounds
  (:meth:`~dse.mapping.base.MappingProblem.objective_lower_bounds`): no region reaches below the
  least energy any mapping can spend, or above the greatest throughput any mapping can reach.
* ``ParetoSet.hypervolume()``, ``compare()`` and the certificate measure against one reference point,
  taken from the problem (its feasible baselines), in user units and senses, the same for every run
  of the problem; a reference worked out by hand checks the rule.
* A proven-infeasible front says so; ``dse certify`` refuses a family without an exact model before
  it prints anything, and prints the reference point with units.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import dse
from dse import cli
from dse.cost.synthetic import random_tables
from dse.mapping.base import Objective
from dse.mapping.dag import DagProblem
from dse.mapping.pipeline import PipelineProblem
from dse.mapping.registry import families
from dse.pareto import Certificate, ParetoPoint, ParetoSet, SolveStats
from dse.solvers.certificate import single_certificate, unbounded_certificate
from tests.solvers.test_certificate import _StopAfter


def _dvfs_problem(seed: int) -> PipelineProblem:
    """A seeded pipeline instance with DVFS levels (the family's examples: every third seed has them)."""
    problem = families()["pipeline"].examples(3 * seed + 2)
    assert isinstance(problem, PipelineProblem) and problem.levels is not None
    return problem


@pytest.mark.parametrize("seed", range(5))
def test_no_open_region_reaches_past_the_problems_own_bounds(seed: int) -> None:
    """A front cut after its first point: every region's lower corner (user units) is no better than the
    family's bound over the whole problem in any objective, and no energy corner lies below every op's
    cheapest energy summed (on the old certificates energy corners sat at 0 mJ/item, the energy
    variable's domain floor)."""
    problem = _dvfs_problem(seed)
    front = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2, progress=_StopAfter(1))
    certificate = front.certificate()
    assert certificate is not None
    levels = problem.levels
    assert levels is not None
    cheapest = np.where(problem.tables.allowed[None] & (np.arange(levels.time.shape[0])[:, None, None]
                                                        < levels.count[None, None, :]), levels.energy, np.inf)
    least_energy_mj = cheapest.min(axis=(0, 2)).sum() * 1e-9  # every op at its cheapest device and level
    energy = [o.name for o in problem.objectives].index("energy")
    bounds = np.array(problem.objective_lower_bounds())
    best = problem.user_objectives(bounds[None, :])[0]  # the best value any mapping can reach, user units
    for lower, _ in certificate.region:
        assert lower[energy] >= least_energy_mj * (1 - 1e-12)
        for value, limit, objective in zip(lower, best, problem.objectives, strict=True):
            if objective.sense == "max":
                assert value <= limit * (1 + 1e-12), (objective.name, value, limit)
            else:
                assert value >= limit * (1 - 1e-12), (objective.name, value, limit)


@pytest.mark.parametrize("seed", range(4))
def test_front_certificate_and_compare_measure_one_hypervolume(seed: int) -> None:
    problem = PipelineProblem(random_tables(seed, n_ops=4, n_dev=3), ("throughput", "energy"), memory=False)
    cut = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2, progress=_StopAfter(1))
    full = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2)
    approx = dse.solve(problem, "nsga2", time_limit=5, seed=seed, pop_size=8, generations=3)
    for front in (cut, full):
        certificate = front.certificate()
        assert certificate is not None and certificate.hypervolume is not None
        assert tuple(front.reference_point()) == certificate.reference
        assert front.hypervolume() == pytest.approx(certificate.hypervolume, rel=1e-12)
    # the reference belongs to the problem: every run, cut short or not, exact or not, gets the same
    assert tuple(approx.reference_point()) == tuple(cut.reference_point()) == tuple(full.reference_point())
    comparison = full.compare(approx)
    assert comparison["reference_point"] == list(full.reference_point())
    assert comparison["hypervolume[cpsat]"] == pytest.approx(full.certificate().hypervolume, rel=1e-12)
    assert comparison["hypervolume[nsga2]"] == pytest.approx(approx.hypervolume(), rel=1e-12)
    throughput = full.reference_point()[0]
    assert throughput > 0  # a throughput reference is a throughput, not a negated one
    assert throughput < min(p.objectives["throughput_items_per_s"] for p in full.baselines.values() if p.feasible)


def _hand_front(baselines: dict[str, tuple[int, int, bool]], points: list[tuple[int, int]]) -> ParetoSet:
    period = Objective("throughput", "items/s", "max", "period", "ns", lambda v: 1e9 / np.asarray(v, dtype=float))
    energy = Objective("energy", "mJ/item", "min", "energy", "pJ", lambda v: np.asarray(v, dtype=float) * 1e-9)

    def point(p: int, e: int, feasible: bool = True) -> ParetoPoint:
        return ParetoPoint(genome=(0,), internal=(p, e), feasible=feasible,
                           objectives={"throughput_items_per_s": 1e9 / p, "energy_mj_per_item": e * 1e-9})

    return ParetoSet(problem="hand", objectives=(period, energy), points=tuple(point(p, e) for p, e in points),
                     solver="hand", status="feasible", complete=False, stats=SolveStats(0.0),
                     baselines={name: point(p, e, ok) for name, (p, e, ok) in baselines.items()})


def test_reference_point_and_hypervolume_by_hand() -> None:
    """Feasible baselines at (period 1000 ns, 5e9 pJ) and (2000 ns, 2e9 pJ), an infeasible one at
    (10000 ns, 1e11 pJ) that does not count. Worst feasible: 2000 ns and 5e9 pJ; 10% worse: 2200 ns
    (1e9 / 2200 = 454,545.45 items/s) and 5.5 mJ/item. One point at 1000 ns (1e6 items/s) and 2 mJ:
    hypervolume (1e6 - 454,545.45) x (5.5 - 2) = 1,909,090.9 (items/s x mJ/item)."""
    baselines = {"a": (1000, 5_000_000_000, True), "b": (2000, 2_000_000_000, True),
                 "c": (10_000, 100_000_000_000, False)}
    front = _hand_front(baselines, [(1000, 2_000_000_000)])
    assert front.reference_point() == pytest.approx([1e9 / 2200, 5.5])
    assert front.hypervolume() == pytest.approx((1e6 - 1e9 / 2200) * 3.5)
    # a point the reference does not beat in every objective counts for nothing
    assert _hand_front(baselines, [(3000, 1_000_000_000)]).hypervolume() == 0.0
    # no feasible baseline: the points stand in (nadir 1000 ns, 2e9 pJ; 10% worse: 1100 ns, 2.2 mJ)
    alone = _hand_front({"c": baselines["c"]}, [(1000, 2_000_000_000)])
    assert alone.reference_point() == pytest.approx([1e9 / 1100, 2.2])


@pytest.mark.parametrize("seed", range(4))
def test_a_one_objective_certificate_takes_the_problems_own_bound(seed: int) -> None:
    """Makespan alone, a solver that proved nothing (bound 0, or none at all): the certificate's bound is
    raised to the problem's own, which is no lower than the slowest task at its fastest device (a rule
    by hand) and no higher than the least makespan of every genome (brute force)."""
    problem = DagProblem(random_tables(seed, n_ops=4, n_dev=3), ("makespan",), memory=False)
    genomes = np.array(list(itertools.product(*(range(int(lo), int(hi) + 1)
                                                for lo, hi in zip(problem.lower, problem.upper, strict=True)))))
    ev = problem.evaluate(genomes)
    least = int(ev.F[ev.feasible, 0].min())
    slowest_task = float(np.where(problem.tables.allowed, problem.tables.time, np.inf).min(axis=1).max())
    to_user = problem.objectives[0].to_user
    for certificate in (single_certificate(problem, least, 0.0, proven=False),
                        unbounded_certificate(problem, np.array([[least]]))):
        assert certificate.bound is not None and certificate.value is not None
        assert to_user(np.array([slowest_task]))[0] <= certificate.bound * (1 + 1e-12)
        assert certificate.bound <= certificate.value == pytest.approx(to_user(np.array([float(least)]))[0])
        assert certificate.gap < 1.0


def test_an_infeasible_front_is_certified_infeasible_not_complete() -> None:
    """Memory too small for any op: CP-SAT proves infeasibility; the certificate must not read as a
    complete front with gap 0%."""
    tables = random_tables(3, n_ops=3, n_dev=2)
    tables = tables.replaced(mem_capacity=np.zeros(tables.n_dev, dtype=np.int64),
                             mem=np.ones((tables.n_ops, tables.n_dev), dtype=np.int64))
    problem = PipelineProblem(tables, ("throughput", "energy"), memory=True)
    front = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2)
    assert front.status == "infeasible" and not len(front)
    certificate = front.certificate()
    assert certificate is not None and certificate.infeasible
    assert "infeasible" in certificate.describe() and "complete" not in certificate.describe()
    assert certificate.to_dict()["infeasible"] is True


def test_certify_refuses_a_family_without_an_exact_model_before_printing(tmp_path, capsys) -> None:
    """A multimodel run folder: one line on stderr, exit 2, nothing printed about CP-SAT."""
    (tmp_path / "front.json").write_text(json.dumps({"spec": "xr_ar_gaming", "fronts": []}))
    assert cli.main(["certify", str(tmp_path), "--time-limit", "10"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "multimodel" in err and "exact" in err


def test_certify_prints_the_reference_point_with_units(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    assert cli.main(["solve", "quickstart", "--solver", "nsga2", "--time-limit", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["certify", str(out), "--time-limit", "20"]) == 0
    printed = capsys.readouterr().out
    line = next(text for text in printed.splitlines() if "reference point" in text)
    assert "items/s x mJ/item" in line
    reference = line.split("reference point: ")[1]
    throughput = float(reference.split("throughput ")[1].split(" items/s")[0])
    assert throughput > 0 and "mJ/item" in reference.split("energy ")[1]
    doc = json.loads((out / "certified" / "front.json").read_text())
    assert doc["fronts"][0]["certificate"]["reference"][0] == pytest.approx(throughput, rel=1e-5)


def test_a_certificate_whose_open_boxes_lie_past_the_reference_says_so() -> None:
    """Before, such a certificate read "(0 unexplored regions left)" while not proven complete."""
    open_past = Certificate(gap=0.0, proven=False, hypervolume=1.0, hypervolume_bound=1.0, reference=(0.0, 1.0))
    assert open_past.describe() == ("certified within 0.0% of the optimal front's hypervolume (the regions still "
                                    "unexplored lie past the reference point)")
    region = (((1.0, 0.5), (2.0, 1.0)),)
    inside = Certificate(gap=0.1, proven=False, hypervolume=0.9, hypervolume_bound=1.0, reference=(0.0, 1.0),
                         region=region)
    assert inside.describe().endswith("(1 unexplored regions left)")
