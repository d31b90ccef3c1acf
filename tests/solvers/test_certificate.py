"""Front certificates against the true front from exhaustive search.

The oracle is exhaustive enumeration (every genome evaluated, nondominated filter), independent of the
CP-SAT models and of the certificate's boxes. A CP-SAT run is cut short after a random number of front
points (a progress callback stops it, as Ctrl-C does) or by a tiny time limit; whatever it returns, the
true front's hypervolume at the certificate's reference must lie in [hypervolume, hypervolume_bound].
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dse
from dse.cost.synthetic import random_tables
from dse.mapping.dag import DagProblem
from dse.mapping.pipeline import PipelineProblem
from dse.mapping.split import SplitProblem
from dse.mapping.split.model import SplitDevice, SplitPlatform, gemm_workload, split_tables
from dse.pareto import Certificate, ParetoSet
from dse.solvers.certificate import hypervolume
from dse.solvers.context import solve_context
from dse.solvers.cpsat import CpsatOptions, solve_cpsat_boxes
from dse.util.progress import Progress


class _StopAfter(Progress):
    """Progress that stops the solve (a KeyboardInterrupt, as Ctrl-C) after ``points`` front points."""

    def __init__(self, points: int) -> None:
        super().__init__("test", enabled=False)
        self.points = points
        self.seen = 0

    def update(self, message: str, force: bool = False) -> None:
        self.seen += 1
        if self.seen >= self.points:
            raise KeyboardInterrupt


def _split_problem(seed: int) -> SplitProblem:
    """A GEMM of 6 chunks over a CPU and two devices sharing one link, random per-row times and power."""
    rng = np.random.default_rng(seed)
    w = gemm_workload(6, 1, 1, "fp32", chunks=6)
    cpu = SplitDevice(name="cpu", kind="cpu", fit_device="cpu", mem_bytes=10**9, pool="host",
                      active_w=float(rng.uniform(1, 4)), idle_w=float(rng.uniform(0, 1)))
    linked = dict(kind="gpu", fit_device="cuda", mem_bytes=10**9, pool="g", link_gbps=float(rng.uniform(0.5, 2)),
                  link_pj_per_byte=10.0)
    gpu = SplitDevice(name="gpu", active_w=float(rng.uniform(2, 6)), idle_w=1.0, **linked)
    tc = SplitDevice(name="tc", active_w=float(rng.uniform(2, 6)), idle_w=0.0, **{**linked, "kind": "tensorcore"})
    per_row = {"cpu": float(rng.uniform(20, 100)) * 1e-9, "gpu": float(rng.uniform(1, 10)) * 1e-9,
               "tc": float(rng.uniform(1, 10)) * 1e-9}
    tables = split_tables(w, SplitPlatform("random", (cpu, gpu, tc)), lambda d, w, rows: per_row[d.name] * rows)
    return SplitProblem(tables, ("time", "energy"))


def _problem(family: str, seed: int, k: int):
    if family == "split":
        return _split_problem(seed)
    rng = np.random.default_rng(seed)
    tables = random_tables(seed, n_ops=int(rng.integers(3, 6)), n_dev=int(rng.integers(2, 4)))
    if family == "dag":
        return DagProblem(tables, ("makespan", "energy"), memory=False)
    objectives = ("throughput", "energy", "latency")[:k]
    return PipelineProblem(tables, objectives, memory=bool(seed % 2))


def _true_hypervolume(front: ParetoSet, truth: ParetoSet, certificate: Certificate) -> float:
    signs = np.array([-1.0 if o.sense == "max" else 1.0 for o in front.objectives])
    return hypervolume(truth.F(), np.array(certificate.reference) * signs)


def _check(front: ParetoSet, truth: ParetoSet) -> None:
    certificate = front.certificate()
    assert certificate is not None
    if truth.status == "infeasible":
        assert len(front) == 0
        return
    assert certificate.hypervolume is not None
    true_hv = _true_hypervolume(front, truth, certificate)
    tol = 1e-9 * max(1.0, abs(true_hv))
    bound = certificate.hypervolume_bound
    if bound is None:  # nothing proven (the model was never built): no upper bound, gap 100%
        assert certificate.gap == 1.0
        bound = float("inf")
    assert certificate.hypervolume - tol <= true_hv <= bound + tol
    assert 0.0 <= certificate.gap <= 1.0
    found = sorted(map(tuple, front.internal().tolist()))
    exact = sorted(map(tuple, truth.internal().tolist()))
    if certificate.gap == 0.0 and certificate.proven:
        assert found == exact  # a proven zero gap: the front is the true one
    if front.complete:
        assert certificate.proven and certificate.gap == 0.0 and found == exact


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), k=st.sampled_from([2, 3]), stop=st.integers(1, 6),
       family=st.sampled_from(["pipeline", "dag", "split"]))
def test_true_hypervolume_lies_within_the_certificate(seed: int, k: int, stop: int, family: str) -> None:
    problem = _problem(family, seed, k)
    truth = dse.solve(problem, "exhaustive")
    front = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2, progress=_StopAfter(stop))
    _check(front, truth)


@pytest.mark.parametrize("seed", range(6))
def test_a_front_cut_before_any_point_is_certified_by_its_seeds_and_bounds(seed: int) -> None:
    problem = _problem("pipeline", seed, 2)
    truth = dse.solve(problem, "exhaustive")
    front = dse.solve(problem, "cpsat", time_limit=1e-6, seed=0, workers=2)
    assert front.status in ("time_limit", "infeasible")
    _check(front, truth)


@pytest.mark.parametrize("seed", range(6))
def test_a_complete_front_has_gap_zero(seed: int) -> None:
    problem = _problem("pipeline", seed, 2 + seed % 2)
    truth = dse.solve(problem, "exhaustive")
    front = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2)
    assert front.complete == (truth.status == "optimal")
    _check(front, truth)
    if front.complete:
        assert front.certificate().gap == 0.0
        assert front.certificate().region == ()


def test_boxes_certificate_with_resumed_points() -> None:
    """Resumed points split the region before any solve; the boxes' corners keep the bound valid."""
    problem = _problem("pipeline", 3, 3)
    truth = dse.solve(problem, "exhaustive")
    some = [np.asarray(p.genome) for p in truth.points[:1]]
    with solve_context(seed=0, time_limit=30, progress=_StopAfter(1), resume=some) as ctx:
        front = solve_cpsat_boxes(problem, ctx, CpsatOptions(workers=2))
    _check(front, truth)


