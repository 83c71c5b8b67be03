"""kubesched.alias.Alias: an attribute that is another object's."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kubesched.alias import Alias


@dataclass
class _Inner:
    start: int
    mode: str


@dataclass
class _Outer:
    inner: _Inner

    start = Alias[int]("inner.start", writable=True)
    mode = Alias[str]("inner.mode")


def test_an_alias_reads_and_writes_the_attribute_it_names() -> None:
    outer = _Outer(_Inner(3, "first"))
    assert (outer.start, outer.mode) == (3, "first")
    outer.start = 7
    assert outer.inner.start == 7 and outer.start == 7
    outer.inner = _Inner(1, "random")  # follows the path each time, not the object it first saw
    assert (outer.start, outer.mode) == (1, "random")


def test_an_alias_not_declared_writable_is_read_only() -> None:
    outer = _Outer(_Inner(3, "first"))
    with pytest.raises(AttributeError, match=r"_Outer.mode is inner.mode, read-only here"):
        outer.mode = "random"
    assert outer.inner.mode == "first"


def test_on_the_class_an_alias_is_itself_and_needs_a_dotted_path() -> None:
    assert isinstance(_Outer.start, Alias) and _Outer.start.name == "start"
    assert "start" not in {f for f in _Outer.__dataclass_fields__}  # no annotation: not a field
    with pytest.raises(ValueError, match="a.b"):
        Alias("start")
