"""The search space: score-plugin weights and plugin args of one profile, mapped to configs.

A trial's choices (an ``Assignment``) become a KubeSchedulerConfiguration document by editing the
base config's resolved v1 document (``kubesched.config.effective_config``), so what is simulated
is exactly what ``best-config.yaml`` holds. Weight 0 means "off": the plugin leaves the score
point (kube-scheduler itself reads weight 0 as "unset" and runs the plugin at its default
weight, so a disabled plugin is written by leaving it out, never as ``weight: 0``).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kubesched.config import SchedulerConfig, effective_config, parse_config
from kubesched.documents import load_scalar
from kubesched.errors import InputError

if TYPE_CHECKING:
    import optuna

    from kubesched.framework.registry import Registry

WEIGHT_PREFIX = "weight."
ENABLED_PREFIX = "enabled."
ARG_PREFIX = "arg."


@dataclass(frozen=True)
class WeightRange:
    low: int
    high: int
    log: bool = True

    @classmethod
    def parse(cls, text: str, scale: str = "log") -> WeightRange:
        """``LOW-HIGH``, integers with 0 <= LOW < HIGH (LOW 0: a plugin may also be switched off)."""
        lo, sep, hi = text.partition("-")
        try:
            low, high = int(lo), int(hi)
        except ValueError:
            low = high = -1
        if not sep or low < 0 or high <= low:
            raise InputError(
                f'--weight-range: invalid range "{text}": expected LOW-HIGH with 0 <= LOW < HIGH, e.g. 1-100'
            )
        if high == 1 and low == 0:
            raise InputError(f'--weight-range: invalid range "{text}": nothing to tune but on/off; use 0-100')
        return cls(low, high, scale == "log")

    @property
    def min_on(self) -> int:
        """The lowest weight of an enabled plugin."""
        return max(self.low, 1)


@dataclass(frozen=True)
class WeightDim:
    """One score plugin's weight; ``base`` is its weight in the base profile (0: not at score)."""

    plugin: str
    base: int
    pre_score: bool  # the plugin implements preScore: an added plugin is enabled there too


@dataclass(frozen=True)
class ArgDim:
    """One plugin arg: ``Plugin.path.to.field`` over a numeric range or a list of choices."""

    spec: str  # as given on the command line
    plugin: str
    path: tuple[str | int, ...]
    kind: str  # int, float or categorical
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    choices: tuple[Any, ...] = ()
    base: Any = None  # the base config's value (None: unset)

    @property
    def key(self) -> str:
        return ".".join([self.plugin, *map(str, self.path)])

    def candidates(self) -> list[Any]:
        """Values checked up front: both ends of a range, every choice."""
        if self.kind == "categorical":
            return list(self.choices)
        conv = int if self.kind == "int" else float
        return [conv(self.low), conv(self.high)]

    def contains(self, value: Any) -> bool:
        if self.kind == "categorical":
            return any(value == c and type(value) is type(c) for c in self.choices)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.kind == "int" and not float(value).is_integer():
            return False
        return self.low <= value <= self.high


@dataclass
class Assignment:
    """What one trial runs with: a weight per tuned plugin (0 = off) and a value per tuned arg."""

    weights: dict[str, int]
    args: dict[str, Any] = field(default_factory=dict)


def _scalar(text: str) -> Any:
    return load_scalar(text)


def parse_param(spec: str) -> ArgDim:
    """``Plugin.argPath=LOW:HIGH[:log]`` (numbers) or ``Plugin.argPath=A|B|C`` (choices)."""
    where = f'--param: "{spec}"'
    key, sep, body = spec.partition("=")
    plugin, dot, rest = key.partition(".")
    if not sep or not dot or not plugin or not rest or not body:
        raise InputError(f"{where}: expected Plugin.argPath=LOW:HIGH or Plugin.argPath=A|B|C")
    path: list[str | int] = []
    for part in rest.split("."):
        if not part:
            raise InputError(f"{where}: empty field name in {key}")
        path.append(int(part) if part.isdigit() else part)
    if "|" in body:
        choices = tuple(_scalar(c) for c in body.split("|"))
        if len(set(map(repr, choices))) != len(choices) or len(choices) < 2:
            raise InputError(f"{where}: give at least two different choices")
        return ArgDim(spec, plugin, tuple(path), "categorical", choices=choices)
    parts = body.split(":")
    log = len(parts) == 3 and parts[2] == "log"
    if len(parts) not in (2, 3) or (len(parts) == 3 and not log):
        raise InputError(f"{where}: expected LOW:HIGH, LOW:HIGH:log or choices A|B|C")
    lo, hi = _scalar(parts[0]), _scalar(parts[1])
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in (lo, hi)):
        raise InputError(f"{where}: LOW and HIGH must be numbers")
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo or (log and lo <= 0):
        raise InputError(f"{where}: need LOW < HIGH (and LOW > 0 with log)")
    kind = "int" if isinstance(lo, int) and isinstance(hi, int) else "float"
    return ArgDim(spec, plugin, tuple(path), kind, float(lo), float(hi), log)


