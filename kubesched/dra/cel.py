"""CEL device selectors, as k8s.io/dynamic-resource-allocation/cel evaluates them.

Expressions are compiled and evaluated by cel-python (``celpy``), a pure-Python CEL
implementation; this module adds what Kubernetes adds on top of CEL for DRA: the ``device``
variable (``driver``, ``attributes``, ``capacity``, ``allowMultipleAllocations``), attribute
maps that answer an empty map for a domain the device does not have (so
``has(device.attributes["other.com"].x)`` is false, as upstream), and the quantity and semver
libraries (``quantity("1Gi")``, ``isQuantity``, ``semver("1.2.3")``, ``isSemver`` and their
methods: ``compareTo``, ``isGreaterThan``, ``isLessThan``, ``asInteger``, ``add``, ``sub``,
``major`` ...), with a few of cel-go's string extensions (``split``, ``lowerAscii``, ...).

Why cel-python and not the Rust bindings (``common-expression-language``), which evaluate
about 15x faster: those convert every input to native CEL values up front and accept no custom
types, so neither Kubernetes' quantity and semver values nor the default-empty attribute maps
can be expressed. Speed is won back by caching: an expression is compiled once
(:func:`compile_selector`), and a (selector, device) verdict is kept by the allocator's owner.

Not modelled: cel-go's static type check (``1`` is an error at evaluation, not compilation),
the runtime cost limit, ``cel.bind``, and the list-type attributes of the alpha gate
DRAListTypeAttributes.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import celpy
from celpy import celtypes

from kubesched.api.quantity import parse_quantity
from kubesched.errors import InputError

#: CELSelectorExpressionMaxLength
MAX_EXPRESSION_LENGTH = 10 * 1024


class CelError(Exception):
    """A selector that does not compile or does not evaluate to a bool (the text is upstream's
    detail: ``compilation failed: ...``, or the runtime error)."""


# ---- Kubernetes' CEL libraries: quantity and semver ---------------------------------------
@functools.total_ordering
class Quantity:
    """apiserver/pkg/cel's Quantity: compared by value (``quantity("1") == quantity("1000m")``)."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Quantity({self.value})"


_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


@functools.total_ordering
class Semver:
    """blang/semver v4 Version: ordered by major, minor, patch, then pre-release (SemVer 2.0)."""

    __slots__ = ("major", "minor", "patch", "pre")

    def __init__(self, text: str) -> None:
        m = _SEMVER_RE.match(text)
        if m is None:
            raise ValueError(f"invalid semver: {text}")
        self.major, self.minor, self.patch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        self.pre: tuple[int | str, ...] = tuple(
            int(p) if p.isdigit() else p for p in (m.group(4).split(".") if m.group(4) else ())
        )

    def _key(self) -> tuple:
        # A version without pre-release ranks above any with one; numeric identifiers rank
        # below alphanumeric ones; a shorter list of equal prefix ranks lower.
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self._key() == other._key()

    def __lt__(self, other: Semver) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())


def _normalize_semver(text: str) -> str:
    """semver(s, true): a leading "v" dropped, missing minor/patch filled with 0, leading zeros dropped."""
    text = text[1:] if text.startswith("v") else text
    m = re.search(r"[-+]", text)
    core, rest = (text[: m.start()], text[m.start() :]) if m else (text, "")
    parts = core.split(".")
    while len(parts) < 3:
        parts.append("0")
    parts = [p.lstrip("0") or "0" if p.isdigit() else p for p in parts]
    return ".".join(parts) + rest


def _semver(text: Any, normalize: Any = False) -> Semver:
    s = str(text)
    try:
        return Semver(_normalize_semver(s) if normalize else s)
    except ValueError:
        raise celpy.CELEvalError(f"could not parse semver: {s}") from None


def _is_semver(text: Any, normalize: Any = False) -> celtypes.BoolType:
    try:
        _semver(text, normalize)
    except celpy.CELEvalError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _quantity(text: Any) -> Quantity:
    try:
        return Quantity(parse_quantity(str(text)))
    except InputError:
        raise celpy.CELEvalError(f"quantities must match the regular expression: {text}") from None


