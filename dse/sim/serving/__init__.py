"""The serving simulator: LLM requests on a deployment of GPU pools, iteration by iteration.

:mod:`~dse.sim.serving.inputs` holds what a run takes (:class:`~dse.sim.serving.inputs.Pool`,
:class:`~dse.sim.serving.inputs.Deployment`, :class:`~dse.sim.serving.inputs.Requests`),
:mod:`~dse.sim.serving.engine` the simulation (continuous batching, chunked prefill, KV-cache preemption,
disaggregated prefill and decode), :mod:`~dse.sim.serving.capacity` the highest arrival rate meeting the
SLOs, and :mod:`~dse.sim.serving.llm` pools costed by the ``llm`` builder and a cost model.
"""
