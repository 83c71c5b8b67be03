"""``kubesched autoscale``'s options file live: ``shape:`` node groups resolve to the shapes of
the cluster's own nodes (as the simulator's come from its node list), an unknown shape names the
file, the field and the shapes there are, and a bad file is a bad file even without the
Kubernetes client installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kubesched.autoscale.config import GROUP_LABEL
from kubesched.autoscale.live import build_controller
from kubesched.cli import build_parser
from kubesched.errors import InputError
from tests.cli.test_install_extras import (
    WITHOUT_CLIENT,  # the client's import fails, as after `pip install kubesched`
)
from tests.live.live_harness import node

ROOT = Path(__file__).resolve().parents[2]


def controller(kubeconfig: str, path: Path, text: str):  # noqa: ANN201
    path.write_text(text)
    args = build_parser().parse_args(["autoscale", "--kubeconfig", kubeconfig, "--autoscaler", str(path)])
    return build_controller(args)


def test_shape_groups_take_the_shape_of_the_clusters_nodes(kube_api, kubeconfig, tmp_path):
    kube_api.create(node("base-0", cpu="8", memory="32Gi"))
    kube_api.create(node("base-1", cpu="8", memory="32Gi"))
    ctl = controller(kubeconfig, tmp_path / "as.yaml", "nodeGroups:\n- {name: more, shape: cpu-8c-32g, max: 3}\n")
    (group,) = ctl.cfg.node_groups
    assert group.template.allocatable["cpu"] == 8000 and group.template.allocatable["memory"] == 32 * 2**30
    assert group.template.labels[GROUP_LABEL] == "more" and group.max_size == 3
    assert "kubernetes.io/hostname" not in group.template.labels  # a shape, not node base-0


def test_unknown_shape_names_the_file_the_field_and_the_clusters_shapes(kube_api, kubeconfig, tmp_path):
    kube_api.create(node("base-0", cpu="8", memory="32Gi"))
    with pytest.raises(InputError) as e:
        controller(kubeconfig, tmp_path / "as.yaml", "nodeGroups:\n- {name: g, shape: h100-8gpu, max: 3}\n")
    assert e.value.source == str(tmp_path / "as.yaml") and e.value.path == "nodeGroups[0].shape"
    assert 'unknown node shape "h100-8gpu" (known: cpu-8c-32g)' in str(e.value)


def test_bad_options_are_reported_before_the_missing_client(tmp_path):
    bad = tmp_path / "as.yaml"
    bad.write_text("scaleDown: {delayAfterAdd: -10}\nnodeGroups:\n- {name: g, shape: cpu-8c-32g}\n")
    argv = ["autoscale", "--kubeconfig", str(tmp_path / "kc"), "--autoscaler", str(bad)]
    proc = subprocess.run([sys.executable, "-c", WITHOUT_CLIENT, *argv], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr == f"kubesched: error: {bad}: scaleDown.delayAfterAdd: must be 0 or more seconds, got -10\n"
    # a good file (its shape resolved later, against the cluster): now the missing client is the error
    bad.write_text("nodeGroups:\n- {name: g, shape: cpu-8c-32g}\n")
    proc = subprocess.run([sys.executable, "-c", WITHOUT_CLIENT, *argv], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "pip install 'kubesched[live]'" in proc.stderr


def test_a_bad_address_is_one_line_before_the_cluster_is_read(kube_api, kubeconfig, tmp_path, capsys):
    from kubesched.cli import main

    options = tmp_path / "as.yaml"
    options.write_text("nodeGroups:\n- {name: g, template: {cpu: '2', memory: 4Gi}}\n")
    before = len(kube_api.requests)
    rc = main(["autoscale", "--kubeconfig", kubeconfig, "--autoscaler", str(options), "--address", "8085"])
    assert rc == 2 and capsys.readouterr().err == 'kubesched: error: --address: expected HOST:PORT, got "8085"\n'
    assert len(kube_api.requests) == before
