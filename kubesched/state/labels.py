"""Columnar node labels: one int32 code column per label key, so selectors run as numpy masks.

Each key has a vocabulary (value -> code, codes 0, 1, 2, ... in first-seen order) and a column
holding the code of every row's value, or -1 where the row has no such label. Vocabularies only
grow, so a code never changes meaning and per-code tables (see ``int64_values``) stay valid.

Rows are dense ``0 .. len-1``. :meth:`LabelIndex.swap_remove` keeps them dense by moving the
last row into the removed slot, exactly as the snapshot moves its other per-node columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from kubesched.api.selectors import parse_int64

__all__ = ["LabelIndex", "parse_int64"]


class _Column:
    """The codes of one label key, plus its vocabulary and cached per-code integer tables."""

    __slots__ = ("codes", "vocab", "values", "_ints", "_floats")

    def __init__(self, capacity: int):
        self.codes = np.full(capacity, -1, dtype=np.int32)
        self.vocab: dict[str, int] = {}
        self.values: list[str] = []
        self._ints: tuple[np.ndarray, np.ndarray] | None = None
        self._floats: np.ndarray | None = None

    def code_of(self, value: str) -> int:
        code = self.vocab.get(value)
        if code is None:
            code = len(self.values)
            self.vocab[value] = code
            self.values.append(value)
        return code

    def int64_values(self) -> tuple[np.ndarray, np.ndarray]:
        if self._ints is None or len(self._ints[0]) != len(self.values):
            parsed = [parse_int64(v) for v in self.values]
            ints = np.array([0 if p is None else p for p in parsed], dtype=np.int64)
            valid = np.array([p is not None for p in parsed], dtype=bool)
            ints.flags.writeable = False
            valid.flags.writeable = False
            self._ints = (ints, valid)
        return self._ints

    def float_values(self) -> np.ndarray:
        if self._floats is None or len(self._floats) != len(self.values):
            ints, valid = self.int64_values()
            floats = np.where(valid, ints.astype(np.float64), np.nan)
            floats.flags.writeable = False
            self._floats = floats
        return self._floats


def _readonly(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


class LabelIndex:
    """Label columns of N nodes; rows are appended, updated and swap-removed in O(labels)."""

    def __init__(self, capacity: int = 64):
        self._n = 0
        self._cap = max(1, capacity)
        self._cols: dict[str, _Column] = {}
        self._rows: list[dict[str, str]] = []
        self._names = np.empty(self._cap, dtype=object)
        self._row_of_name: dict[str, int] = {}
        self._absent = np.full(self._cap, -1, dtype=np.int32)
        self._absent.flags.writeable = False
        self._unique: dict[str, bool] = {}  # key -> no two rows share a value (dropped on any change)

    def __len__(self) -> int:
        return self._n

    def copy(self) -> LabelIndex:
        """An index of its own with the same rows (columns copied; read-only tables shared)."""
        out = LabelIndex.__new__(LabelIndex)
        out._n, out._cap = self._n, self._cap
        out._cols = {}
        for key, col in self._cols.items():
            c = out._cols[key] = _Column.__new__(_Column)
            c.codes, c.vocab, c.values = col.codes.copy(), dict(col.vocab), list(col.values)
            c._ints, c._floats = col._ints, col._floats  # read-only, checked against len(values)
        out._rows = list(self._rows)  # row dicts are replaced, never changed
        out._names = self._names.copy()
        out._row_of_name = dict(self._row_of_name)
        out._absent = self._absent
        out._unique = dict(self._unique)
        return out

    # -- mutation -------------------------------------------------------------------------

    def _grow(self, need: int) -> None:
        cap = self._cap
        while cap < need:
            cap *= 2
        if cap == self._cap:
            return
        for col in self._cols.values():
            grown = np.full(cap, -1, dtype=np.int32)
            grown[: self._cap] = col.codes
            col.codes = grown
        names = np.empty(cap, dtype=object)
        names[: self._n] = self._names[: self._n]
        self._names = names
        self._absent = np.full(cap, -1, dtype=np.int32)
        self._absent.flags.writeable = False
        self._cap = cap

    def _column(self, key: str) -> _Column:
        col = self._cols.get(key)
        if col is None:
            col = self._cols[key] = _Column(self._cap)
        return col

    def _write(self, row: int, labels: Mapping[str, str]) -> None:
        if self._unique:  # empty in the pods' index, which writes a row per pod
            self._unique.clear()
        for key, val in labels.items():
            col = self._column(key)
            col.codes[row] = col.code_of(val)

    def append(self, labels: Mapping[str, str], name: str) -> int:
        """Add a node as the last row and return its row id. Node names must be unique."""
        if name in self._row_of_name:
            raise ValueError(f"node {name!r} is already in the label index")
        row = self._n
        if row >= self._cap:
            self._grow(row + 1)
        self._write(row, labels)
        self._rows.append(dict(labels))
        self._names[row] = name
        self._row_of_name[name] = row
        self._n = row + 1
        return row

    def update(self, row: int, labels: Mapping[str, str]) -> None:
        """Replace the labels of ``row`` (the node name stays)."""
        self._check(row)
        old = self._rows[row]
        for key in old.keys() - labels.keys():
            self._cols[key].codes[row] = -1
        self._write(row, labels)
        self._rows[row] = dict(labels)

    def swap_remove(self, row: int) -> None:
        """Remove ``row``; the last row moves into its place (its id becomes ``row``).

        The snapshot relies on this: it removes a node from its own columns the same way, so
        row ids stay aligned across all per-node arrays.
        """
        self._check(row)
        self._unique.clear()
        last = self._n - 1
        removed = self._rows[row]
        moved = self._rows[last]
        del self._row_of_name[self._names[row]]
        if row != last:
            for key in removed.keys() | moved.keys():
                codes = self._cols[key].codes
                codes[row] = codes[last]
            self._rows[row] = moved
            self._names[row] = self._names[last]
            self._row_of_name[self._names[row]] = row
        # Slots past the end must read -1 so a later append only has to write its own keys.
        for key in moved:
            self._cols[key].codes[last] = -1
        for key in removed:
            self._cols[key].codes[last] = -1
        self._rows.pop()
        self._names[last] = None
        self._n = last

    def _check(self, row: int) -> None:
        if not 0 <= row < self._n:
            raise IndexError(f"row {row} out of range for {self._n} nodes")

    # -- queries --------------------------------------------------------------------------

    def keys(self) -> list[str]:
        """Every label key ever seen (some may no longer be on any node)."""
        return list(self._cols)

    def codes(self, key: str) -> np.ndarray:
        """Read-only int32 view, one code per row; -1 where the row lacks ``key``. No copy."""
        col = self._cols.get(key)
        return _readonly((col.codes if col is not None else self._absent)[: self._n])

    def unique(self, key: str) -> bool:
        """True when no two rows share a value of ``key`` (rows without it aside), so a topology
        domain of ``key`` is one node. Cached until a row changes."""
        hit = self._unique.get(key)
        if hit is None:
            codes = self.codes(key)
            codes = codes[codes >= 0]
            hit = self._unique[key] = bool(codes.size == 0 or np.bincount(codes).max() <= 1)
        return hit

    def vocab(self, key: str) -> Mapping[str, int]:
        """value -> code for ``key`` (empty for an unknown key). Do not mutate."""
        col = self._cols.get(key)
        return col.vocab if col is not None else {}

    def values_of(self, key: str) -> list[str]:
        """code -> value for ``key``. Do not mutate."""
        col = self._cols.get(key)
        return col.values if col is not None else []

    def int_values(self, key: str) -> np.ndarray:
        """code -> value as float64, NaN where the value is not an integer (approximate >2**53)."""
        col = self._cols.get(key)
        return col.float_values() if col is not None else np.empty(0, dtype=np.float64)

    def int64_values(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """code -> (exact int64 value, is-an-integer) as Go's ParseInt reads label values (Gt/Lt)."""
        col = self._cols.get(key)
        if col is None:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=bool)
        return col.int64_values()

    def names(self) -> np.ndarray:
        """Read-only object array of node names per row."""
        return _readonly(self._names[: self._n])

    def name(self, row: int) -> str:
        self._check(row)
        return self._names[row]

    def row_of(self, name: str) -> int | None:
        """Row of the node called ``name``, or None."""
        return self._row_of_name.get(name)

    def name_mask(self, names: Iterable[str]) -> np.ndarray:
        """Boolean mask of rows whose node name is in ``names`` (matchFields metadata.name In)."""
        mask = np.zeros(self._n, dtype=bool)
        for n in names:
            row = self._row_of_name.get(n)
            if row is not None:
                mask[row] = True
        return mask

    def labels(self, row: int) -> dict[str, str]:
        """A copy of the labels of ``row``."""
        self._check(row)
        return dict(self._rows[row])
