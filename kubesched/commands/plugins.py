"""``kubesched plugins list|new``: the available plugins, and a skeleton for a new one."""

from __future__ import annotations

import argparse
import sys

from kubesched.commands import flags
from kubesched.commands.declare import Group
from kubesched.commands.printing import emit
from kubesched.errors import InputError


def run_list(args: argparse.Namespace) -> int:
    from kubesched.app import build_registry

    reg = build_registry(args.plugin_path)
    rows = []
    for info in reg.infos():
        try:
            points = sorted(reg.resolve(info.name).extension_points())
            err = ""
        except InputError as e:
            points, err = [], str(e)
        rows.append({"name": info.name, "origin": info.origin, "target": info.target, "points": points, "error": err})
    if args.output == "table":
        from kubesched.render import plugins_table

        plugins_table(rows)
    else:
        emit({"plugins": rows}, args.output)
    return 0


def run_new(args: argparse.Namespace) -> int:
    """Write a plugin skeleton and its test, then say how to enable it."""
    from kubesched.scaffold import enable_snippet, write_skeleton

    plugin, test = write_skeleton(args.name, args.dir, args.kind)
    sys.stdout.write(f"wrote {plugin}\nwrote {test}\n\n{enable_snippet(args.name, args.kind, plugin)}")
    return 0


plugins = Group("plugins", "plugin tools", "List the available plugins or write a new one.")


@plugins.command("list", run=run_list)
def _list(p: argparse.ArgumentParser) -> None:
    """every available plugin, its origin and extension points

    Every plugin kubesched can enable: built-in, from Python entry points (group kubesched.plugins)
    and from --plugin-path files, with the extension points each implements.
    """
    flags.add_plugin_path(p)
    flags.add_output(p, flags.CONTRACT_FORMATS, flags.CONTRACT_HELP)


@plugins.command("new", run=run_new)
def _new(p: argparse.ArgumentParser) -> None:
    """write a plugin skeleton (NAME.py) and its pytest test

    Write NAME.py (a per-node score or filter plugin) and test_NAME.py, and print the configuration
    that enables it.
    """
    p.add_argument("name", metavar="NAME", help="the plugin's class and configured name, e.g. LowLatencyFirst")
    p.add_argument("--dir", default=".", help="where to write the files (default: current directory)")
    p.add_argument("--kind", choices=("score", "filter"), default="score", help="extension point (default: score)")
