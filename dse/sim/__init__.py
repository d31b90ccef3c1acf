"""Layer 5, simulation core: the discrete-event core (:mod:`~dse.sim.core`), the real-time
simulator (:mod:`~dse.sim.realtime`), its schedulers (:mod:`~dse.sim.schedulers`), the XR metrics
(:mod:`~dse.sim.xr_metrics`), the UXCost floor (:mod:`~dse.sim.ux_bound`), for families that
score a genome by simulating it, and the LLM serving simulator (:mod:`~dse.sim.serving`)."""
