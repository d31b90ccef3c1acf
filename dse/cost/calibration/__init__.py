"""Calibration: measuring kernels on this machine (:mod:`~dse.cost.calibration.measure`), the
calibrated model (:mod:`~dse.cost.calibration.model`), its fit (:mod:`~dse.cost.calibration.fit`) and
its files (:mod:`~dse.cost.calibration.files`)."""
