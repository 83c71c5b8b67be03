"""The token bucket behind --kube-api-qps/--kube-api-burst, on a fake clock."""

from __future__ import annotations

import threading

import pytest

from kubesched.live.ratelimit import TokenBucket


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


def test_burst_then_qps() -> None:
    clk = FakeClock()
    tb = TokenBucket(10, 3, clock=clk, sleep=clk.sleep)
    waits = [tb.acquire() for _ in range(6)]
    assert waits[:3] == [0.0, 0.0, 0.0]  # the burst is free
    assert waits[3:] == pytest.approx([0.1, 0.1, 0.1])  # then one token per 1/qps
    assert clk.now == pytest.approx(0.3)


def test_refills_up_to_burst_only() -> None:
    clk = FakeClock()
    tb = TokenBucket(2, 2, clock=clk, sleep=clk.sleep)
    assert tb.try_acquire() and tb.try_acquire()
    assert not tb.try_acquire()
    clk.now += 100.0  # a long idle time saves at most `burst` tokens
    assert tb.try_acquire() and tb.try_acquire()
    assert not tb.try_acquire()


def test_concurrent_reservations_queue_up() -> None:
    clk = FakeClock()
    tb = TokenBucket(200, 1, clock=clk, sleep=clk.sleep)
    waits: list[float] = []
    threads = [threading.Thread(target=lambda: waits.append(tb.reserve())) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # ten callers at the same instant: the k-th waits k/qps, whatever order the threads ran in
    assert sorted(waits) == pytest.approx([k / 200 for k in range(10)])


@pytest.mark.parametrize(("qps", "burst"), [(0, 1), (-1, 1), (1, 0)])
def test_rejects_bad_settings(qps: float, burst: int) -> None:
    with pytest.raises(ValueError):
        TokenBucket(qps, burst)
