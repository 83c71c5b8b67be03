"""`kubesched learn search|train|export|eval|bound|plan|value`: learning to schedule (docs/learning.md; the flags
are in ``kubesched.commands.learn``)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from kubesched.errors import InputError, require_extra
from kubesched.experiment.grid import at_least_one, parse_seeds
from kubesched.kit.pool import Pool, workers_from
from kubesched.kit.progress import Steps
from kubesched.kit.report import print_document
from kubesched.learn.bound import Limits, check_configurable
from kubesched.learn.data import Instance, check_training_seeds, load
from kubesched.learn.metric import check_defined
from kubesched.sim.report import prepare_out_dir


def instance_of(args: argparse.Namespace) -> Instance:
    at_least_one(args.max_nodes, "--max-nodes")
    at_least_one(args.max_pods, "--max-pods")
    at_least_one(args.workers, "--workers")
    inst = Instance(args.trace, args.nodes, args.max_nodes, args.max_pods)
    load(inst)  # an unknown trace or a bad file fails here, before anything runs
    return inst


def training_seeds(text: str, flag: str) -> list[int]:
    try:
        seeds = parse_seeds(text)
    except InputError as e:
        raise InputError(e.reason, source=flag) from None
    return check_training_seeds(seeds, flag)


def seeds_apart(train_text: str, train_flag: str, val_text: str) -> tuple[list[int], list[int]]:
    """Training and validation seeds: neither held out, none in both."""
    train = training_seeds(train_text, train_flag)
    val = training_seeds(val_text, "--val-seeds")
    if set(train) & set(val):
        raise InputError("validation seeds must differ from the training seeds", source="--val-seeds")
    return train, val


def worker_pool(workers: int | None, tasks: int | None = None) -> Pool:
    """The kit's pool of ``--workers`` spawned processes (default: every CPU), no more than ``tasks``."""
    n = workers_from(workers)
    return Pool(n if tasks is None else max(1, min(n, tasks)), start="spawn")


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _needs_learn(command: str, module: str, what: str) -> None:
    """The learn extra (Optuna and scipy: pyproject.toml) is what ``learn search|eval|bound`` need:
    say so before any work, rather than fail at the end."""
    require_extra(module, what, "learn", f"learn {command}")


def cmd_search(args: argparse.Namespace) -> int:
    _needs_learn("search", "optuna", "Optuna")
    from kubesched.learn.search import params_from_json, search, write

    train, val = seeds_apart(args.train_seeds, "--train-seeds", args.val_seeds)
    at_least_one(args.trials, "--trials")
    at_least_one(args.finalists, "--finalists")
    inst = instance_of(args)
    check_defined(inst, [*train, *val])
    out = prepare_out_dir(args.out_dir, source="--out-dir")
    with Steps("search trials", args.trials, not args.no_progress) as step, worker_pool(args.workers) as pool:
        res = search(inst, train, val, trials=args.trials, finalists=args.finalists, sampler_seed=args.seed,
                     pool=pool, progress=step)
    chosen = params_from_json(res.chosen["params"])
    config = chosen.config(inst.prepare(train[0]).typical)
    write(out, res, config)
    if args.output != "table":
        print_document(res.to_json(), args.output)
        return 0
    fgd = res.finalists[0]["validation_mean"]
    print(f"chosen: {res.chosen['describe']}")
    print(f"validation mean unallocated at 100 %: {res.chosen['validation_mean']:.3f} (FGD {fgd:.3f})")
    print(f"CPU {res.cpu_seconds:.0f} s, wall {res.wall_seconds:.0f} s; wrote {out / 'best-config.yaml'}")
    return 0


def _needs_rl(command: str) -> None:
    for module in ("gymnasium", "sb3_contrib"):
        require_extra(module, "the rl extra", "rl", f"learn {command}")


