"""The grid runner: one function over a list of tasks, in worker processes or in this one.

``Pool(workers)`` with ``workers > 1`` starts a ``ProcessPoolExecutor`` (the only process pool in
kubesched); with 1 it runs every task in this process, in order, with the same calls. The start
method is the scenario's choice: ``spawn`` (a fresh interpreter, nothing of the parent leaks in:
the FGD grid, the learning track) or ``fork`` (workers inherit what the parent built before the
pool started, e.g. ``kubesched tune``'s workloads, instead of unpickling thousands of pods).
An ``initializer`` runs once per worker (once in this process when ``workers`` is 1).

Results come back as they finish (``as_completed``) or in task order (``map``); ``progress(done,
total, task, result)`` is called once per finished task, in this process. A task that raises
stops the run: its exception is raised again with a note naming the task, and the tasks not yet
started are cancelled, as they are when the caller stops reading or the ``with`` block exits.
"""

from __future__ import annotations

import multiprocessing
import os
import reprlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from types import TracebackType
from typing import Any, Literal

from kubesched.errors import InputError

Progress = Callable[[int, int, Any, Any], None]  # (done, total, task, result)
Start = Literal["spawn", "fork"]


def default_workers() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def workers_from(value: int | None, flag: str = "--workers", default: int | None = None) -> int:
    """The worker count of a ``--workers N`` flag: at least 1 (an InputError naming ``flag``
    otherwise); unset: ``default``, or every CPU."""
    if value is None:
        return default if default is not None else default_workers()
    if value < 1:
        raise InputError(f"must be at least 1, got {value}", source=flag)
    return value


def _failed(e: BaseException, index: int, total: int, task: Any) -> BaseException:
    e.add_note(f"in task {index + 1} of {total}: {reprlib.repr(task)}")
    return e


class Pool:
    """``workers`` processes (1: this process) that run tasks; use as a context manager."""

    def __init__(
        self,
        workers: int,
        *,
        start: Start = "spawn",
        initializer: Callable[..., None] | None = None,
        initargs: tuple = (),
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.start = start
        self._initializer, self._initargs = initializer, initargs
        self._executor: ProcessPoolExecutor | None = None

    def __enter__(self) -> Pool:
        if self.workers == 1:
            if self._initializer is not None:
                self._initializer(*self._initargs)
        else:
            ctx = multiprocessing.get_context(self.start)
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=ctx, initializer=self._initializer, initargs=self._initargs
            )
        return self

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=kind is not None)
            self._executor = None

    def as_completed(
        self, fn: Callable[..., Any], tasks: Iterable[Any], progress: Progress | None = None, *, star: bool = False
    ) -> Iterator[tuple[int, Any, Any]]:
        """``(index, task, fn(task))`` as each task finishes (in task order in this process);
        ``star``: each task is a tuple of arguments, ``fn(*task)``."""
        todo = list(tasks)
        total = len(todo)
        if self._executor is None:
            for i, task in enumerate(todo):
                try:
                    result = fn(*task) if star else fn(task)
                except Exception as e:
                    raise _failed(e, i, total, task) from None
                if progress is not None:
                    progress(i + 1, total, task, result)
                yield i, task, result
            return
        submit = self._executor.submit
        pending: dict[Future[Any], int] = {(submit(fn, *t) if star else submit(fn, t)): i for i, t in enumerate(todo)}
        done_count = 0
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in sorted(done, key=pending.__getitem__):
                    i = pending.pop(fut)
                    try:
                        result = fut.result()
                    except Exception as e:
                        raise _failed(e, i, total, todo[i]) from None
                    done_count += 1
                    if progress is not None:
                        progress(done_count, total, todo[i], result)
                    yield i, todo[i], result
        finally:
            for fut in pending:  # the caller stopped reading, or a task failed
                fut.cancel()

    def ordered(
        self, fn: Callable[..., Any], tasks: Iterable[Any], progress: Progress | None = None, *, star: bool = False
    ) -> Iterator[Any]:
        """The results in task order, each as soon as it and the ones before it are done."""
        held: dict[int, Any] = {}
        following = 0
        for i, _, result in self.as_completed(fn, tasks, progress, star=star):
            held[i] = result
            while following in held:
                yield held.pop(following)
                following += 1

    def map(
        self, fn: Callable[..., Any], tasks: Iterable[Any], progress: Progress | None = None, *, star: bool = False
    ) -> list[Any]:
        """``[fn(task) for task in tasks]``, run in the pool; ``progress`` as tasks finish."""
        return list(self.ordered(fn, tasks, progress, star=star))


def run_grid(
    fn: Callable[[Any], Any],
    tasks: Sequence[Any],
    workers: int,
    *,
    start: Start = "spawn",
    initializer: Callable[..., None] | None = None,
    initargs: tuple = (),
    progress: Progress | None = None,
) -> Iterator[tuple[Any, Any]]:
    """``(task, result)`` as each finishes, on at most ``workers`` processes (no more than tasks)."""
    if not tasks:
        return
    with Pool(min(workers, len(tasks)), start=start, initializer=initializer, initargs=initargs) as pool:
        for _, task, result in pool.as_completed(fn, tasks, progress):
            yield task, result
