"""Layer 10, batch, store and reports: the SQLite store (:mod:`~dse.store.database`) and its salvage
(:mod:`~dse.store.salvage`), Dask batch runs (:mod:`~dse.store.batch`), Perfetto traces
(:mod:`~dse.store.trace`) and the HTML report (:mod:`~dse.store.report`)."""
