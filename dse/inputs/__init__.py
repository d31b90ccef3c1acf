"""Layer 3, import and build: the catalog (:mod:`~dse.inputs.catalog`), workload builders
(:mod:`~dse.inputs.builders`: DNNs, GNNs, sparse kernels, GEMM, random DAGs), importers
(:mod:`~dse.inputs.importers`: STG, TF CSV, DOT, JSON, MAESTRO, ONNX), the fitted mechanism values of
LLM runtimes (:mod:`~dse.inputs.llm_runtime`) and the statistics of real inputs (:mod:`~dse.inputs.datasets`)."""
