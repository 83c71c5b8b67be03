"""Flags that several commands share: each is declared here once, with one spelling, type and
help text; a command passes its own help only where the flag means something else there (the
seed of ``tune`` is its sampler's, not a tie-break's).

``-o/--output FORMAT`` is what is printed (kubectl's habit); ``-d/--out-dir DIR`` is the folder a
command writes files to. ``--out`` was the folder's first name: it still works, with a warning,
because it reads like ``--output``. ``--no-plots`` and ``--no-plot`` are the same flag.

Nothing here imports the work modules: ``kubesched --help`` stays cheap.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from kubesched.commands.argtypes import seed, validate_mode


class DeprecatedAlias(argparse.Action):
    """An old spelling of a flag: does what the new one does, and says to use the new one."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, new: str, **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: str | None = None
    ) -> None:
        sys.stderr.write(f"kubesched: warning: {option_string} is deprecated: use {self.new}\n")
        setattr(namespace, self.dest, values)


def add_out_dir(p: argparse.ArgumentParser | Any, default: str, what: str) -> None:
    """``-d/--out-dir DIR`` (and the deprecated ``--out DIR``)."""
    p.add_argument(
        "-d", "--out-dir", dest="out_dir", default=default, metavar="DIR",
        help=f"folder for {what} (created; default {default})",
    )
    p.add_argument("--out", dest="out_dir", metavar="DIR", action=DeprecatedAlias, new="-d/--out-dir", help=argparse.SUPPRESS)


def output_format(choices: Sequence[str], hint: str = "") -> Any:
    """An argparse ``type`` for ``-o/--output`` whose error says what the flag is (and what it is not)."""

    def check(value: str) -> str:
        if value in choices:
            return value
        raise argparse.ArgumentTypeError(f"'{value}' is not an output format ({', '.join(choices)}){hint}")

    check.__name__ = "output format"
    return check


def add_output(
    p: argparse.ArgumentParser | Any,
    choices: Sequence[str],
    help: str,
    *,
    default: str | None = None,
    folder_flag: bool = False,
) -> None:
    """``-o/--output FORMAT`` (default: the first choice). With ``folder_flag`` (commands that also
    write a folder) a value that is no format is refused with a pointer to ``-d/--out-dir``."""
    if folder_flag:
        kind: dict[str, Any] = {
            "type": output_format(choices, "; the output folder is -d/--out-dir DIR"),
            "metavar": "{" + ",".join(choices) + "}",
        }
    else:
        kind = {"choices": tuple(choices)}
    p.add_argument("-o", "--output", default=default or choices[0], help=help, **kind)


#: ``-o`` of the commands that print the cluster contract (schedule, explain, plugins list, config view)
CONTRACT_FORMATS = ("table", "json", "yaml")
CONTRACT_HELP = "table (default; fits the terminal's width), or the JSON/YAML contract (docs/cli.md)"


def add_result_output(p: argparse.ArgumentParser | Any, document: str) -> None:
    """``-o table|json|yaml`` of the commands that write a folder of results (experiment, tune,
    learn): the table they print, or their result document on stdout (``document``: the file it
    holds; docs/cli.md#result-documents), progress and warnings staying on stderr."""
    add_output(
        p, CONTRACT_FORMATS,
        f"table (default), or the result document ({document}) as JSON/YAML on stdout (docs/cli.md#result-documents)",
        folder_flag=True,
    )


def add_no_plots(p: argparse.ArgumentParser | Any, help: str) -> None:
    p.add_argument("--no-plots", "--no-plot", dest="no_plots", action="store_true", help=help)


def add_validate(p: argparse.ArgumentParser | Any) -> None:
    """``--validate[=MODE]`` for the commands that read ``-f`` cluster files (kubectl's flag)."""
    p.add_argument(
        "--validate", nargs="?", const="strict", default="strict", type=validate_mode, metavar="MODE",
        help="what to do with -f objects the API server would refuse (unknown fields, invalid names, "
        "...): strict (or true; the default) refuses them, warn loads them with a warning per "
        "problem, ignore (or false) loads them silently; see docs/cli.md#input-files",
    )


