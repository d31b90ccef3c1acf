"""The pipeline family's CP-SAT model on the hand-computed instance (3 ops, 3 edges, 2 devices,
:func:`tests.mapping.pipeline.test_pipeline_hand.hand_tables`): its variables and constraints of each kind
counted by hand from the model's description (:mod:`dse.mapping.pipeline.cpsat`), its bounds worked out by
hand, its hint, and its exact fronts against every genome evaluated."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

import dse
from dse.cost import CostTables
from dse.cost.dvfs import attach_levels, scaled_levels
from dse.mapping.pipeline import PipelineProblem
from dse.pareto import nondominated
from tests.mapping.dag.test_dag_model_phases import domain, kinds
from tests.mapping.pipeline.test_pipeline_hand import hand_tables


def with_two_levels_on_cpu(tables: CostTables) -> CostTables:
    """The cpu gains a second operating point (twice the time at a quarter of the power); the gpu keeps one."""
    time_scale = np.array([[1.0, 2.0], [1.0, np.nan]])
    power_scale = np.array([[1.0, 0.25], [1.0, np.nan]])
    return attach_levels(tables, scaled_levels(tables, time_scale, power_scale))


def every_genome_front(problem: PipelineProblem) -> list[tuple[int, ...]]:
    """The exact front by brute force: every genome evaluated, the feasible ones' nondominated values."""
    X = np.array(list(itertools.product(*(range(int(k)) for k in problem.upper + 1))), dtype=np.int64)
    ev = problem.evaluate(X)
    F = ev.F[ev.feasible]
    return sorted(set(map(tuple, F[nondominated(F)].tolist())))


def test_throughput_model_has_the_hand_counted_variables_and_constraints() -> None:
    problem = PipelineProblem(hand_tables(), ("throughput", "energy"), memory=False)
    assert problem.constraints == ()
    model = problem.cpsat().model
    # x per op and device (6), a load per device (2), y per edge and device pair (3 x 4), a load per link
    # that carries transfer time (cpu->gpu, gpu->cpu: 2), period, used per device (2), an idle term per
    # device that idles at some power (2), energy
    assert len(model.Proto().variables) == 6 + 2 + 12 + 2 + 1 + 2 + 2 + 1
    assert kinds(model) == Counter({
        "exactly_one": 3,                # one device per op
        # device loads 2; per edge, the routes leaving each source device and entering each destination
        # device sum to its literal (4 per edge: 12); link loads 2; used[d] <= sum of its x: 2;
        # per device its idle term: = 0 or idle * period (2), >= idle * its load (1), >= idle * the period's
        # floor when used (1), >= idle * each link load touching it (2): 6 each, 12; energy 1
        "linear": 2 + 12 + 2 + 2 + 12 + 1,
        "lin_max": 1,                    # period = max of the loads
        "bool_and": 6,                   # x[i, d] => used[d] (CP-SAT's form of an implication)
    })
    # period floor: the fastest times 4, 5, 6: the slowest of them 6, their work over 2 devices 15 / 2 -> 8;
    # the time bound: the largest op time 20 per op (60), the largest transfer 7 per edge (21), plus 1
    assert domain(model, "period") == (8, 82)
    # energy bound: costliest ops 100 + 300 + 60, costliest transfers 30 + 70 + 20, idle (2 + 3) mW * 82
    assert domain(model, "energy") == (0, 460 + 120 + 410)


def test_a_latency_objective_adds_the_start_times() -> None:
    problem = PipelineProblem(hand_tables(), ("latency", "energy"), memory=False)
    model = problem.cpsat().model
    # the throughput model's 28, plus start and finish per op (6) and latency
    assert len(model.Proto().variables) == 28 + 6 + 1
    counted = kinds(model)
    # the throughput model's 31 linear, plus finish = start + time per op (3) and a precedence per edge (3)
    assert counted["linear"] == 31 + 3 + 3
    assert counted["lin_max"] == 2  # period, and latency = the latest sink finish


def test_dvfs_levels_add_level_and_op_at_level_literals() -> None:
    problem = PipelineProblem(with_two_levels_on_cpu(hand_tables()), ("throughput", "energy"), memory=False)
    model = problem.cpsat().model
    # z per cpu level (2) and w per op and cpu level (3 x 2) on top of the 28
    assert len(model.Proto().variables) == 28 + 2 + 6
    counted = kinds(model)
    assert counted["exactly_one"] == 3 + 1       # and one level on the cpu
    assert counted["bool_and"] == 6 + 6 + 1      # and w[i, cpu, l] => z[cpu, l], and not used[cpu] => z[cpu, 0]
    assert counted["linear"] == 31 + 3           # and sum_l w[i, cpu, l] == x[i, cpu] per op


def test_a_genome_hints_its_assignment_levels_and_routes() -> None:
    problem = PipelineProblem(with_two_levels_on_cpu(hand_tables()), ("throughput", "energy"), memory=False)
    form = problem.cpsat()
    form.hint(np.array([1, 1, 0, 1]))  # a and b on the gpu, c on the cpu at its second level
    proto = form.model.Proto()
    hints = {proto.variables[v].name: value
             for v, value in zip(proto.solution_hint.vars, proto.solution_hint.values, strict=True)}
    ones = sorted(name for name, value in hints.items() if value == 1)
    # by hand: the assignment, the cpu's level 1, c at that level, and the routes a->b gpu->gpu,
    # b->c gpu->cpu, a->c gpu->cpu (edges in order a->b, b->c, a->c)
    assert ones == sorted(["x[0,1]", "x[1,1]", "x[2,0]", "z[0,1]", "w[2,0,1]", "y[0,1,1]", "y[1,1,0]", "y[2,1,0]"])
    assert len(hints) == 6 + 2 + 6 + 12  # every x, z, w and y literal is hinted


@pytest.mark.parametrize(("objectives", "levels", "limits"), [
    (("throughput", "energy"), False, {"memory": True}),
    (("latency", "energy"), False, {"memory": True, "deadline": 36}),
    (("throughput", "energy"), True, {"memory": False, "power_cap_mw": 40}),
    (("latency", "energy"), True, {"memory": True}),
])
def test_hand_instance_front_equals_every_genome_evaluated(objectives, levels, limits) -> None:
    tables = with_two_levels_on_cpu(hand_tables()) if levels else hand_tables()
    problem = PipelineProblem(tables, objectives, **limits)
    exact = every_genome_front(problem)
    assert exact  # the instance is feasible under these limits
    front = dse.solve(problem, "cpsat", time_limit=60, seed=0, workers=2)
    assert front.complete
    assert sorted(map(tuple, front.internal().tolist())) == exact