def _get(doc: Any, path: tuple[str | int, ...]) -> Any:
    cur = doc
    for part in path:
        if isinstance(part, int) and isinstance(cur, list) and part < len(cur):
            cur = cur[part]
        elif isinstance(part, str) and isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return None
    return cur


def _set(doc: dict, path: tuple[str | int, ...], value: Any, spec: str) -> None:
    cur: Any = doc
    for i, part in enumerate(path):
        last = i == len(path) - 1
        if isinstance(part, int):
            if not isinstance(cur, list) or part >= len(cur):
                raise InputError(f'--param: "{spec}": the base config has no list item {part} there')
        elif not isinstance(cur, dict):
            raise InputError(f'--param: "{spec}": {part} is not inside a mapping in the base config')
        if last:
            cur[part] = value
        elif isinstance(part, int):
            cur = cur[part]
        else:
            cur = cur.setdefault(part, {})


class SearchSpace:
    """Weights and args of one profile of ``base``; ``document`` gives the config of a choice."""

    def __init__(
        self,
        base: SchedulerConfig,
        registry: Registry,
        *,
        profile: str | None = None,
        weights: list[str] | None = None,
        weight_range: WeightRange = WeightRange(1, 100),
        params: list[ArgDim] | None = None,
    ) -> None:
        self.registry = registry
        self.range = weight_range
        self.base_doc = effective_config(base)
        names = [p.scheduler_name for p in base.profiles]
        if profile is None:
            self.profile_index = 0
        elif profile in names:
            self.profile_index = names.index(profile)
        else:
            raise InputError(
                f'--profile: no profile "{profile}" in the config (profiles: {", ".join(names)})'
            )
        prof = base.profiles[self.profile_index]
        self.profile_name = prof.scheduler_name
        current = prof.score_weights()
        chosen = list(current) if weights is None else weights
        if not chosen and not params:
            raise InputError(f'profile "{self.profile_name}" has no score plugins: name some with --weights')
        self.weights: list[WeightDim] = []
        for name in chosen:
            points = registry.points_of(name)
            if points is None:
                raise InputError(f'--weights: unknown plugin "{name}"')
            if "score" not in points:
                raise InputError(f'--weights: plugin "{name}" has no score extension point')
            if any(w.plugin == name for w in self.weights):
                raise InputError(f'--weights: plugin "{name}" is named twice')
            self.weights.append(WeightDim(name, current.get(name, 0), "preScore" in points))
        enabled = set(prof.enabled_plugins()) | set(chosen)
        self.args: list[ArgDim] = []
        for dim in params or []:
            if registry.points_of(dim.plugin) is None:
                raise InputError(f'--param: "{dim.spec}": unknown plugin "{dim.plugin}"')
            if dim.plugin not in enabled:
                raise InputError(
                    f'--param: "{dim.spec}": plugin "{dim.plugin}" is not enabled in profile "{self.profile_name}"'
                )
            if any(a.key == dim.key for a in self.args):
                raise InputError(f'--param: "{dim.spec}": {dim.key} is tuned twice')
            base_args = prof.args(dim.plugin) or {}
            self.args.append(replace(dim, base=_get(base_args, dim.path)))

    # ---- trials ----------------------------------------------------------------------------
    def suggest(self, trial: optuna.trial.BaseTrial) -> Assignment:
        """The trial's weights and args (define-by-run: a switched-off plugin has no weight)."""
        r = self.range
        weights: dict[str, int] = {}
        for w in self.weights:
            on = True
            if r.low == 0:
                on = bool(trial.suggest_categorical(ENABLED_PREFIX + w.plugin, [True, False]))
            weights[w.plugin] = (
                trial.suggest_int(WEIGHT_PREFIX + w.plugin, r.min_on, r.high, log=r.log) if on else 0
            )
        args: dict[str, Any] = {}
        for a in self.args:
            name = ARG_PREFIX + a.key
            if a.kind == "categorical":
                args[a.key] = trial.suggest_categorical(name, list(a.choices))
            elif a.kind == "int":
                args[a.key] = trial.suggest_int(name, int(a.low), int(a.high), log=a.log)
            else:
                args[a.key] = trial.suggest_float(name, a.low, a.high, log=a.log)
        return Assignment(weights, args)

    def base_assignment(self) -> Assignment:
        """The base config's own weights and args (args left unset stay unset)."""
        return Assignment(
            {w.plugin: w.base for w in self.weights}, {a.key: a.base for a in self.args if a.base is not None}
        )

    def params_of(self, a: Assignment) -> dict[str, Any] | None:
        """Optuna params for an assignment, or None when it lies outside the space."""
        r = self.range
        out: dict[str, Any] = {}
        for w in self.weights:
            v = a.weights[w.plugin]
            if v == 0:
                if r.low != 0:
                    return None
                out[ENABLED_PREFIX + w.plugin] = False
                continue
            if not r.min_on <= v <= r.high:
                return None
            if r.low == 0:
                out[ENABLED_PREFIX + w.plugin] = True
            out[WEIGHT_PREFIX + w.plugin] = v
        for dim in self.args:
            if dim.key not in a.args or not dim.contains(a.args[dim.key]):
                return None
            out[ARG_PREFIX + dim.key] = a.args[dim.key]
        return out

    def distributions(self) -> dict[str, Any]:
        """Optuna distributions of every param (to record the baseline as a trial)."""
        import optuna

        d: dict[str, Any] = {}
        r = self.range
        for w in self.weights:
            if r.low == 0:
                d[ENABLED_PREFIX + w.plugin] = optuna.distributions.CategoricalDistribution([True, False])
            d[WEIGHT_PREFIX + w.plugin] = optuna.distributions.IntDistribution(r.min_on, r.high, log=r.log)
        for a in self.args:
            name = ARG_PREFIX + a.key
            if a.kind == "categorical":
                d[name] = optuna.distributions.CategoricalDistribution(list(a.choices))
            elif a.kind == "int":
                d[name] = optuna.distributions.IntDistribution(int(a.low), int(a.high), log=a.log)
            else:
                d[name] = optuna.distributions.FloatDistribution(a.low, a.high, log=a.log)
        return d

    # ---- configs ---------------------------------------------------------------------------
    def document(self, a: Assignment) -> dict[str, Any]:
        """The full v1 KubeSchedulerConfiguration document for an assignment."""
        doc = copy.deepcopy(self.base_doc)
        prof = doc["profiles"][self.profile_index]
        plugins = prof["plugins"]
        tuned = {w.plugin: w for w in self.weights}
        score: list[dict[str, Any]] = []
        for entry in plugins["score"]["enabled"]:
            name = entry["name"]
            if name not in tuned:
                score.append(entry)
            elif a.weights[name] > 0:
                score.append({"name": name, "weight": a.weights[name]})
        for w in self.weights:  # plugins the base profile does not score with go last
            if w.base == 0 and a.weights[w.plugin] > 0:
                score.append({"name": w.plugin, "weight": a.weights[w.plugin]})
                pre = plugins["preScore"]["enabled"]
                if w.pre_score and not any(e["name"] == w.plugin for e in pre):
                    pre.append({"name": w.plugin})
        plugins["score"]["enabled"] = score
        config = prof["pluginConfig"]
        for dim in self.args:
            if dim.key not in a.args:
                continue
            entry = next((e for e in config if e["name"] == dim.plugin), None)
            if entry is None:
                entry = {"name": dim.plugin, "args": {}}
                config.append(entry)
            if not isinstance(entry.get("args"), dict):
                entry["args"] = {}
            _set(entry["args"], dim.path, a.args[dim.key], dim.spec)
        return doc

    def load(self, doc: dict[str, Any], source: str) -> SchedulerConfig:
        return parse_config(doc, source, self.registry.points_of)

    def check(self) -> None:
        """Every end of the space loads and builds, so no trial fails on a config error."""
        from kubesched.app import check_plugins

        def build(a: Assignment) -> None:
            check_plugins(self.load(self.document(a), "tuned config"), self.registry)

        base = self.base_assignment()
        if self.weights:
            top = Assignment({w.plugin: self.range.high for w in self.weights}, dict(base.args))
            try:
                build(top)
            except InputError as e:
                raise InputError(f"--weights: with every weight at {self.range.high}: {e}") from None
        for dim in self.args:
            for value in dim.candidates():
                try:
                    build(Assignment(base.weights, {**base.args, dim.key: value}))
                except InputError as e:
                    raise InputError(f'--param: "{dim.spec}": value {value!r}: {e}') from None
