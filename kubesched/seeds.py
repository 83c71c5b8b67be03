"""A run's seed when the command line gave none: picked at random and said on stderr, so that
every run can be repeated with ``--seed`` (the flag itself is declared in ``commands.flags``).
Below the commands and the packages whose handlers serve (``run``, the extender): both say it."""

from __future__ import annotations

import argparse
import sys

#: the seeds picked for runs without --seed: below 2^31, short to type and valid for every generator
PICKED_SEED_BOUND = 2**31


def pick_seed(args: argparse.Namespace) -> None:
    """A command with ``--seed`` but none given (and no fixed default) gets a random seed
    (``args.seed_picked`` says so)."""
    if "seed_picked" in args and args.seed is None:
        import secrets

        args.seed = secrets.randbelow(PICKED_SEED_BOUND)
        args.seed_picked = True


def announce_seed(args: argparse.Namespace) -> None:
    """The picked seed (if one was) as one line on stderr: stdout stays the result (``-o json`` parses)."""
    if getattr(args, "seed_picked", False):
        sys.stderr.write(f"kubesched: seed {args.seed} (repeat with --seed {args.seed})\n")
