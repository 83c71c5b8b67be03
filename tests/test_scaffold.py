"""`kubesched plugins new`: the skeleton's own test passes, and bad names/overwrites exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubesched.cli import main
from kubesched.scaffold import snake_name

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("kind", ["score", "filter"])
def test_generated_skeleton_test_passes(tmp_path, capsys, kind):
    assert main(["plugins", "new", "LowLatencyFirst", "--dir", str(tmp_path), "--kind", kind]) == 0
    out = capsys.readouterr().out
    assert "kind: KubeSchedulerConfiguration" in out and f"      {kind}:" in out
    assert (tmp_path / "low_latency_first.py").is_file()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "2 passed" in res.stdout


def test_refuses_to_overwrite(tmp_path, capsys):
    (tmp_path / "test_my_plugin.py").write_text("# mine\n")
    assert main(["plugins", "new", "MyPlugin", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists" in err and "test_my_plugin.py" in err
    assert not (tmp_path / "my_plugin.py").exists()
    assert (tmp_path / "test_my_plugin.py").read_text() == "# mine\n"


@pytest.mark.parametrize("name", ["9Lives", "my-plugin", "class", "Ünïcode", ""])
def test_rejects_invalid_class_names(tmp_path, capsys, name):
    assert main(["plugins", "new", name, "--dir", str(tmp_path)]) == 2
    assert "not a valid Python class name" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("name", "snake"),
    [
        ("LowestLoad", "lowest_load"),
        ("HTTPLatency", "http_latency"),
        ("Gpu2Packer", "gpu2_packer"),
        ("x", "x"),
    ],
)
def test_snake_name(name, snake):
    assert snake_name(name) == snake


def test_says_how_to_install_pytest_when_it_is_missing(tmp_path, monkeypatch):
    import importlib.util

    from kubesched.scaffold import enable_snippet

    real = importlib.util.find_spec
    assert "pip install pytest" not in enable_snippet("P", "score", tmp_path / "p.py")  # pytest is here
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pytest" else real(name, *a))
    assert "(pytest is not installed here: pip install pytest)" in enable_snippet("P", "score", tmp_path / "p.py")
