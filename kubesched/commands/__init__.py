"""The ``kubesched`` commands: one module per top-level command, each declaring its command
(``declare.command``: the function that adds its flags, its docstring the help text, and the
handler it runs) or its ``declare.Group`` of subcommands; ``kubesched.cli`` adds them in the order
of ``COMMANDS``.

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
from kubesched.commands.declare import Command, Group

#: in the order ``kubesched --help`` lists them
COMMANDS: tuple[Command | Group, ...] = (
    schedule.schedule, explain.explain, plugins.plugins, config.config, bench.bench, extender.extender,
    simulate.simulate, run.run, experiment.experiment, tune.tune, multicluster.multicluster, autoscale.autoscale,
    ui.ui, learn.learn,
)
