"""Reproductions of published scheduling experiments (``kubesched experiment ...``).

- ``protocol``: one run of the FGD paper's experiment (shuffle, tune, replay through the
  Scheduler, per-pod GPU metrics).
- ``published``: the FGD paper's numbers (unallocated GPU %, fragmentation), with their source.
- ``grid``: traces, policies, seeds -> ``RunSpec`` list; flag parsing.
- ``runner``: ``run_one(spec) -> RunRecord`` (what each worker process or Ray task runs).
- ``fanout``: the kit's process pool (``kubesched.kit.pool``) or Ray tasks, slow policies first.
- ``aggregate``: seed statistics (``kubesched.kit.stats``), the comparison with the published
  numbers, the ranking check.
- ``figures`` / ``report``: PNGs, CSV/JSON and the Markdown summary.

Nothing here imports Ray (or matplotlib) at import time.
"""
