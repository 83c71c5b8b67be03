"""Kubernetes resource quantities (apimachinery ``resource.Quantity``), parsed exactly.

Quantities are kept as :class:`fractions.Fraction` so that "0.1" + "0.2" is exactly "0.3" and
rounding happens only where Kubernetes rounds: at parse time (up to the nano unit, away from
zero) and in :func:`value` / :func:`milli_value` (up to the unit, away from zero).
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

from kubesched.errors import InputError

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "format_quantity",
    "milli_value",
    "parse_quantity",
    "resource_value",
    "value",
]

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

_NANO = Fraction(1, 10**9)

# Shape of a quantity, as apimachinery's scanner accepts it: sign, digits, optional fraction,
# then a suffix made of suffix letters, an optional sign and digits (checked against the table).
_QUANTITY_RE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")

_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}  # fmt: skip
_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_EXPONENT_RE = re.compile(r"[eE]([+-]?[0-9]+)")

# Decimal magnitudes beyond this are far outside int64 and only cost memory to represent.
_MAX_DECIMAL_DIGITS = 400
# Digits below 10**-70 are replaced by one non-zero "sticky" digit: both values then lie in the
# same open interval (k, k+1) * 10**-70 * 2**e, which holds no 1n boundary while 70 - 9 >= e
# (e <= 60, the Ei suffix), so the round-up to 1n cannot tell them apart.
_STICKY_DIGITS = 70


def _shown(value: object) -> str:
    text = str(value)
    return text if len(text) <= 64 else text[:60] + "..."


def _invalid(value: object, path: str) -> InputError:
    return InputError(f'invalid quantity "{_shown(value)}"', path=path or None)


def _round_up_nano(q: Fraction) -> Fraction:
    """Round a non-zero value up to the next nano unit, away from zero (as ParseQuantity)."""
    if q.denominator == 1 or (10**9) % q.denominator == 0:
        return q
    scaled = q / _NANO
    n = math.ceil(scaled) if q > 0 else math.floor(scaled)
    return n * _NANO


def parse_quantity(value: str | int | float, path: str = "") -> Fraction:
    """Parse a quantity string ("100m", "1.5Gi", "1e3") or a plain number, exactly.

    Follows apimachinery ParseQuantity: values are rounded up to 1n away from zero and
    binary-suffixed values are capped at int64 max. It is stricter in one way: a string
    without any digit ("Mi", ".", "-") is rejected, where upstream would read it as 0.
    """
    if isinstance(value, bool):
        raise _invalid(value, path)
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _invalid(value, path)
        # repr() is the shortest exact decimal of the float ("0.1", "1e-05"), as a user wrote it.
        return parse_quantity(repr(value), path)
    if isinstance(value, Fraction):
        return value
    if not isinstance(value, str):
        raise _invalid(value, path)

    m = _QUANTITY_RE.fullmatch(value)
    if m is None:
        raise _invalid(value, path)
    sign, whole, frac, suffix = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    if not whole and not frac:
        raise _invalid(value, path)

    base, exponent = 10, 0
    if suffix in _DECIMAL_SUFFIXES:
        exponent = _DECIMAL_SUFFIXES[suffix]
    elif suffix in _BINARY_SUFFIXES:
        base, exponent = 2, _BINARY_SUFFIXES[suffix]
    else:
        em = _EXPONENT_RE.fullmatch(suffix)
        if em is None:
            raise _invalid(value, path)
        exponent = int(em.group(1))
        if not -(2**31) <= exponent < 2**31:  # upstream keeps an int32 exponent (and wraps)
            raise _invalid(value, path)

    # value = int(digits) * 10**scale (* 2**exponent for binary suffixes); insignificant
    # zeros are dropped so that long inputs stay cheap.
    digits = (whole + frac).lstrip("0")
    scale = -len(frac)
    stripped = digits.rstrip("0")
    scale += len(digits) - len(stripped)
    digits = stripped
    if not digits:
        return Fraction(0)
    if base == 10:
        scale += exponent
    magnitude = len(digits) + scale  # the value is below 10**magnitude (before 2**exponent)
    if magnitude > _MAX_DECIMAL_DIGITS:
        if base == 2:
            return Fraction(-INT64_MAX if sign == "-" else INT64_MAX)
        raise InputError(f'quantity "{_shown(value)}" is too large', path=path or None)
    if scale < -_STICKY_DIGITS:
        # Digits below 10**-70 only decide the round-up to 1n; keeping one non-zero digit in
        # their place gives the same result (see _STICKY_DIGITS).
        keep = magnitude + _STICKY_DIGITS
        digits = (digits[:keep] if keep > 0 else "") + "1"
        scale = -_STICKY_DIGITS - 1
    q = Fraction(int(digits)) * Fraction(10) ** scale
    if base == 2:
        q *= 2**exponent
    q = _round_up_nano(q)
    if base == 2 and q > INT64_MAX:
        q = Fraction(INT64_MAX)
    return -q if sign == "-" else q


def _ceil_away(q: Fraction) -> int:
    """Round to an integer away from zero: Quantity.Value() rounds 1.2 to 2 and -1.2 to -2."""
    if q >= 0:
        return -((-q.numerator) // q.denominator)
    return q.numerator // q.denominator


def value(q: Fraction) -> int:
    """Quantity.Value(): the integer value rounded up away from zero (exact, not wrapped)."""
    return _ceil_away(q)


def milli_value(q: Fraction) -> int:
    """Quantity.MilliValue(): thousandths rounded up away from zero ("0.5m" -> 1)."""
    return _ceil_away(q * 1000)


def resource_value(name: str, q: str | int | float | Fraction, path: str = "") -> int:
    """The integer kube-scheduler compares: millicores for cpu, value() for everything else.

    Results are clamped to int64, the width of the snapshot's columns (upstream would overflow).
    """
    if isinstance(q, str):
        try:
            return _cached_value(name == "cpu", q)
        except InputError:
            parse_quantity(q, path)  # raises the same error, now naming the field
            raise
    frac = q if isinstance(q, Fraction) else parse_quantity(q, path)
    return _clamped(name == "cpu", frac)


def _clamped(milli: bool, frac: Fraction) -> int:
    n = milli_value(frac) if milli else value(frac)
    return max(INT64_MIN, min(INT64_MAX, n))


@functools.lru_cache(maxsize=4096)
def _cached_value(milli: bool, text: str) -> int:
    """Manifests repeat the same few strings ("100m", "500Mi"): parse each once."""
    return _clamped(milli, parse_quantity(text))


_BINARY_FORMAT = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))
_DECIMAL_FORMAT = (("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3))


def _is_byte_resource(name: str) -> bool:
    return name in ("memory", "ephemeral-storage", "storage") or name.startswith("hugepages-")


def format_quantity(name: str, amount: int) -> str:
    """A compact string for messages and tables: cpu 1500 -> "1500m", memory 2**29 -> "512Mi".

    ``amount`` is what :func:`resource_value` returns for ``name``. Byte amounts take the
    largest exact binary suffix, else the largest exact decimal one; counts stay plain.
    """
    if name == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if not _is_byte_resource(name) or amount == 0:
        return str(amount)
    sign, mag = ("-", -amount) if amount < 0 else ("", amount)
    for suffix, shift in _BINARY_FORMAT:
        if mag % (1 << shift) == 0:
            return f"{sign}{mag >> shift}{suffix}"
    for suffix, exp in _DECIMAL_FORMAT:
        if mag % 10**exp == 0:
            return f"{sign}{mag // 10**exp}{suffix}"
    return f"{sign}{mag}"
