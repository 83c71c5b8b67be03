"""``kubesched learn search|train|eval|bound|plan|value|export``: learning to schedule (``kubesched.learn``)."""

from __future__ import annotations

import argparse

from kubesched.commands import flags
from kubesched.commands.declare import Group
from kubesched.commands.lazy import lazy_handler

#: ``kubesched.learn.bound.METHODS``, spelled out so that --help needs no numpy (a test keeps the
#: two equal)
BOUND_METHODS = ("configurations", "aggregate")
BOUND_LIMITS = (30, 10_000, 600.0)  # kubesched.learn.bound.Limits' defaults (not imported: this module stays light)


learn = Group(
    "learn", "learn a scheduling policy from the simulator and evaluate it",
    "Learn a node-selection policy on the FGD paper's protocol (a search over the GPU scorers, or "
    "reinforcement learning on kubesched/NodeSelect-v0) and compare it with FGD on held-out seeds. "
    "See docs/learning.md.",
    choices_help="search, train, eval, bound, plan, value or export",
)


def _instance_flags(p: argparse.ArgumentParser) -> None:
    flags.add_openb_lists(
        p, "openb pod list: a shipped name or a path (default: default)",
        "openb node list: gpu, all or a path (default: gpu)",
    )
    flags.add_instance_size(p, "small instance", "the trace")
    flags.add_workers(p)


@learn.command("search", run=lazy_handler("kubesched.learn.cli", "cmd_search"))
def _search(p: argparse.ArgumentParser) -> None:
    """search a weighted combination of the GPU scorers (Optuna) on training seeds

    Search score-plugin weights, FGD's deltaScale and the tie-break rule on the FGD protocol's
    training seeds; validate the best trials beside FGD on other seeds; write best-config.yaml (a
    KubeSchedulerConfiguration), search.json and trials.csv. See docs/learning.md.
    """
    _instance_flags(p)
    p.add_argument("--train-seeds", default="0-2", help="training seeds (default 0-2; 42-51 are refused)")
    p.add_argument("--val-seeds", default="100-103", help="validation seeds (default 100-103; 42-51 are refused)")
    p.add_argument("--trials", type=int, default=30, help="Optuna trials (default 30)")
    p.add_argument("--finalists", type=int, default=4, help="best trials run on the validation seeds (default 4)")
    flags.add_seed(p, 0, "the sampler's seed (default 0)")
    flags.add_out_dir(p, "learn-search", "best-config.yaml, search.json and trials.csv")
    flags.add_result_output(p, "search.json")
    flags.add_no_progress(p, "one line per trial on stderr instead")


@learn.command("train", run=lazy_handler("kubesched.learn.cli", "cmd_train"))
def _train(p: argparse.ArgumentParser) -> None:
    """behaviour cloning of FGD, then MaskablePPO on kubesched/NodeSelect-v0 (needs kubesched[rl])

    Train a residual node-selection policy: clone FGD's choices, then improve with MaskablePPO on
    the FGD protocol's training seeds. Writes policy.npz (numpy, for LearnedScore), ppo.zip (the
    stable-baselines3 checkpoint) and train.json. See docs/learning.md.
    """
    _instance_flags(p)
    p.add_argument("--seeds", default="0-7", help="training run seeds (default 0-7; 42-51 are refused)")
    p.add_argument("--k", type=int, default=16, help="candidates the policy chooses among (default 16)")
    p.add_argument("--bc-episodes", type=int, default=1, help="base-policy episodes to clone (default 1)")
    p.add_argument("--bc-epochs", type=int, default=20, help="behaviour-cloning epochs (default 20)")
    p.add_argument("--steps", type=int, default=30000, help="PPO decisions (default 30000; 0: cloning only)")
    p.add_argument("--n-steps", type=int, default=2048, help="PPO rollout length (default 2048)")
    p.add_argument("--learning-rate", type=float, default=1e-4, help="PPO learning rate (default 1e-4)")
    p.add_argument("--shaping", type=float, default=0.0, help="reward shaping by the base-score gap (default 0)")
    p.add_argument("--frag-shaping", type=float, default=0.0,
                   help="reward every decision by the change of FGD's cluster fragmentation, x this (default 0)")
    p.add_argument("--bc-smoothing", type=float, default=0.0,
                   help="share of the cloning target spread over every candidate, in [0, 1) (default 0)")
    p.add_argument("--ent-coef", type=float, default=0.0, help="PPO entropy bonus (default 0)")
    flags.add_seed(p, 0, "seed of everything random in training (default 0)")
    flags.add_out_dir(p, "learn-rl", "policy.npz, ppo.zip and train.json")


