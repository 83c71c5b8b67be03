"""A command's handler that imports its work module only when the command runs, so that building
the parser (``kubesched --help``, a usage error) imports no numpy, Optuna, Ray or uvicorn."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class LazyHandler:
    """``module.name(args)``, with ``module`` imported on the first call."""

    module: str
    name: str

    def resolve(self) -> Callable[[argparse.Namespace], int]:
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, args: argparse.Namespace) -> int:
        return self.resolve()(args)


def lazy_handler(module: str, name: str) -> LazyHandler:
    return LazyHandler(module, name)
