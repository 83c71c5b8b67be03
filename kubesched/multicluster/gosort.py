"""Go's ``sort.Sort`` (pattern-defeating quicksort), for the one Karmada sort whose ties matter.

Karmada sorts a ``TargetClustersList`` by replicas only (``sort.Sort``, not stable), and which of
two clusters with equal available replicas comes first decides where Aggregated replicas go.
Python's stable sort would break those ties differently on more than 12 clusters, so this is
Go's algorithm step for step (``sort/zsortinterface.go``; Karmada v1.18 builds with Go 1.24).
Up to 12 elements it is an insertion sort, which is stable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_INCREASING, _DECREASING, _UNKNOWN = 1, 2, 0
_MASK64 = (1 << 64) - 1
# breakPatterns' xorshift shifts: Go 1.22 and later; Go 1.19 to 1.21 used (13, 17, 5)
XORSHIFT = (13, 7, 17)


def go_sort(data: list[T], less: Callable[[T, T], bool], xorshift: tuple[int, int, int] = XORSHIFT) -> None:
    """Sort ``data`` in place exactly as Go's ``sort.Sort`` orders it."""
    n = len(data)
    if n <= 1:
        return
    _Sorter(data, less, xorshift).pdqsort(0, n, n.bit_length())


class _Sorter:
    def __init__(self, data: list, less: Callable, xorshift: tuple[int, int, int]) -> None:
        self.d = data
        self.lt = less
        self.shifts = xorshift

    def less(self, i: int, j: int) -> bool:
        return self.lt(self.d[i], self.d[j])

    def swap(self, i: int, j: int) -> None:
        d = self.d
        d[i], d[j] = d[j], d[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, lo, hi = a, 0, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(lo, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced = was_partitioned = True
        while True:
            length = b - a
            if length <= 12:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if was_balanced and was_partitioned and hint == _INCREASING and self.partial_insertion_sort(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, was_partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i += 1
            j -= 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(5):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < 50:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                for j in range(i - 1, 0, -1):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:
                for j in range(i + 1, b):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        r = length
        modulus = 1 << length.bit_length()
        s1, s2, s3 = self.shifts
        for idx in range(a + (length // 4) * 2 - 1, a + (length // 4) * 2 + 2):
            r ^= (r << s1) & _MASK64
            r ^= r >> s2
            r ^= (r << s3) & _MASK64
            other = r & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        n = b - a
        swaps = [0]
        i, j, k = a + n // 4 * 1, a + n // 4 * 2, a + n // 4 * 3
        if n >= 8:
            if n >= 50:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == 12:
            return j, _DECREASING
        return j, _UNKNOWN

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1
