"""Small things a newcomer met (issue 29): workload templates given as if they were pods, a
mistyped plugin or policy name, the extra to install for `learn`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubesched.cli import main
from kubesched.testing import make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _deployment(name: str = "web") -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": 3, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    }


def test_templates_without_pods_say_they_are_not_pods(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "deploy.yaml"
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": {}}}}
    f.write_text(yaml.safe_dump_all([_deployment(), _deployment("api"), job, make_node("n1")]))
    code, out, err = run(capsys, "schedule", "-f", str(f), "-o", "json", "--seed", "1")
    assert code == 0 and json.loads(out) == {"placements": [], "skipped": []}
    assert err == (
        "kubesched: warning: no Pod in the input, only workload templates (2 Deployment, 1 Job): templates are not "
        "pods (their controllers create the pods); to schedule the pods, give them: kubectl get pods -A -o yaml\n"
    )


def test_templates_beside_pods_say_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump_all([_deployment(), make_node("n1"), make_pod("web-1", requests={"cpu": "1"})]))
    code, _, err = run(capsys, "schedule", "-f", str(f), "-o", "json", "--seed", "1")
    assert code == 0 and err == ""


def test_did_you_mean() -> None:
    from kubesched.errors import did_you_mean

    assert did_you_mean("nodeaffinity", ["NodeAffinity", "NodeName"]) == ' (did you mean "NodeAffinity"?)'
    assert did_you_mean("NodeResourceFit", ["NodeResourcesFit", "NodePorts"]) == ' (did you mean "NodeResourcesFit"?)'
    assert did_you_mean("Tetris", ["FGD", "BestFit"]) == ""


def _config(tmp_path: Path, plugins: dict) -> str:
    f = tmp_path / "sched.yaml"
    f.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}],
    }))
    return str(f)


def test_a_mistyped_plugin_name_in_a_config_gets_did_you_mean(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"score": {"enabled": [{"name": "NodeResourceFit"}]}})
    for argv in (["schedule", "--config", cfg], ["config", "view", "--config", cfg]):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (2, "")
        assert err == (
            f"kubesched: error: {cfg}: profiles[0].plugins.score.enabled[0].name: unknown plugin "
            '"NodeResourceFit" (did you mean "NodeResourcesFit"?)\n'
        )


def test_a_plugin_of_another_case_is_refused_with_its_spelling(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Plugin names are case-sensitive in kube-scheduler: "nodeaffinity" is no plugin."""
    cfg = _config(tmp_path, {"filter": {"enabled": [{"name": "nodeaffinity"}]}})
    code, _, err = run(capsys, "schedule", "--config", cfg)
    assert code == 2 and err.endswith('unknown plugin "nodeaffinity" (did you mean "NodeAffinity"?)\n')


def test_a_mistyped_disabled_plugin_warns_with_did_you_mean(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"score": {"disabled": [{"name": "ImageLocalty"}]}})
    code, _, err = run(capsys, "schedule", "--config", cfg, "-o", "json", "--seed", "1")
    assert code == 0
    assert 'disabled plugin "ImageLocalty" is not a known plugin; ignored (did you mean "ImageLocality"?)' in err


def test_multicluster_plugins_flag_did_you_mean() -> None:
    from kubesched.errors import InputError
    from kubesched.multicluster.federation import resolve_plugins

    with pytest.raises(InputError, match=r'^--plugins: unknown plugin "ClusterAfinity" \(did you mean "ClusterAffinity"\?\)$'):
        resolve_plugins("*,ClusterAfinity")
    with pytest.raises(InputError, match=r'^--plugins: unknown plugin "Zzz" \(known: '):
        resolve_plugins("Zzz")


@pytest.mark.parametrize(("given", "right"), [("Bestfit", "BestFit"), ("fgd", "FGD"), ("GpuPackng", "GpuPacking")])
def test_policies_are_spelled_exactly(capsys: pytest.CaptureFixture[str], tmp_path: Path, given: str, right: str) -> None:
    out = tmp_path / "out"
    code, _, err = run(capsys, "experiment", "fgd", "--policies", f"Random,{given}", "-d", str(out))
    assert code == 2 and not out.exists()
    assert err == f'kubesched: error: --policies: unknown policy "{given}" (did you mean "{right}"?)\n'


# a fresh interpreter where Optuna or scipy cannot be imported, as after `pip install kubesched`
WITHOUT = """
import sys
for m in sys.argv[1].split(","):
    sys.modules[m] = None
from kubesched.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize(
    ("missing", "argv", "message"),
    [
        ("optuna", ["learn", "search", "-d"], "learn search: needs Optuna: pip install 'kubesched[learn]'"),
        ("scipy,scipy.stats", ["learn", "eval", "-d"], "learn eval: needs scipy (the Wilcoxon tests): pip install 'kubesched[learn]'"),
        ("scipy,scipy.optimize", ["learn", "bound", "--trace"], "learn bound: needs scipy (HiGHS): pip install 'kubesched[learn]'"),
    ],
)
def test_learn_names_the_learn_extra(missing: str, argv: list[str], message: str, tmp_path: Path) -> None:
    """Said before any work (nothing written), naming the extra that holds it (not [tune])."""
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", WITHOUT, missing, *argv, str(out)], capture_output=True, text=True, cwd=ROOT)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"kubesched: error: {message}\n"
    assert not out.exists()


def test_the_learn_extra_holds_what_learn_needs() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {d.split(">=")[0] for d in extras["learn"]} >= {"optuna", "scipy"}
