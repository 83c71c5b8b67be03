"""Label selectors (metav1.LabelSelector) and node selectors (core/v1 NodeSelector).

Both parse the camelCase wire form, validate as the API server and apimachinery's
``labels.NewRequirement`` do, and match either one label set (``matches``) or every row of a
label index at once (``mask``, over the columns ``LabelColumns`` names: the snapshot's
``kubesched.state.labels.LabelIndex`` provides them); the two always agree.

Selectors are frozen dataclasses with canonical (sorted) requirements, so equal selectors hash
equal and can key caches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from kubesched.api.names import is_qualified_name
from kubesched.errors import InputError, join_path

__all__ = [
    "LabelColumns",
    "LabelSelector",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "PreferredSchedulingTerm",
    "Requirement",
    "parse_int64",
    "parse_preferred_terms",
    "validate_label_key",
    "validate_label_value",
]


class LabelColumns(Protocol):
    """What ``mask`` reads of a label index: node labels as integer codes per key, one row per
    node (``kubesched.state.labels.LabelIndex``; the object model does not depend on the state)."""

    def codes(self, key: str) -> np.ndarray: ...  # code per row, -1 where the row lacks the key

    def vocab(self, key: str) -> Mapping[str, int]: ...  # value -> code

    def int64_values(self, key: str) -> tuple[np.ndarray, np.ndarray]: ...  # code -> (int64, is an integer)

    def name_mask(self, names: Iterable[str]) -> np.ndarray: ...  # rows whose node name is in names

Operator = Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
LABEL_OPERATORS: tuple[str, ...] = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS: tuple[str, ...] = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
NODE_NAME_FIELD = "metadata.name"

# -- label key / value syntax (apimachinery util/validation) ---------------------------------

_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_INT64_RE = re.compile(r"[+-]?[0-9]+")


def qualified_name_problem(key: str) -> str | None:
    """Why ``key`` is not a qualified name (IsQualifiedName's first message), or None."""
    problems = is_qualified_name(key)
    return problems[0] if problems else None


def validate_label_key(key: Any, path: str) -> str:
    """A label key, as Kubernetes accepts it (``[prefix/]name``)."""
    if not isinstance(key, str):
        raise InputError(f"label key must be a string, got {key!r}", path=path)
    problem = qualified_name_problem(key)
    if problem:
        raise InputError(f'invalid label key "{key}": {problem}', path=path)
    return key


def validate_label_value(value: Any, path: str) -> str:
    """A label value: empty, or at most 63 alphanumerics, '-', '_', '.' starting and ending alnum."""
    if not isinstance(value, str):
        # YAML turns `true` or `1` into non-strings; the API server would reject them.
        raise InputError(f"label value must be a string, got {value!r}", path=path)
    if len(value) > 63:
        raise InputError(f'invalid label value "{value}": must be no more than 63 characters', path=path)
    if value and not _NAME_RE.fullmatch(value):
        raise InputError(
            f'invalid label value "{value}": must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character",
            path=path,
        )
    return value


def parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64): ASCII digits with an optional sign, in int64 range."""
    if _INT64_RE.fullmatch(text) is None:
        return None
    n = int(text)
    return n if -(2**63) <= n < 2**63 else None


# -- wire helpers -----------------------------------------------------------------------------


def _as_map(value: Any, path: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"expected an object, got {type(value).__name__}", path=path)
    for k in value:
        if k not in allowed:
            raise InputError(f'unknown field "{k}"', path=join_path(path, str(k)))
    return value


def _as_list(value: Any, path: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise InputError(f"expected a list, got {type(value).__name__}", path=path)
    return list(value)


# -- one requirement (shared by label and node selectors) ------------------------------------


@dataclass(frozen=True, slots=True)
class Requirement:
    """``key op values``; for Gt/Lt ``values`` holds the single integer, as a string."""

    key: str
    op: Operator
    values: frozenset[str] = frozenset()

    def _bound(self) -> int | None:
        # Parsing rejects a bad Gt/Lt value; one built by hand matches nothing, as in Go.
        return parse_int64(next(iter(self.values))) if len(self.values) == 1 else None

    def matches(self, labels: Mapping[str, str]) -> bool:
        """labels.Requirement.Matches."""
        op = self.op
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if self.key not in labels:
            return False
        have = parse_int64(labels[self.key])
        bound = self._bound()
        if have is None or bound is None:
            return False
        return have > bound if op == "Gt" else have < bound

    def mask(self, index: LabelColumns) -> np.ndarray:
        """``matches`` for every row of ``index``, via a lookup table over the key's codes."""
        codes = index.codes(self.key)
        op = self.op
        if op == "Exists":
            return codes >= 0
        if op == "DoesNotExist":
            return codes < 0
        if op in ("In", "NotIn"):
            vocab = index.vocab(self.key)
            hits = [vocab[v] for v in self.values if v in vocab]
            if len(hits) == 1:
                m = codes == hits[0]
            elif not hits:
                m = np.zeros(len(codes), dtype=bool)
            else:
                # The table's last slot (index -1) answers rows without the key: False.
                table = np.zeros(len(vocab) + 1, dtype=bool)
                table[hits] = True
                m = table[codes]
            return m if op == "In" else ~m
        ints, valid = index.int64_values(self.key)
        bound = self._bound()
        if bound is None:
            return np.zeros(len(codes), dtype=bool)
        per_code = valid & ((ints > bound) if op == "Gt" else (ints < bound))
        table = np.append(per_code, False)
        return table[codes]

    def __str__(self) -> str:
        vals = ",".join(sorted(self.values))
        return {
            "In": f"{self.key} in ({vals})",
            "NotIn": f"{self.key} notin ({vals})",
            "Exists": self.key,
            "DoesNotExist": f"!{self.key}",
            "Gt": f"{self.key}>{vals}",
            "Lt": f"{self.key}<{vals}",
        }[self.op]