def add_workload_source(p: argparse.ArgumentParser, title: str) -> argparse._ArgumentGroup:
    """The workload flags of ``simulate`` and ``tune`` (exactly one of ``--trace``, ``-f``,
    ``--synthetic``), in a group titled ``title`` that the caller may extend."""
    src = p.add_argument_group(title)
    src.add_argument(
        "--trace", metavar="NAME|FILE", help="openb pod list: a CSV, or a shipped trace by name (default, gpushare40, ...)"
    )
    src.add_argument(
        "--nodes", metavar="NAME|FILE", help="openb node list for --trace: a CSV, or shipped 'all' (default) or 'gpu'"
    )
    src.add_argument(
        "-f", "--file", action="append", metavar="FILE",
        help="Kubernetes manifests: nodes and pods; a file, or a directory's .json/.yaml/.yml files (repeatable)",
    )
    add_recursive(src)
    add_validate(src)
    src.add_argument(
        "--synthetic",
        nargs="?",
        const="default",
        metavar="SPEC",
        help="generate a seeded workload from a YAML spec (no SPEC: the built-in default)",
    )
    src.add_argument(
        "--synth", action="append", default=[], metavar="KEY=VALUE", help="override a synthetic spec field (pods.count=500)"
    )
    src.add_argument("--skip-invalid", action="store_true", help="skip bad trace rows (counted and reported)")
    add_limit(src)
    return src


def add_openb_lists(p: argparse.ArgumentParser | Any, trace_help: str, nodes_help: str) -> None:
    """``--trace`` (default ``default``) and ``--nodes`` (default ``gpu``): the openb pod and node
    lists an experiment replays (``help`` says what each is there)."""
    p.add_argument("--trace", default="default", help=trace_help)
    p.add_argument("--nodes", default="gpu", help=nodes_help)


def add_instance_size(p: argparse.ArgumentParser | Any, purpose: str, pods_of: str) -> None:
    """``--max-nodes N`` and ``--max-pods N``: a smaller instance of an openb experiment
    (``purpose`` says what for; ``pods_of``: whose first N pods)."""
    p.add_argument("--max-nodes", type=int, metavar="N", help=f"{purpose}: N nodes spread over the node list")
    p.add_argument("--max-pods", type=int, metavar="N", help=f"{purpose}: the first N pods of {pods_of}")


LIMIT_HELP = "replay only the first N pods by arrival"


def add_limit(p: argparse.ArgumentParser | Any, help: str = LIMIT_HELP) -> None:
    """``--limit N``: the first N pods of a workload by arrival."""
    p.add_argument("--limit", type=int, metavar="N", help=help)


def add_no_progress(p: argparse.ArgumentParser | Any, detail: str = "") -> None:
    """``--no-progress``; ``detail`` says what the command does instead, or when the bar is off anyway."""
    p.add_argument("--no-progress", action="store_true", help="no progress bar" + (f" ({detail})" if detail else ""))


TIE_BREAK_SEED = "seed for the random tie-break (reproducible runs)"


def add_seed(
    p: argparse.ArgumentParser | Any, default: int | None = None, help: str = TIE_BREAK_SEED, *, serves: bool = False
) -> None:
    """``--seed N``: a whole number from 0 to 2^63-1 (one error for a bad one, whichever command).

    Without a ``default`` the command picks a seed when none is given and says which on stderr
    (``kubesched.seeds``: ``pick_seed``, then ``announce_seed``): every run can be repeated exactly. ``kubesched.cli.main``
    says it once the command has run (an input error stays one line); a command that ``serves``
    (runs until stopped) says it itself when it starts serving."""
    if default is None:
        help += "; default: a random seed, printed to stderr so the run can be repeated"
        p.set_defaults(seed_picked=False, seed_serves=serves)
    elif "default" not in help:
        help += f" (default {default})"
    p.add_argument("--seed", type=seed, default=default, help=help)


CONFIG_HELP = "KubeSchedulerConfiguration file (v1, v1beta3, v1beta2, v1beta1)"


def add_config(p: argparse.ArgumentParser | Any, help: str = CONFIG_HELP, metavar: str | None = None) -> None:
    """``--config FILE``: a KubeSchedulerConfiguration (``help`` says what it is for, where it differs)."""
    p.add_argument("--config", metavar=metavar, help=help)


