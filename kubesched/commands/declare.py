"""How a command declares itself, and the one place that adds the declarations to the parser.

A command is the function that adds its flags, under ``@command(NAME, run=HANDLER)``. Its docstring
is what ``--help`` says of it (click's habit): the first paragraph is the line ``kubesched --help``
lists it with, the rest the description its own ``--help`` opens with; line breaks in either are
only the source's (argparse refills both). A command whose work is in subcommands
(``kubesched NAME COMMAND``) is a ``Group``; its ``command`` decorator declares each subcommand, in
the order its ``--help`` lists them.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

Handler = Callable[[argparse.Namespace], int]
AddFlags = Callable[[argparse.ArgumentParser], None]


@dataclass(frozen=True)
class Command:
    """A command that runs something: ``run(args)`` once ``add_flags`` has parsed them."""

    name: str
    help: str
    description: str
    add_flags: AddFlags
    run: Handler
    #: text after the flags, printed as written (and the description, then, as it is: one paragraph)
    epilog: str | None = None

    def add_to(self, sub: argparse._SubParsersAction) -> None:
        layout = {"epilog": self.epilog, "formatter_class": argparse.RawDescriptionHelpFormatter} if self.epilog else {}
        p = sub.add_parser(self.name, help=self.help, description=self.description, **layout)
        self.add_flags(p)
        p.set_defaults(func=self.run)


def _help_text(doc: str | None, what: str) -> tuple[str, str]:
    """A docstring's first paragraph and the rest, each on one line."""
    if not doc:
        raise TypeError(f"{what}: a command's docstring is its --help text, and it has none")
    summary, _, description = inspect.cleandoc(doc).partition("\n\n")
    return " ".join(summary.split()), " ".join(description.split())


def command(name: str, *, run: Handler, epilog: str | None = None) -> Callable[[AddFlags], Command]:
    """Declare the decorated function (which adds the flags) as the command ``name`` that runs
    ``run``; see the module's docstring for the help text."""

    def declare(add_flags: AddFlags) -> Command:
        help, description = _help_text(add_flags.__doc__, f"command {name}")
        return Command(name, help, description, add_flags, run, epilog)

    return declare


@dataclass
class Group:
    """A command whose work is in subcommands: its parser, and the subcommand that must follow it
    (``args.NAME_command``)."""

    name: str
    help: str
    description: str
    #: what ``--help`` says of the subcommands' list
    choices_help: str = "one of:"
    commands: list[Command] = field(default_factory=list)

    def command(self, name: str, *, run: Handler) -> Callable[[AddFlags], Command]:
        """``@command``, and the command becomes this group's next subcommand."""

        def declare(add_flags: AddFlags) -> Command:
            cmd = command(name, run=run)(add_flags)
            self.commands.append(cmd)
            return cmd

        return declare

    def add_to(self, sub: argparse._SubParsersAction) -> None:
        p = sub.add_parser(self.name, help=self.help, description=self.description)
        group_sub = p.add_subparsers(dest=f"{self.name}_command", required=True, metavar="COMMAND", help=self.choices_help)
        for cmd in self.commands:
            cmd.add_to(group_sub)
