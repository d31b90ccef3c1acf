"""Seeded random layered DAGs of realistically sized ops, for tests and benchmarks."""

from __future__ import annotations

import numpy as np

from dse.errors import SpecError
from dse.inputs.builders.gemm import SOURCE, bytes_per_element, require_positive, require_size
from dse.model.workload import MAX_OPS, Op, Workload

#: Per class: FLOPs range and arithmetic-intensity range (FLOP per byte moved), both drawn
#: log-uniformly. Dense GEMMs of 256^3 to 4096^3 run at 10..500 FLOP/B; convs alike; an SpMM
#: with fp32 values and int32 indices does about 0.1..1 FLOP/B; elementwise ops well below 1.
CLASS_RANGES: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "gemm": ((1e7, 2e11), (10.0, 500.0)),
    "conv": ((1e7, 2e10), (5.0, 200.0)),
    "spmm": ((1e5, 1e9), (0.1, 1.0)),
    "elementwise": ((1e4, 1e8), (0.05, 0.5)),
}

_DENSE = ("gemm", "conv", "elementwise")


def random_pipeline(
    n_ops: int = 16,
    seed: int = 0,
    max_preds: int = 2,
    width: int = 3,
    sparse_share: float = 0.25,
    precision: str = "fp32",
) -> Workload:
    """A layered random DAG of ``n_ops`` ops, deterministic for ``seed``.

    Layers hold 1..``width`` ops; every op after the first layer has one
    producer in the previous layer and up to ``max_preds - 1`` more among all
    earlier ops. An op is ``spmm`` with probability ``sparse_share``, else
    ``gemm``, ``conv`` or ``elementwise`` with equal odds. FLOPs and arithmetic
    intensity are log-uniform in :data:`CLASS_RANGES`; ``bytes_moved`` =
    FLOPs / intensity; resident bytes are 5-60% of it (none for elementwise
    ops) and output bytes 5-35%. ``spmm`` ops get ``density`` log-uniform in
    [1e-5, 1e-2] and ``degree_skew`` uniform in [0.2, 3]. Uses
    ``numpy.random.default_rng(seed)``; time and memory are linear in
    ``n_ops * max_preds``.

    Raises :class:`SpecError` for a non-positive size, a negative seed,
    ``sparse_share`` outside [0, 1], ``n_ops`` past :data:`~dse.model.workload.MAX_OPS`,
    ``n_ops * max_preds`` past :data:`~dse.model.workload.MAX_EDGES` or ``width``
    past ``MAX_OPS``.
    """
    require_positive(n_ops=n_ops, max_preds=max_preds, width=width)
    require_size("n_ops", n_ops, n_ops)
    require_size("max_preds", max_preds, n_ops, n_ops * min(max_preds, n_ops))
    if width > MAX_OPS:
        raise SpecError(SOURCE, "width", width, f"must be at most {MAX_OPS} (the most ops a workload holds)")
    bytes_per_element(precision)
    if seed < 0:
        raise SpecError(SOURCE, "seed", seed, "must be >= 0")
    if not 0.0 <= sparse_share <= 1.0:
        raise SpecError(SOURCE, "sparse_share", sparse_share, "must be in [0, 1]")
    rng = np.random.default_rng(seed)

    def logu(lo: float, hi: float) -> float:
        return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))

    layers: list[list[int]] = []
    count = 0
    while count < n_ops:
        size = min(int(rng.integers(1, width + 1)), n_ops - count)
        layers.append(list(range(count, count + size)))
        count += size

    ops: list[Op] = []
    edges: list[tuple[int, int]] = []
    for depth, layer in enumerate(layers):
        for i in layer:
            # rng.integers(0, k) indexing a list draws as rng.choice(list) does, without building an array
            cls = "spmm" if rng.random() < sparse_share else _DENSE[int(rng.integers(0, len(_DENSE)))]
            (f_lo, f_hi), (ai_lo, ai_hi) = CLASS_RANGES[cls]
            flops = logu(f_lo, f_hi)
            moved = flops / logu(ai_lo, ai_hi)
            resident = 0.0 if cls == "elementwise" else moved * rng.uniform(0.05, 0.6)
            features = {}
            if cls == "spmm":
                features = {"density": logu(1e-5, 1e-2), "degree_skew": float(rng.uniform(0.2, 3.0))}
            ops.append(Op(f"op{i}", cls, flops=flops, bytes_moved=moved, resident_bytes=resident,
                          output_bytes=moved * rng.uniform(0.05, 0.35), precision=precision,
                          features=features))
            if depth == 0:
                continue
            below = layers[depth - 1]
            first = below[int(rng.integers(0, len(below)))]
            preds = {first}
            extra = int(rng.integers(0, max_preds))  # 0 .. max_preds - 1 more producers
            n_candidates = layer[0] - 1  # any op of an earlier layer but ``first``
            if extra and n_candidates:
                # the same draw as rng.choice(<the candidates, in order>, ...) without listing them:
                # candidate k is op k below ``first`` and op k + 1 from it on
                picks = rng.choice(n_candidates, size=min(extra, n_candidates), replace=False)
                preds.update(int(k) + int(k >= first) for k in picks)
            edges += [(j, i) for j in sorted(preds)]
    return Workload(f"random-{n_ops}-s{seed}", tuple(ops), tuple(edges),
                    description=f"seeded random layered DAG (seed {seed}, {len(layers)} layers)")