def _is_quantity(text: Any) -> celtypes.BoolType:
    try:
        parse_quantity(str(text))
    except InputError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _compare(a: Any, b: Any) -> int:
    if type(a) is not type(b) or not isinstance(a, Quantity | Semver):
        raise celpy.CELEvalError("no such overload")
    return (a > b) - (a < b)


def _int64(v: Fraction) -> celtypes.IntType:
    if v.denominator != 1 or not -(2**63) <= v <= 2**63 - 1:
        raise celpy.CELEvalError("cannot convert value to integer")
    return celtypes.IntType(int(v))


def _quantity_arg(v: Any) -> Fraction:
    if isinstance(v, Quantity):
        return v.value
    if isinstance(v, int):
        return Fraction(int(v))
    raise celpy.CELEvalError("no such overload")


def _only_quantity(q: Any) -> Quantity:
    if not isinstance(q, Quantity):
        raise celpy.CELEvalError("no such overload")
    return q


def _only_semver(v: Any) -> Semver:
    if not isinstance(v, Semver):
        raise celpy.CELEvalError("no such overload")
    return v


def _split(s: Any, sep: Any, limit: Any = -1) -> celtypes.ListType:
    n = int(limit)
    if n == 0:
        return celtypes.ListType([])
    parts = str(s).split(str(sep)) if n < 0 else str(s).split(str(sep), n - 1)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


FUNCTIONS: dict[str, Any] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": _semver,
    "isSemver": _is_semver,
    "compareTo": lambda a, b: celtypes.IntType(_compare(a, b)),
    "isGreaterThan": lambda a, b: celtypes.BoolType(_compare(a, b) > 0),
    "isLessThan": lambda a, b: celtypes.BoolType(_compare(a, b) < 0),
    "sign": lambda q: celtypes.IntType((_only_quantity(q).value > 0) - (q.value < 0)),
    "isInteger": lambda q: celtypes.BoolType(
        _only_quantity(q).value.denominator == 1 and -(2**63) <= q.value <= 2**63 - 1
    ),
    "asInteger": lambda q: _int64(_only_quantity(q).value),
    "asApproximateFloat": lambda q: celtypes.DoubleType(float(_only_quantity(q).value)),
    "add": lambda q, other: Quantity(_only_quantity(q).value + _quantity_arg(other)),
    "sub": lambda q, other: Quantity(_only_quantity(q).value - _quantity_arg(other)),
    "major": lambda v: celtypes.IntType(_only_semver(v).major),
    "minor": lambda v: celtypes.IntType(_only_semver(v).minor),
    "patch": lambda v: celtypes.IntType(_only_semver(v).patch),
    # cel-go's strings extension (part of Kubernetes' base environment), the common part
    "split": _split,
    "lowerAscii": lambda s: celtypes.StringType(str(s).lower()),
    "upperAscii": lambda s: celtypes.StringType(str(s).upper()),
    "trim": lambda s: celtypes.StringType(str(s).strip()),
    "indexOf": lambda s, sub: celtypes.IntType(str(s).find(str(sub))),
    "lastIndexOf": lambda s, sub: celtypes.IntType(str(s).rfind(str(sub))),
    "replace": lambda s, old, new: celtypes.StringType(str(s).replace(str(old), str(new))),
    "join": lambda items, sep="": celtypes.StringType(str(sep).join(str(x) for x in items)),
}


