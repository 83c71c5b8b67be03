"""The Kubernetes client is the `live` extra: the default install works without it, `run`,
`extender --kubeconfig` and `autoscale` say in one line what to install, and the test extra
brings it back."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter where importing the client fails, as after `pip install kubesched`.
WITHOUT_CLIENT = """
import sys
sys.modules["kubernetes"] = None  # import kubernetes raises ImportError
from kubesched.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_CLIENT, *argv], capture_output=True, text=True, cwd=ROOT)


def test_pyproject_keeps_the_client_out_of_the_default_install():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("kubernetes") for d in project["dependencies"])
    extras = project["optional-dependencies"]
    assert any(d.startswith("kubernetes>=") for d in extras["live"])
    assert any(d.startswith("kubernetes>=") for d in extras["test"])  # README's test command installs it


def test_run_without_the_client_says_what_to_install(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    options = tmp_path / "as.yaml"  # a valid file: autoscale checks it before it needs the client
    options.write_text("nodeGroups:\n- {name: g, template: {cpu: '2', memory: 4Gi}}\n")
    autoscale = ["autoscale", "--kubeconfig", str(kubeconfig), "--autoscaler", str(options)]
    for argv in (["run", "--kubeconfig", str(kubeconfig)], ["extender", "--kubeconfig", str(kubeconfig)], autoscale):
        proc = _run(*argv)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == (
            "kubesched: error: talking to a Kubernetes API needs the Kubernetes client: "
            "pip install 'kubesched[live]'\n"
        )


def test_offline_commands_work_without_the_client():
    proc = _run("schedule", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    assert '"placements"' in proc.stdout
    assert _run("extender", "--help").returncode == 0
