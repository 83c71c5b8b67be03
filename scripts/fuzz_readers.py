"""Fuzz the readers of the newer input surfaces; report every input that ends in a traceback or hangs.

    python scripts/fuzz_readers.py [--surface multicluster|latency|scenario|autoscaler|synthetic|all]
                                   [-n N] [--seed S] [--timeout SECONDS] [--keep DIR]

Each input is a valid file of the surface (the property tests' documents, made from the shipped
examples: ``tests/test_reader_properties_files.py``) changed in one to three places:
a field set to a value of another type (strings, numbers, lists, mappings, nulls, YAML timestamps,
binary and sets, huge and non-finite numbers, deeply nested collections), a field removed, an
unknown field added, a node shared through an anchor, or the bytes changed (a non-UTF-8 byte, a
NUL, a byte-order mark, cut short). The command runs in this process, as ``kubesched`` would
(``kubesched.cli.main``). A run must exit 0, or exit 2 with one line on stderr that names the
input file; any other end (an exception, a second line, a file not named) is reported with the
input, and so is a run longer than ``--timeout`` (a hang). ``--keep DIR`` keeps the failing
inputs.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import io
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_reader_properties_files import AUTOSCALER, FEDERATION, LATENCY, SCENARIO, SYNTHETIC, field_paths  # noqa: E402

from kubesched.cli import main  # noqa: E402

EXAMPLES = ROOT / "kubesched" / "examples" / "multicluster"

ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 1, 2**31 - 1, 2**31, 10**6, 2**63, 2**70, -(2**70), 1.5, float("nan"), float("inf"), -float("inf"),
    "", "x", "-1", "1e400", "2Gi", "Exists", "\x00", "é", "a" * 300, [], [1], ["a", "b"], [{"a": 1}], {}, {"a": 1},
    {"key": [1, {"x": None}]}, datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4, 5), b"\x00\xff", {1, 2},
    {"dist": [1]}, {"dist": {"a": 1}}, {"dist": "constant", "value": datetime.date(2024, 1, 1)},
]  # fmt: skip


def _get(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _nested(depth: int, rng: random.Random) -> Any:
    v: Any = rng.choice([1, "x", None])
    for _ in range(depth):
        v = [v] if rng.random() < 0.5 else {"a": v}
    return v


def _odd(rng: random.Random) -> Any:
    if rng.random() < 0.08:
        return _nested(rng.choice([40, 400, 990, 1200]), rng)
    return copy.deepcopy(rng.choice(ODD_VALUES))


def mutate(docs: list[Any], rng: random.Random) -> list[Any]:
    docs = copy.deepcopy(docs)
    for _ in range(rng.randint(1, 3)):
        d = rng.randrange(len(docs))
        paths = field_paths(docs[d])
        path = rng.choice(paths)
        op = rng.random()
        if not path:
            if op < 0.1:
                docs[d] = _odd(rng)
            continue
        parent = _get(docs[d], path[:-1])
        key = path[-1]
        if op < 0.6:
            parent[key] = _odd(rng)
        elif op < 0.75 and isinstance(parent, dict):
            del parent[key]
        elif op < 0.85 and isinstance(parent, dict):
            parent[rng.choice(["bogus", "extra", "<<", "1"])] = _odd(rng)
        elif op < 0.95:
            # the same node twice: the dump writes an anchor and an alias
            other = rng.choice(paths)
            if other[: len(path)] != path and path[: len(other)] != other:  # no cycle
                parent[key] = _get(docs[d], other)
        else:
            parent[key] = _nested(rng.choice([3, 60, 700, 1100]), rng)
    return docs


def dump(docs: list[Any], rng: random.Random) -> bytes:
    try:
        text = yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True)
    except (yaml.YAMLError, RecursionError):
        text = yaml.safe_dump_all([{"kind": "x"}])
    data = text.encode()
    op = rng.random()
    if op < 0.06:
        i = rng.randrange(len(data) + 1)
        data = data[:i] + rng.choice([b"\xff", b"\xc3", b"\x80\x81", b"\x00"]) + data[i:]
    elif op < 0.08:
        data = b"\xef\xbb\xbf" + data
    elif op < 0.1:
        data = data[: rng.randrange(len(data) + 1)]
    elif op < 0.12:
        data = data.replace(b": ", b": !!binary ", 1)
    elif op < 0.14:
        data = data.replace(b": ", b": 2024-01-02T03:04:05Z #", 1)
    return data


def load_examples(name: str) -> list[Any]:
    return list(yaml.safe_load_all((EXAMPLES / name).read_text()))


def surfaces(tmp: Path) -> dict[str, tuple[list[Any], str, Callable[[Path], list[str]]]]:
    """name -> (base documents, file name, argv for the fuzzed file)."""
    small_dump = [{"apiVersion": "v1", "kind": "List", "items": load_examples("edge-seoul.yaml")[0]["items"][:2]}]
    dumps = tmp / "dumps"
    dumps.mkdir(exist_ok=True)
    for name in ("edge-tokyo", "edge-seoul", "cloud-westus2"):
        shutil.copy(EXAMPLES / f"{name}.yaml", dumps / f"{name}.yaml")
    members = [f"-f{n}={dumps / n}.yaml" for n in ("edge-tokyo", "edge-seoul", "cloud-westus2")]
    latency = str(EXAMPLES / "latency.yaml")
    out = str(tmp / "out")
    return {
        "multicluster": (FEDERATION, "fed.yaml", lambda f: ["multicluster", "schedule", "-f", str(f), *members, "--latency", latency]),
        "member-dump": (small_dump, "member.yaml", lambda f: ["multicluster", "schedule", "-f", str(EXAMPLES / "federation.yaml"), f"-fedge-seoul={f}"]),
        "latency": (LATENCY, "lat.yaml", lambda f: ["multicluster", "schedule", "-f", str(EXAMPLES / "federation.yaml"), *members, "--latency", str(f)]),
        "scenario": ([SCENARIO], "sc.yaml", lambda f: ["multicluster", "simulate", "--scenario", str(f), "--seeds", "0", "--limit", "20", "--modes", "collaborative", "--no-plots", "-d", out, "-o", "json"]),
        "autoscaler": ([AUTOSCALER], "as.yaml", lambda f: ["experiment", "elastic", "--autoscaler", str(f), "--limit", "30", "--modes", "ca-least-waste,karpenter", "--profiles", "spread", "--seeds", "0", "--workers", "1", "--no-plots", "-d", out]),
        "synthetic": ([SYNTHETIC], "syn.yaml", lambda f: ["simulate", "--synthetic", str(f), "--no-plots", "-d", out, "-o", "json"]),
    }  # fmt: skip


class Hang(BaseException):
    """The run took longer than --timeout (a BaseException: the code under test catches Exception)."""


def _alarm(signum: int, frame: Any) -> None:
    raise Hang


def run_one(argv: list[str], source: str, timeout: float) -> tuple[str, str]:
    """('ok' | 'input-error' | 'traceback' | 'hang' | 'bad-message', detail)."""
    err, out = io.StringIO(), io.StringIO()
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = main(argv)
    except Hang:
        return "hang", f"over {timeout:g} s"
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 2
    except BaseException:  # noqa: BLE001 - what the fuzzer is looking for
        return "traceback", traceback.format_exc(limit=-6)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    lines = [ln for ln in err.getvalue().splitlines() if not ln.startswith("kubesched: warning:") and "INFO" not in ln]
    if rc == 0:
        return "ok", ""
    if rc == 2 and len(lines) == 1 and source in lines[0]:
        return "input-error", lines[0]
    return "bad-message", f"rc {rc}: " + " | ".join(lines)[:400]


def main_(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--surface", default="all")
    ap.add_argument("-n", type=int, default=200, help="inputs per surface")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--keep", type=Path)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-readers-"))
    table = surfaces(tmp)
    names = list(table) if args.surface == "all" else args.surface.split(",")
    bad = 0
    for name in names:
        base, fname, make_argv = table[name]
        rng = random.Random(f"{args.seed}-{name}")
        counts: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        slow: list[tuple[float, int]] = []
        t0 = time.perf_counter()
        for i in range(args.n):
            f = tmp / fname
            f.write_bytes(dump(mutate(base, rng), rng))
            t1 = time.perf_counter()
            outcome, detail = run_one(make_argv(f), str(f), args.timeout)
            slow.append((time.perf_counter() - t1, i))
            counts[outcome] += 1
            if outcome in ("traceback", "hang", "bad-message"):
                bad += 1
                last = detail.strip().splitlines()[-1] if detail.strip() else ""
                kinds[f"{outcome}: {last[:160]}"] += 1
                if args.keep:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    shutil.copy(f, args.keep / f"{name}-{i}{Path(fname).suffix}")
                    (args.keep / f"{name}-{i}.txt").write_text(detail)
        print(f"{name}: {args.n} inputs in {time.perf_counter() - t0:.0f} s: {dict(counts)}", flush=True)
        for k, c in kinds.most_common():
            print(f"  {c:4d}  {k}", flush=True)
        print("  slowest: " + ", ".join(f"#{i} {t:.1f} s" for t, i in sorted(slow, reverse=True)[:3]), flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main_())
