"""User plugins: per-node classes and functions, module:Class names, plugin files, and failures."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import yaml

from kubesched.cli import main
from kubesched.testing import make_node, make_pod

PLUGIN_FILE = '''
from kubesched.framework.simple import NodeScorePlugin, filter_plugin, score_plugin


class PreferNamed(NodeScorePlugin):
    """Scores 100 on the node named in args.node, 0 elsewhere."""

    name = "PreferNamed"

    def score_node(self, pod, node):
        return 100 if node.name == self.args.get("node") else 0


@score_plugin("Boom")
def boom(pod, node):
    raise RuntimeError("kaput")


@filter_plugin("OnlyEven")
def only_even(pod, node):
    return int(node.name[1:]) % 2 == 0 or "node(s) are odd"
'''


def setup(tmp_path: Path, plugins: dict) -> tuple[str, str, str]:
    pf = tmp_path / "myplugins.py"
    pf.write_text(PLUGIN_FILE)
    cluster = tmp_path / "cluster.yaml"
    docs = [make_node(f"n{i}", cpu="4", memory="8Gi") for i in range(4)]
    docs += [make_pod("a", requests={"cpu": "100m"}), make_pod("b", requests={"cpu": "100m"})]
    cluster.write_text(yaml.safe_dump_all(docs))
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "default-scheduler", **plugins}],
            }
        )
    )
    return str(pf), str(cluster), str(cfg)


def schedule(capsys, *argv: str) -> tuple[int, dict | None, str]:
    code = main(["schedule", "-o", "json", "--seed", "3", *argv])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out else None), out.err


def test_per_node_score_plugin_from_a_file_steers_placement(capsys, tmp_path):
    pf, cluster, cfg = setup(
        tmp_path,
        {
            "plugins": {"score": {"enabled": [{"name": "PreferNamed", "weight": 50}]}},
            "pluginConfig": [{"name": "PreferNamed", "args": {"node": "n2"}}],
        },
    )
    code, data, err = schedule(capsys, "-f", cluster, "--config", cfg, "--plugin-path", pf)
    assert code == 0, err
    assert [p["node"] for p in data["placements"]] == ["n2", "n2"]


def test_function_filter_plugin_and_its_reason(capsys, tmp_path):
    pf, cluster, cfg = setup(tmp_path, {"plugins": {"filter": {"enabled": [{"name": "OnlyEven"}]}}})
    code, data, err = schedule(capsys, "-f", cluster, "--config", cfg, "--plugin-path", pf)
    assert code == 0, err
    assert {p["node"] for p in data["placements"]} <= {"n0", "n2"}
    code = main(["explain", "-f", cluster, "--config", cfg, "--plugin-path", pf, "default/a", "-o", "json"])
    res = json.loads(capsys.readouterr().out)
    n1 = next(n for n in res["nodes"] if n["name"] == "n1")
    assert {"plugin": "OnlyEven", "code": "Unschedulable", "reasons": ["node(s) are odd"]} in n1["filter"]


def test_plugin_exception_is_an_error_for_the_pod_not_a_crash(capsys, tmp_path):
    """Upstream's wording frames the exception's type and text and the node it was raised on;
    the traceback is only printed with --debug."""
    pf, cluster, cfg = setup(tmp_path, {"plugins": {"score": {"enabled": [{"name": "Boom"}]}}})
    code, data, err = schedule(capsys, "-f", cluster, "--config", cfg, "--plugin-path", pf)
    assert code == 0, err
    assert "Traceback" not in err
    for p in data["placements"]:
        assert p["node"] is None
        assert re.fullmatch(
            r'running Score plugins: plugin "Boom" failed with: RuntimeError: kaput \(node n[0-3]\)', p["message"]
        ), p["message"]


def test_debug_prints_the_plugins_traceback_once(capsys, tmp_path):
    pf, cluster, cfg = setup(tmp_path, {"plugins": {"score": {"enabled": [{"name": "Boom"}]}}})
    code, data, err = schedule(capsys, "-f", cluster, "--config", cfg, "--plugin-path", pf, "--debug")
    assert code == 0 and data is not None
    assert err.startswith("kubesched: debug: pod default/a: a plugin raised:\nTraceback (most recent call last):")
    line = PLUGIN_FILE.splitlines().index('    raise RuntimeError("kaput")') + 1
    assert f'File "{pf}", line {line}, in boom' in err and err.rstrip().endswith("RuntimeError: kaput")
    assert err.count("Traceback") == 1  # the same exception raised again (other pod, retries): shown once
    code = main(["explain", "-f", cluster, "--config", cfg, "--plugin-path", pf, "default/a", "-o", "json", "--debug"])
    out = capsys.readouterr()
    assert code == 0 and "RuntimeError: kaput" in json.loads(out.out)["message"]
    assert out.err.count("Traceback") == 1 and 'raise RuntimeError("kaput")' in out.err


def test_module_class_name_in_config(capsys, tmp_path, monkeypatch):
    pkg = tmp_path / "site"
    pkg.mkdir()
    (pkg / "acme_sched.py").write_text(textwrap.dedent(PLUGIN_FILE))
    monkeypatch.syspath_prepend(str(pkg))
    _, cluster, cfg = setup(
        tmp_path,
        {
            "plugins": {"score": {"enabled": [{"name": "acme_sched:PreferNamed", "weight": 50}]}},
            "pluginConfig": [{"name": "acme_sched:PreferNamed", "args": {"node": "n3"}}],
        },
    )
    code, data, err = schedule(capsys, "-f", cluster, "--config", cfg)
    assert code == 0, err
    assert [p["node"] for p in data["placements"]] == ["n3", "n3"]
    sys.modules.pop("acme_sched", None)


def test_plugin_file_that_fails_to_import(capsys, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import no_such_module_here\n")
    code = main(["plugins", "list", "--plugin-path", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "bad.py" in err and "ModuleNotFoundError" in err
