"""Random task graphs made like the Standard Task Graph Set's (Tobita & Kasahara, J. Scheduling 5, 2002).

Methods (``method``): ``sameprob`` (each pair i < j joined with one probability), ``samepred``
(each task draws its predecessor count around a mean), ``layrprob`` and ``layrpred`` (the same
two rules between consecutive layers of random width). Task costs are uniform on 1..10; a dummy
entry and exit task of cost 0 are added, as in the set's files. The real set is not bundled:
these graphs reproduce its generation rules, not its files.
"""

from __future__ import annotations

import numpy as np

from dse.errors import SpecError
from dse.model.workload import MAX_EDGES, MAX_OPS, Op, Workload

METHODS = ("sameprob", "samepred", "layrprob", "layrpred")


def stg_random_graph(n_tasks: int = 50, method: str = "sameprob", seed: int = 0, mean_preds: float = 3.0) -> Workload:
    """``n_tasks`` real tasks plus dummy entry ``t0`` and exit ``t{n+1}``.

    Raises :class:`SpecError` for an unknown method, ``n_tasks`` < 1 or ``n_tasks + 2`` past
    :data:`~dse.model.workload.MAX_OPS`, a ``mean_preds`` that is negative, not finite or makes
    ``n_tasks * mean_preds`` pass :data:`~dse.model.workload.MAX_EDGES`; all before allocating.
    ``sameprob`` draws one number per pair of tasks: its time grows with ``n_tasks ** 2``.
    """
    if method not in METHODS:
        raise SpecError("workload", "method", method, f"one of {', '.join(METHODS)}")
    if n_tasks < 1:
        raise SpecError("workload", "n_tasks", n_tasks, "must be >= 1")
    if n_tasks + 2 > MAX_OPS:
        raise SpecError("workload", "n_tasks", n_tasks, f"n_tasks + 2 dummies is more than {MAX_OPS} ops")
    if not 0 <= mean_preds <= MAX_EDGES / n_tasks:  # also NaN
        raise SpecError("workload", "mean_preds", mean_preds,
                        f"must be in [0, {MAX_EDGES} / n_tasks] (at most {MAX_EDGES} edges)")
    rng = np.random.default_rng(seed)
    n = n_tasks
    preds: list[set[int]] = [set() for _ in range(n)]
    if method.startswith("layr"):
        layers, start = [], 0
        while start < n:
            width = int(rng.integers(1, max(2, int(np.sqrt(n)) * 2)))
            layers.append(list(range(start, min(n, start + width))))
            start += width
        for below, above in zip(layers, layers[1:], strict=False):
            for j in above:
                if method == "layrprob":  # one draw per op below, as rng.random() in a loop would
                    chosen = np.asarray(below)[rng.random(len(below)) < min(1.0, mean_preds / len(below))]
                else:
                    k = int(np.clip(rng.poisson(mean_preds), 1, len(below)))
                    chosen = rng.choice(below, size=k, replace=False)
                preds[j].update(int(i) for i in chosen)
    else:
        for j in range(1, n):
            if method == "sameprob":
                p = min(1.0, 2 * mean_preds / max(n - 1, 1))
                preds[j].update(np.flatnonzero(rng.random(j) < p).tolist())  # one draw per earlier task
            else:
                k = int(np.clip(rng.poisson(mean_preds), 0, j))
                preds[j].update(int(i) for i in rng.choice(j, size=k, replace=False))
    costs = rng.integers(1, 11, size=n)
    ops = [Op("t0", work=0.0)] + [Op(f"t{i + 1}", work=float(c)) for i, c in enumerate(costs)]
    ops.append(Op(f"t{n + 1}", work=0.0))
    edges = []
    has_succ = set()
    for j in range(n):
        if not preds[j]:
            edges.append((0, j + 1))
        for i in sorted(preds[j]):
            edges.append((i + 1, j + 1))
            has_succ.add(i)
    edges += [(i + 1, n + 1) for i in range(n) if i not in has_succ]
    return Workload(f"stg-{method}-{n}-{seed}", tuple(ops), tuple(edges))