def cmd_train(args: argparse.Namespace) -> int:
    import json

    seeds = training_seeds(args.seeds, "--seeds")
    for flag in ("k", "n_steps", "bc_episodes", "bc_epochs"):
        at_least_one(getattr(args, flag), "--" + flag.replace("_", "-"))
    if args.steps < 0:
        raise InputError(f"must be at least 0, got {args.steps}", source="--steps")
    if not args.learning_rate > 0:
        raise InputError(f"must be positive, got {args.learning_rate}", source="--learning-rate")
    if not 0 <= args.bc_smoothing < 1:
        raise InputError(f"must be in [0, 1), got {args.bc_smoothing}", source="--bc-smoothing")
    for flag in ("frag_shaping", "ent_coef", "shaping"):
        if not math.isfinite(getattr(args, flag)) or getattr(args, flag) < 0:
            raise InputError(f"must be a number at least 0, got {getattr(args, flag)}", source="--" + flag.replace("_", "-"))
    inst = instance_of(args)
    _needs_rl("train")
    from kubesched.learn.train import TrainConfig, train

    cfg = TrainConfig(
        inst.trace, inst.nodes, seeds, args.k, inst.max_nodes, inst.max_pods, args.bc_episodes, args.bc_epochs,
        args.steps, args.n_steps, min(256, args.n_steps), args.learning_rate, ent_coef=args.ent_coef,
        shaping=args.shaping, bc_smoothing=args.bc_smoothing, frag_shaping=args.frag_shaping, seed=args.seed,
    )
    out = prepare_out_dir(args.out_dir, source="--out-dir")
    res = train(cfg, progress=_say)
    res.model.save(out / "policy.npz")
    if res.checkpoint is not None:
        res.checkpoint.save(out / "ppo.zip")
    summary = {**res.model.meta, "bc_samples": res.bc_samples, "wall_seconds": res.wall_seconds,
               "episodes": res.log}
    (out / "train.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"behaviour cloning: candidate 0 on {res.bc_accuracy:.1%} of {res.bc_samples} decisions; "
          f"PPO {res.ppo_steps} steps")
    print(f"CPU {res.cpu_seconds:.0f} s, wall {res.wall_seconds:.0f} s; wrote {out / 'policy.npz'}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    require_extra("torch", "torch", "rl", "learn export")  # reads policy.pth (weights only)
    from kubesched.learn.checkpoint import read_checkpoint

    model = read_checkpoint(args.checkpoint)  # as data: nothing in it is unpickled
    try:
        model.save(args.npz)
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror}", source=args.npz) from None
    print(f"wrote {args.npz} (K={model.k}, {len(model.weights)} layers)")
    return 0


def _seeds(text: str, flag: str) -> list[int]:
    try:
        return parse_seeds(text)
    except InputError as e:
        raise InputError(e.reason, source=flag) from None


def _int_list(value: Any) -> list[int] | None:
    return value if isinstance(value, list) and all(type(v) is int for v in value) else None


def _candidates(args: argparse.Namespace) -> list:
    import json

    from kubesched.learn.evaluate import Candidate

    out = []
    if args.search:
        from kubesched.learn.search import params_from_json

        try:
            doc = json.loads(Path(args.search).read_text())
            params = params_from_json(doc["chosen"]["params"])
        except FileNotFoundError:
            raise InputError("no such file", source=args.search) from None
        except RecursionError:
            raise InputError("not a search.json of kubesched learn search (nested too deeply)",
                             source=args.search) from None
        except (OSError, ValueError, KeyError, TypeError, OverflowError) as e:
            raise InputError(f"not a search.json of kubesched learn search ({type(e).__name__}: {e})",
                             source=args.search) from None
        cpu = doc.get("cpu_seconds")  # shown and written back into result.json: plain values only
        training = {"kind": "search", "policy": params.describe(), "cpu_seconds": cpu if isinstance(cpu, int | float) else None,
                    **{k: _int_list(doc.get(k)) for k in ("train_seeds", "val_seeds")}}
        out.append(Candidate("search", params.config, training))
    if args.model:
        from functools import partial

        from kubesched.learn.policies import learned_config
        from kubesched.plugins.learned.model import load_model

        model = load_model(args.model)
        out.append(Candidate("learned", partial(learned_config, str(Path(args.model).resolve())),
                             {"kind": "rl", **model.meta, "model_path": str(Path(args.model).resolve())}))
    if args.plan:
        traces = [t.strip() for t in args.traces.split(",") if t.strip()]
        out.append(_plan_candidate(args.plan, (args.plan_weight, args.plan_fgd_weight), traces))
    if args.rollout:
        out.append(_rollout_candidate(args.rollout))
    if args.value:
        out.append(_value_candidate(args.value))
    return out


