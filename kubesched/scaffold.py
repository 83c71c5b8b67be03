"""``kubesched plugins new``: a plugin skeleton and its test, so a user starts from working code.

The skeleton is a per-node plugin (``kubesched.framework.simple``) with typed, defaulted args and
path-aware errors; the test builds a small cluster with ``kubesched.testing`` and checks, through
``kubesched schedule --plugin-path``, that the plugin steers placement.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from kubesched.errors import InputError

KINDS = ("score", "filter")


def snake_name(name: str) -> str:
    """``LowLatencyFirst`` -> ``low_latency_first`` (file and module name)."""
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s)
    return s.lower()


def check_name(name: str) -> None:
    """The name becomes a class name and a module name, so both must be valid Python."""
    if not name.isidentifier() or keyword.iskeyword(name) or not name.isascii():
        raise InputError(f'"{name}" is not a valid Python class name (e.g. LowLatencyFirst)', path="NAME")
    if not snake_name(name).isidentifier() or keyword.iskeyword(snake_name(name)):
        raise InputError(
            f'"{name}" gives the module name "{snake_name(name)}", which is not valid', path="NAME"
        )


_PLUGIN = '''"""{name}: {summary}

Enable it with ``kubesched schedule --plugin-path {snake}.py --config sched.yaml``; see
docs/plugins.md in kubesched for the whole tutorial.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.errors import InputError
from kubesched.framework.simple import {base}

ARGS = "{name}Args"


@dataclass(frozen=True)
class {name}Args:
    """Typed args, read once from ``pluginConfig`` (the config passes them through as given)."""

    label_key: str = "example.com/preferred"
{extra_field}

def parse_args(raw: dict[str, Any]) -> {name}Args:
    """Default and validate the args; a bad value names its field (kubesched exits 2)."""
    known = {{"labelKey"{extra_known}}}
    for key in raw:
        if key not in known and key not in ("apiVersion", "kind"):
            raise InputError(f'unknown field "{{key}}"', path=f"{{ARGS}}.{{key}}")
    label_key = raw.get("labelKey", {name}Args.label_key)
    if not isinstance(label_key, str) or not label_key:
        raise InputError(f"invalid value {{label_key!r}}: must be a non-empty string", path=f"{{ARGS}}.labelKey")
{extra_parse}    return {name}Args({ctor})


class {name}({base}):
    """{summary}"""

    name = "{name}"

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        super().__init__(args, handle)
        self.params = parse_args(self.args)

