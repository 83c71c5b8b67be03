"""deploy/Dockerfile and .dockerignore, read as Docker reads them (no Docker on this machine).

The image cannot be built here; these tests check what can go wrong without building it: the
command it runs, the user it runs as, and that the build context holds what `pip install` needs.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import yaml
from deploy_testlib import CHART, DEPLOY, ROOT, parse_cli, run_flags


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def exec_form(instrs: list[tuple[str, str]], name: str) -> list[str]:
    """The last ENTRYPOINT/CMD, which must use the exec (JSON) form: no shell, signals reach kubesched."""
    value = [rest for word, rest in instrs if word == name][-1]
    form = json.loads(value)
    assert isinstance(form, list) and all(isinstance(x, str) for x in form), value
    return form


def final_stage(instrs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    last_from = max(i for i, (w, _) in enumerate(instrs) if w == "FROM")
    return instrs[last_from:]


def ignore_patterns(path: Path) -> list[tuple[bool, re.Pattern[str]]]:
    """.dockerignore as (negated, regex): Go filepath.Match plus `**`, cleaned like Docker cleans them."""
    out = []
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        neg = line.startswith("!")
        pat = line[1:].strip() if neg else line
        pat = pat.strip("/")
        rx = ""
        i = 0
        while i < len(pat):
            if pat.startswith("**/", i):
                rx, i = rx + "(?:.*/)?", i + 3
            elif pat.startswith("**", i):
                rx, i = rx + ".*", i + 2
            elif pat[i] == "*":
                rx, i = rx + "[^/]*", i + 1
            elif pat[i] == "?":
                rx, i = rx + "[^/]", i + 1
            else:
                rx, i = rx + re.escape(pat[i]), i + 1
        out.append((neg, re.compile(rx + r"\Z")))
    return out


def build_context(root: Path) -> set[str]:
    """Files Docker sends as the build context: the last matching pattern (on the path or a parent) wins."""
    patterns = ignore_patterns(root / ".dockerignore")
    kept = set()
    for f in root.rglob("*"):
        rel = f.relative_to(root).as_posix()
        if not f.is_file() or rel.startswith(".git/"):
            continue
        parts = rel.split("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        excluded = False
        for neg, rx in patterns:
            if any(rx.match(c) for c in candidates):
                excluded = not neg
        if not excluded:
            kept.add(rel)
    return kept


DOCKERFILE = DEPLOY / "Dockerfile"


def test_entrypoint_is_the_kubesched_console_script() -> None:
    instrs = instructions(DOCKERFILE)
    assert exec_form(instrs, "ENTRYPOINT") == ["kubesched"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubesched"] == "kubesched.cli:main"


def test_default_command_is_a_valid_kubesched_run() -> None:
    cmd = exec_form(instructions(DOCKERFILE), "CMD")
    assert run_flags(cmd).config == "/etc/kubesched/config.yaml"  # where the chart mounts the ConfigMap


def test_the_chart_args_replace_cmd_and_parse() -> None:
    """The chart sets `args` (Docker's CMD) and keeps the image's ENTRYPOINT: kubesched + args."""
    text = (CHART / "templates" / "deployment.yaml").read_text()
    assert "command:" not in text and "args:" in text
    assert parse_cli(["extender", "--config=/etc/kubesched/config.yaml", "--listen=:8888"]).command == "extender"


def test_runs_as_the_charts_non_root_user() -> None:
    final = final_stage(instructions(DOCKERFILE))
    user = [rest for word, rest in final if word == "USER"][-1]
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) != 0, "a numeric USER lets the kubelet verify runAsNonRoot"
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert (int(uid), int(gid)) == (values["podSecurityContext"]["runAsUser"], values["podSecurityContext"]["runAsGroup"])


def test_base_image_satisfies_requires_python() -> None:
    instrs = instructions(DOCKERFILE)
    bases = [rest.split()[0] for word, rest in instrs if word == "FROM"]
    assert bases and all(re.fullmatch(r"python:3\.1[12]-slim", b) for b in bases), bases
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == ">=3.11"
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    exposed = {int(p) for word, rest in instrs if word == "EXPOSE" for p in rest.split()}
    assert exposed == {values["metrics"]["port"], values["extender"]["port"]}


def test_the_image_installs_the_live_extra() -> None:
    """`run` and the extender's watch need the Kubernetes client, which is the live extra."""
    installs = [rest for word, rest in instructions(DOCKERFILE) if word == "RUN" and "pip install" in rest]
    (line,) = installs
    assert re.search(r'pip install "\$\(echo /wheels/\*\.whl\)\[live\]"', line), line
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("kubernetes") for d in extras["live"])


def test_build_context_holds_the_package_and_nothing_else() -> None:
    kept = build_context(ROOT)
    package = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "kubesched").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and ".egg-info" not in str(p)
    }
    assert package and package <= kept
    assert {"pyproject.toml", "README.md", "kubesched/examples/NOTICE"} <= kept
    assert not any(k.startswith(("tests/", "deploy/", "docs/", "bench/")) or "__pycache__" in k for k in kept)
    # every COPY source of the build stage is in the context
    for word, rest in instructions(DOCKERFILE):
        if word == "COPY" and not rest.startswith("--from"):
            for src in rest.split()[:-1]:
                assert src in kept or any(k.startswith(src.rstrip("/") + "/") for k in kept), src


def test_ignore_matcher_follows_docker_rules(tmp_path: Path) -> None:
    """The matcher above: last match wins, a parent directory's match covers its files."""
    (tmp_path / ".dockerignore").write_text("*\n!src/\nsrc/**/*.log\n!src/keep.log\n")
    for rel in ("a.txt", "src/x.py", "src/deep/y.log", "src/keep.log", "src/deep/z.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert build_context(tmp_path) == {"src/x.py", "src/keep.log", "src/deep/z.py"}
