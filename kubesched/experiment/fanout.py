"""Fan the grid out: the kit's process pool (spawn: no state leaks from the parent), or Ray tasks.

Both call ``runner.run_one`` on each ``RunSpec``, slow policies first, and yield ``(spec, record)``
as runs finish, so the caller can write results and advance a progress bar incrementally. Ray is
imported only here, and only when asked for (it is the optional ``kubesched[ray]`` extra).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from kubesched.errors import InputError, require_extra
from kubesched.experiment.grid import RunSpec
from kubesched.experiment.runner import RunRecord, run_one
from kubesched.kit.pool import run_grid

#: rough relative cost per policy (FGD evaluates F_n(M) per node and per GPU); the slow runs go
#: first so the last minutes of a grid are not one worker finishing a long run alone
COST = {"FGD": 4.0, "GpuPacking": 1.5, "GpuClustering": 1.5, "Random": 1.2, "DotProd": 1.0, "BestFit": 1.0}


def schedule_order(specs: Sequence[RunSpec]) -> list[RunSpec]:
    return sorted(specs, key=lambda s: -COST.get(s.policy, 1.0))


def run_local(specs: Sequence[RunSpec], workers: int) -> Iterator[tuple[RunSpec, RunRecord]]:
    """Each run in a worker process (spawned); at most ``workers`` at once."""
    return run_grid(run_one, schedule_order(specs), workers, start="spawn")


NICENESS_ENV = "RAY_worker_niceness"


def ray_init_kwargs(address: str, workers: int) -> dict:
    if address == "local":  # a private local instance sized like the process pool
        return {"num_cpus": workers, "include_dashboard": False, "log_to_driver": False}
    return {"address": address, "log_to_driver": False}


def import_ray():  # noqa: ANN201 - the ray module
    require_extra("ray", "Ray", "ray", "--ray-address")
    import ray

    return ray


def run_ray(specs: Sequence[RunSpec], address: str, workers: int) -> Iterator[tuple[RunSpec, RunRecord]]:
    """The same ``run_one`` as Ray tasks (one CPU each) on the cluster at ``address``.

    ``local`` starts a private instance with ``workers`` CPUs; ``auto`` or ``HOST:PORT`` (or
    ``ray://HOST:PORT``) joins a running cluster, whose nodes need kubesched and the data folder
    at the same path. Ray is shut down afterwards if this call started it.
    """
    ray = import_ray()
    order = schedule_order(specs)
    started = not ray.is_initialized()
    if started:
        # Ray runs its workers at niceness 15 by default; a private instance is sized like the
        # process pool and should compete for the CPUs like it (on a busy machine: ~6x faster)
        saved = os.environ.get(NICENESS_ENV)
        if address == "local" and saved is None:
            os.environ[NICENESS_ENV] = "0"
        try:
            ray.init(**ray_init_kwargs(address, workers))
        except (ConnectionError, ValueError, RuntimeError) as e:
            raise InputError(f"cannot connect to Ray at {address!r}: {e}", source="--ray-address") from None
        finally:
            if saved is None:
                os.environ.pop(NICENESS_ENV, None)
    try:
        task = ray.remote(num_cpus=1)(run_one)
        pending = {task.remote(s): s for s in order}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                spec = pending.pop(ref)
                yield spec, ray.get(ref)
    finally:
        if started:
            ray.shutdown()
