"""`kubesched learn search|train|export|eval|bound`: learning to schedule (docs/learning.md)."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kubesched.errors import InputError
from kubesched.experiment.grid import parse_seeds
from kubesched.flags import add_no_plots, add_out_dir
from kubesched.learn.bound import METHODS, check_configurable
from kubesched.learn.data import Instance, check_training_seeds, load
from kubesched.sim.report import prepare_out_dir


def _instance_flags(p: argparse.ArgumentParser, trace_help: str = "openb pod list: a shipped name or a path") -> None:
    p.add_argument("--trace", default="default", help=f"{trace_help} (default: default)")
    p.add_argument("--nodes", default="gpu", help="openb node list: gpu, all or a path (default: gpu)")
    p.add_argument("--max-nodes", type=int, metavar="N", help="small instance: N nodes spread over the node list")
    p.add_argument("--max-pods", type=int, metavar="N", help="small instance: the first N pods of the trace")
    p.add_argument("--workers", type=int, default=None, help="parallel runs (default: all cores)")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "learn",
        help="learn a scheduling policy from the simulator and evaluate it",
        description="Learn a node-selection policy on the FGD paper's protocol (a search over the GPU scorers, or "
        "reinforcement learning on kubesched/NodeSelect-v0) and compare it with FGD on held-out seeds. "
        "See docs/learning.md.",
    )
    lsub = p.add_subparsers(dest="learn_command", required=True, metavar="COMMAND",
                            help="search, train, export, eval or bound")

    s = lsub.add_parser(
        "search",
        help="search a weighted combination of the GPU scorers (Optuna) on training seeds",
        description="Search score-plugin weights, FGD's deltaScale and the tie-break rule on the FGD protocol's "
        "training seeds; validate the best trials beside FGD on other seeds; write best-config.yaml "
        "(a KubeSchedulerConfiguration), search.json and trials.csv. See docs/learning.md.",
    )
    _instance_flags(s)
    s.add_argument("--train-seeds", default="0-2", help="training seeds (default 0-2; 42-51 are refused)")
    s.add_argument("--val-seeds", default="100-103", help="validation seeds (default 100-103; 42-51 are refused)")
    s.add_argument("--trials", type=int, default=30, help="Optuna trials (default 30)")
    s.add_argument("--finalists", type=int, default=4, help="best trials run on the validation seeds (default 4)")
    s.add_argument("--seed", type=int, default=0, help="the sampler's seed (default 0)")
    add_out_dir(s, "learn-search", "best-config.yaml, search.json and trials.csv")
    s.set_defaults(func=cmd_search)

    t = lsub.add_parser(
        "train",
        help="behaviour cloning of FGD, then MaskablePPO on kubesched/NodeSelect-v0 (needs kubesched[rl])",
        description="Train a residual node-selection policy: clone FGD's choices, then improve with MaskablePPO on "
        "the FGD protocol's training seeds. Writes policy.npz (numpy, for LearnedScore), ppo.zip (the "
        "stable-baselines3 checkpoint) and train.json. See docs/learning.md.",
    )
    _instance_flags(t)
    t.add_argument("--seeds", default="0-7", help="training run seeds (default 0-7; 42-51 are refused)")
    t.add_argument("--k", type=int, default=16, help="candidates the policy chooses among (default 16)")
    t.add_argument("--bc-episodes", type=int, default=1, help="base-policy episodes to clone (default 1)")
    t.add_argument("--bc-epochs", type=int, default=20, help="behaviour-cloning epochs (default 20)")
    t.add_argument("--steps", type=int, default=30000, help="PPO decisions (default 30000; 0: cloning only)")
    t.add_argument("--n-steps", type=int, default=2048, help="PPO rollout length (default 2048)")
    t.add_argument("--learning-rate", type=float, default=1e-4, help="PPO learning rate (default 1e-4)")
    t.add_argument("--shaping", type=float, default=0.0, help="reward shaping by the base-score gap (default 0)")
    t.add_argument("--seed", type=int, default=0, help="seed of everything random in training (default 0)")
    add_out_dir(t, "learn-rl", "policy.npz, ppo.zip and train.json")
    t.set_defaults(func=cmd_train)

    e = lsub.add_parser(
        "eval",
        help="learned policies vs FGD and BestFit, paired on held-out seeds and trace variants",
        description="Run FGD, BestFit and each given policy on the same seeds of each trace; print mean ± sd, "
        "the paired difference to FGD, wins, the Wilcoxon signed-rank p and the goal's verdict; write "
        "result.json, runs.csv, summary.md and eval.png to --out. See docs/learning.md.",
    )
    e.add_argument("--traces", default="default", help="comma list of openb pod lists (default: default)")
    e.add_argument("--nodes", default="gpu", help="openb node list (default: gpu)")
    e.add_argument("--seeds", default="42-51", help="evaluation seeds (default 42-51, held out from training)")
    e.add_argument("--search", metavar="JSON", help="search.json of kubesched learn search (its chosen policy)")
    e.add_argument("--model", metavar="NPZ", help="policy.npz of kubesched learn train (run by LearnedScore)")
    e.add_argument("--bound", type=float, metavar="S", help="also the offline bound per seed, S seconds each")
    e.add_argument("--max-nodes", type=int, metavar="N", help="small instance: N nodes spread over the node list")
    e.add_argument("--max-pods", type=int, metavar="N", help="small instance: the first N pods of each trace")
    e.add_argument("--workers", type=int, default=None, help="parallel runs (default: all cores)")
    add_no_plots(e, "skip eval.png")
    add_out_dir(e, "learn-eval", "result.json, runs.csv, summary.md and eval.png")
    e.set_defaults(func=cmd_eval)

    b = lsub.add_parser(
        "bound",
        help="the offline bound: the least unallocated GPU any placement could leave",
        description="A relaxation (HiGHS, time-limited) of placing the pods that arrived by --level: no "
        "placement leaves less GPU unallocated than it says; the configuration method also finds a packing of "
        "the same pods (what is achievable). One JSON object per seed. See docs/learning.md.",
    )
    _instance_flags(b)
    b.add_argument("--seeds", default="42-51", help="seeds (default 42-51)")
    b.add_argument("--level", type=float, default=100.0, help="arrived %% of the pods to place (default 100)")
    b.add_argument("--method", choices=METHODS, default="configurations",
                   help="configurations: per-node packing kept (default); aggregate: sums per node type (looser)")
    b.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds per seed (default 60; the configuration method's FGD run comes on top)")
    b.set_defaults(func=cmd_bound)

    x = lsub.add_parser(
        "export",
        help="export a stable-baselines3 checkpoint (ppo.zip) to a numpy .npz",
        description="Write the actor of a MaskablePPO checkpoint as the .npz that the LearnedScore plugin runs in "
        "numpy. The checkpoint is read as data: nothing in it is unpickled (its weights are loaded with torch's "
        "weights-only loader). See docs/learning.md (trust model).",
    )
    x.add_argument("checkpoint", help="ppo.zip from kubesched learn train")
    x.add_argument("npz", nargs="?", default="policy.npz", help="the .npz to write (default policy.npz)")
    x.set_defaults(func=cmd_export)


def _positive(value: int | None, flag: str) -> None:
    if value is not None and value < 1:
        raise InputError(f"must be at least 1, got {value}", source=flag)


def instance_of(args: argparse.Namespace) -> Instance:
    _positive(args.max_nodes, "--max-nodes")
    _positive(args.max_pods, "--max-pods")
    _positive(args.workers, "--workers")
    inst = Instance(args.trace, args.nodes, args.max_nodes, args.max_pods)
    load(inst)  # an unknown trace or a bad file fails here, before anything runs
    return inst


def training_seeds(text: str, flag: str) -> list[int]:
    try:
        seeds = parse_seeds(text)
    except InputError as e:
        raise InputError(e.reason, source=flag) from None
    return check_training_seeds(seeds, flag)


@contextmanager
def worker_pool(workers: int | None):
    n = workers or os.cpu_count() or 1
    if n <= 1:
        yield None
        return
    with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def cmd_search(args: argparse.Namespace) -> int:
    try:
        import optuna  # noqa: F401
    except ImportError:
        raise InputError("needs Optuna: pip install 'kubesched[tune]'", source="learn search") from None
    from kubesched.learn.search import params_from_json, search, write

    train = training_seeds(args.train_seeds, "--train-seeds")
    val = training_seeds(args.val_seeds, "--val-seeds")
    if set(train) & set(val):
        raise InputError("validation seeds must differ from the training seeds", source="--val-seeds")
    _positive(args.trials, "--trials")
    _positive(args.finalists, "--finalists")
    inst = instance_of(args)
    out = prepare_out_dir(args.out_dir, source="--out-dir")
    with worker_pool(args.workers) as pool:
        res = search(inst, train, val, trials=args.trials, finalists=args.finalists, sampler_seed=args.seed,
                     pool=pool, progress=_say)
    chosen = params_from_json(res.chosen["params"])
    config = chosen.config(inst.prepare(train[0]).typical)
    write(out, res, config)
    fgd = res.finalists[0]["validation_mean"]
    print(f"chosen: {res.chosen['describe']}")
    print(f"validation mean unallocated at 100 %: {res.chosen['validation_mean']:.3f} (FGD {fgd:.3f})")
    print(f"CPU {res.cpu_seconds:.0f} s, wall {res.wall_seconds:.0f} s; wrote {out / 'best-config.yaml'}")
    return 0


def _needs_rl(command: str) -> None:
    try:
        import gymnasium  # noqa: F401
        import sb3_contrib  # noqa: F401
    except ImportError:
        raise InputError("needs the rl extra: pip install 'kubesched[rl]'", source=f"learn {command}") from None


def cmd_train(args: argparse.Namespace) -> int:
    import json

    seeds = training_seeds(args.seeds, "--seeds")
    for flag in ("k", "n_steps", "bc_episodes", "bc_epochs"):
        _positive(getattr(args, flag), "--" + flag.replace("_", "-"))
    if args.steps < 0:
        raise InputError(f"must be at least 0, got {args.steps}", source="--steps")
    if not args.learning_rate > 0:
        raise InputError(f"must be positive, got {args.learning_rate}", source="--learning-rate")
    inst = instance_of(args)
    _needs_rl("train")
    from kubesched.learn.train import TrainConfig, train

    cfg = TrainConfig(
        inst.trace, inst.nodes, seeds, args.k, inst.max_nodes, inst.max_pods, args.bc_episodes, args.bc_epochs,
        args.steps, args.n_steps, min(256, args.n_steps), args.learning_rate, shaping=args.shaping, seed=args.seed,
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
    try:
        import torch  # noqa: F401 - reads policy.pth (weights only)
    except ImportError:
        raise InputError("needs torch: pip install 'kubesched[rl]'", source="learn export") from None
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
    return out


def cmd_eval(args: argparse.Namespace) -> int:
    from kubesched.learn.evaluate import run_eval, summary_md, write

    seeds = _seeds(args.seeds, "--seeds")
    _positive(args.max_nodes, "--max-nodes")
    _positive(args.max_pods, "--max-pods")
    _positive(args.workers, "--workers")
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
        insts.append(inst)
    out = prepare_out_dir(args.out_dir, source="--out-dir")
    with worker_pool(args.workers) as pool:
        result = run_eval(insts, seeds, cands, pool, bound_time_limit=args.bound, progress=_say)
    write(out, result, plots=not args.no_plots)
    print(summary_md(result), end="")
    return 0


def cmd_bound(args: argparse.Namespace) -> int:
    import json

    from kubesched.learn.bound import seed_bound

    seeds = _seeds(args.seeds, "--seeds")
    if not 0 < args.level <= 1000:
        raise InputError(f"must be in (0, 1000], got {args.level}", source="--level")
    if not args.time_limit > 0:
        raise InputError(f"must be positive, got {args.time_limit}", source="--time-limit")
    inst = instance_of(args)
    if args.method == "configurations":
        check_configurable(load(inst)[1].pods, f"trace {inst.trace}")
    n = len(seeds)
    with worker_pool(min(args.workers or os.cpu_count() or 1, n)) as pool:
        results = (pool.map if pool else map)(seed_bound, [inst] * n, seeds, [args.level] * n,
                                              [args.time_limit] * n, [args.method] * n)
        for b in results:  # in seed order, each as soon as it and the ones before it are done
            print(json.dumps(b), flush=True)
    return 0