@learn.command("eval", run=lazy_handler("kubesched.learn.cli", "cmd_eval"))
def _eval(p: argparse.ArgumentParser) -> None:
    """learned policies vs FGD and BestFit, paired on held-out seeds and trace variants

    Run FGD, BestFit and each given policy on the same seeds of each trace; print mean ± sd, the
    paired difference to FGD, wins, the Wilcoxon signed-rank p and the goal's verdict; write
    result.json, runs.csv, summary.md and eval.png to --out. See docs/learning.md.
    """
    p.add_argument("--traces", default="default", help="comma list of openb pod lists (default: default)")
    p.add_argument("--nodes", default="gpu", help="openb node list (default: gpu)")
    p.add_argument("--seeds", default="42-51", help="evaluation seeds (default 42-51, held out from training)")
    p.add_argument("--search", metavar="JSON", help="search.json of kubesched learn search (its chosen policy)")
    p.add_argument("--model", metavar="NPZ", help="policy.npz of kubesched learn train (run by LearnedScore)")
    p.add_argument("--bound", type=float, metavar="S", help="also the offline bound per seed, S seconds each")
    p.add_argument("--plan", metavar="[TRACE=]JSON", action="append",
                   help="a packing plan of kubesched learn plan, run by PlanScore over FGDScore; "
                   "TRACE=JSON for one trace (repeat), JSON alone for every trace")
    p.add_argument("--plan-weight", type=int, default=101, metavar="W",
                   help="PlanScore's weight (default 101: over FGDScore's 1, lexicographic: FGD breaks its ties)")
    p.add_argument("--plan-fgd-weight", type=int, default=1, metavar="W",
                   help="FGDScore's weight beside PlanScore (default 1; 101 with --plan-weight 1: PlanScore breaks FGD's ties)")
    p.add_argument("--rollout", metavar="JSON",
                   help="RolloutScore's args (a JSON object in a file): rollouts of FGD among its near-ties")
    p.add_argument("--value", metavar="JSON",
                   help="a value function of kubesched learn value, run by ValueScore among FGD's near-ties")
    flags.add_instance_size(p, "small instance", "each trace")
    flags.add_workers(p)
    flags.add_no_plots(p, "skip eval.png")
    flags.add_out_dir(p, "learn-eval", "result.json, runs.csv, summary.md and eval.png")
    flags.add_result_output(p, "result.json")
    flags.add_no_progress(p, "one line per run on stderr instead")


@learn.command("value", run=lazy_handler("kubesched.learn.cli", "cmd_value"))
def _value(p: argparse.ArgumentParser) -> None:
    """fit ValueScore's value function of the cluster by policy iteration on training seeds

    Run ValueScore over FGD on the training seeds, exploring among FGD's near-ties; fit a ridge
    regression of what each decision's run still failed to place on the features of the whole
    cluster after it; repeat with the improved policy; keep the round best on the validation
    seeds. Writes value.json (for ValueScore and learn eval --value), value-R.json per round and
    value-fit.json. See docs/learning.md.
    """
    _instance_flags(p)
    p.add_argument("--seeds", default="0-9", help="training seeds (default 0-9; 42-51 are refused)")
    p.add_argument("--val-seeds", default="100-103", help="validation seeds (default 100-103; 42-51 are refused)")
    p.add_argument("--rounds", type=int, default=3, help="policy-iteration rounds (default 3)")
    p.add_argument("--epsilon", type=float, default=0.2,
                   help="share of decisions that take a random near-tie while collecting (default 0.2)")
    p.add_argument("--ridge", type=float, default=0.01, help="ridge penalty on standardised features (default 0.01)")
    p.add_argument("--from-allocated-pct", type=float, default=85.0,
                   help="ValueScore decides once this %% of the GPUs is allocated (default 85)")
    p.add_argument("--top-k", type=int, default=3, help="FGD's best nodes it chooses among (default 3)")
    p.add_argument("--margin", type=int, default=2, help="... within this many points of FGD's best (default 2)")
    p.add_argument("--min-gains", default="", metavar="G,...",
                   help="minGain settings (points of %%) also tried with the chosen round's function on the "
                   "validation seeds; the best is kept (default: none, minGain 0)")
    flags.add_seed(p, 0, "the exploration's seed (default 0)")
    flags.add_out_dir(p, "learn-value", "value.json, value-R.json and value-fit.json")


