"""k8s.io/dynamic-resource-allocation/cel compile_test.go's TestCEL, 37 of 71 cases, against
kubesched.dra.cel (cel-python with Kubernetes' device variable, quantity and semver libraries).

Left out: the 31 list-type attribute cases (``ints``/``strings``... and ``includes``, behind the
alpha gate DRAListTypeAttributes, off in v1.36); "type-error" (cel-go's static type check:
kubesched reports a non-bool result when it is evaluated, as the last test below shows);
"bind" (``cel.bind`` is not provided by cel-python); "expensive" (no runtime cost limit);
"allow_multiple_allocations_disabled" (CEL environment versions are not modelled). Where
upstream names cel-go's wording of an error that cel-python words differently (the
``exists`` macro on a scalar), the case checks that it is an error.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kubesched.dra.cel import CelError, compile_selector, device_input

Mi, Ki = Fraction(2**20), Fraction(2**10)

# name: (expression, driver, attributes, capacity, allow multiple, expect: True/False, or
# ("compile", text) / ("match", text) for an error containing text ("" = any error))
CASES: dict[str, tuple[str, str, dict[str, Any], dict[str, Fraction], bool, Any]] = {
    "true": ("true", "", {}, {}, False, True),
    "false": ("false", "", {}, {}, False, False),
    "syntax-error": ("?!", "", {}, {}, False, ("compile", "Syntax error")),
    "runtime-error-lookup-identifier": (
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', "", {}, {}, False,
        ("match", "no such key: noSuchAttr"),
    ),
    "runtime-error-lookup-map": (
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', "", {}, {}, False,
        ("match", "no such key: noSuchAttr"),
    ),
    "domain-check-negative": ('"no-such-domain" in device.attributes', "", {}, {}, False, False),
    "domain-check-positive": (
        '"dra.example.com" in device.attributes', "", {"dra.example.com/something": ("bool", True)}, {}, False, True
    ),
    "empty-driver-name": ('device.driver == ""', "", {}, {}, False, True),
    "real-driver-name": ('device.driver == "dra.example.com"', "dra.example.com", {}, {}, False, True),
    "driver-name-qualifier": (
        'device.attributes["dra.example.com"].name', "dra.example.com", {"name": ("bool", True)}, {}, False, True
    ),
    "driver-name-qualifier-map-lookup": (
        'device.attributes["dra.example.com"]["name"]', "dra.example.com", {"name": ("bool", True)}, {}, False, True
    ),
    "qualified-attribute-name": (
        'device.attributes["other.example.com"].name', "dra.example.com", {"other.example.com/name": ("bool", True)}, {},
        False, True,
    ),
    "bool": ('device.attributes["dra.example.com"].name', "dra.example.com", {"name": ("bool", True)}, {}, False, True),
    "int": ('device.attributes["dra.example.com"].name > 0', "dra.example.com", {"name": ("int", 1)}, {}, False, True),
    "string": (
        'device.attributes["dra.example.com"].name == "fish"', "dra.example.com", {"name": ("string", "fish")}, {}, False,
        True,
    ),
    "macro-exists-on-int": (
        'device.attributes["dra.example.com"].name.exists(x, x > 0)', "dra.example.com", {"name": ("int", 1)}, {}, False,
        ("match", ""),
    ),
    "macro-exists-on-bool": (
        'device.attributes["dra.example.com"].name.exists(x, x == true)', "dra.example.com", {"name": ("bool", True)}, {},
        False, ("match", ""),
    ),
    "macro-exists-on-string": (
        'device.attributes["dra.example.com"].name.exists(x, x == "fish")', "dra.example.com", {"name": ("string", "fish")},
        {}, False, ("match", ""),
    ),
    "version": (
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))', "dra.example.com",
        {"name": ("version", "1.0.0")}, {}, False, True,
    ),
    "version_v": (
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
        "dra.example.com", {"name": ("version", "1.0.0")}, {}, False, True,
    ),
    "macro-exists-on-version": (
        'device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1")))', "dra.example.com",
        {"name": ("version", "1.0.0")}, {}, False, ("match", ""),
    ),
    "quantity": (
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', "dra.example.com", {}, {"name": Mi},
        False, True,
    ),
    "check-positive": (
        '"name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        "dra.example.com", {}, {"name": Mi}, False, True,
    ),
    "check-negative": (
        '!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        "", {}, {}, False, True,
    ),
    "all": (
        """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
