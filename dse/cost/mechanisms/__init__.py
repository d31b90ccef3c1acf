"""Named cost mechanisms the roofline model applies where a device declares them.

Each mechanism is a field of a platform device (:class:`dse.model.platform.Device`) whose default leaves the
model as it was, and one small function :mod:`dse.cost` calls at a marked hook:

* :mod:`~dse.cost.mechanisms.overhead`: ``launch_overhead_us`` (per op: kernel launch and the
  framework's dispatch, replacing the device kind's default) and ``call_overhead_us`` (per call of the
  workload: host and runtime time, charged once per call on the workload's entry ops);
* :mod:`~dse.cost.mechanisms.fusion`: ``fused_op_classes``, the op classes the device's runtime fuses
  into their producer's kernel (no separate pass over memory, no launch of their own);
* :mod:`~dse.cost.mechanisms.efficiency`: ``compute_efficiency``, the fraction of peak per op class
  on that device, replacing the kind's default (values fitted on measurements: ``docs/accuracy.md``).

None of them knows a workload, a model or a measurement: they read the device's declaration and the
op's class and graph position only. A calibration (``dse calibrate``) still replaces the analytic
time of the ops it covers.
"""