@learn.command("bound", run=lazy_handler("kubesched.learn.cli", "cmd_bound"))
def _bound(p: argparse.ArgumentParser) -> None:
    """the offline bound: the least unallocated GPU any placement could leave

    A relaxation (HiGHS, limited in rounds and branch-and-bound nodes) of placing the pods the
    metric counts at --level: no placement leaves less GPU unallocated than it says; the
    configuration method also finds a packing of the same pods (what is achievable). One JSON object
    per seed. See docs/learning.md.
    """
    _instance_flags(p)
    p.add_argument("--seeds", default="42-51", help="seeds (default 42-51)")
    p.add_argument("--level", type=int, default=100,
                   help="the metric's arrived %% (default 100): the pods arrived by the last event whose arrived %% "
                   "rounds to it are placed")
    p.add_argument("--method", choices=BOUND_METHODS, default="configurations",
                   help="configurations: per-node packing kept (default); aggregate: sums per node type (looser)")
    p.add_argument("--rounds", type=int, default=BOUND_LIMITS[0],
                   help=f"column generation rounds per seed (default {BOUND_LIMITS[0]}; deterministic)")
    p.add_argument("--node-limit", type=int, default=BOUND_LIMITS[1],
                   help=f"branch-and-bound nodes per MILP (default {BOUND_LIMITS[1]}; deterministic)")
    p.add_argument("--time-limit", type=float, default=BOUND_LIMITS[2],
                   help=f"wall-clock safety net, seconds per seed (default {BOUND_LIMITS[2]:g}; the JSON's time_limited "
                   "says when it stopped work, making the figures load-dependent; FGD's run comes on top)")


@learn.command("plan", run=lazy_handler("kubesched.learn.cli", "cmd_plan"))
def _plan(p: argparse.ArgumentParser) -> None:
    """a packing plan of the trace's pod-shape mix, for PlanScore

    Solve once the configuration LP of the trace's pod-shape distribution (every shape, its share
    of the original trace; never a seed's arrival sequence) on the node list: which pods each node
    type should hold together to fill the GPUs best. Writes the plan JSON that PlanScore (and learn
    eval --plan) read. See docs/learning.md.
    """
    flags.add_openb_lists(
        p, "openb pod list: a shipped name or a path (default: default)",
        "openb node list: gpu, all or a path (default: gpu)",
    )
    p.add_argument("--rounds", type=int, default=30, help="column generation rounds (default 30)")
    p.add_argument("--node-limit", type=int, default=2000, help="branch-and-bound nodes per pricing MILP (default 2000)")
    p.add_argument("--time-limit", type=float, default=14_400.0, metavar="S",
                   help="wall-clock safety net for the whole solve (default 14400 s); time_limited: true in the "
                        "plan's meta when it stopped the work")
    p.add_argument("output_file", nargs="?", default="plan.json", metavar="PLAN_JSON",
                   help="where to write the plan (default plan.json)")


@learn.command("export", run=lazy_handler("kubesched.learn.cli", "cmd_export"))
def _export(p: argparse.ArgumentParser) -> None:
    """export a stable-baselines3 checkpoint (ppo.zip) to a numpy .npz

    Write the actor of a MaskablePPO checkpoint as the .npz that the LearnedScore plugin runs in
    numpy. The checkpoint is read as data: nothing in it is unpickled (its weights are loaded with
    torch's weights-only loader). See docs/learning.md (trust model).
    """
    p.add_argument("checkpoint", help="ppo.zip from kubesched learn train")
    p.add_argument("npz", nargs="?", default="policy.npz", help="the .npz to write (default policy.npz)")
