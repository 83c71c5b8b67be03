"""The Helm chart, linted and rendered by Helm's own engine (helm-python-sdk bundles Helm's Go SDK)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import helm_python as helm
import pytest
import yaml
from deploy_testlib import CHART, MANIFESTS, container, objects, one, render, render_module

from kubesched.app import build_registry
from kubesched.config import parse_config, parse_document

EXTENDER = {"mode": "extender"}
CUSTOM = {
    "profiles": [
        {
            "schedulerName": "binpack",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                }
            ],
        },
        {"schedulerName": "spread"},
    ],
    "extraConfig": {"percentageOfNodesToScore": 50, "podMaxBackoffSeconds": 20},
    "kubeApi": {"qps": 200, "burst": 400},
}


def lint_findings(values: dict | None = None, chart: Path = CHART) -> list[str]:
    report = helm.lint(str(chart), values, strict=True)
    # severity 1 is INFO ("icon is recommended"); 2 warning, 3 error
    return report["errors"] + [f"{m['path']}: {m['error']}" for m in report["messages"] if m["severity"] >= 2]


@pytest.mark.parametrize("values", [None, EXTENDER, CUSTOM], ids=["default", "extender", "custom"])
def test_helm_lint_strict_is_clean(values: dict | None) -> None:
    assert helm.helm_sdk_version().startswith("v")
    assert lint_findings(values) == []


@pytest.mark.parametrize(
    ("template", "finding"),
    [
        ("kind: Service\nname: {{ .Values.nope ", "unclosed action"),
        ("apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Values.nope }}\n", "DNS-1035"),
    ],
)
def test_lint_reports_a_broken_chart(tmp_path, template: str, finding: str) -> None:
    """The lint call really lints: a syntax error, and an object Kubernetes would reject."""
    import shutil

    broken = tmp_path / "kubesched"
    shutil.copytree(CHART, broken)
    (broken / "templates" / "service.yaml").write_text(template)
    assert any(finding in f for f in lint_findings(None, broken))


def test_manifests_are_the_default_rendering() -> None:
    """deploy/manifests/ is exactly what the chart renders with default values (plus the Namespace)."""
    expected = render_module().expected_files()
    on_disk = {p.name: p.read_text() for p in MANIFESTS.glob("*.yaml")}
    assert sorted(on_disk) == sorted(expected), "run: python deploy/render_manifests.py"
    for name, text in expected.items():
        assert on_disk[name] == text, f"deploy/manifests/{name} is stale; run: python deploy/render_manifests.py"


def test_manifests_apply_in_dependency_order() -> None:
    """kubectl apply -f DIR applies files by name: the Namespace first, the Deployment last."""
    names = sorted(p.name for p in MANIFESTS.glob("*.yaml"))
    kinds = [[d["kind"] for d in yaml.safe_load_all((MANIFESTS / n).read_text()) if d] for n in names]
    assert kinds[0] == ["Namespace"] and kinds[-1] == ["Deployment"]
    namespace = yaml.safe_load((MANIFESTS / names[0]).read_text())["metadata"]["name"]
    for group in kinds[1:]:
        assert "Namespace" not in group
    for name in names[1:]:
        for d in yaml.safe_load_all((MANIFESTS / name).read_text()):
            if d["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
                assert d["metadata"]["namespace"] == namespace, name


def config_of(objs: list[dict]) -> tuple[str, dict]:
    text = one(objs, "ConfigMap")["data"]["config.yaml"]
    return text, yaml.safe_load(text)


@pytest.mark.parametrize("values", [None, EXTENDER, CUSTOM], ids=["default", "extender", "custom"])
def test_configmap_loads_with_kubesched_without_warnings(values: dict | None) -> None:
    objs = objects(render(values, namespace="sched-system"))
    text, _ = config_of(objs)
    cfg = parse_config(parse_document(text, "config.yaml"), "config.yaml", build_registry().points_of)
    assert cfg.warnings == []
    names = [p.scheduler_name for p in cfg.profiles]
    if values is CUSTOM:
        assert names == ["binpack", "spread"]
        assert cfg.percentage_of_nodes_to_score == 50 and cfg.pod_max_backoff_seconds == 20
        assert cfg.profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"
    else:
        assert names == ["kubesched"]
    if values is EXTENDER:
        assert cfg.leader_election["leaderElect"] is False
    else:
        # the Lease is named after the (first) scheduler and lives in the release's namespace
        assert cfg.leader_election["leaderElect"] is True
        assert cfg.leader_election["resourceName"] == names[0]
        assert cfg.leader_election["resourceNamespace"] == "sched-system"
        assert cfg.leader_election["resourceLock"] == "leases"
        durations = [cfg.leader_election[k] for k in ("leaseDuration", "renewDeadline", "retryPeriod")]
        assert durations == ["15s", "10s", "2s"]
        qps = 200 if values is CUSTOM else 50
        assert cfg.client_connection["qps"] == qps and cfg.client_connection["burst"] == 2 * qps


def test_config_file_is_mounted_where_the_args_read_it() -> None:
    for values in (None, EXTENDER):
        objs = objects(render(values))
        c = container(objs)
        config_args = [a for a in c["args"] if a.startswith("--config=")]
        assert len(config_args) == 1
        path = config_args[0].partition("=")[2]
        mount = next(m for m in c["volumeMounts"] if path.startswith(m["mountPath"] + "/"))
        assert mount["readOnly"] is True
        volumes = one(objs, "Deployment")["spec"]["template"]["spec"]["volumes"]
        volume = next(v for v in volumes if v["name"] == mount["name"])
        assert volume["configMap"]["name"] == one(objs, "ConfigMap")["metadata"]["name"]
        assert path.rpartition("/")[2] in one(objs, "ConfigMap")["data"]


def test_config_checksum_rolls_the_pods() -> None:
    a, b = objects(render()), objects(render({"extraConfig": {"percentageOfNodesToScore": 30}}))
    sums = [one(o, "Deployment")["spec"]["template"]["metadata"]["annotations"]["checksum/config"] for o in (a, b)]
    assert sums[0] != sums[1]
    assert sums[0] == hashlib.sha256(config_of(a)[0].rstrip("\n").encode()).hexdigest()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"leaderElection": {"enabled": False}}, "replicas > 1 needs leaderElection.enabled"),
        ({"mode": "standalone"}, 'mode: must be scheduler or extender, got "standalone"'),
        ({"logFormat": "xml"}, 'logFormat: must be text or json, got "xml"'),
        (
            {"leaderElection": {"renewDeadlineSeconds": 20}},
            "leaderElection: need 0 < retryPeriodSeconds < renewDeadlineSeconds < leaseDurationSeconds",
        ),
    ],
)
def test_bad_values_fail_the_rendering(values: dict, message: str) -> None:
    with pytest.raises(helm.HelmError) as err:
        render(values)
    assert message in str(err.value)


def test_one_replica_may_run_without_leader_election() -> None:
    objs = objects(render({"replicas": 1, "leaderElection": {"enabled": False}}))
    assert one(objs, "Deployment")["spec"]["replicas"] == 1
    assert "--leader-elect" not in container(objs)["args"]
    assert [o for o in objs if o["kind"] in ("Role", "RoleBinding")] == []


def test_notes_say_how_to_use_it() -> None:
    notes = render()["NOTES.txt"]
    assert "schedulerName: kubesched" in notes
    assert "https://kubesched.kubesched.svc:10251/metrics" in notes
    ext = render(EXTENDER)["NOTES.txt"]
    assert 'urlPrefix: "https://kubesched.kubesched.svc:8888/scheduler"' in ext
    assert "enableHTTPS: true" in ext and "certFile:" in ext and "serverName: kubesched.kubesched.svc" in ext
    assert "bindVerb" in ext  # the warning not to set it


def test_names_follow_the_release() -> None:
    objs = objects(render(release="prod", namespace="infra"))
    dep = one(objs, "Deployment")
    assert dep["metadata"]["name"] == "prod-kubesched" and dep["metadata"]["namespace"] == "infra"
    assert dep["spec"]["selector"]["matchLabels"] == {
        "app.kubernetes.io/name": "kubesched",
        "app.kubernetes.io/instance": "prod",
    }
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
