"""The command layout (kubesched/commands): the parser is cheap to build, every command's handler
exists, and a flag several commands take is declared once (one type, one help text)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from kubesched.cli import build_parser, main
from kubesched.commands import argtypes
from kubesched.commands.declare import command
from kubesched.commands.lazy import LazyHandler


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):  # noqa: ANN202
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def _leaves() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    return [(path, p) for path, p in _commands(build_parser()) if p.get_default("func") is not None]


def _option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((a for a in parser._actions if flag in a.option_strings), None)


def test_building_the_parser_imports_no_numpy() -> None:
    """`kubesched --help` and a usage error import no work module: numpy alone took 0.1 s."""
    code = (
        "import sys, kubesched.cli as c; c.build_parser(); "
        "print(sorted(m for m in ('numpy', 'yaml', 'rich', 'optuna', 'uvicorn', 'kubesched.scheduler') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_command_has_a_handler_that_resolves() -> None:
    leaves = _leaves()
    assert len(leaves) == 24  # every command and subcommand that runs something (learn value: the 24th)
    for path, parser in leaves:
        func = parser.get_default("func")
        target = func.resolve() if isinstance(func, LazyHandler) else func
        assert callable(target), " ".join(path)


def test_a_commands_docstring_is_its_help_text() -> None:
    """The first paragraph is the line ``kubesched --help`` lists, the rest the description; each
    refilled to one line (argparse refills them again, to the terminal's width)."""

    @command("demo", run=lambda args: 0)
    def demo(p: argparse.ArgumentParser) -> None:
        """a summary
        over two lines

        The description,
        then more of it.
        """

    assert (demo.name, demo.help) == ("demo", "a summary over two lines")
    assert demo.description == "The description, then more of it."
    with pytest.raises(TypeError, match="command bare: a command's docstring is its --help text"):
        command("bare", run=lambda args: 0)(lambda p: None)


def test_every_seed_is_the_same_flag() -> None:
    """One type for --seed: a negative seed is refused in one line by every command that takes one
    (learn search and learn train took it as any int)."""
    seeded = [(path, p) for path, p in _leaves() if _option(p, "--seed") is not None]
    assert len(seeded) >= 12
    for path, parser in seeded:
        assert _option(parser, "--seed").type is argtypes.seed, " ".join(path)


@pytest.mark.parametrize("path", [("learn", "search"), ("learn", "train"), ("simulate",), ("schedule",)])
def test_a_negative_seed_is_one_line_and_exit_2(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main([*path, "--seed", "-1"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1
    assert f'kubesched {" ".join(path)}: error: argument --seed: invalid value "-1"' in err


@pytest.mark.parametrize("flag", ["--plugin-path", "--context", "--feature-gates"])
def test_a_shared_flag_has_one_help_text(flag: str) -> None:
    helps = {_option(p, flag).help.replace("node plugins", "plugins") for _, p in _leaves() if _option(p, flag)}
    assert len(helps) == 1, helps


def test_the_hard_coded_lists_in_help_match_their_source() -> None:
    """--modes of experiment elastic and --method of learn bound are spelled out so that the parser
    needs no numpy; they must stay what the work modules accept."""
    from kubesched.autoscale.scenario import all_modes
    from kubesched.commands.experiment import ELASTIC_MODES
    from kubesched.commands.learn import BOUND_METHODS
    from kubesched.learn.bound import METHODS

    assert list(ELASTIC_MODES) == all_modes()
    assert BOUND_METHODS == METHODS
