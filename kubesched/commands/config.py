"""``kubesched config view``: a KubeSchedulerConfiguration as kubesched resolves it."""

from __future__ import annotations

import argparse

from kubesched.commands import flags
from kubesched.commands.declare import Group
from kubesched.commands.printing import emit, warn


def run(args: argparse.Namespace) -> int:
    from kubesched.app import build_config, build_registry, check_plugins
    from kubesched.config import effective_config, resolved_table

    reg = build_registry(args.plugin_path, import_module_names=args.import_plugins)
    cfg = build_config(args.config, reg)
    check_plugins(cfg, reg)  # refuse what ``schedule`` refuses: plugins check their own args
    warn(cfg.warnings)
    if args.output == "table":
        from kubesched.render import config_table

        config_table(resolved_table(cfg))
    else:
        emit(effective_config(cfg), args.output)
    return 0


config = Group("config", "configuration tools", "Inspect a KubeSchedulerConfiguration.")


@config.command("view", run=run)
def _view(p: argparse.ArgumentParser) -> None:
    """the resolved configuration as a v1 document (defaults merged, versions converted)

    Print the configuration as kubesched resolves it: defaults merged, multiPoint expanded, older
    versions converted (with their own default weights), and the conversion warnings.
    """
    flags.add_config(p)
    flags.add_feature_gates(p)
    flags.add_plugin_path(p)
    flags.add_output(
        p, flags.CONTRACT_FORMATS, "yaml (default), json, or table (fits the terminal's width)", default="yaml"
    )
    p.add_argument(
        "--import-plugins", action="store_true",
        help="import the modules of module:Class plugin names to resolve them (runs their code; default: refuse)",
    )