{method}
'''

_SCORE_EXTRA_FIELD = "    bonus: int = 100\n"
_SCORE_EXTRA_PARSE = """    bonus = raw.get("bonus", {name}Args.bonus)
    if isinstance(bonus, bool) or not isinstance(bonus, int) or not 0 <= bonus <= 100:
        raise InputError(f"invalid value {{bonus!r}}: must be an integer in [0, 100]", path=f"{{ARGS}}.bonus")
"""
_SCORE_METHOD = '''    def score_node(self, pod: Any, node: Any) -> int:
        """Called once per feasible node; return an int in [0, 100]. ``node`` is a NodeInfo."""
        labels = node.node.labels
        return self.params.bonus if labels.get(self.params.label_key) == "true" else 0'''
_FILTER_METHOD = '''    def filter_node(self, pod: Any, node: Any) -> bool | str | None:
        """Called per node; True/None passes, False or a reason string rejects. ``node`` is a NodeInfo."""
        if node.node.labels.get(self.params.label_key) == "true":
            return True
        return f"node(s) lack label {self.params.label_key}=true"'''

_TEST = '''"""Tests for {name}: run ``kubesched schedule`` with the plugin on a small cluster."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from kubesched.cli import main
from kubesched.testing import make_node, make_pod

PLUGIN = str(Path(__file__).with_name("{snake}.py"))


def write_inputs(tmp_path: Path, args: dict) -> tuple[str, str]:
    nodes = [make_node(f"n{{i}}", cpu="4", memory="8Gi") for i in range(3)]
    nodes.append(make_node("n3", cpu="4", memory="8Gi", labels={{"example.com/preferred": "true"}}))
    pods = [make_pod(f"p{{i}}", requests={{"cpu": "100m"}}) for i in range(3)]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(nodes + pods))
    config = tmp_path / "sched.yaml"
    config.write_text(
        yaml.safe_dump(
            {{
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {{
                        "schedulerName": "default-scheduler",
                        "plugins": {{"{point}": {{"enabled": [{{"name": "{name}"{weight}}}]}}}},
                        "pluginConfig": [{{"name": "{name}", "args": args}}],
                    }}
                ],
            }}
        )
    )
    return str(cluster), str(config)


def test_{snake}_steers_placement(tmp_path, capsys):
    cluster, config = write_inputs(tmp_path, {{"labelKey": "example.com/preferred"}})
    code = main(["schedule", "-f", cluster, "--config", config, "--plugin-path", PLUGIN, "--seed", "1", "-o", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    placements = json.loads(out.out)["placements"]
    assert [p["node"] for p in placements] == ["n3", "n3", "n3"]


def test_{snake}_bad_args_exit_2(tmp_path, capsys):
    cluster, config = write_inputs(tmp_path, {{"labelKey": ""}})
    code = main(["schedule", "-f", cluster, "--config", config, "--plugin-path", PLUGIN])
    assert code == 2
    assert "pluginConfig[0].args.labelKey" in capsys.readouterr().err
'''


#: what ``_PLUGIN`` holds for each kind of skeleton (``extra_parse`` is formatted with the name)
_KIND_FIELDS: dict[str, dict[str, str]] = {
    "score": {
        "summary": "prefers nodes labelled ``<labelKey>=true`` (a score plugin skeleton).",
        "base": "NodeScorePlugin",
        "extra_field": _SCORE_EXTRA_FIELD,
        "extra_known": ', "bonus"',
        "extra_parse": _SCORE_EXTRA_PARSE,
        "ctor": "label_key=label_key, bonus=bonus",
        "method": _SCORE_METHOD,
    },
    "filter": {
        "summary": "only nodes labelled ``<labelKey>=true`` pass (a filter plugin skeleton).",
        "base": "NodeFilterPlugin",
        "extra_field": "",
        "extra_known": "",
        "extra_parse": "",
        "ctor": "label_key=label_key",
        "method": _FILTER_METHOD,
    },
}


def render_plugin(name: str, kind: str) -> str:
    """The plugin module's source."""
    fields = dict(_KIND_FIELDS["score" if kind == "score" else "filter"])
    fields["extra_parse"] = fields["extra_parse"].format(name=name)
    return _PLUGIN.format(name=name, snake=snake_name(name), **fields)


def render_test(name: str, kind: str) -> str:
    """The pytest module's source."""
    weight = ', "weight": 50' if kind == "score" else ""
    return _TEST.format(name=name, snake=snake_name(name), point=kind, weight=weight)


def enable_snippet(name: str, kind: str, path: Path) -> str:
    """How to run the new plugin: the command line and a KubeSchedulerConfiguration."""
    weight = "\n            weight: 5" if kind == "score" else ""
    return f"""Enable it with a KubeSchedulerConfiguration (e.g. sched.yaml):

apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      {kind}:
        enabled:
          - name: {name}{weight}
    pluginConfig:
      - name: {name}
        args:
          labelKey: example.com/preferred

and run:
  kubesched schedule -f cluster.yaml --config sched.yaml --plugin-path {path}
  kubesched explain -f cluster.yaml --config sched.yaml --plugin-path {path} NAMESPACE/POD
  python -m pytest {path.with_name("test_" + path.name)}{_pytest_hint()}
"""


def _pytest_hint() -> str:
    """`pip install kubesched` does not install pytest: say how, when it is missing."""
    import importlib.util

    if importlib.util.find_spec("pytest") is not None:
        return ""
    return "    (pytest is not installed here: pip install pytest)"


def write_skeleton(name: str, directory: str | Path, kind: str = "score") -> tuple[Path, Path]:
    """Write ``<snake>.py`` and ``test_<snake>.py`` into ``directory``; never overwrite a file."""
    check_name(name)
    if kind not in KINDS:
        raise InputError(f'unknown kind "{kind}" (supported: {", ".join(KINDS)})', path="--kind")
    d = Path(directory)
    snake = snake_name(name)
    plugin, test = d / f"{snake}.py", d / f"test_{snake}.py"
    for p in (plugin, test):
        if p.exists():
            raise InputError(
                "already exists; not overwriting (remove it or choose another NAME/--dir)", source=str(p)
            )
    d.mkdir(parents=True, exist_ok=True)
    plugin.write_text(render_plugin(name, kind))
    test.write_text(render_test(name, kind))
    return plugin, test
