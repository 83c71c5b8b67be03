"""The ``kubesched`` commands: one module per top-level command, each with ``add_parser(sub)``
(its flags and subcommands) and the handler that ``func`` names.

A handler either lives in its command's module (``schedule``, ``explain``, ``plugins``, ``config``:
a few lines around the work) or is a ``lazy_handler`` naming the work module's function: the work
module is imported only when the command runs, so building the parser stays cheap. Flags that
several commands take come from ``flags`` (declared once); argparse types from ``argtypes``.
"""

from __future__ import annotations

from kubesched.commands import (
    autoscale,
    bench,
    config,
    experiment,
    explain,
    extender,
    learn,
    multicluster,
    plugins,
    run,
    schedule,
    simulate,
    tune,
    ui,
)

#: in the order ``kubesched --help`` lists them
COMMANDS = (
    schedule, explain, plugins, config, bench, extender, simulate, run, experiment, tune, multicluster, autoscale,
    ui, learn,
)
