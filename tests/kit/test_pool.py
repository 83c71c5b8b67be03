"""The kit's grid runner: results whatever the finish order, a failing task named, progress per
task, cancellation of what has not started, the same results in this process and in workers."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kubesched.errors import InputError
from kubesched.kit.pool import Pool, default_workers, run_grid, workers_from


def _slow_square(x: int) -> int:
    time.sleep(0.02 * (x % 4))  # later tasks often finish first
    return x * x


def _power(x: int, k: int) -> int:
    return x**k


def _fails_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three is bad")
    return x


def _touch(path: str) -> str:
    time.sleep(0.1)
    Path(path).touch()
    return path


@pytest.mark.parametrize("workers", [1, 3])
def test_map_gives_task_order_whatever_finishes_first(workers: int) -> None:
    with Pool(workers, start="fork") as pool:
        assert pool.map(_slow_square, range(8)) == [x * x for x in range(8)]
        seen = [(i, task, res) for i, task, res in pool.as_completed(_slow_square, range(8))]
        assert sorted(seen) == [(x, x, x * x) for x in range(8)]
        assert pool.map(_power, [(2, 3), (3, 2)], star=True) == [8, 9]


def test_the_pool_finishes_tasks_out_of_order_and_ordered_reassembles_them() -> None:
    with Pool(4, start="fork") as pool:
        finish = [task for _, task, _ in pool.as_completed(_slow_square, [3, 0])]
        assert finish == [0, 3]  # 0 sleeps nothing, 3 sleeps 60 ms
        assert list(pool.ordered(_slow_square, [3, 0])) == [9, 0]


def test_spawned_workers_give_the_same_results_as_this_process() -> None:
    with Pool(2, start="spawn") as pool:
        spawned = pool.map(_slow_square, range(5))
    with Pool(1) as pool:
        assert pool.map(_slow_square, range(5)) == spawned


@pytest.mark.parametrize("workers", [1, 2])
def test_a_failing_task_is_named_in_its_error(workers: int) -> None:
    with pytest.raises(ValueError, match="three is bad") as info, Pool(workers, start="fork") as pool:
        pool.map(_fails_on_three, range(6))
    assert "in task 4 of 6: 3" in info.value.__notes__


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_is_called_once_per_task(workers: int) -> None:
    calls: list[tuple[int, int, int, int]] = []
    with Pool(workers, start="fork") as pool:
        pool.map(_slow_square, range(6), progress=lambda done, total, t, r: calls.append((done, total, t, r)))
    assert [c[0] for c in calls] == [1, 2, 3, 4, 5, 6]
    assert {c[1] for c in calls} == {6}
    assert sorted((t, r) for _, _, t, r in calls) == [(x, x * x) for x in range(6)]


def test_stopping_early_cancels_the_tasks_not_started(tmp_path: Path) -> None:
    paths = [str(tmp_path / f"t{i}") for i in range(30)]
    for _task, _ in run_grid(_touch, paths, 2, start="fork"):
        break
    ran = len(list(tmp_path.iterdir()))
    assert 1 <= ran < 10  # the running ones and the few already handed to a worker, not all 30


def test_initializer_runs_in_this_process_with_one_worker() -> None:
    seen: list[int] = []
    with Pool(1, initializer=seen.append, initargs=(7,)):
        pass
    assert seen == [7]


def test_worker_count_flag() -> None:
    assert workers_from(None) == default_workers() >= 1
    assert workers_from(None, default=3) == 3
    assert workers_from(2) == 2
    with pytest.raises(InputError, match="must be at least 1, got 0") as info:
        workers_from(0, "--jobs")
    assert info.value.source == "--jobs"
    with pytest.raises(ValueError):
        Pool(0)