def _value_candidate(path: str) -> Any:
    """``--value FILE``: ValueScore with the value function in FILE, read and checked before
    anything runs."""
    from functools import partial

    from kubesched.learn.evaluate import Candidate
    from kubesched.learn.policies import value_config
    from kubesched.plugins.lookahead.valuefile import load_value

    fn = load_value(path)  # a missing or bad file fails here, naming the file and the field
    full = str(Path(path).resolve())
    return Candidate("value", partial(value_config, full), {"kind": "value", "value": full, "policy": fn.policy})


def _rollout_candidate(path: str) -> Any:
    """``--rollout FILE``: RolloutScore with the args in FILE (a JSON object), checked before
    anything runs."""
    import json
    from functools import partial

    from kubesched.learn.evaluate import Candidate
    from kubesched.learn.policies import rollout_config
    from kubesched.plugins.lookahead.rollout import RolloutScore

    try:
        doc = json.loads(Path(path).read_text())
    except OSError as e:
        raise InputError(e.strerror or str(e), source=path) from None
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"not JSON: {e}", source=path) from None
    try:
        RolloutScore(doc)
    except InputError as e:
        raise InputError(e.reason, source=path, path=e.path) from None
    return Candidate("rollout", partial(rollout_config, args=doc), {"kind": "rollout", "args": doc})


def _plan_candidate(specs: list[str], weights: tuple[int, int], traces: list[str]) -> Any:
    """``--plan [TRACE=]JSON`` (repeatable): PlanScore with each trace's plan (JSON alone: every
    trace's), each file read and checked before anything runs."""
    from functools import partial

    from kubesched.learn.evaluate import Candidate
    from kubesched.learn.policies import plan_config
    from kubesched.plugins.lookahead.planfile import load_plan

    for flag, w in zip(("--plan-weight", "--plan-fgd-weight"), weights, strict=True):
        if not 1 <= w <= 10_000:
            raise InputError(f"must be in 1..10000, got {w}", source=flag)
    default, per_trace, files = None, {}, {}
    for spec in specs:
        trace, sep, path = spec.rpartition("=")
        full = str(Path(path).resolve())
        load_plan(path)  # a missing or bad plan fails here, naming the file
        make = partial(plan_config, full, weight=weights[0], fgd_weight=weights[1])
        if sep:
            per_trace[trace] = make
        else:
            default = make
        files[trace or "*"] = full
    missing = [t for t in traces if t not in per_trace]
    if default is None and missing:
        raise InputError(f"no plan for trace {missing[0]} (give TRACE=JSON for each, or one JSON for all)",
                         source="--plan")
    return Candidate("plan", default or next(iter(per_trace.values())),
                     {"kind": "plan", "plans": files, "weights": {"PlanScore": weights[0], "FGDScore": weights[1]}}, per_trace)


def cmd_eval(args: argparse.Namespace) -> int:
    _needs_learn("eval", "scipy.stats", "scipy (the Wilcoxon tests)")
    from kubesched.learn.evaluate import run_eval, runs_of, summary_md, write

    seeds = _seeds(args.seeds, "--seeds")
    at_least_one(args.max_nodes, "--max-nodes")
    at_least_one(args.max_pods, "--max-pods")
    at_least_one(args.workers, "--workers")
    if args.bound is not None and not args.bound > 0:
        raise InputError(f"must be positive, got {args.bound}", source="--bound")
    names = [t.strip() for t in args.traces.split(",") if t.strip()]
    if not names:
        raise InputError("no trace given", source="--traces")
    cands = _candidates(args)
    insts = []
    for name in names:
        inst = Instance(name, args.nodes, args.max_nodes, args.max_pods)
        try:
            _, trace = load(inst)
        except InputError as e:
            raise InputError(e.reason, source="--traces") from None
        if args.bound is not None:
            check_configurable(trace.pods, f"trace {inst.trace}")
        check_defined(inst, seeds)
        insts.append(inst)
    out = prepare_out_dir(args.out_dir, source="--out-dir")
    with Steps("eval runs", runs_of(insts, seeds, cands), not args.no_progress) as step, worker_pool(args.workers) as pool:
        result = run_eval(insts, seeds, cands, pool, bound_time_limit=args.bound, progress=step)
    write(out, result, plots=not args.no_plots)
    if args.output == "table":
        print(summary_md(result), end="")
    else:
        print_document(result, args.output)
    return 0


