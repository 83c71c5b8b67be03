"""Name and label syntax as apimachinery's util/validation checks it, with its exact messages.

Each ``is_*`` function returns the list of problems (empty when valid), worded as the API
server words them, so validation errors read as ``kubectl apply`` would print them.
"""

from __future__ import annotations

import functools
import re

QUALIFIED_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253

_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_FMT = f"({_QUALIFIED_NAME_FMT})?"
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError: the message, examples and the regex used."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = ",  or ".join(f"'{e}'" for e in examples)
    return f"{msg} (e.g. {shown}, regex used for validation is '{fmt}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)


def _bounded_match(value: str, max_len: int, regex: re.Pattern[str], msg: str, fmt: str, *examples: str) -> tuple[str, ...]:
    """The length and the pattern problems of ``value``, in upstream's order."""
    errs = []
    if len(value) > max_len:
        errs.append(_max_len(max_len))
    if not regex.fullmatch(value):
        errs.append(_regex_error(msg, fmt, *examples))
    return tuple(errs)


@functools.lru_cache(maxsize=8192)
def is_dns1123_label(value: str) -> tuple[str, ...]:
    """IsDNS1123Label: what namespace and container names must be. A valid subdomain that is
    no label can only hold dots: upstream says so rather than quoting the pattern."""
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return tuple(errs)


_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)


@functools.lru_cache(maxsize=1024)
def is_dns1035_label(value: str) -> tuple[str, ...]:
    """IsDNS1035Label: what Service names must be."""
    return _bounded_match(value, 63, _DNS1035_LABEL_RE, _DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123")


def is_path_segment_name(value: str) -> tuple[str, ...]:
    """path.IsValidPathSegmentName: the least every object name must be (it is a URL segment)."""
    if value in (".", ".."):
        return (f"may not be '{value}'",)
    return tuple(f"may not contain '{c}'" for c in ("/", "%") if c in value)


@functools.lru_cache(maxsize=8192)
def is_dns1123_subdomain(value: str) -> tuple[str, ...]:
    return _bounded_match(
        value, DNS1123_SUBDOMAIN_MAX_LENGTH, _DNS1123_SUBDOMAIN_RE, _DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"
    )


@functools.lru_cache(maxsize=8192)
def is_qualified_name(value: str) -> tuple[str, ...]:
    """IsQualifiedName: ``[prefix/]name``, prefix a DNS subdomain, name at most 63 characters."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        example = _regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        return (f"a qualified name {example} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",)
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + _max_len(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append(
            "name part " + _regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return tuple(errs)


@functools.lru_cache(maxsize=8192)
def is_valid_label_value(value: str) -> tuple[str, ...]:
    return _bounded_match(
        value, LABEL_VALUE_MAX_LENGTH, _LABEL_VALUE_RE, _LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"
    )
