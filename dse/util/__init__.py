"""Layer 1, ground: what every other layer may use and that imports nothing of theirs.

:mod:`~dse.util.files` (atomic writes, output folders), :mod:`~dse.util.interrupt` (stops at safe
points), :mod:`~dse.util.progress`, :mod:`~dse.util.limits` (seeds, time limits), :mod:`~dse.util.yamlio`,
:mod:`~dse.util.validation` (pydantic errors as one-line :class:`~dse.errors.SpecError`),
:mod:`~dse.util.suggest` (did-you-mean), :mod:`~dse.util.plugins` (the loader the registries share),
:mod:`~dse.util.home` (where the catalog lives), :mod:`~dse.util.jit` (compiled kernels under a time
limit), :mod:`~dse.util.genome`, :mod:`~dse.util.units`, :mod:`~dse.util.rounding`,
:mod:`~dse.util.numbers` (the one parser of numbers written as text) and :mod:`~dse.util.graphs` (acyclic and
connected, without networkx).
"""
