"""A serving family's genome as a deployment of the serving simulator.

:func:`deployment_of` reads each used pool's option from the family's table (GPU type, TP, PP, batch
limit, role, clock, precision) and builds the simulator's :class:`~dse.sim.serving.inputs.Pool` with
:func:`~dse.sim.serving.llm.llm_pool` on the family's device (the runtime's fitted values, as
:func:`~dse.mapping.serving.table.serving_device` gives them) at the pool's clock:

* a pipeline of ``pp`` stages runs ``pp`` micro-batches at once (vLLM's virtual engines, one scheduler
  per micro-batch): a replica of ``tp x pp`` GPUs is ``pp`` engines of ``tp`` GPUs, each with a batch
  limit of ``ceil(batch / pp)`` and ``1 / pp`` of the replica's KV cache, whose iterations take ``pp``
  stage times (the family's ``t_step = pp x s_dec`` of ``ceil(B / pp)`` sequences);
* power: busy at the family's ``idle + (active - idle) x clock^2.4`` W per GPU, idle at ``idle_w``;
* the KV link of split pools: :func:`~dse.mapping.serving.table.kv_link_gbps` of the first prefill
  pool's GPU and TP (the family's TTFT charges the same transfer).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from dse.cost import RooflineCostModel
from dse.cost.tables import CostModel, CostTables
from dse.errors import SpecError
from dse.mapping.serving.problem import ServingCostTables, ServingProblem
from dse.mapping.serving.table import POWER_EXPONENT, kv_link_gbps, serving_device
from dse.model.platform import Platform
from dse.model.workload import Workload
from dse.sim.serving.inputs import Deployment, Pool
from dse.sim.serving.llm import llm_pool


@dataclasses.dataclass(frozen=True)
class AtLevel:
    """A cost model whose tables are ``base``'s at operating point ``level`` of the devices (level 0,
    or the nominal costs, when the tables have no levels)."""

    base: CostModel
    level: int

    def tables(self, workload: Workload, platform: Platform) -> CostTables:
        """``base``'s tables with the level's time and energy as their own."""
        tables = self.base.tables(workload, platform)
        levels = tables.levels
        if levels is None or self.level == 0:
            return tables
        return tables.replaced(time=levels.time[self.level], energy=levels.energy[self.level], levels=None)


def _context(problem: ServingProblem) -> ServingCostTables:
    tables = problem.tables
    if not isinstance(tables, ServingCostTables) or tables.workload is None or tables.fleet is None:
        raise SpecError(problem.name, "problem", problem.name,
                        "was not built from a serving spec (its tables carry no workload and fleet)")
    return tables


def pool_of(problem: ServingProblem, option: int, replicas: int, name: str) -> Pool:
    """The simulator's pool of ``replicas`` replicas of the table's ``option`` (the module docstring's rules).

    Raises :class:`~dse.errors.InfeasibleError` when no KV cache fits beside the weights."""
    t, ctx = problem.table, _context(problem)
    g, ti, pi, bi, ri, ci, qi = t.genes(option)
    fleet_gpu = ctx.fleet.gpus[g]
    tp, pp, batch, role, clock, precision = t.tp[ti], t.pp[pi], t.batch[bi], t.roles[ri], t.clocks[ci], t.precisions[qi]
    clocks = (1.0, clock) if clock != 1.0 else (1.0,)
    device = serving_device(fleet_gpu.device, clocks, ctx.workload.runtime)
    busy_w = device.idle_w + (device.active_w - device.idle_w) * clock**POWER_EXPONENT
    cost = AtLevel(RooflineCostModel(), len(clocks) - 1)
    whole = llm_pool(name, device, ctx.workload.config.name, tp=tp, pp=pp, replicas=replicas, max_batch=batch,
                     role=role, weights=precision, activations=precision, kv_cache=precision,
                     gpus_per_node=fleet_gpu.gpus_per_node, cost_model=cost)
    return dataclasses.replace(whole, gpus=tp, replicas=replicas * pp, max_batch=math.ceil(batch / pp),
                               kv_capacity_tokens=max(1, whole.kv_capacity_tokens // pp), busy_w=busy_w)


def deployment_of(problem: ServingProblem, genome: Sequence[int] | np.ndarray) -> Deployment:
    """The :class:`~dse.sim.serving.inputs.Deployment` of ``genome``: one pool per pool of the genome with
    replicas, named by the table's label (``#k`` added to a repeated one).

    Raises :class:`SpecError` for a genome out of range or with no pool used, or a problem not built from
    a serving spec; :class:`~dse.errors.InfeasibleError` from :func:`pool_of`."""
    x = problem.checked_genomes(genome)
    options, replicas = problem.pool_options(x)
    t = problem.table
    pools: list[Pool] = []
    link = 0.0
    for k, (o, r) in enumerate(zip(options[0].tolist(), replicas[0].tolist(), strict=True)):
        if r <= 0:
            continue
        label = t.label(o)
        name = label if all(p.name != label for p in pools) else f"{label} #{k}"
        pools.append(pool_of(problem, o, r, name))
        if t.roles[t.role[o]] == "prefill" and link == 0.0:
            g, ti = t.genes(o)[:2]
            link = kv_link_gbps(_context(problem).fleet.gpus[g].device, t.tp[ti])
    if not pools:
        raise SpecError(problem.name, "genome", problem.describe(x[0]), "no pool has replicas: nothing to simulate")
    return Deployment(tuple(pools), kv_link_gbps=link)