def _min_gains(text: str) -> list[float]:
    import math

    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            g = float(part)
        except ValueError:
            g = math.nan
        if not (math.isfinite(g) and g >= 0):
            raise InputError(f"expected numbers >= 0, got {part!r}", source="--min-gains")
        out.append(g)
    return out


def cmd_value(args: argparse.Namespace) -> int:
    import json

    from kubesched.learn.value import Training, policy_iteration

    seeds, val = seeds_apart(args.seeds, "--seeds", args.val_seeds)
    at_least_one(args.rounds, "--rounds")
    at_least_one(args.top_k, "--top-k")
    for flag, v, ok in (("--epsilon", args.epsilon, 0 <= args.epsilon <= 1), ("--ridge", args.ridge, args.ridge > 0),
                        ("--from-allocated-pct", args.from_allocated_pct, 0 <= args.from_allocated_pct <= 100),
                        ("--margin", args.margin, args.margin >= 0)):
        if not ok:
            raise InputError(f"out of range: {v}", source=flag)
    gains = _min_gains(args.min_gains)
    inst = instance_of(args)
    check_defined(inst, [*seeds, *val])
    out = prepare_out_dir(args.out_dir, source="--out-dir")
    policy = {"fromAllocatedPct": args.from_allocated_pct, "topK": args.top_k, "margin": args.margin}
    t = Training(inst, seeds, val, args.rounds, args.epsilon, args.ridge, policy, args.seed, gains)
    with worker_pool(args.workers, len(seeds)) as pool:
        record = policy_iteration(t, out, pool, _say)
    (out / "value-fit.json").write_text(json.dumps(record, indent=1) + "\n")
    best = record["rounds"][record["chosen_round"] - 1]
    print(f"chosen: round {best['round']}, validation mean unallocated at 100 %: {best['validation_mean']:.3f} "
          f"(FGD {sum(record['fgd_validation']) / len(val):.3f})")
    print(f"CPU {record['cpu_seconds']:.0f} s; wrote {out / 'value.json'}")
    return 0


def cmd_bound(args: argparse.Namespace) -> int:
    import json

    _needs_learn("bound", "scipy.optimize", "scipy (HiGHS)")
    from kubesched.learn.bound import seed_bound

    seeds = _seeds(args.seeds, "--seeds")
    if not 0 < args.level <= 1000:
        raise InputError(f"must be in (0, 1000], got {args.level}", source="--level")
    if not args.time_limit > 0:
        raise InputError(f"must be positive, got {args.time_limit}", source="--time-limit")
    at_least_one(args.rounds, "--rounds")
    at_least_one(args.node_limit, "--node-limit")
    limits = Limits(args.rounds, args.node_limit, args.time_limit)
    inst = instance_of(args)
    if args.method == "configurations":
        check_configurable(load(inst)[1].pods, f"trace {inst.trace}")
    check_defined(inst, seeds, args.level)
    jobs = [(inst, seed, args.level, limits, args.method) for seed in seeds]
    with worker_pool(args.workers, len(jobs)) as pool:
        for b in pool.ordered(seed_bound, jobs, star=True):  # in seed order, each as soon as it can be
            print(json.dumps(b), flush=True)
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    _needs_learn("plan", "scipy.optimize", "scipy (HiGHS)")
    from kubesched.learn.plan import plan_for, write_plan

    at_least_one(args.rounds, "--rounds")
    at_least_one(args.node_limit, "--node-limit")
    if not args.time_limit > 0:
        raise InputError(f"must be positive, got {args.time_limit}", source="--time-limit")
    nodes, trace = load(Instance(args.trace, args.nodes))
    plan = plan_for(trace.pods, nodes, rounds=args.rounds, node_limit=args.node_limit, seconds=args.time_limit)
    try:
        write_plan(Path(args.output_file), plan, trace=args.trace, nodes=args.nodes)
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror}", source=args.output_file) from None
    m = plan.meta
    print(f"planned {m['planned_allocated_pct']:.2f} % of the GPUs allocated with {len(plan.columns)} configurations "
          f"({m['rounds']} rounds, {'converged' if m['converged'] else 'not converged'}"
          f"{', stopped by the time limit' if m['time_limited'] else ''}, CPU {plan.cpu_seconds:.0f} s); "
          f"wrote {args.output_file}")
    return 0