def add_feature_gates(p: argparse.ArgumentParser | Any) -> None:
    p.add_argument(
        "--feature-gates", metavar="NAME=BOOL,...",
        help="kube-scheduler feature gates, v1.36 defaults otherwise (docs/config.md#feature-gates); the multicluster "
        "commands take Karmada v1.18's too (docs/multicluster.md#resource-models)",
    )


def add_plugin_path(p: argparse.ArgumentParser | Any, kind: str = "plugins") -> None:
    """``--plugin-path FILE`` (repeatable); ``kind`` tells them from other plugins (multicluster's
    node plugins beside its cluster plugins)."""
    p.add_argument(
        "--plugin-path", action="append", default=[],
        help=f"Python file defining {kind} (repeatable; it is run: only trusted files)",
    )


CLUSTER_FILES_HELP = (
    "cluster objects: a YAML/JSON file, or a directory's .json/.yaml/.yml files (repeatable); default: shipped example"
)


def add_recursive(p: argparse.ArgumentParser | Any) -> None:
    """kubectl's ``-R/--recursive``: ``-f DIR`` reads its subdirectories too (``expand_files``)."""
    p.add_argument(
        "-R", "--recursive", action="store_true",
        help="-f DIR also reads the files of its subdirectories, as kubectl's -R",
    )


def expand_files(args: argparse.Namespace) -> None:
    """``args.file`` as the files it names: directories become their manifest files (``-R``: and
    their subdirectories'), as kubectl reads ``-f`` (``kubesched.manifest_paths``)."""
    if "recursive" in args and args.file:
        from kubesched.manifest_paths import expand

        args.file = expand(args.file, args.recursive)


def add_cluster_files(p: argparse.ArgumentParser | Any, help: str = CLUSTER_FILES_HELP) -> None:
    """``-f/--file FILE`` (repeatable) and ``--validate``: the cluster objects a command reads."""
    p.add_argument("-f", "--file", action="append", metavar="FILE", help=help)
    add_recursive(p)
    add_validate(p)


def cluster_files(args: argparse.Namespace) -> list[str]:
    """The ``-f`` files, or the shipped example cluster."""
    from kubesched.app import example_path

    return args.file or [example_path()]


def add_debug(p: argparse.ArgumentParser | Any) -> None:
    """``--debug`` for the commands that run plugins."""
    p.add_argument(
        "--debug", action="store_true", help="print the traceback of any exception a plugin raises (to stderr)"
    )


def add_kubeconfig(p: argparse.ArgumentParser | Any, help: str) -> None:
    """``--kubeconfig FILE`` (``help`` names the default, which differs by command)."""
    p.add_argument("--kubeconfig", help=help)


def add_context(p: argparse.ArgumentParser | Any) -> None:
    p.add_argument("--context", help="kubeconfig context (default: its current context)")


def add_workers(p: argparse.ArgumentParser | Any, default: int | None = None) -> None:
    """``--workers N``: runs in parallel processes (default: all cores)."""
    help = "parallel runs (default: all cores)" if default is None else f"runs in parallel processes (default {default})"
    p.add_argument("--workers", type=int, default=default, help=help)


def add_serving_security(p: argparse.ArgumentParser | Any, *, verbs: bool) -> None:
    """kube-scheduler's secure-serving flags, and the token file for ``/metrics``
    (checked by ``kubesched.server.security.from_args``)."""
    what = "the verbs, probes and /metrics" if verbs else "/healthz, /livez, /readyz and /metrics"
    p.add_argument("--tls-cert-file", metavar="PATH", help=f"serve {what} over HTTPS with this certificate (PEM, reloaded on change)")
    p.add_argument("--tls-private-key-file", metavar="PATH", help="the certificate's private key (PEM)")
    p.add_argument(
        "--client-ca-file", metavar="PATH",
        help=("require a client certificate signed by these CAs for the verbs (kube-scheduler's tlsConfig certFile); "
              if verbs else "accept client certificates signed by these CAs for /metrics; ")
        + "probes stay open",
    )
    p.add_argument(
        "--metrics-token-file", metavar="PATH",
        help="/metrics needs a bearer token listed in this file (one per line, reloaded on change) or a client certificate",
    )