def _sort_key(r: Requirement) -> tuple[str, str, tuple[str, ...]]:
    return (r.key, r.op, tuple(sorted(r.values)))


def _parse_requirement(d: Any, path: str, operators: tuple[str, ...]) -> Requirement:
    """One matchExpressions entry, validated as labels.NewRequirement and the API server do."""
    req, problem = _requirement_or_problem(d, path, operators)
    if problem is not None:
        raise problem
    return req


def _requirement_or_problem(
    d: Any, path: str, operators: tuple[str, ...]
) -> tuple[Requirement, InputError | None]:
    """The requirement and, when labels.NewRequirement would refuse it, why (shape errors raise)."""
    m = _as_map(d, path, ("key", "operator", "values"))
    key = m.get("key", "")
    if not isinstance(key, str):
        raise InputError(f"label key must be a string, got {key!r}", path=join_path(path, "key"))
    op = m.get("operator")
    vpath = join_path(path, "values")
    raw = _as_list(m.get("values"), vpath)
    values: list[str] = []
    for i, v in enumerate(raw):
        if not isinstance(v, str):
            raise InputError(f"expected a string, got {v!r}", path=join_path(vpath, i))
        values.append(v)
    req = Requirement(key, op if isinstance(op, str) else "", frozenset(values))  # type: ignore[arg-type]
    try:
        validate_label_key(key, join_path(path, "key"))
        op_path = join_path(path, "operator")
        if not isinstance(op, str) or op not in operators:
            raise InputError(f'unknown operator "{op if op is not None else ""}"', path=op_path)
        if op in ("In", "NotIn") and not values:
            raise InputError(f"values must be non-empty for operator {op}", path=vpath)
        if op in ("Exists", "DoesNotExist") and values:
            raise InputError(f"values must be empty for operator {op}", path=vpath)
        if op in ("Gt", "Lt"):
            if len(values) != 1:
                raise InputError(f"operator {op} takes exactly one value", path=vpath)
            if parse_int64(values[0]) is None:
                raise InputError(
                    f'operator {op} compares integers, but the value is "{values[0]}"', path=join_path(vpath, 0)
                )
        else:
            for i, v in enumerate(values):
                validate_label_value(v, join_path(vpath, i))
    except InputError as e:
        return req, e
    return req, None


def _match_all(requirements: Iterable[Requirement], labels: Mapping[str, str]) -> bool:
    return all(r.matches(labels) for r in requirements)


def _mask_all(requirements: Iterable[Requirement], index: LabelColumns) -> np.ndarray:
    out = np.ones(len(index), dtype=bool)
    for r in requirements:
        out &= r.mask(index)
    return out


