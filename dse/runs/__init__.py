"""Layer 9, specs and runs: YAML spec to problem (:mod:`~dse.runs.spec`), sweeps
(:mod:`~dse.runs.sweep`), the JSON schema (:mod:`~dse.runs.schema`), the runner that runs a resolved
spec's solvers and writes a run folder (:mod:`~dse.runs.runner`), and ``dse accuracy``
(:mod:`~dse.runs.accuracy`, :mod:`~dse.runs.accuracy_fit`)."""