# ---- the device -----------------------------------------------------------------------------
class _DomainMap(celtypes.MapType):
    """``device.attributes`` / ``device.capacity``: a domain the device lacks is an empty map
    (upstream's newStringInterfaceMapWithDefault), while ``"d" in device.attributes`` still
    says whether it has it."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType({})


class _String(celtypes.StringType):
    """A string attribute: not iterable (cel-python would run ``exists`` over its characters;
    CEL has no such overload)."""

    def __iter__(self) -> Any:
        raise TypeError("got 'types.String', expected iterable type")


def _attribute_value(kind: str, value: Any) -> Any:
    if kind == "int":
        return celtypes.IntType(value)
    if kind == "bool":
        return celtypes.BoolType(value)
    if kind == "string":
        return _String(value)
    try:
        return Semver(value)
    except ValueError:
        raise CelError(f"parse semantic version: {value}") from None


def _split_name(name: str, driver: str) -> tuple[str, str]:
    """parseQualifiedName: a name without a domain is in the driver's."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_input(driver: str, attributes: dict[str, tuple[str, Any]], capacity: dict[str, Fraction], allow_multiple: bool) -> celtypes.MapType:
    """The ``device`` variable for one device."""
    attrs: dict[Any, Any] = {}
    for name, (kind, value) in attributes.items():
        domain, ident = _split_name(name, driver)
        attrs.setdefault(celtypes.StringType(domain), {})[celtypes.StringType(ident)] = _attribute_value(kind, value)
    caps: dict[Any, Any] = {}
    for name, value in capacity.items():
        domain, ident = _split_name(name, driver)
        caps.setdefault(celtypes.StringType(domain), {})[celtypes.StringType(ident)] = Quantity(value)
    return celtypes.MapType(
        {
            celtypes.StringType("driver"): celtypes.StringType(driver),
            celtypes.StringType("attributes"): _DomainMap({k: celtypes.MapType(v) for k, v in attrs.items()}),
            celtypes.StringType("capacity"): _DomainMap({k: celtypes.MapType(v) for k, v in caps.items()}),
            celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(allow_multiple),
        }
    )


# ---- compile and evaluate ---------------------------------------------------------------------
_ENV = celpy.Environment()


@dataclass(frozen=True, slots=True)
class Selector:
    """A compiled expression; ``error`` is set (and ``program`` None) when it did not compile."""

    expression: str
    program: Any
    error: str = ""

    def matches(self, device: celtypes.MapType) -> bool:
        """Evaluate against a ``device`` input; CelError on a runtime error or a non-bool result."""
        if self.program is None:
            raise CelError(self.error)
        try:
            out = self.program.evaluate({"device": device})
        except CelError:
            raise
        except celpy.CELEvalError as e:
            raise CelError(_eval_text(e)) from None
        except (TypeError, KeyError, ValueError, ZeroDivisionError, AttributeError) as e:
            raise CelError(f"no such overload ({type(e).__name__}: {e})") from None
        if isinstance(out, celpy.CELEvalError):
            raise CelError(_eval_text(out))
        if not isinstance(out, celtypes.BoolType | bool):
            raise CelError(f"CEL result of type {_type_name(out)} could not be converted to bool")
        return bool(out)


def _eval_text(e: celpy.CELEvalError) -> str:
    """cel-go's wording where cel-python words it otherwise (``no such key: <key>``)."""
    text = str(e.args[0]) if e.args else str(e)
    if text.startswith("no such member in mapping: "):
        return "no such key: " + text.removeprefix("no such member in mapping: ").strip("'")
    if text == "no such key" and len(e.args) > 2 and e.args[2]:
        return f"no such key: {e.args[2][0]}"
    return text


def _type_name(v: Any) -> str:
    if isinstance(v, celtypes.BoolType | bool):
        return "bool"
    if isinstance(v, celtypes.IntType | int):
        return "int"
    if isinstance(v, celtypes.StringType | str):
        return "string"
    if isinstance(v, celtypes.ListType | list):
        return "list"
    if isinstance(v, celtypes.MapType | dict):
        return "map"
    return type(v).__name__


@functools.lru_cache(maxsize=1024)
def compile_selector(expression: str) -> Selector:
    """Compile once (cached by text); a syntax error is kept on the result, as upstream's cache
    keeps a CompilationResult with its Error."""
    if len(expression) > MAX_EXPRESSION_LENGTH:
        return Selector(expression, None, f"must have at most {MAX_EXPRESSION_LENGTH} bytes")
    try:
        ast = _ENV.compile(expression)
    except celpy.CELParseError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else "syntax error"
        return Selector(expression, None, f"compilation failed: ERROR: <input>: Syntax error: {first}")
    return Selector(expression, _ENV.program(ast, functions=FUNCTIONS))