""",
        "dra.example.com",
        {"bool": ("bool", True), "int": ("int", 1), "string": ("string", "fish"), "version": ("version", "1.0.0")},
        {"quantity": Mi},
        False,
        True,
    ),
    "many": (
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c',
        "dra.example.com", {"a": ("bool", True), "b": ("bool", True), "c": ("bool", True)}, {}, False, True,
    ),
    "check_attribute_domains": (
        'device.attributes.exists_one(x, x == "dra.example.com")', "dra.example.com",
        {"services": ("string", "some_example_value")}, {}, False, True,
    ),
    "check_attribute_ids": (
        'device.attributes["dra.example.com"].exists_one(x, x == "services")', "dra.example.com",
        {"services": ("string", "some_example_value")}, {}, False, True,
    ),
    "split_attribute": (
        'device.attributes["dra.example.com"].services.split("example").size() >= 2', "dra.example.com",
        {"services": ("string", "some_example_value")}, {}, False, True,
    ),
    "regexp_attribute": (
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")', "dra.example.com",
        {"services": ("string", "asymetric")}, {}, False, True,
    ),
    "check_capacity_domains": (
        'device.capacity.exists_one(x, x == "dra.example.com")', "dra.example.com", {}, {"memory": Mi}, False, True
    ),
    "check_capacity_ids": (
        'device.capacity["dra.example.com"].exists_one(x, x == "memory")', "dra.example.com", {}, {"memory": Mi}, False,
        True,
    ),
    "allow_multiple_allocations": ("device.allowMultipleAllocations == true", "dra.example.com", {}, {}, True, True),
    "allow_multiple_allocations_default": ("device.allowMultipleAllocations == false", "dra.example.com", {}, {}, False, True),
    "allow_multiple_allocations_false": ("device.allowMultipleAllocations == false", "dra.example.com", {}, {}, False, True),
    "allow_multiple_allocations_new": ("device.allowMultipleAllocations == false", "dra.example.com", {}, {}, False, True),
    "allow_multiple_allocations_enabled": ("device.allowMultipleAllocations == false", "dra.example.com", {}, {}, False, True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cel(name: str) -> None:
    """TestCEL."""
    expression, driver, attributes, capacity, multiple, expect = CASES[name]
    selector = compile_selector(expression)
    if isinstance(expect, tuple) and expect[0] == "compile":
        assert selector.program is None and expect[1] in selector.error
        return
    assert selector.program is not None, selector.error
    device = device_input(driver, attributes, capacity, multiple)
    if isinstance(expect, tuple):
        with pytest.raises(CelError) as info:
            selector.matches(device)
        assert expect[1] in str(info.value)
        return
    assert selector.matches(device) is expect


def test_compiled_once() -> None:
    """An expression is compiled once (cel.Cache): the same Selector comes back."""
    assert compile_selector("device.driver == 'x'") is compile_selector("device.driver == 'x'")


def test_non_bool_result_is_an_error_when_evaluated() -> None:
    """"type-error" upstream fails to compile; here it fails when it is evaluated, with the
    conversion error upstream gives for a dynamically typed non-bool result."""
    with pytest.raises(CelError, match="CEL result of type int could not be converted to bool"):
        compile_selector("1").matches(device_input("", {}, {}, False))


def test_quantities_compare_by_value_and_semver_by_precedence() -> None:
    dev = device_input("d", {"v": ("version", "1.0.0-rc.1")}, {"m": Ki}, False)
    assert compile_selector('quantity("1") == quantity("1000m")').matches(dev)
    assert compile_selector('device.capacity["d"].m.compareTo(quantity("1Ki")) == 0').matches(dev)
    assert compile_selector('device.attributes["d"].v.isLessThan(semver("1.0.0"))').matches(dev)
    assert compile_selector('semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta"))').matches(dev)
    assert compile_selector('semver("1.10.0").isGreaterThan(semver("1.9.0"))').matches(dev)
    assert not compile_selector('isQuantity("lots")').matches(dev)
