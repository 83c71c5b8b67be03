"""`pip install .` ships the multi-cluster layer: setuptools only finds folders with __init__.py,
and the latency table and the example federation are package data."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_code_folder_is_a_package():
    missing = [str(d.relative_to(ROOT)) for d in (ROOT / "kubesched").rglob("*")
               if d.is_dir() and any(d.glob("*.py")) and not (d / "__init__.py").exists()]
    assert missing == []


def test_latency_table_and_examples_are_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["kubesched"]
    assert "data/azure/*" in data and "examples/multicluster/*" in data
    assert (ROOT / "kubesched/data/azure/LICENSE").is_file()
