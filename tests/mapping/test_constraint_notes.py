"""Constraints that bind nothing are said: ``problem.notes()``, from the families' cheap bounds.

Golden values come from brute force: every genome of small seeded instances is evaluated, and a note
that a constraint binds no mapping must hold for every one of them (and a bound must be at least the
largest value any genome reaches); the memory case is worked by hand.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import yaml

import dse
from dse.mapping.dag.problem import DagProblem
from dse.mapping.dag.problem import example_problem as dag_example
from dse.mapping.pipeline.problem import PipelineProblem
from dse.mapping.pipeline.problem import example_problem as pipeline_example
from tests.conftest import ROOT, random_tables, run_cli, write_yaml

SEEDS = range(40)


def every_genome(problem, limit: int = 200_000) -> np.ndarray:
    """Every genome of ``problem`` whose ops sit on devices that can run them (the mappings the bounds cover)."""
    assert problem.space_size <= limit
    X = np.array(list(itertools.product(*[range(lo, hi + 1) for lo, hi in zip(problem.lower, problem.upper,
                                                                                strict=True)])), dtype=np.int64)
    t = problem.tables
    return X[t.allowed[np.arange(t.n_ops), X[:, : t.n_ops]].all(axis=1)]


def with_timed_transfers(tables):
    """``tables`` with every transfer between two devices taking at least one time unit (the random tables
    have free transfers that still spend energy: no average-power bound exists for those)."""
    time = np.array(tables.transfer_time)
    off = ~np.eye(tables.n_dev, dtype=bool)
    time[:, off] = np.maximum(time[:, off], 1)
    return tables.replaced(transfer_time=time)


@pytest.mark.parametrize("seed", SEEDS)
def test_pipeline_bounds_hold_for_every_mapping(seed: int) -> None:
    base = pipeline_example(seed)
    tables = with_timed_transfers(base.tables) if seed % 2 else base.tables
    problem = PipelineProblem(tables, ("latency", "energy"), memory=False)
    X = every_genome(problem)
    pop = problem.evaluate(X, metrics=True).metrics
    bounds = problem.quantity_bounds()
    assert bounds["latency"] >= pop["latency"].max()
    if seed % 2:  # transfers take time: the power bound exists
        assert bounds["power_mw"] >= (pop["energy"] / np.maximum(pop["period"], 1)).max() - 1e-9
    # right at the bounds, the constraints bind no mapping and say so; just below the largest value reached,
    # they bind one mapping at least and say nothing
    most_latency = int(pop["latency"].max())
    loose = PipelineProblem(tables, ("latency", "energy"), memory=False, deadline=int(np.ceil(bounds["latency"])),
                            power_cap_mw=int(np.ceil(bounds.get("power_mw", 10**12))))
    assert (loose.evaluate(X).G <= 0).all()
    notes = loose.notes()
    assert any(n.startswith("constraint deadline_ms = ") and "binds no mapping" in n for n in notes), notes
    assert any(n.startswith("constraint power_w = ") for n in notes) == ("power_mw" in bounds), notes
    tight = PipelineProblem(tables, ("latency", "energy"), memory=False, deadline=most_latency - 1)
    assert (tight.evaluate(X).G > 0).any()
    assert not any("deadline" in n for n in tight.notes())


def test_pipeline_power_bound_exists_where_transfers_take_time() -> None:
    found = [s for s in SEEDS if s % 2 and "power_mw" in PipelineProblem(
        with_timed_transfers(pipeline_example(s).tables), ("latency", "energy")).quantity_bounds()]
    assert len(found) == len(range(1, 40, 2))


@pytest.mark.parametrize("seed", SEEDS)
def test_dag_makespan_bound_holds_for_every_schedule(seed: int) -> None:
    problem = dag_example(seed)
    if problem.space_size > 200_000:
        rng = np.random.default_rng(seed)
        X = problem.repair(rng.integers(problem.lower, problem.upper + 1, size=(20_000, problem.n_genes)))
    else:
        X = every_genome(problem)
    bound = problem.quantity_bounds()["makespan"]
    assert bound >= problem.evaluate(X).F[:, 0].max()
    loose = DagProblem(problem.tables, [o.name for o in problem.objectives], deadline=int(bound),
                       memory=False, tensor_per_device=problem.tensor_per_device)
    # the random tables count nanoseconds, shown in ms as a spec's deadline_ms gives them
    assert any(n.startswith("constraint deadline_ms = ") and "every mapping's makespan is at most" in n
               for n in loose.notes()), loose.notes()


def test_memory_binds_nothing_only_when_every_device_holds_all_it_can_run() -> None:
    # two ops that both run on both devices, 3 and 4 bytes resident: device 0 holds 7 bytes, device 1 10
    tables = random_tables(0, n_ops=2, n_dev=2).replaced(
        mem=np.array([[3, 3], [4, 4]], dtype=np.int64), allowed=np.ones((2, 2), dtype=bool),
        mem_capacity=np.array([7, 10], dtype=np.int64))
    fits = PipelineProblem(tables, ("throughput", "energy"), memory=True)
    assert fits.notes() == ["constraint memory binds no mapping (every device holds the data of all the ops it "
                            "can run at once: at most 100% of its capacity)"]  # 7 of 7 bytes on device 0
    assert (fits.evaluate(every_genome(fits)).G <= 0).all()
    short = PipelineProblem(tables.replaced(mem_capacity=np.array([6, 10], dtype=np.int64)), ("throughput", "energy"))
    assert short.notes() == []
    assert (short.evaluate(every_genome(short)).G > 0).any()  # both ops on device 0: 7 bytes > 6


def test_quickstart_constraints_bind_and_a_loose_one_is_named() -> None:
    shipped = dse.load_problem("quickstart")  # its 350 W cap and 0.4 ms deadline both remove mappings
    assert [n for n in shipped.notes() if not n.startswith("constraint memory")] == []
    loose = dse.load_problem("quickstart", changes={"constraints.deadline_ms": 400, "constraints.power_w": 350000})
    notes = loose.notes()
    # every genome (19,683) by brute force: the slowest latency is 1.018 ms, the largest average power 597 W
    X = every_genome(loose)
    pop = loose.evaluate(X, metrics=True).metrics
    assert pop["latency"].max() * 1e-6 <= loose.quantity_bounds()["latency"] * 1e-6 < 400
    deadline = next(n for n in notes if "deadline" in n)
    assert deadline.startswith("constraint deadline_ms = 400 binds no mapping (every mapping's latency is at most ")
    assert float(deadline.rsplit("at most ", 1)[1].split()[0]) >= pop["latency"].max() * 1e-6
    power = next(n for n in notes if "power" in n)
    assert power.startswith("constraint power_w = 350000 binds no mapping (every mapping's average power is at most ")
    assert float(power.rsplit("at most ", 1)[1].split()[0]) >= (pop["energy"] / pop["period"]).max() * 1e-3


def test_topcuoglu_deadline_note_is_the_hand_sum() -> None:
    # Topcuoglu et al. (2002), Fig. 2: the slowest cost of every task (16+19+19+17+13+16+15+14+20+21 = 170)
    # plus every edge's communication cost (18+12+9+11+14+19+16+23+27+23+13+15+17+11+13 = 241): 411 tu
    problem = dse.load_problem("topcuoglu2002", changes={"constraints.deadline": 1000})
    assert problem.notes() == ["constraint deadline = 1000 binds no mapping (every mapping's makespan is at most "
                               "411 tu)"]
    assert dse.load_problem("topcuoglu2002", changes={"constraints.deadline": 410}).notes() == []


def test_validate_and_solve_print_the_notes(tmp_path, capsys) -> None:
    data = yaml.safe_load((ROOT / "problems" / "quickstart.yaml").read_text())
    data["constraints"] = {"deadline_ms": 400, "power_w": 350, "memory": True}
    spec = write_yaml(tmp_path / "loose.yaml", data)
    code, out, err = run_cli(capsys, "validate", str(spec))
    assert code == 0, err
    said = [line for line in out.splitlines() if line.startswith("note: constraint")]
    assert [line.split(" binds")[0] for line in said] == ["note: constraint memory", "note: constraint deadline_ms = 400"]
    code, out, err = run_cli(capsys, "solve", str(spec), "--solver", "cpsat", "--time-limit", "5", "--quiet",
                             "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert [line for line in out.splitlines() if line.startswith("note: constraint")] == said
