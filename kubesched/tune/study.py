"""The study: Optuna's ask-and-tell loop over the search space, the baseline and the held-out check.

Trials are asked in batches of ``jobs`` and told back in trial order, so a run is repeatable for a
given ``--seed`` and ``--jobs`` (the sampler sees the same history whatever finishes first). The
base config is evaluated first and, when its weights and args lie inside the space, recorded as
trial 0 so the sampler starts from it and the best trial is never worse than the baseline on the
tuning seeds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import optuna

from kubesched.errors import InputError
from kubesched.tune.objective import Evaluation, Evaluator, trial_runner
from kubesched.tune.space import Assignment

SAMPLERS = ("auto", "tpe", "nsga2", "random")


@dataclass
class TrialRecord:
    number: int
    state: str  # COMPLETE or FAIL
    assignment: Assignment
    evaluation: Evaluation | None
    values: list[float] | None  # the objective(s)
    baseline: bool = False
    message: str = ""


@dataclass
class StudySettings:
    metrics: list[str]
    directions: list[str]
    trials: int = 50
    timeout: float | None = None
    seed: int = 0
    sim_seeds: list[int] = field(default_factory=lambda: [0])
    eval_seeds: list[int] = field(default_factory=list)
    jobs: int = 1
    sampler: str = "auto"
    storage: str | None = None
    study_name: str | None = None


@dataclass
class StudyOutcome:
    settings: StudySettings
    records: list[TrialRecord]
    baseline: TrialRecord
    best: TrialRecord  # single objective: the best trial; several: the chosen Pareto trial
    pareto: list[TrialRecord]  # several objectives: the Pareto front (else [best])
    held_out: dict[str, Evaluation] = field(default_factory=dict)  # "baseline"/"best" on eval seeds
    wall_s: float = 0.0


def make_sampler(settings: StudySettings) -> optuna.samplers.BaseSampler:
    kind = settings.sampler
    if kind == "auto":
        kind = "tpe" if len(settings.metrics) == 1 else "nsga2"
    if kind == "random":
        return optuna.samplers.RandomSampler(seed=settings.seed)
    if kind == "nsga2":
        # a small population so a study of tens of trials still runs several generations
        pop = max(4, min(50, settings.trials // 5))
        return optuna.samplers.NSGAIISampler(seed=settings.seed, population_size=pop)
    return optuna.samplers.TPESampler(seed=settings.seed, constant_liar=settings.jobs > 1)


def _better(a: float, b: float, direction: str) -> bool:
    return a < b if direction == "minimize" else a > b


def choose(
    records: Sequence[TrialRecord], directions: Sequence[str]
) -> tuple[TrialRecord, list[TrialRecord]]:
    """The best record and the Pareto front (lexicographic order on the objectives picks the best:
    the first metric decides, later ones break ties; lower trial number last)."""
    done = [r for r in records if r.values is not None]

    def dominates(a: TrialRecord, b: TrialRecord) -> bool:
        assert a.values is not None and b.values is not None
        no_worse = all(not _better(y, x, d) for x, y, d in zip(a.values, b.values, directions, strict=True))
        return no_worse and any(
            _better(x, y, d) for x, y, d in zip(a.values, b.values, directions, strict=True)
        )

    front = [r for r in done if not any(dominates(o, r) for o in done)]

    def key(r: TrialRecord) -> tuple:
        assert r.values is not None
        return (*[v if d == "minimize" else -v for v, d in zip(r.values, directions, strict=True)], r.number)

    front.sort(key=key)
    return front[0], front


def open_study(settings: StudySettings) -> optuna.Study:
    """A new study (in memory, or in ``--storage``); a bad storage or a taken name is an InputError."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # our table reports; no per-trial log lines
    storage = None
    if settings.storage:
        try:
            storage = optuna.storages.get_storage(settings.storage)
        except Exception as e:  # noqa: BLE001 - any driver or URL error is the user's storage
            raise InputError(f"--storage: cannot open {settings.storage}: {str(e).splitlines()[0]}") from None
    try:
        return optuna.create_study(
            directions=settings.directions,
            sampler=make_sampler(settings),
            storage=storage,
            study_name=settings.study_name,
        )
    except optuna.exceptions.DuplicatedStudyError:
        raise InputError(
            f'--study-name: a study "{settings.study_name}" already exists in {settings.storage}'
        ) from None


def _with_baseline(records: list[TrialRecord], baseline: TrialRecord) -> list[TrialRecord]:
    return records if any(r is baseline for r in records) else [*records, baseline]


def run_study(
    evaluator: Evaluator,
    settings: StudySettings,
    progress: Callable[[TrialRecord, TrialRecord], None] | None = None,
    study: optuna.Study | None = None,
) -> StudyOutcome:
    """Baseline, ``settings.trials`` trials (or until the timeout), then the held-out check.

    ``progress(record, best_so_far)`` is called after every trial; ``study`` is a fresh one from
    ``open_study`` (default: opened here).
    """
    space = evaluator.space
    metrics, directions = settings.metrics, settings.directions
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    t0 = time.perf_counter()
    base = space.base_assignment()
    base_doc = space.document(base)
    with trial_runner(evaluator, settings.sim_seeds, settings.jobs) as run:
        (base_eval,) = run([base_doc], ["base config"])
        base_values = base_eval.objective(metrics)
        if base_values is None:
            missing = [m for m in metrics if base_eval.values[m] is None]
            raise InputError(
                f"--metric {','.join(missing)}: the simulator reports no value on this workload with the base config "
                "(e.g. no GPU pods, or no pod scheduled)"
            )
        if study is None:
            study = open_study(settings)
        records: list[TrialRecord] = []
        params = space.params_of(base)
        if params is not None:
            study.add_trial(
                optuna.trial.create_trial(
                    params=params,
                    distributions={k: v for k, v in space.distributions().items() if k in params},
                    values=base_values,
                )
            )
            baseline = TrialRecord(
                study.trials[-1].number, "COMPLETE", base, base_eval, base_values, baseline=True
            )
            records.append(baseline)
        else:
            baseline = TrialRecord(-1, "COMPLETE", base, base_eval, base_values, baseline=True)
        best = baseline
        asked = 0
        while asked < settings.trials:
            if settings.timeout is not None and time.perf_counter() - t0 >= settings.timeout:
                break
            batch = [study.ask() for _ in range(min(settings.jobs, settings.trials - asked))]
            asked += len(batch)
            assigns = [space.suggest(t) for t in batch]
            evals = run([space.document(a) for a in assigns], [f"trial {t.number}" for t in batch])
            for trial, a, ev in zip(batch, assigns, evals, strict=True):
                values = ev.objective(metrics)
                if values is None:
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                    rec = TrialRecord(trial.number, "FAIL", a, ev, None, message="metric undefined (null)")
                else:
                    study.tell(trial, values)
                    rec = TrialRecord(trial.number, "COMPLETE", a, ev, values)
                records.append(rec)
                best, _ = choose(_with_baseline(records, baseline), directions)
                if progress is not None:
                    progress(rec, best)
    best, front = choose(_with_baseline(records, baseline), directions)
    held: dict[str, Evaluation] = {}
    if settings.eval_seeds:
        with trial_runner(evaluator, settings.eval_seeds, min(settings.jobs, 2)) as run:
            held_base, held_best = run(
                [base_doc, space.document(best.assignment)], ["base config", "best config"]
            )
        held = {"baseline": held_base, "best": held_best}
    return StudyOutcome(settings, records, baseline, best, front, held, time.perf_counter() - t0)
