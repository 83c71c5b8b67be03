"""``--validate`` (kubectl's flag) on every command that reads ``-f`` cluster files.

``strict`` (the default, also ``true`` and ``--validate`` alone) refuses what the API server
refuses, as before; ``warn`` loads it with one warning line per problem, naming the file and the
field; ``ignore`` (also ``false``) loads it silently. What no object can be built from stays an
error in every mode. Before, there was no flag: a hand-written fixture with an invalid name could
not be loaded at all.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.testing import make_node, make_pod


def fixture(tmp_path: Path) -> str:
    """A hand-written cluster the API server would refuse three ways, and would load otherwise."""
    pod = make_pod("Web_1", namespace="Team_A", requests={"cpu": "1"})
    pod["spec"]["initContainers"] = [{"name": "c", "image": "busybox"}]  # make_pod's container is "c"
    pod["spec"]["toleration"] = []  # unknown field (a typo of tolerations)
    f = tmp_path / "hand.yaml"
    f.write_text(yaml.safe_dump_all([make_node("n1", cpu="4"), pod]))
    return str(f)


PROBLEMS = [
    'documents[1].spec.toleration: unknown field "toleration"',
    'documents[1].metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain',
    'documents[1].metadata.namespace: Invalid value: "Team_A": a lowercase RFC 1123 label',
    'documents[1].spec.initContainers[0].name: Duplicate value: "c"',
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("flag", [[], ["--validate"], ["--validate=strict"], ["--validate=true"], ["--validate=1"]])
def test_strict_refuses_in_one_line(flag: list[str], tmp_path: Path, capsys) -> None:
    f = fixture(tmp_path)
    code, out, err = run(capsys, "schedule", "-f", f, *flag)
    assert code == 2 and out == ""
    assert err == f"kubesched: error: {f}: {PROBLEMS[0]} (PodSpec has no such field); did you mean \"tolerations\"?\n"


def test_warn_loads_with_a_warning_per_problem(tmp_path: Path, capsys) -> None:
    f = fixture(tmp_path)
    code, out, err = run(capsys, "schedule", "-f", f, "--validate=warn", "-o", "json", "--seed", "0")
    assert code == 0
    assert json.loads(out)["placements"][0]["pod"] == "Team_A/Web_1"
    lines = err.splitlines()
    assert len(lines) == len(PROBLEMS)
    for line, problem in zip(lines, PROBLEMS, strict=True):
        assert line.startswith(f"kubesched: warning: {f}: {problem}")


@pytest.mark.parametrize("flag", ["--validate=ignore", "--validate=false", "--validate=F"])
def test_ignore_loads_silently(flag: str, tmp_path: Path, capsys) -> None:
    code, out, err = run(capsys, "schedule", "-f", fixture(tmp_path), flag, "-o", "json", "--seed", "0")
    assert code == 0 and err == ""
    assert json.loads(out)["placements"][0]["node"] == "n1"


def test_an_unknown_mode_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as e:
        main(["schedule", "-f", fixture(tmp_path), "--validate=maybe"])
    assert e.value.code == 2


BROKEN: dict[str, tuple[dict[str, Any], str]] = {
    "a wrong JSON type": (
        make_pod("p", spec={"priority": "5"}), 'spec.priority: expected an integer (int32), got string "5"'
    ),
    "an unparsable quantity": (make_pod("p", requests={"cpu": "lots"}), 'invalid quantity "lots"'),
    "a negative request": (make_pod("p", requests={"cpu": "-1"}), "must be greater than or equal to 0"),
    "an unknown taint effect": (
        make_node("n2", taints=[{"key": "k", "effect": "Sometimes"}]), 'unknown taint effect "Sometimes"'
    ),
    "an unknown kind": ({"apiVersion": "v1", "kind": "Podd", "metadata": {"name": "p"}}, 'unknown kind "Podd"'),
}


@pytest.mark.parametrize("case", list(BROKEN))
@pytest.mark.parametrize("mode", ["warn", "ignore"])
def test_what_no_object_can_be_built_from_stays_an_error(case: str, mode: str, tmp_path: Path, capsys) -> None:
    obj, reason = BROKEN[case]
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([make_node("n1"), obj]))
    code, out, err = run(capsys, "schedule", "-f", str(f), f"--validate={mode}")
    assert code == 2 and out == ""
    assert err.splitlines()[-1].startswith(f"kubesched: error: {f}: documents[1].")
    assert reason in err and "Traceback" not in err


def test_explain_and_its_pod_file(tmp_path: Path, capsys) -> None:
    f = fixture(tmp_path)
    code, out, _ = run(capsys, "explain", "Team_A/Web_1", "-f", f, "--validate=ignore", "-o", "json")
    assert code == 0 and json.loads(out)["selected"] == "n1"
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(make_pod("Other_Pod", namespace="Team_A")))
    cluster = tmp_path / "ok.yaml"
    cluster.write_text(yaml.safe_dump(make_node("n1")))
    assert run(capsys, "explain", "--pod", str(pod_file), "-f", str(cluster))[0] == 2
    code, out, err = run(capsys, "explain", "--pod", str(pod_file), "-f", str(cluster), "--validate=warn", "-o", "json")
    assert code == 0 and f"kubesched: warning: {pod_file}: metadata.name: Invalid value" in err


def test_simulate_records_the_mode(tmp_path: Path, capsys) -> None:
    out_dir = tmp_path / "out"
    code, _, err = run(
        capsys, "simulate", "-f", fixture(tmp_path), "--validate=warn", "--out-dir", str(out_dir), "--no-plots",
        "-o", "json",
    )
    assert code == 0 and err.count(f"kubesched: warning: {tmp_path}") == len(PROBLEMS)
    assert json.loads((out_dir / "inputs.json").read_text())["validate"] == "warn"
    assert run(capsys, "simulate", "-f", fixture(tmp_path), "--out-dir", str(tmp_path / "o2"))[0] == 2


def test_tune_takes_the_flag(tmp_path: Path) -> None:
    from kubesched.cli import build_parser

    args = build_parser().parse_args(["tune", "-f", fixture(tmp_path), "--metric", "placed", "--validate=false"])
    assert args.validate == "ignore"


def test_extender_warns_then_serves(tmp_path: Path, capsys) -> None:
    f = fixture(tmp_path)
    assert run(capsys, "extender", "-f", f, "--listen", "127.0.0.1:0")[0] == 2  # strict: nothing served
    argv = ["extender", "-f", f, "--validate=warn", "--listen", "127.0.0.1:0", "--seed", "0"]
    with subprocess.Popen([sys.executable, "-m", "kubesched.cli", *argv], stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stderr is not None
            lines = [proc.stderr.readline() for _ in range(len(PROBLEMS) + 1)]
            assert all(line.startswith(f"kubesched: warning: {f}: ") for line in lines[:-1])
            assert re.search(r"serving .* \(1 nodes, 1 pods held", lines[-1]), lines[-1]
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_a_workload_rebuilt_without_a_mode_is_read_strictly(tmp_path: Path) -> None:
    """kubesched ui rebuilds a simulation's workload from its inputs.json into a namespace of its
    own, and inputs.json files written before --validate hold no mode: such a rebuild is strict."""
    import argparse

    from kubesched.errors import InputError
    from kubesched.sim.cli import load_workload

    def rebuilt(files: list[str]) -> argparse.Namespace:
        return argparse.Namespace(
            trace=None, nodes=None, file=files, synthetic=None, synth=[], skip_invalid=False, limit=None, seed=0
        )

    ok = tmp_path / "ok.yaml"
    ok.write_text(yaml.safe_dump_all([make_node("n1"), make_pod("p")]))
    assert [p.name for p in load_workload(rebuilt([str(ok)])).pods] == ["p"]
    with pytest.raises(InputError, match="unknown field"):
        load_workload(rebuilt([fixture(tmp_path)]))
