"""Taints and tolerations (core/v1), with kube-scheduler's matching rules."""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.api.fields import as_int, as_list, as_map, as_str, one_of
from kubesched.errors import InputError, join_path

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    @classmethod
    def parse(cls, d: object, path: str) -> Taint:
        m = as_map(d, path)
        key = as_str(m.get("key"), join_path(path, "key"))
        if not key:
            raise InputError("taint key is required", path=join_path(path, "key"))
        effect = as_str(m.get("effect"), join_path(path, "effect"))
        if effect not in EFFECTS:
            raise InputError(f'unknown taint effect "{effect}"', path=join_path(path, "effect"))
        return cls(key, as_str(m.get("value"), join_path(path, "value")), effect)


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str  # "Equal" | "Exists"
    value: str
    effect: str  # "" tolerates every effect
    toleration_seconds: int | None = None

    @classmethod
    def parse(cls, d: object, path: str) -> Toleration:
        m = as_map(d, path)
        op = one_of(m.get("operator"), join_path(path, "operator"), ("Equal", "Exists"), "Equal")
        key = as_str(m.get("key"), join_path(path, "key"))
        value = as_str(m.get("value"), join_path(path, "value"))
        effect = as_str(m.get("effect"), join_path(path, "effect"))
        if effect and effect not in EFFECTS:
            raise InputError(f'unknown toleration effect "{effect}"', path=join_path(path, "effect"))
        if op == "Exists" and value:
            raise InputError("value must be empty when operator is Exists", path=join_path(path, "value"))
        if not key and op != "Exists":
            raise InputError("operator must be Exists when key is empty", path=join_path(path, "operator"))
        secs = as_int(m.get("tolerationSeconds"), join_path(path, "tolerationSeconds"), None)
        return cls(key, op, value, effect, secs)

    def tolerates(self, taint: Taint) -> bool:
        """core/v1 Toleration.ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


def parse_taints(value: object, path: str) -> tuple[Taint, ...]:
    return tuple(Taint.parse(t, join_path(path, i)) for i, t in enumerate(as_list(value, path)))


def parse_tolerations(value: object, path: str) -> tuple[Toleration, ...]:
    return tuple(Toleration.parse(t, join_path(path, i)) for i, t in enumerate(as_list(value, path)))


def tolerated(taint: Taint, tolerations: tuple[Toleration, ...]) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def first_untolerated(
    taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...], effects: tuple[str, ...]
) -> Taint | None:
    """v1helper.FindMatchingUntoleratedTaint restricted to the given effects."""
    for taint in taints:
        if taint.effect in effects and not tolerated(taint, tolerations):
            return taint
    return None
