"""The serving family joined to its simulator: a genome's deployment, dse simulate's scenario, one point checked."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dse
from dse.errors import SpecError
from dse.mapping.serving.table import POWER_EXPONENT
from dse.runs.spec import load_spec
from dse.runtime.serving_check import check_point
from dse.runtime.serving_deploy import deployment_of
from dse.runtime.serving_scenario import PoolGenes, ServingScenario, simulate_spec, written_genome

SPEC = """
name: small_serving
family: serving
platform:
  name: two_h100
  gpus: [{gpu: h100_sxm, count: 2, gpus_per_node: 2}]
workload: {model: llama2_7b, input_tokens: 1024, output_tokens: 2048, runtime: tensorrt_llm}
options: {pools: 1, tp: [1, 2], pp: [1, 2], batch: [8], precisions: [fp16], clocks: [1.0, 0.6]}
objectives: [throughput, energy]
"""


@pytest.fixture(scope="module")
def spec_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("serving") / "small.yaml"
    path.write_text(SPEC)
    return path


@pytest.fixture(scope="module")
def problem(spec_path):
    return dse.load_problem(spec_path)


def _genome(problem, tp: int, pp: int, clock: float, replicas: int = 1) -> np.ndarray:
    return written_genome(problem, [PoolGenes(gpu="h100_sxm", tp=tp, pp=pp, replicas=replicas, batch=8, clock=clock,
                                              precision="fp16")], "test")


def test_a_pipeline_is_pp_engines_of_tp_gpus_at_the_pools_clock(problem) -> None:
    pool = deployment_of(problem, _genome(problem, 1, 2, 0.6)).pools[0]
    # 1 replica of tp1 x pp2 = 2 engines (micro-batches) of 1 GPU, 8 / 2 sequences each
    assert (pool.replicas, pool.gpus, pool.max_batch, pool.role) == (2, 1, 4, "both")
    assert pool.busy_w == pytest.approx(700 * 0.6**POWER_EXPONENT)  # h100_sxm: active 700 W, idle 0
    assert pool.name == "h100_sxm tp1 pp2 b8 both 60% fp16"


@pytest.mark.parametrize("clock", [1.0, 0.6])
def test_a_decode_step_is_the_tables_at_its_clock(problem, clock) -> None:
    """At pp 1 the family's stage is the simulator's: 8 sequences at KV 1024 + 2048 / 2 = 2048 tokens, both
    powers of two (no interpolation), cost the same seconds as the table's ``s_dec``."""
    genome = _genome(problem, 1, 1, clock)
    option = int(problem.pool_options(genome[None, :])[0][0, 0])
    pool = deployment_of(problem, genome).pools[0]
    assert pool.decode_s(np.full(8, 2048)) == pytest.approx(problem.table.s_dec[option], rel=1e-6)
    assert pool.prefill_s(np.array([1024])) == pytest.approx(problem.table.s_pf[option], rel=1e-6)


def test_the_slower_clock_costs_more_time(problem) -> None:
    fast = deployment_of(problem, _genome(problem, 1, 1, 1.0)).pools[0]
    slow = deployment_of(problem, _genome(problem, 1, 1, 0.6)).pools[0]
    assert slow.prefill_s(np.array([1024])) > fast.prefill_s(np.array([1024]))


def test_a_written_pool_outside_the_options_names_its_field(problem) -> None:
    with pytest.raises(SpecError, match=r"scenario.deployment\[0\].tp.*= 4"):
        written_genome(problem, [PoolGenes(gpu="h100_sxm", tp=4, batch=8, precision="fp16")], "small.yaml")


def test_dse_simulate_writes_the_tables_of_the_written_deployment(spec_path, tmp_path) -> None:
    spec = load_spec(spec_path)
    spec = type(spec)(**{**spec.__dict__, "scenario": ServingScenario(
        deployment=[PoolGenes(gpu="h100_sxm", tp=1, pp=1, replicas=2, batch=8, precision="fp16")],
        requests=20, load=0.5)})
    summary = simulate_spec(spec, tmp_path, seed=0, quiet=True)
    assert summary["pool"].tolist() == ["h100_sxm tp1 pp1 b8 both 100% fp16", "all"]
    assert int(summary.loc[summary["pool"] == "all", "finished"].iloc[0]) == 20
    trace = pd.read_csv(tmp_path / "trace.csv")
    assert len(trace) == 20 and (tmp_path / "iterations.csv").is_file()
    assert "2 x h100_sxm tp1 pp1 b8 both 100% fp16" in summary.attrs["notes"][0]


def test_one_point_checked_end_to_end_within_ten_percent(problem) -> None:
    """Offline, one replica of tp1 pp1 b8: the family's saturated rate against the simulator's backlog rate."""
    check = check_point(problem, _genome(problem, 1, 1, 1.0), requests=48)
    assert check.capacity_by == "offline backlog"
    assert abs(check.errors()["throughput"]) <= 0.10
    assert check.ttft_sim_s > 0 and check.tpot_sim_s > 0