# -- label selectors -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """metav1.LabelSelector: ANDed requirements. Empty matches everything.

    ``None`` in place of a selector is the caller's business: Kubernetes reads a missing
    selector as matching nothing in most places (affinity terms, spread constraints).
    """

    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def parse(cls, d: Mapping[str, Any] | None, path: str) -> LabelSelector | None:
        """Parse ``{matchLabels, matchExpressions}``; None stays None."""
        if d is None:
            return None
        m = _as_map(d, path, ("matchLabels", "matchExpressions"))
        reqs: list[Requirement] = []
        lpath = join_path(path, "matchLabels")
        ml = m.get("matchLabels")
        if ml is not None:
            reqs.extend(cls._match_label_requirements(ml, lpath))
        epath = join_path(path, "matchExpressions")
        for i, e in enumerate(_as_list(m.get("matchExpressions"), epath)):
            reqs.append(_parse_requirement(e, join_path(epath, i), LABEL_OPERATORS))
        return cls(tuple(sorted(set(reqs), key=_sort_key)))

    @staticmethod
    def _match_label_requirements(ml: Any, path: str) -> list[Requirement]:
        if not isinstance(ml, Mapping):
            raise InputError(f"expected an object, got {type(ml).__name__}", path=path)
        out = []
        for k, v in ml.items():
            validate_label_key(k, path)
            validate_label_value(v, join_path(path, k))
            out.append(Requirement(k, "In", frozenset((v,))))
        return out

    @classmethod
    def from_match_labels(cls, labels: Mapping[str, str], path: str = "") -> LabelSelector:
        """A selector of ``key = value`` pairs (nodeSelector, service and RS selectors)."""
        return cls(tuple(sorted(cls._match_label_requirements(labels, path), key=_sort_key)))

    def with_requirements(self, extra: Iterable[Requirement]) -> LabelSelector:
        """This selector ANDed with ``extra`` (how matchLabelKeys are merged)."""
        return LabelSelector(tuple(sorted(set(self.requirements) | set(extra), key=_sort_key)))

    @property
    def is_empty(self) -> bool:
        """True for ``{}``, which selects everything."""
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return _match_all(self.requirements, labels)

    def mask(self, index: LabelColumns) -> np.ndarray:
        """``matches`` for every row of ``index``."""
        return _mask_all(self.requirements, index)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


# -- node selectors --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    """One matchExpressions entry of a node selector term (adds Gt/Lt to the label operators)."""

    key: str
    operator: Operator
    values: frozenset[str] = frozenset()
    requirement: Requirement = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "requirement", Requirement(self.key, self.operator, self.values))

    @classmethod
    def parse(cls, d: Any, path: str) -> NodeSelectorRequirement:
        r = _parse_requirement(d, path, NODE_OPERATORS)
        return cls(r.key, r.op, r.values)

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.requirement.matches(labels)

    def mask(self, index: LabelColumns) -> np.ndarray:
        return self.requirement.mask(index)


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """One matchFields entry: ``metadata.name In|NotIn (name)``."""

    operator: Literal["In", "NotIn"]
    value: str

    @classmethod
    def parse(cls, d: Any, path: str) -> FieldRequirement:
        m = _as_map(d, path, ("key", "operator", "values"))
        key = m.get("key")
        if key != NODE_NAME_FIELD:
            raise InputError(
                f'unsupported field "{key}": matchFields only supports {NODE_NAME_FIELD}',
                path=join_path(path, "key"),
            )
        op = m.get("operator")
        if op not in ("In", "NotIn"):
            raise InputError(
                f'unknown operator "{op if op is not None else ""}": matchFields supports only In or NotIn',
                path=join_path(path, "operator"),
            )
        vpath = join_path(path, "values")
        values = _as_list(m.get("values"), vpath)
        if len(values) != 1:
            raise InputError("matchFields requires exactly one value", path=vpath)
        if not isinstance(values[0], str):
            raise InputError(f"expected a string, got {values[0]!r}", path=join_path(vpath, 0))
        return cls(op, values[0])

    def matches(self, node_name: str) -> bool:
        return (node_name == self.value) == (self.operator == "In")

    def mask(self, index: LabelColumns) -> np.ndarray:
        m = index.name_mask((self.value,))
        return m if self.operator == "In" else ~m


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """matchExpressions AND matchFields. A term with neither matches no node (as upstream).

    ``error`` is set on a term the API server admitted but kube-scheduler cannot parse (a Gt
    value that is no integer, a preferred term's value that is no label value): such a term
    matches no node (nodeaffinity.LazyErrorNodeSelector), and NodeAffinity's PreScore fails on
    a preferred one (NewPreferredSchedulingTerms returns the error).
    """

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[FieldRequirement, ...] = ()
    error: str | None = None

    @classmethod
    def parse(cls, d: Any, path: str, *, lazy: bool = False) -> NodeSelectorTerm:
        """Parse a term; with ``lazy`` a requirement kube-scheduler cannot parse sets ``error``
        (pods), without it raises (scheduler configuration, validated strictly upstream)."""
        if d is None:
            return cls()
        m = _as_map(d, path, ("matchExpressions", "matchFields"))
        epath = join_path(path, "matchExpressions")
        exprs_list = []
        error: str | None = None
        for i, e in enumerate(_as_list(m.get("matchExpressions"), epath)):
            r, problem = _requirement_or_problem(e, join_path(epath, i), NODE_OPERATORS)
            if problem is not None:
                if not lazy:
                    raise problem
                # what the scheduler reports names the field within the term, as upstream
                rel = (problem.path or "")[len(path) :].lstrip(".")
                error = error or f"{rel}: {problem.reason}"
            exprs_list.append(NodeSelectorRequirement(r.key, r.op, r.values))
        exprs = tuple(exprs_list)
        fpath = join_path(path, "matchFields")
        fields = tuple(
            FieldRequirement.parse(f, join_path(fpath, i))
            for i, f in enumerate(_as_list(m.get("matchFields"), fpath))
        )
        return cls(exprs, fields, error)

    @property
    def is_empty(self) -> bool:
        return not self.match_expressions and not self.match_fields

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if self.is_empty or self.error is not None:
            return False
        return all(r.matches(labels) for r in self.match_expressions) and all(
            f.matches(node_name) for f in self.match_fields
        )

    def mask(self, index: LabelColumns) -> np.ndarray:
        if self.is_empty or self.error is not None:
            return np.zeros(len(index), dtype=bool)
        out = _mask_all((r.requirement for r in self.match_expressions), index)
        for f in self.match_fields:
            out &= f.mask(index)
        return out


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """core/v1 NodeSelector: its terms are ORed."""

    terms: tuple[NodeSelectorTerm, ...]

    @classmethod
    def parse(cls, d: Mapping[str, Any] | None, path: str, *, lazy: bool = False) -> NodeSelector | None:
        """Parse ``{nodeSelectorTerms: [...]}``; None stays None. At least one term is required."""
        if d is None:
            return None
        m = _as_map(d, path, ("nodeSelectorTerms",))
        tpath = join_path(path, "nodeSelectorTerms")
        raw = _as_list(m.get("nodeSelectorTerms"), tpath)
        if not raw:
            raise InputError("must have at least one node selector term", path=tpath)
        return cls(tuple(NodeSelectorTerm.parse(t, join_path(tpath, i), lazy=lazy) for i, t in enumerate(raw)))

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return any(t.matches(labels, node_name) for t in self.terms)

    def mask(self, index: LabelColumns) -> np.ndarray:
        out = np.zeros(len(index), dtype=bool)
        for t in self.terms:
            if not t.is_empty:
                out |= t.mask(index)
        return out


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    """A weighted node selector term (preferredDuringSchedulingIgnoredDuringExecution)."""

    weight: int
    term: NodeSelectorTerm

    @classmethod
    def parse(cls, d: Any, path: str, *, lazy: bool = False) -> PreferredSchedulingTerm:
        m = _as_map(d, path, ("weight", "preference"))
        wpath = join_path(path, "weight")
        w = m.get("weight")
        if isinstance(w, bool) or not isinstance(w, int):
            raise InputError(f"expected an integer, got {w!r}", path=wpath)
        if not 1 <= w <= 100:
            raise InputError("weight must be in the range 1-100", path=wpath)
        # A missing preference is an empty term: accepted by the API server, matches no node.
        return cls(w, NodeSelectorTerm.parse(m.get("preference"), join_path(path, "preference"), lazy=lazy))


def parse_preferred_terms(items: list | None, path: str, *, lazy: bool = False) -> list[PreferredSchedulingTerm]:
    """A preferredDuringSchedulingIgnoredDuringExecution list (None -> [])."""
    return [
        PreferredSchedulingTerm.parse(t, join_path(path, i), lazy=lazy) for i, t in enumerate(_as_list(items, path))
    ]
