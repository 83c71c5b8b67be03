"""``Alias``: an attribute that is another object's, reached along a dotted path.

``fw = Alias[Framework]("parked.fw")`` in a class body makes ``obj.fw`` read ``obj.parked.fw``,
where a property would spell out a getter (and a setter) for each such attribute. An alias is
read-only, as a property without a setter, unless it is declared ``writable``.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class Alias(Generic[T]):
    __slots__ = ("path", "writable", "name", "_get", "_holder", "_attr")

    def __init__(self, path: str, *, writable: bool = False) -> None:
        self.path = path
        self.writable = writable
        self.name = path  # the attribute's own name, once the class is made (__set_name__)
        self._get = attrgetter(path)
        holder, _, self._attr = path.rpartition(".")
        if not holder:
            raise ValueError(f"an alias's path names another object's attribute (a.b), not {path!r}")
        self._holder = attrgetter(holder)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Alias[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else self._get(obj)

    def __set__(self, obj: object, value: T) -> None:
        if not self.writable:
            raise AttributeError(f"{type(obj).__name__}.{self.name} is {self.path}, read-only here")
        setattr(self._holder(obj), self._attr, value)
