"""frozen_heap: objects alive at the start skip full collections inside the block, and nesting
unfreezes only at the outermost exit (gc.freeze is process-wide)."""

from __future__ import annotations

import gc

from kubesched.heap import frozen_heap


def test_freezes_inside_and_hands_back_at_the_outermost_exit() -> None:
    keep = [object() for _ in range(1000)]  # noqa: F841 - alive through the block
    before = gc.get_freeze_count()
    with frozen_heap():
        frozen = gc.get_freeze_count()
        assert frozen >= before + 1000
        with frozen_heap():
            assert gc.get_freeze_count() == frozen  # nested: no second freeze
        assert gc.get_freeze_count() == frozen  # the inner exit did not unfreeze
    assert gc.get_freeze_count() == 0


def test_unfreezes_when_the_block_raises() -> None:
    try:
        with frozen_heap():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert gc.get_freeze_count() == 0
