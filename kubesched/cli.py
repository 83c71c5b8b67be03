"""The ``kubesched`` command. User mistakes print one line and exit 2; never a traceback.

Each command's flags and handler live in ``kubesched.commands``; this is the entry point."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from kubesched import UPSTREAM_RELEASE, __version__, features, seeds
from kubesched.commands import COMMANDS, flags
from kubesched.commands.argtypes import OneLineParser
from kubesched.errors import InputError

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="kubesched",
        description=f"A kube-scheduler {UPSTREAM_RELEASE}-compatible scheduler and scheduling lab.",
    )
    parser.add_argument("--version", action="version", version=f"kubesched {__version__} (kube-scheduler {UPSTREAM_RELEASE})")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help="one of:")
    for command in COMMANDS:
        command.add_to(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        if hasattr(args, "feature_gates"):  # this run's gates (v1.36's defaults when not given)
            features.set_from_flag(args.feature_gates or "", getattr(args, "other_feature_gates", ()))
        flags.expand_files(args)
        seeds.pick_seed(args)
        code = func(args)
        if not getattr(args, "seed_serves", True) and code != EXIT_USAGE:
            seeds.announce_seed(args)
        return code
    except InputError as e:
        sys.stderr.write(f"kubesched: error: {e}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
