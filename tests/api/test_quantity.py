"""Quantity parsing and Value()/MilliValue() rounding, checked against apimachinery's cases."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.quantity import (
    INT64_MAX,
    format_quantity,
    milli_value,
    parse_quantity,
    resource_value,
    value,
)
from kubesched.errors import InputError, one_line

F = Fraction

PARSE_CASES: list[tuple[str, Fraction]] = [
    ("0", F(0)),
    ("1", F(1)),
    ("+3", F(3)),
    ("-1", F(-1)),
    ("007", F(7)),
    ("1.5", F(3, 2)),
    (".5", F(1, 2)),
    ("1.", F(1)),
    ("0.0", F(0)),
    ("-0", F(0)),
    # decimal SI suffixes
    ("5n", F(5, 10**9)),
    ("5u", F(5, 10**6)),
    ("5m", F(5, 1000)),
    ("5k", F(5000)),
    ("5M", F(5 * 10**6)),
    ("5G", F(5 * 10**9)),
    ("5T", F(5 * 10**12)),
    ("5P", F(5 * 10**15)),
    ("5E", F(5 * 10**18)),
    ("1.G", F(10**9)),
    (".0001k", F(1, 10)),
    ("100m", F(1, 10)),
    # binary SI suffixes
    ("5Ki", F(5 * 2**10)),
    ("100Mi", F(100 * 2**20)),
    ("1.5Gi", F(3 * 2**29)),
    ("5Ti", F(5 * 2**40)),
    ("5Pi", F(5 * 2**50)),
    ("7Ei", F(7 * 2**60)),
    ("0.5Ki", F(512)),
    ("-1.5Mi", F(-3 * 2**19)),
    # binary values are capped at int64 max, as upstream
    ("8Ei", F(INT64_MAX)),
    ("-8Ei", F(-INT64_MAX)),
    # decimal exponents
    ("1e3", F(1000)),
    ("1E3", F(1000)),
    ("1e+3", F(1000)),
    ("1e-3", F(1, 1000)),
    ("1.5E-2", F(15, 1000)),
    ("1.e3", F(1000)),
    ("-2e2", F(-200)),
    ("1e0", F(1)),
    ("1e03", F(1000)),
    ("0e99999", F(0)),
    # values below 1n round up to 1n, away from zero
    ("0.1n", F(1, 10**9)),
    ("-0.1n", F(-1, 10**9)),
    ("1.5n", F(2, 10**9)),
    ("0.000000000001Ki", F(2, 10**9)),
    ("1e-100", F(1, 10**9)),
    ("1e-2000000000", F(1, 10**9)),
    ("0." + "0" * 200 + "1", F(1, 10**9)),
    ("1." + "0" * 200 + "1", F(10**9 + 1, 10**9)),
    ("1." + "0" * 5000, F(1)),
]


@pytest.mark.parametrize(("text", "expected"), PARSE_CASES)
def test_parse_table(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


INVALID = [
    "",
    " 1",
    "1 ",
    "1.2.3",
    "1.1.M",
    "1+1.0M",
    "12Q",
    "Mi",
    ".",
    "-",
    "+",
    "+-1",
    "--1",
    "0.1mi",
    "0.1am",
    "aoeu",
    ".5i",
    "1i",
    "-3.01i",
    "-3.01e-",
    "1e",
    "1e+",
    "1e1.5",
    "1e3k",
    "1E3Ki",
    "1Ki3",
    "1ki",
    "1K",
    "1KiB",
    "1Zi",
    "1µ",
    "１",
    "1,5",
    "1_000",
    "0x10",
    "Inf",
    "NaN",
    "1e99999999999",
    "1\n",
]


@pytest.mark.parametrize("text", INVALID)
def test_invalid_strings_rejected_with_path(text: str) -> None:
    with pytest.raises(InputError) as err:
        parse_quantity(text, "spec.containers[0].resources.requests.cpu")
    assert err.value.path == "spec.containers[0].resources.requests.cpu"
    assert err.value.reason == one_line(f'invalid quantity "{text}"')  # a line break is shown escaped


def test_invalid_without_path_has_no_path() -> None:
    with pytest.raises(InputError) as err:
        parse_quantity("12Q")
    assert str(err.value) == 'invalid quantity "12Q"'


def test_too_large_decimal_rejected() -> None:
    with pytest.raises(InputError, match="too large"):
        parse_quantity("1e500")
    assert parse_quantity("1" + "0" * 500 + "Ki") == INT64_MAX  # binary saturates instead


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (2, F(2)),
        (0, F(0)),
        (-3, F(-3)),
        (0.5, F(1, 2)),
        (0.1, F(1, 10)),
        (1e-05, F(1, 100000)),
        (1e20, F(10**20)),
    ],
)
def test_numbers_accepted(raw: int | float, expected: Fraction) -> None:
    assert parse_quantity(raw) == expected


@pytest.mark.parametrize("raw", [True, False, None, float("nan"), float("inf"), [1], {"a": 1}])
def test_non_quantities_rejected(raw: object) -> None:
    with pytest.raises(InputError):
        parse_quantity(raw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "milli", "val"),
    [
        ("1", 1000, 1),
        ("0.5m", 1, 1),
        ("1.0001", 1001, 2),
        ("100m", 100, 1),
        ("1500m", 1500, 2),
        ("2", 2000, 2),
        ("1n", 1, 1),
        ("0", 0, 0),
        ("1.5", 1500, 2),
        ("-1.5", -1500, -2),  # away from zero, as Value() documents
        ("-0.5m", -1, -1),
        ("-1", -1000, -1),
        ("100Mi", 100 * 2**20 * 1000, 100 * 2**20),
        ("1e3", 10**6, 1000),
        ("1.5Gi", 3 * 2**29 * 1000, 3 * 2**29),
    ],
)
def test_milli_value_and_value(text: str, milli: int, val: int) -> None:
    q = parse_quantity(text)
    assert milli_value(q) == milli
    assert value(q) == val


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    [
        ("cpu", "1.0001", 1001),
        ("cpu", "250m", 250),
        ("cpu", 2, 2000),
        ("cpu", 0.5, 500),
        ("cpu", F(1, 3), 334),
        ("memory", "100Mi", 100 * 2**20),
        ("memory", "1.5", 2),
        ("ephemeral-storage", "1G", 10**9),
        ("hugepages-2Mi", "4Mi", 4 * 2**20),
        ("pods", "110", 110),
        ("nvidia.com/gpu", 1, 1),
        ("memory", "1e30", INT64_MAX),  # clamped to the int64 columns
        ("cpu", "9Ei", INT64_MAX),
    ],
)
def test_resource_value(name: str, raw: object, expected: int) -> None:
    assert resource_value(name, raw) == expected  # type: ignore[arg-type]


def test_resource_value_error_reanchors() -> None:
    with pytest.raises(InputError) as err:
        resource_value("cpu", "lots")
    assert err.value.within(prefix="requests.cpu").path == "requests.cpu"


@pytest.mark.parametrize(
    ("name", "amount", "text"),
    [
        ("cpu", 1500, "1500m"),
        ("cpu", 2000, "2"),
        ("cpu", 0, "0"),
        ("cpu", 1, "1m"),
        ("memory", 536870912, "512Mi"),
        ("memory", 2**30, "1Gi"),
        ("memory", 3 * 2**40, "3Ti"),
        ("memory", 1536, "1536"),
        ("memory", 10**9, "1G"),
        ("memory", 1000, "1k"),
        ("memory", 1023, "1023"),
        ("memory", 0, "0"),
        ("memory", -1024, "-1Ki"),
        ("hugepages-1Gi", 2**31, "2Gi"),
        ("ephemeral-storage", 5 * 10**6, "5M"),
        ("pods", 110, "110"),
        ("example.com/foo", 2048, "2048"),
    ],
)
def test_format_quantity(name: str, amount: int, text: str) -> None:
    assert format_quantity(name, amount) == text


# -- properties ----------------------------------------------------------------------------

_BIN = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50}
_DEC = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


@given(st.integers(0, 10**6), st.sampled_from(sorted(_BIN)), st.sampled_from(["", "+", "-"]))
def test_binary_suffix_roundtrip(n: int, suffix: str, sign: str) -> None:
    q = parse_quantity(f"{sign}{n}{suffix}")
    expected = min(n << _BIN[suffix], INT64_MAX)
    assert q == (-expected if sign == "-" else expected)
    assert value(q) == q


@given(st.integers(0, 10**12), st.sampled_from(sorted(_DEC)))
def test_decimal_suffix_roundtrip(n: int, suffix: str) -> None:
    q = parse_quantity(f"{n}{suffix}")
    assert q == n * Fraction(10) ** _DEC[suffix]


@given(st.integers(-(10**12), 10**12), st.integers(-30, 30))
def test_exponent_form_is_exact_on_the_nano_grid(n: int, e: int) -> None:
    q = parse_quantity(f"{n}e{e}")
    exact = n * Fraction(10) ** e
    if (exact * 10**9).denominator == 1:
        assert q == exact
    else:  # rounded up to the next 1n, away from zero
        assert (q * 10**9).denominator == 1
        assert abs(exact) < abs(q) < abs(exact) + Fraction(1, 10**9)


@given(st.integers(0, 2**62 - 1))
def test_format_quantity_roundtrips_memory(n: int) -> None:
    assert resource_value("memory", format_quantity("memory", n)) == n


@given(st.integers(0, 2**50))
def test_format_quantity_roundtrips_cpu(n: int) -> None:
    assert resource_value("cpu", format_quantity("cpu", n)) == n


_decimals = st.builds(
    lambda whole, frac, suffix: f"{whole}.{frac}{suffix}",
    st.integers(0, 10**9),
    st.text("0123456789", min_size=1, max_size=15),
    st.sampled_from(["", "m", "k", "Mi", "Gi", "n", "u"]),
)


@given(_decimals, _decimals)
def test_milli_value_monotonic(a: str, b: str) -> None:
    qa, qb = parse_quantity(a), parse_quantity(b)
    if qa <= qb:
        assert milli_value(qa) <= milli_value(qb)
        assert value(qa) <= value(qb)


@given(_decimals)
def test_milli_value_is_ceiling(text: str) -> None:
    q = parse_quantity(text)
    m = milli_value(q)
    assert Fraction(m - 1, 1000) < q <= Fraction(m, 1000)


@given(st.text(max_size=12))
def test_garbage_rejected_or_well_formed(text: str) -> None:
    """Anything parse accepts has the quantity shape; anything else is an InputError."""
    import re

    shape = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?")
    try:
        parse_quantity(text)
    except InputError:
        assert shape.fullmatch(text) is None or re.search(r"[eE][+-]?[0-9]{10,}", text)
    else:
        assert shape.fullmatch(text) is not None


@given(st.text(alphabet="abcdfghjlopqrsvwxyzABCDFHJLNOQRSUVWXYZ !@#$%^&*()_=,;:/\\", min_size=1, max_size=8))
def test_letters_only_garbage_rejected(text: str) -> None:
    with pytest.raises(InputError):
        parse_quantity(text)
    with pytest.raises(InputError):
        parse_quantity("1" + text)
