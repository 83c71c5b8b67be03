"""The search space: every trial maps to a valid config that runs exactly the chosen weights/args."""

from __future__ import annotations

import optuna
import pytest

from kubesched.app import build_registry
from kubesched.config import default_config, parse_config
from kubesched.errors import InputError
from kubesched.sim.runner import simulate
from kubesched.sim.synthetic import generate, load_spec
from kubesched.tune.metrics import METRICS, metric_value, parse_metrics
from kubesched.tune.space import Assignment, SearchSpace, WeightRange, parse_param

REG = build_registry([])
DEFAULT_WEIGHTS = default_config(REG.points_of).profiles[0].score_weights()


def _space(**kw: object) -> SearchSpace:
    return SearchSpace(default_config(REG.points_of), REG, **kw)  # type: ignore[arg-type]


def _load(space: SearchSpace, a: Assignment):  # noqa: ANN202
    cfg = parse_config(space.document(a), "test", REG.points_of)
    assert cfg.warnings == []
    return cfg


@pytest.mark.parametrize("rng", ["1-100", "0-100", "5-20"])
def test_random_trials_give_valid_configs_with_exactly_their_weights(rng: str) -> None:
    wr = WeightRange.parse(rng, "linear" if rng == "5-20" else "log")
    space = _space(weight_range=wr)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    switched_off = 0
    for _ in range(25):
        trial = study.ask()
        a = space.suggest(trial)
        study.tell(trial, 0.0)
        assert set(a.weights) == set(DEFAULT_WEIGHTS)
        for w in a.weights.values():
            assert w == 0 and wr.low == 0 or wr.min_on <= w <= wr.high
        got = _load(space, a).profiles[0].score_weights()
        assert got == {p: w for p, w in a.weights.items() if w > 0}
        switched_off += sum(w == 0 for w in a.weights.values())
    assert (switched_off > 0) == (wr.low == 0)


def test_added_plugin_is_enabled_at_score_and_pre_score() -> None:
    points = REG.points_of("RandomScore")
    assert points is not None and "preScore" in points
    space = _space(weights=["NodeResourcesFit", "RandomScore"])
    assert space.base_assignment().weights == {"NodeResourcesFit": 1, "RandomScore": 0}
    cfg = _load(space, Assignment({"NodeResourcesFit": 3, "RandomScore": 7}))
    prof = cfg.profiles[0]
    assert prof.score_weights()["RandomScore"] == 7
    assert prof.score_weights()["ImageLocality"] == DEFAULT_WEIGHTS["ImageLocality"]  # untouched
    assert "RandomScore" in prof.names("preScore")
    off = _load(space, Assignment({"NodeResourcesFit": 3, "RandomScore": 0})).profiles[0]
    assert "RandomScore" not in off.score_weights() and "RandomScore" not in off.names("preScore")


def test_args_are_written_where_the_path_says() -> None:
    params = [
        parse_param("NodeResourcesFit.scoringStrategy.type=LeastAllocated|MostAllocated"),
        parse_param("NodeResourcesFit.scoringStrategy.resources.0.weight=1:5"),
        parse_param("InterPodAffinity.hardPodAffinityWeight=0.5:50:log"),
    ]
    assert [p.kind for p in params] == ["categorical", "int", "float"]
    space = _space(weights=["NodeResourcesFit"], params=params[:2])
    space.check()
    base = space.base_assignment()
    assert base.args == {
        "NodeResourcesFit.scoringStrategy.type": "LeastAllocated",
        "NodeResourcesFit.scoringStrategy.resources.0.weight": 1,
    }
    a = Assignment(
        {"NodeResourcesFit": 2},
        {
            "NodeResourcesFit.scoringStrategy.type": "MostAllocated",
            "NodeResourcesFit.scoringStrategy.resources.0.weight": 4,
        },
    )
    strat = _load(space, a).profiles[0].args("NodeResourcesFit")["scoringStrategy"]
    assert strat["type"] == "MostAllocated"
    assert strat["resources"][0] == {"name": "cpu", "weight": 4}


def test_base_assignment_maps_to_params_only_inside_the_space() -> None:
    inside = _space()
    params = inside.params_of(inside.base_assignment())
    assert params == {f"weight.{p}": w for p, w in DEFAULT_WEIGHTS.items()}
    assert _space(weight_range=WeightRange.parse("2-100")).params_of(inside.base_assignment()) is None
    with_off = _space(weights=["NodeResourcesFit", "RandomScore"], weight_range=WeightRange.parse("0-10"))
    assert with_off.params_of(with_off.base_assignment()) == {
        "enabled.NodeResourcesFit": True,
        "weight.NodeResourcesFit": 1,
        "enabled.RandomScore": False,
    }


@pytest.mark.parametrize(
    "spec",
    [
        "NodeResourcesFit",
        "NodeResourcesFit.x=",
        "NodeResourcesFit.x=5",
        "NodeResourcesFit.x=5:1",
        "NodeResourcesFit.x=a:b",
        "NodeResourcesFit.x=0:3:log",
        "NodeResourcesFit.x=a|a",
        ".x=1:2",
        "NodeResourcesFit..x=1:2",
    ],
)
def test_bad_param_specs(spec: str) -> None:
    with pytest.raises(InputError, match="--param"):
        parse_param(spec)


@pytest.mark.parametrize("text", ["", "1", "5-2", "3-3", "-1-5", "a-b", "0-1"])
def test_bad_weight_ranges(text: str) -> None:
    with pytest.raises(InputError, match="--weight-range"):
        WeightRange.parse(text)


def test_space_rejects_unknown_and_non_score_plugins_and_bad_arg_values() -> None:
    with pytest.raises(InputError, match='unknown plugin "Nope"'):
        _space(weights=["Nope"])
    with pytest.raises(InputError, match="no score extension point"):
        _space(weights=["NodeName"])
    with pytest.raises(InputError, match="not enabled"):
        _space(params=[parse_param("RandomScore.x=1:2")])
    bad = _space(params=[parse_param("NodeResourcesFit.scoringStrategy.type=LeastAllocated|Packed")])
    with pytest.raises(InputError, match="value 'Packed'"):
        bad.check()


def test_every_metric_is_a_summary_key() -> None:
    spec, src = load_spec(None, ["pods.count=40", "nodes.0.count=3"])
    res = simulate(default_config(REG.points_of), generate(spec, 1, src), seed=1, record_events=False)
    for name in METRICS:
        cur = res.summary
        for part in name.split("."):
            assert part in cur, name
            cur = cur[part]
        assert cur is None or isinstance(cur, int | float), name
    assert metric_value(res.summary, "pods.scheduled") == 40.0
    assert metric_value(res.summary, "pods.nope") is None


def test_metric_and_direction_parsing() -> None:
    assert parse_metrics("gpu.unallocated_pct,pods.scheduled", None) == (
        ["gpu.unallocated_pct", "pods.scheduled"],
        ["minimize", "maximize"],
    )
    assert parse_metrics("pods.failed,pods.scheduled", "maximize")[1] == ["maximize", "maximize"]
    for metric, direction in (
        ("nope", None),
        ("pods.failed", "up"),
        ("pods.failed,pods.failed", None),
        ("pods.failed", "minimize,minimize"),
    ):
        with pytest.raises(InputError):
            parse_metrics(metric, direction)
