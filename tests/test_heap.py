"""frozen_heap: objects alive at the start skip full collections inside the block, and nesting
unfreezes only at the outermost exit (gc.freeze is process-wide).

Frozen objects sit in the collector's permanent generation, which ``gc.get_objects()`` does not
list; the tests look for probe objects there rather than at ``gc.get_freeze_count()``, which
other objects dying by reference count change at any time."""

from __future__ import annotations

import gc

from kubesched.heap import frozen_heap


def _collectable(obj: object) -> bool:
    """True while ``obj`` is in a generation the collector scans (not frozen)."""
    return any(o is obj for o in gc.get_objects())


def test_freezes_inside_and_hands_back_at_the_outermost_exit() -> None:
    before: list[int] = []  # a container: tracked by the collector
    assert _collectable(before)
    with frozen_heap():
        assert not _collectable(before)  # alive at the start: frozen
        inner: list[int] = []
        with frozen_heap():
            assert _collectable(inner)  # nested: no second freeze
        assert _collectable(inner) and not _collectable(before)  # the inner exit did not unfreeze
    assert _collectable(before)  # handed back at the outermost exit


def test_unfreezes_when_the_block_raises() -> None:
    probe: list[int] = []
    try:
        with frozen_heap():
            assert not _collectable(probe)
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert _collectable(probe)