def test_certificate_by_hand() -> None:
    """A hand-made two-point front and one open box, checked with rectangles worked out by hand.

    Points (1, 3) and (3, 1), reference (4, 4): hypervolume 3*1 + 1*3 - 1*1 = 5 (two 3x1 strips
    overlapping in a 1x1 square). An open box with lower corner (2, 2) adds the square [2,3]x[2,3]
    not dominated by either point: bound 6, gap 1/6.
    """
    points = np.array([[1.0, 3.0], [3.0, 1.0]])
    ref = np.array([4.0, 4.0])
    assert hypervolume(points, ref) == pytest.approx(5.0)
    assert hypervolume(np.vstack([points, [[2.0, 2.0]]]), ref) == pytest.approx(6.0)
    assert hypervolume(np.array([[5.0, 0.0]]), ref) == 0.0  # beyond the reference: counts for nothing


@pytest.mark.parametrize("seed", range(4))
def test_certify_bounds_an_approximate_front_and_completes_it(seed: int) -> None:
    from dse.solvers.certify import certify

    problem = _problem("pipeline", seed, 2)
    truth = dse.solve(problem, "exhaustive")
    approx = dse.solve(problem, "nsga2", time_limit=1, seed=seed, pop_size=8, generations=2)
    cut = certify(problem, approx, time_limit=30, workers=2, progress=_StopAfter(1))
    _check(cut, truth)
    assert cut.certificate().hypervolume >= approx.hypervolume(cut.certificate().reference) - 1e-9  # never worse
    full = certify(problem, approx, time_limit=30, workers=2)
    _check(full, truth)
    if truth.status == "optimal":
        assert full.complete and full.certificate().gap == 0.0
        kept = {tuple(p.internal) for p in full.points if p.solver == "nsga2"}
        assert kept <= {tuple(p.internal) for p in approx.points}


def test_certify_command_adds_a_certificate_to_an_nsga2_run(tmp_path) -> None:
    import json

    from dse import cli

    out = tmp_path / "run"
    assert cli.main(["solve", "quickstart", "--solver", "nsga2", "--time-limit", "2", "--out", str(out)]) == 0
    assert "certificate" not in json.loads((out / "front.json").read_text())["fronts"][0]
    assert cli.main(["certify", str(out), "--time-limit", "20"]) == 0
    doc = json.loads((out / "certified" / "front.json").read_text())
    certificate = doc["fronts"][0]["certificate"]
    assert certificate["proven"] and certificate["gap"] == 0.0
    assert certificate["hypervolume"] == pytest.approx(certificate["hypervolume_bound"])
    assert cli.main(["certify", str(out / "front.csv"), "--time-limit", "5"]) == 0  # the CSV, spec beside it
    assert cli.main(["certify", str(tmp_path / "missing"), "--time-limit", "5"]) == 2


def test_the_plot_shades_the_unexplored_region_of_a_cut_short_front() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from dse.viz import plot_fronts

    problem = _problem("pipeline", 4, 2)
    cut = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2, progress=_StopAfter(1))
    full = dse.solve(problem, "cpsat", time_limit=30, seed=0, workers=2)
    ax = plot_fronts([cut])
    shaded = [p for p in ax.patches if "unexplored" in str(p.get_label())]  # the region's outline
    assert cut.certificate().region and shaded
    assert (ax.get_xlim(), ax.get_ylim()) == (plot_fronts([cut]).get_xlim(), plot_fronts([cut]).get_ylim())
    ax = plot_fronts([full])
    assert full.complete and not [p for p in ax.patches if "unexplored" in str(p.get_label())]


def test_front_genomes_are_range_checked_before_conversion(tmp_path) -> None:
    import json

    from dse.pareto import read_front_genomes

    path = tmp_path / "front.json"
    path.write_text(json.dumps({"fronts": [{"points": [{"genome": [1, 10**30]}]}]}))
    with pytest.raises(ValueError, match=r"genome\[1\]' = 1000000000000000000000000000000: .*less than or equal"):
        read_front_genomes(path)
    path.write_text(json.dumps({"fronts": [{"points": [{"genome": [1, -2]}]}]}))
    with pytest.raises(ValueError, match=r"genome\[1\]' = -2: .*greater than or equal to 0"):
        read_front_genomes(path)
